"""Cases from public bug reports (issue 2: B01, B07, B08, B13, B14; issue 4: B04, B05).

Expected values were computed independently of this code (by hand / in the issues' text).
"""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import InputError
from glassformer.nn import (
    LayerNorm,
    MultiheadAttention,
    RotaryEmbedding,
    causal_mask,
    scaled_dot_product_attention,
    scaled_dot_product_attention_backward,
)


# --------------------------------------------------------------------------- B01
def test_b01_fully_padded_sequence_gives_zeros_not_nan():
    x = np.array([[[1, 0], [0, 1], [1, 1]], [[0.5, -0.5], [2, 0], [0, 0]]], dtype=float)
    kpm = np.array([[False, False, True], [True, True, True]])
    allowed = ~kpm[:, None, :]                       # (batch, 1 query axis, S)
    out, w = scaled_dot_product_attention(x, x, x, allowed=allowed)   # scale 1/sqrt(2), no projections
    a, b = 0.66976155, 0.33023845
    np.testing.assert_allclose(w[0], [[a, b, 0], [b, a, 0], [0.5, 0.5, 0]], atol=1e-8)
    np.testing.assert_allclose(out[0], [[a, b], [b, a], [0.5, 0.5]], atol=1e-8)
    assert np.all(w[1] == 0) and np.all(out[1] == 0)

    dq, dk, dv = scaled_dot_product_attention_backward(np.ones_like(out), x, x, x, w)
    dx = dq + dk + dv                                 # q = k = v = x share one gradient
    np.testing.assert_allclose(dx[0], [[1.5, 1.5], [1.5, 1.5], [0, 0]], atol=1e-8)
    assert np.all(dx[1] == 0)


def test_b01_full_layer_fully_padded_row_is_out_proj_bias():
    rng = np.random.default_rng(0)
    mha = MultiheadAttention(4, 2, rng=1)
    mha.out_proj.bias.data[...] = [0.1, -0.2, 0.3, 0.4]
    x = rng.standard_normal((2, 3, 4))
    kpm = np.array([[False, False, True], [True, True, True]])
    for need in (True, False):
        out, w = mha(x, x, x, key_padding_mask=kpm, need_weights=need)
        assert np.array_equal(out[1], np.broadcast_to(mha.out_proj.bias.data, (3, 4)))
        assert np.isfinite(out).all()
        if need:
            assert np.all(w[1] == 0)
    mha.zero_grad()
    grads = mha.backward(np.ones_like(out))
    assert all(np.all(g[1] == 0) for g in grads)     # zero gradients into the padded sequence
    assert all(np.isfinite(p.grad).all() for p in mha.parameters())


# --------------------------------------------------------------------------- B07
def _b07_layer(wq):
    mha = MultiheadAttention(4, 2, rng=0)
    mha.in_proj_weight.data[...] = np.vstack([wq, np.eye(4), np.eye(4)])
    mha.in_proj_bias.data[...] = 0.0
    mha.out_proj.weight.data[...] = np.eye(4)
    mha.out_proj.bias.data[...] = 0.0
    return mha


def test_b07_head_split_and_merge():
    x = np.array([[[0, 1, 2, 3], [4, 5, 6, 7]]], dtype=float)
    out, _ = _b07_layer(np.zeros((4, 4)))(x, x, x)
    # uniform weights: each head averages its own two features over the two tokens
    np.testing.assert_allclose(out[0], [[2, 3, 4, 5], [2, 3, 4, 5]], atol=1e-12)
    assert not np.allclose(out[0], [[1, 2, 1, 2], [5, 6, 5, 6]])  # the reshape-without-transpose bug

    diagonal_only = ~np.eye(2, dtype=bool)            # True = blocked: only the diagonal is allowed
    out, _ = _b07_layer(np.eye(4))(x, x, x, attn_mask=diagonal_only)
    np.testing.assert_allclose(out, x, atol=1e-12)


# --------------------------------------------------------------------------- B08
def test_b08_causal_diagonal():
    q = np.array([[1.0], [2.0], [3.0]])
    v = np.array([[1.0], [10.0], [100.0]])
    allowed = ~causal_mask(3)
    out, w = scaled_dot_product_attention(q, q, v, allowed=allowed)
    np.testing.assert_allclose(
        w, [[1, 0, 0], [0.11920292, 0.88079708, 0], [0.00235563, 0.04731416, 0.95033021]], atol=1e-8
    )
    np.testing.assert_allclose(out[:, 0], [1, 8.9271737, 95.50851836], atol=1e-7)
    v2 = v.copy()
    v2[2] = -5.0
    out2, _ = scaled_dot_product_attention(q, q, v2, allowed=allowed)
    np.testing.assert_array_equal(out2[:2], out[:2])
    assert out2[2, 0] != out[2, 0]


def test_b08_is_causal_builds_the_mask():
    rng = np.random.default_rng(3)
    mha = MultiheadAttention(6, 2, rng=0)
    x = rng.standard_normal((2, 4, 6))
    _, w = mha(x, x, x, is_causal=True, average_attn_weights=False)
    assert np.all(w[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0)
    out_a, _ = mha(x, x, x, is_causal=True)
    out_b, _ = mha(x, x, x, attn_mask=causal_mask(4))
    np.testing.assert_array_equal(out_a, out_b)


# --------------------------------------------------------------------------- B13
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_b13_layernorm_over_one_feature(dtype):
    ln = LayerNorm(1, eps=1e-5, dtype=dtype)
    ln.weight.data[...] = 2.0
    ln.bias.data[...] = 3.0
    x = np.array([[1e6], [3.0]], dtype=dtype)
    y = ln(x)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, [[3.0], [3.0]])
    dx = ln.backward(np.ones_like(x))
    assert np.all(np.abs(dx) <= 1e-6)
    assert np.all(np.abs(ln.weight.grad) <= 1e-6)
    np.testing.assert_array_equal(ln.bias.grad, [2.0])


# --------------------------------------------------------------------------- B14
def test_b14_layernorm_backward():
    ln = LayerNorm(3)
    ln.weight.data[...] = [1, 2, 3]
    ln.bias.data[...] = [0.5, 0, -0.5]
    x = np.array([[[1, 2, 4], [0, -1, 3]], [[2, 2, 5], [-3, 0.5, 1]]], dtype=float)
    dy = np.array([[[1, 0, -1], [2, 1, 0]], [[0, 3, 1], [-1, -1, 2]]], dtype=float)
    ln(x)
    dx = ln.backward(dy)
    np.testing.assert_allclose(ln.weight.grad, [-0.44862822, -3.66384462, 1.76375991], atol=1e-7)
    np.testing.assert_allclose(ln.bias.grad, [2, 3, 2], atol=1e-12)
    np.testing.assert_allclose(dx[1, 1], [0.28097086, -2.24780062, 1.96682976], atol=1e-7)


# --------------------------------------------------------------------------- B04 / B05 (issue 4)
def test_b04_rope_odd_head_dim_is_a_clear_value_error():
    with pytest.raises(ValueError, match="head_dim must be even"):
        RotaryEmbedding(3)
    with pytest.raises(InputError):
        RotaryEmbedding(3)
    r = RotaryEmbedding(4)
    assert r.rotate(np.ones((2, 4))).shape == (2, 4)


X_B05 = np.array([[1, 0, 0.5, -1], [0, 1, 2, 0], [1, 2, 3, 4]], dtype=float)


@pytest.mark.parametrize(
    "interleaved, row2, dot",
    [
        (True, [-2.23474169, 0.07700375, 2.91940535, 4.05919603], 5.91581446),
        (False, [-3.14403912, 1.91960535, -0.33914308, 4.03919736], 1.24131918),
    ],
)
def test_b05_rope_values(interleaved, row2, dot):
    r = RotaryEmbedding(4, base=10000.0, interleaved=interleaved)
    rot = r.rotate(X_B05, np.arange(3.0))
    np.testing.assert_allclose(rot[2], row2, atol=1e-8)
    np.testing.assert_array_equal(rot[0], X_B05[0])                       # position 0 is the identity
    np.testing.assert_allclose(r.rotate(X_B05[2:3], offset=2)[0], rot[2], atol=1e-14)
    q, k = X_B05[2:3], X_B05[1:2]
    near = float(np.sum(r.rotate(q, [3.0]) * r.rotate(k, [1.0])))
    far = float(np.sum(r.rotate(q, [10.0]) * r.rotate(k, [8.0])))
    assert near == pytest.approx(dot, abs=1e-8)
    assert far == pytest.approx(dot, abs=1e-8)
