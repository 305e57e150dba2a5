"""Cases from public bug reports, recomputed by the library's attention, RoPE and LayerNorm.

Inputs and expected values (computed independently of this code, by hand) are read from
glassformer/selftest/published.json, where each case names its source; `glassformer check`
recomputes some of them from the same file.
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
from glassformer.selftest.published import bug_report


# --------------------------------------------------------------------------- fully padded sequence
def test_fully_padded_sequence_gives_zeros_not_nan():
    case = bug_report("fully_padded_sequence")
    x, kpm, want = case.inputs["x"], case.inputs["key_padding_mask"], case.expected
    allowed = ~kpm[:, None, :]                       # (batch, 1 query axis, S)
    out, w = scaled_dot_product_attention(x, x, x, allowed=allowed)   # scale 1/sqrt(2), no projections
    np.testing.assert_allclose(w[0], want["weights_0"], atol=1e-8)
    np.testing.assert_allclose(out[0], want["output_0"], atol=1e-8)
    assert np.all(w[1] == 0) and np.all(out[1] == 0)

    dq, dk, dv = scaled_dot_product_attention_backward(np.ones_like(out), x, x, x, w)
    dx = dq + dk + dv                                 # q = k = v = x share one gradient
    np.testing.assert_allclose(dx[0], want["grad_x_0"], atol=1e-8)
    assert np.all(dx[1] == 0)


def test_fully_padded_sequence_in_a_full_layer_is_out_proj_bias():
    kpm = bug_report("fully_padded_sequence").inputs["key_padding_mask"]
    rng = np.random.default_rng(0)
    mha = MultiheadAttention(4, 2, rng=1)
    mha.out_proj.bias.data[...] = [0.1, -0.2, 0.3, 0.4]
    x = rng.standard_normal((2, 3, 4))
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


# --------------------------------------------------------------------------- head split and merge
def _split_merge_layer(wq):
    mha = MultiheadAttention(4, bug_report("head_split_merge").inputs["num_heads"], rng=0)
    mha.in_proj_weight.data[...] = np.vstack([wq, np.eye(4), np.eye(4)])
    mha.in_proj_bias.data[...] = 0.0
    mha.out_proj.weight.data[...] = np.eye(4)
    mha.out_proj.bias.data[...] = 0.0
    return mha


def test_heads_are_split_and_merged_with_a_transpose():
    case = bug_report("head_split_merge")
    x = case.inputs["x"]
    out, _ = _split_merge_layer(np.zeros((4, 4)))(x, x, x)
    # uniform weights: each head averages its own two features over the two tokens
    np.testing.assert_allclose(out[0], case.expected["output"], atol=1e-12)
    assert not np.allclose(out[0], case.expected["reshape_without_transpose"])

    diagonal_only = ~np.eye(2, dtype=bool)            # True = blocked: only the diagonal is allowed
    out, _ = _split_merge_layer(np.eye(4))(x, x, x, attn_mask=diagonal_only)
    np.testing.assert_allclose(out, x, atol=1e-12)


# --------------------------------------------------------------------------- causal attention
def test_causal_attention_weights_and_no_leak_from_later_values():
    case = bug_report("causal_attention")
    q, v = case.inputs["q"], case.inputs["v"]
    allowed = ~causal_mask(3)
    out, w = scaled_dot_product_attention(q, q, v, allowed=allowed)
    np.testing.assert_allclose(w, case.expected["weights"], atol=1e-8)
    np.testing.assert_allclose(out[:, 0], case.expected["output"], atol=1e-7)
    v2 = v.copy()
    v2[2] = -5.0
    out2, _ = scaled_dot_product_attention(q, q, v2, allowed=allowed)
    np.testing.assert_array_equal(out2[:2], out[:2])
    assert out2[2, 0] != out[2, 0]


def test_is_causal_builds_the_mask():
    rng = np.random.default_rng(3)
    mha = MultiheadAttention(6, 2, rng=0)
    x = rng.standard_normal((2, 4, 6))
    _, w = mha(x, x, x, is_causal=True, average_attn_weights=False)
    assert np.all(w[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0)
    out_a, _ = mha(x, x, x, is_causal=True)
    out_b, _ = mha(x, x, x, attn_mask=causal_mask(4))
    np.testing.assert_array_equal(out_a, out_b)


# --------------------------------------------------------------------------- LayerNorm
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_layernorm_over_one_feature(dtype):
    case = bug_report("layernorm_one_feature")
    ln = LayerNorm(1, eps=case.inputs["eps"], dtype=dtype)
    ln.weight.data[...] = case.inputs["weight"]
    ln.bias.data[...] = case.inputs["bias"]
    x = case.inputs["x"].astype(dtype)
    y = ln(x)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, case.expected["y"])
    dx = ln.backward(np.ones_like(x))
    assert np.all(np.abs(dx - case.expected["dx"]) <= 1e-6)
    assert np.all(np.abs(ln.weight.grad - case.expected["dweight"]) <= 1e-6)
    np.testing.assert_array_equal(ln.bias.grad, case.expected["dbias"])


def test_layernorm_backward_values():
    case = bug_report("layernorm_backward")
    ln = LayerNorm(3, eps=case.inputs["eps"])
    ln.weight.data[...] = case.inputs["weight"]
    ln.bias.data[...] = case.inputs["bias"]
    ln(case.inputs["x"])
    dx = ln.backward(case.inputs["dy"])
    np.testing.assert_allclose(ln.weight.grad, case.expected["dweight"], atol=1e-7)
    np.testing.assert_allclose(ln.bias.grad, case.expected["dbias"], atol=1e-12)
    np.testing.assert_allclose(dx[1, 1], case.expected["dx_1_1"], atol=1e-7)


# --------------------------------------------------------------------------- RoPE
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
