"""glassformer.nn.heads: the fused query/key/value projection against separate projections and the
plain formula, with its gradients; splitting and merging heads round-trip."""

from __future__ import annotations

import numpy as np

from glassformer.nn.heads import project_heads, project_heads_backward, split_heads


def test_fused_projection_equals_separate_projections_and_gradients():
    rng = np.random.default_rng(6)
    x, W, b = rng.standard_normal((2, 5, 6)), rng.standard_normal((18, 6)), rng.standard_normal(18)
    fused = project_heads(x, W, b, num_heads=2, n_parts=3)                      # (3, B, H, T, hd)
    for part in range(3):
        rows = slice(6 * part, 6 * (part + 1))
        alone = project_heads(x, W[rows], b[rows], num_heads=2)[0]
        np.testing.assert_allclose(fused[part], alone, rtol=1e-13, atol=1e-13)
        plain = (x @ W[rows].T + b[rows]).reshape(2, 5, 2, 3).transpose(0, 2, 1, 3)
        np.testing.assert_allclose(fused[part], plain, rtol=1e-13, atol=1e-13)
    d = [rng.standard_normal((2, 2, 5, 3)) for _ in range(3)]
    dx, dW, db = project_heads_backward(d, x, W)
    sep = [project_heads_backward([d[p]], x, W[6 * p:6 * (p + 1)]) for p in range(3)]
    np.testing.assert_allclose(dx, sum(s[0] for s in sep), atol=1e-12)
    np.testing.assert_allclose(dW, np.concatenate([s[1] for s in sep]), atol=1e-12)
    np.testing.assert_allclose(db, np.concatenate([s[2] for s in sep]), atol=1e-12)
    U = fused[0].transpose(0, 2, 1, 3).reshape(2, 5, 6)                         # heads side by side
    np.testing.assert_array_equal(split_heads(U, 2), fused[0])
