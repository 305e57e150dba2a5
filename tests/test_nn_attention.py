"""MultiheadAttention: finite-difference gradients with every mask kind, mask semantics, properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from glassformer import gradcheck
from glassformer.errors import InputError, NotReadyError, ShapeError, StateDictError
from glassformer.nn import (
    Module,
    MultiheadAttention,
    RotaryEmbedding,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)

B, L, S, E, H = 2, 4, 3, 6, 2


class SelfAttention(Module):
    """Wrapper so gradcheck sees one input used as query, key and value (the fused QKV path)."""

    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, x, **kwargs):
        return self.mha(x, x, x, **kwargs)[0]

    def backward(self, grad_output):
        return self.mha.backward_grouped(grad_output)[0]


class CrossAttention(Module):
    """Wrapper for the fused key/value path: query and one memory array used as key and value."""

    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, x, mem, **kwargs):
        return self.mha(x, mem, mem, **kwargs)[0]

    def backward(self, grad_output):
        return self.mha.backward_grouped(grad_output)


def _mha(rng=0, **kw):
    m = MultiheadAttention(E, H, rng=rng, **kw)
    gen = np.random.default_rng(rng + 100)
    m.in_proj_bias.data[...] = gen.standard_normal(3 * E) * 0.5
    if m.out_proj is not None:
        m.out_proj.bias.data[...] = gen.standard_normal(E) * 0.5
    return m


def _masks(kind, Lq, Sk, rng):
    if kind == "none":
        return {}
    if kind == "causal":
        return {"is_causal": True}
    if kind == "bool":
        m = rng.random((Lq, Sk)) < 0.4
        m[:, 0] = False
        return {"attn_mask": m}
    if kind == "bool3d":
        m = rng.random((B * H, Lq, Sk)) < 0.4
        m[..., -1] = False
        return {"attn_mask": m}
    if kind == "float":
        return {"attn_mask": rng.standard_normal((Lq, Sk))}
    if kind == "key_padding":
        k = np.zeros((B, Sk), bool)
        k[0, -1] = True
        return {"key_padding_mask": k}
    if kind == "fully_masked":
        m = np.zeros((Lq, Sk), bool)
        m[1] = True                                  # query row 1 sees nothing
        k = np.zeros((B, Sk), bool)
        k[1] = True                                  # batch 1 is all padding
        return {"attn_mask": m, "key_padding_mask": k}
    raise AssertionError(kind)


MASK_KINDS = ["none", "causal", "bool", "bool3d", "float", "key_padding", "fully_masked"]


@pytest.mark.parametrize("mask", MASK_KINDS)
def test_gradcheck_self_attention_fused(mask):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((B, L, E))
    rep = gradcheck(SelfAttention(_mha()), (x,), kwargs=_masks(mask, L, L, rng))
    assert rep.max_error <= 1e-6, str(rep)


@pytest.mark.parametrize("mask", MASK_KINDS)
def test_gradcheck_cross_attention_fused_kv(mask):
    rng = np.random.default_rng(2)
    x, mem = rng.standard_normal((B, L, E)), rng.standard_normal((B, S, E))
    rep = gradcheck(CrossAttention(_mha()), (x, mem), kwargs=_masks(mask, L, S, rng))
    assert rep.max_error <= 1e-6, str(rep)


@pytest.mark.parametrize("mask", ["none", "causal", "float", "fully_masked"])
def test_gradcheck_separate_query_key_value(mask):
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((B, L, E)), rng.standard_normal((B, S, E)), rng.standard_normal((B, S, E))
    rep = gradcheck(_mha(), (q, k, v), kwargs=_masks(mask, L, S, rng))
    assert rep.max_error <= 1e-6, str(rep)
    assert set(rep.errors) >= {"in_proj_weight", "out_proj.weight", "input[0]", "input[1]", "input[2]"}


@pytest.mark.parametrize("interleaved", [False, True])
def test_gradcheck_rotary_and_no_out_proj(interleaved):
    rng = np.random.default_rng(4)
    mha = MultiheadAttention(8, 2, rotary=RotaryEmbedding(4, interleaved=interleaved), out_proj=False, rng=0)
    mha.in_proj_bias.data[...] = rng.standard_normal(24)
    assert list(mha.state_dict()) == ["in_proj_weight", "in_proj_bias"]
    x = rng.standard_normal((B, L, 8))
    positions = rng.uniform(0, 30, size=(B, L))           # real-valued depths, one row per batch
    rep = gradcheck(SelfAttention(mha), (x,), kwargs={"positions": positions, "is_causal": True})
    assert rep.max_error <= 1e-6, str(rep)


def test_backward_three_gradients_sum_to_grouped():
    rng = np.random.default_rng(5)
    mha = _mha()
    x, g = rng.standard_normal((B, L, E)), rng.standard_normal((B, L, E))
    mha(x, x, x)
    (grouped,) = mha.backward_grouped(g)
    mha(x, x, x)
    dq, dk, dv = mha.backward(g)
    np.testing.assert_allclose(dq + dk + dv, grouped, atol=1e-12)
    assert not np.allclose(dq, dk)


def test_fused_and_separate_paths_agree():
    rng = np.random.default_rng(6)
    mha = _mha()
    x = rng.standard_normal((B, L, E))
    fused, w1 = mha(x, x, x)
    sep, w2 = mha(x, x.copy(), x.copy())
    np.testing.assert_allclose(fused, sep, atol=1e-12)
    np.testing.assert_allclose(w1, w2, atol=1e-12)


def test_weight_shapes_and_sums():
    rng = np.random.default_rng(7)
    mha = _mha()
    x, mem = rng.standard_normal((B, L, E)), rng.standard_normal((B, S, E))
    out, w = mha(x, mem, mem)
    assert out.shape == (B, L, E) and w.shape == (B, L, S)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    _, wh = mha(x, mem, mem, average_attn_weights=False)
    assert wh.shape == (B, H, L, S)
    np.testing.assert_allclose(wh.mean(axis=1), w, atol=1e-15)
    out2, none = mha(x, mem, mem, need_weights=False)
    assert none is None
    np.testing.assert_array_equal(out, out2)


def test_float_mask_equals_bool_mask_with_minus_inf():
    rng = np.random.default_rng(8)
    mha = _mha()
    x = rng.standard_normal((B, L, E))
    m = causal_mask(L)
    f = np.where(m, -np.inf, 0.0)
    a, wa = mha(x, x, x, attn_mask=m)
    b, wb = mha(x, x, x, attn_mask=f)
    np.testing.assert_allclose(a, b, atol=1e-14)
    np.testing.assert_allclose(wa, wb, atol=1e-14)


def test_float_mask_is_added_to_scores():
    rng = np.random.default_rng(9)
    mha = _mha()
    x = rng.standard_normal((1, L, E))
    bias = rng.standard_normal((L, L))
    mha(x, x, x, attn_mask=bias)
    inter = mha.intermediates()
    q, k = inter["Q"], inter["K"]
    expected = q @ k.swapaxes(-1, -2) / np.sqrt(E // H) + bias
    np.testing.assert_allclose(inter["S"], expected, atol=1e-12)
    e = np.exp(expected - expected.max(-1, keepdims=True))
    np.testing.assert_allclose(inter["A"], e / e.sum(-1, keepdims=True), atol=1e-12)


def test_intermediates_contents():
    rng = np.random.default_rng(10)
    mha = _mha()
    with pytest.raises(NotReadyError):
        mha.intermediates()
    x = rng.standard_normal((B, L, E))
    kpm = padding_mask([4, 2], L)
    out, _ = mha(x, x, x, key_padding_mask=kpm)
    it = mha.intermediates()
    assert set(it) == {"Q", "K", "V", "S", "A", "U", "O"}
    assert it["Q"].shape == (B, H, L, E // H) and it["S"].shape == (B, H, L, L)
    assert np.all(np.isneginf(it["S"][1, :, :, 2:])) and np.all(it["A"][1, :, :, 2:] == 0)
    Wq = mha.in_proj_weight.data[:E]
    q = (x @ Wq.T + mha.in_proj_bias.data[:E]).reshape(B, L, H, E // H).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(it["Q"], q, atol=1e-12)
    U = (it["A"] @ it["V"]).transpose(0, 2, 1, 3).reshape(B, L, E)
    np.testing.assert_allclose(it["U"], U, atol=1e-12)
    np.testing.assert_array_equal(it["O"], out)
    it["A"][:] = 5.0                                    # copies: the cache is untouched
    assert np.all(mha.intermediates()["A"] <= 1.0)


def test_mask_helpers():
    np.testing.assert_array_equal(causal_mask(3), [[0, 1, 1], [0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(causal_mask(2, 3), [[0, 1, 1], [0, 0, 1]])
    np.testing.assert_array_equal(padding_mask([3, 1, 0], 3), [[0, 0, 0], [0, 1, 1], [1, 1, 1]])
    with pytest.raises(InputError):
        padding_mask([4], 3)


def test_errors_and_contract():
    rng = np.random.default_rng(11)
    with pytest.raises(InputError, match="divisible"):
        MultiheadAttention(6, 4)
    mha = _mha()
    with pytest.raises(NotReadyError):
        mha.backward(np.zeros((B, L, E)))
    x = rng.standard_normal((B, L, E))
    with pytest.raises(ShapeError, match="attn_mask"):
        mha(x, x, x, attn_mask=np.zeros((L, L + 1), bool))
    with pytest.raises(ShapeError, match="key_padding_mask"):
        mha(x, x, x, key_padding_mask=np.zeros((B + 1, L), bool))
    with pytest.raises(InputError, match="bool"):
        mha(x, x, x, attn_mask=np.zeros((L, L), int))
    with pytest.raises(InputError, match="NaN"):
        mha(x, x, x, attn_mask=np.full((L, L), np.nan))
    with pytest.raises(ShapeError):
        mha(x[..., :4], x[..., :4], x[..., :4])
    sd = mha.state_dict()
    sd["in_proj_weight"] = np.zeros((E, E))
    with pytest.raises(StateDictError, match="in_proj_weight"):
        mha.load_state_dict(sd)
    with mha.no_cache():
        mha(x, x, x)
        with pytest.raises(NotReadyError):
            mha.backward(x)


def test_float32_end_to_end():
    rng = np.random.default_rng(12)
    mha = MultiheadAttention(E, H, rng=0, dtype=np.float32)
    x = rng.standard_normal((B, L, E)).astype(np.float32)
    out, w = mha(x, x, x, attn_mask=np.zeros((L, L), np.float32))
    assert out.dtype == np.float32 and w.dtype == np.float32
    grads = mha.backward(np.ones_like(out))
    assert all(g.dtype == np.float32 for g in grads)
    assert all(p.grad.dtype == np.float32 for p in mha.parameters())


def test_attention_dropout_trains_and_eval_is_deterministic():
    rng = np.random.default_rng(13)
    mha = MultiheadAttention(E, H, dropout=0.5, rng=0)
    x = rng.standard_normal((B, L, E))
    a, wa = mha(x, x, x)
    b, _ = mha(x, x, x)
    assert not np.allclose(a, b)                       # a new mask per call
    assert np.any(wa == 0)
    mha.eval()
    c, wc = mha(x, x, x)
    d, _ = mha(x, x, x)
    np.testing.assert_array_equal(c, d)
    np.testing.assert_allclose(wc.sum(-1), 1.0)
    mha.train()                                        # backward uses the same mask as its forward
    rep = gradcheck(SelfAttention(MultiheadAttention(E, H, dropout=0.0, rng=0)), (x,))
    assert rep.max_error <= 1e-6


def test_kernel_broadcasts_over_leading_axes():
    rng = np.random.default_rng(14)
    q, k, v = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3, 6, 7))
    out, w = scaled_dot_product_attention(q, k, v)
    s = np.einsum("bhld,bhsd->bhls", q, k) / np.sqrt(5)
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(w, e / e.sum(-1, keepdims=True), atol=1e-12)
    np.testing.assert_allclose(out, np.einsum("bhls,bhsd->bhld", w, v), atol=1e-12)


# --------------------------------------------------------------------------- properties
@settings(max_examples=25, deadline=None)
@given(mask=hnp.arrays(bool, (B * H, L, L)), kpm=hnp.arrays(bool, (B, L)))
def test_property_any_boolean_mask_is_finite(mask, kpm):
    mha = _mha()
    x = np.random.default_rng(0).standard_normal((B, L, E))
    out, w = mha(x, x, x, attn_mask=mask, key_padding_mask=kpm, average_attn_weights=False)
    assert np.isfinite(out).all() and np.isfinite(w).all()
    grads = mha.backward(np.ones_like(out))
    assert all(np.isfinite(g).all() for g in grads)
    assert all(np.isfinite(p.grad).all() for p in mha.parameters())
    blocked = mask.reshape(B, H, L, L) | kpm[:, None, None, :]
    assert np.all(w[blocked] == 0)
    rows_open = ~blocked.all(-1)
    np.testing.assert_allclose(w.sum(-1)[rows_open], 1.0, atol=1e-12)
    assert np.all(w.sum(-1)[~rows_open] == 0)


@settings(max_examples=25, deadline=None)
@given(j=st.integers(0, L - 1), delta=st.floats(0.5, 3.0))
def test_property_perturbing_a_token_changes_other_rows(j, delta):
    mha = _mha()
    x = np.random.default_rng(1).standard_normal((1, L, E))
    x2 = x.copy()
    x2[0, j] += delta
    a, _ = mha(x, x, x)
    b, _ = mha(x2, x2, x2)
    others = [i for i in range(L) if i != j]
    assert np.all(np.max(np.abs(b[0, others] - a[0, others]), axis=-1) > 1e-9)


def test_shape_errors_say_which_tensors_disagree():
    """A batch mismatch between query and key/value is named as such, not as a key/value mismatch."""
    mha = MultiheadAttention(8, 2, rng=0)
    rng = np.random.default_rng(12)
    q, kv = rng.standard_normal((2, 5, 8)), rng.standard_normal((3, 6, 8))
    with pytest.raises(ShapeError, match=r"query and key/value have different batch sizes \(2 vs 3\)"):
        mha(q, kv, kv)
    with pytest.raises(ShapeError, match=r"key and value must have the same shape.*key \(2, 6, 8\) and value \(2, 4, 8\)"):
        mha(q, rng.standard_normal((2, 6, 8)), rng.standard_normal((2, 4, 8)))
