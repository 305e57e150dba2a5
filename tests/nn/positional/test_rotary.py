"""RotaryEmbedding (RoPE): finite differences at real positions, the relative-position property,
published values (B04, B05) and its use as the head hook of attention."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import gradcheck
from glassformer.errors import InputError, ShapeError
from glassformer.nn import Module, RotaryEmbedding
from glassformer.selftest.published import bug_report


# --------------------------------------------------------------------------- RotaryEmbedding
class _Rotate(Module):
    def __init__(self, rope, positions, offset=0.0):
        super().__init__()
        self.rope, self.positions, self.offset = rope, positions, offset

    def forward(self, x):
        self._save(done=True)
        return self.rope.rotate(x, self.positions, self.offset)

    def backward(self, g):
        return self.rope.rotate_backward(g, self.positions, self.offset)


@pytest.mark.parametrize("interleaved", [False, True])
def test_rotary_gradcheck_real_positions(interleaved):
    rng = np.random.default_rng(3)
    rope = RotaryEmbedding(6, interleaved=interleaved)
    positions = rng.uniform(1000.0, 1010.0, size=(2, 5))     # depths in metres, per batch
    rep = gradcheck(_Rotate(rope, positions, offset=0.5), (rng.standard_normal((2, 3, 5, 6)),))
    assert rep.max_error <= 1e-6, str(rep)


def test_rotary_relative_and_norm_preserving():
    rng = np.random.default_rng(4)
    rope = RotaryEmbedding(8)
    q, k = rng.standard_normal((1, 8)), rng.standard_normal((1, 8))
    a = np.sum(rope.rotate(q, [2.37]) * rope.rotate(k, [0.12]))
    b = np.sum(rope.rotate(q, [102.37]) * rope.rotate(k, [100.12]))
    assert a == pytest.approx(b, abs=1e-9)
    x = rng.standard_normal((3, 5, 8))
    np.testing.assert_allclose(np.linalg.norm(rope.rotate(x, np.linspace(0, 9, 5)), axis=-1),
                               np.linalg.norm(x, axis=-1), atol=1e-12)
    with pytest.raises(ShapeError):
        rope.rotate(x, np.arange(4.0))
    with pytest.raises(ShapeError):
        rope.rotate(np.ones((5, 6)))


# --------------------------------------------------------------------------- B04 / B05


def test_the_head_hook_rotates_queries_and_keys_inside_attention():
    from glassformer.nn import MultiheadAttention

    rng = np.random.default_rng(6)
    rope = RotaryEmbedding(4)
    q, k = rng.standard_normal((2, 2, 3, 4)), rng.standard_normal((2, 2, 5, 4))
    qp, kp = np.array([1.0, 2.5, 3.0]), np.arange(5.0)
    rq, rk = rope.forward(q, k, (qp, kp))
    np.testing.assert_array_equal(rq, rope.rotate(q, qp))
    np.testing.assert_array_equal(rk, rope.rotate(k, kp))
    dq, dk = rope.backward(rq, rk, (qp, kp))                      # R^T R = I
    np.testing.assert_allclose(dq, q, atol=1e-12)
    np.testing.assert_allclose(dk, k, atol=1e-12)
    mha = MultiheadAttention(8, 2, head_hook=rope, rng=0)
    x = rng.standard_normal((1, 3, 8))
    depths = np.array([1500.0, 1500.4, 1501.3])
    mha(x, x, x, positions=depths)
    it = mha.intermediates()
    Q = (x @ mha.in_proj_weight.data[:8].T + mha.in_proj_bias.data[:8]).reshape(1, 3, 2, 4).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(it["Q"], rope.rotate(Q, depths), atol=1e-12)
    with pytest.raises(InputError, match="query_positions, key_positions"):
        mha(x, x[:, :2], x[:, :2], positions=depths)


# --------------------------------------------------------------------------- cases from public bug reports
# (inputs and expected values are stored once, in glassformer/selftest/published.json, with their sources)
def test_rope_odd_head_dim_is_a_clear_value_error():
    case = bug_report("rope_odd_head_dim")
    with pytest.raises(ValueError, match="head_dim must be even"):
        RotaryEmbedding(case.inputs["odd_head_dim"])
    with pytest.raises(InputError):
        RotaryEmbedding(case.inputs["odd_head_dim"])
    r = RotaryEmbedding(case.inputs["even_head_dim"])
    assert r.rotate(np.ones((2, 4))).shape == (2, 4)


@pytest.mark.parametrize("interleaved", [True, False])
def test_rope_values(interleaved):
    case = bug_report("rope_values")
    x = case.inputs["x"]
    want = case.expected["interleaved" if interleaved else "half_split"]
    r = RotaryEmbedding(case.inputs["head_dim"], base=case.inputs["base"], interleaved=interleaved)
    rot = r.rotate(x, case.inputs["positions"])
    np.testing.assert_allclose(rot[2], want["row_2"], atol=1e-8)
    np.testing.assert_array_equal(rot[0], x[0])                       # position 0 is the identity
    np.testing.assert_allclose(r.rotate(x[2:3], offset=case.inputs["offset"])[0], rot[2], atol=1e-14)
    q, k = x[case.inputs["query_row"]:][:1], x[case.inputs["key_row"]:][:1]
    (near_q, near_k), (far_q, far_k) = case.inputs["position_pairs"]
    near = float(np.sum(r.rotate(q, [near_q]) * r.rotate(k, [near_k])))
    far = float(np.sum(r.rotate(q, [far_q]) * r.rotate(k, [far_k])))
    assert near == pytest.approx(want["dot"], abs=1e-8)
    assert far == pytest.approx(want["dot"], abs=1e-8)
