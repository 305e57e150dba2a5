"""MultiheadAttention: finite-difference gradients with every mask kind, mask semantics, PyTorch
parity, the cases of public bug reports, and the hooks (head hook, weights override, tracing)."""

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
)
from glassformer.selftest.published import bug_report

B, L, S, E, H = 2, 4, 3, 6, 2


class SelfAttention(Module):
    """Wrapper so gradcheck sees one input used as query, key and value (the fused QKV path)."""

    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, x, **kwargs):
        return self.mha(x, x, x, **kwargs)[0]

    def backward(self, grad_output):
        return sum(self.mha.backward(grad_output))        # query is key is value: the sum of the three


class CrossAttention(Module):
    """Wrapper for the fused key/value path: query and one memory array used as key and value."""

    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, x, mem, **kwargs):
        return self.mha(x, mem, mem, **kwargs)[0]

    def backward(self, grad_output):
        d_query, d_key, d_value = self.mha.backward(grad_output)
        return d_query, d_key + d_value                   # key is value: the memory's gradient is the sum


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
    mha = MultiheadAttention(8, 2, head_hook=RotaryEmbedding(4, interleaved=interleaved), out_proj=False, rng=0)
    mha.in_proj_bias.data[...] = rng.standard_normal(24)
    assert list(mha.state_dict()) == ["in_proj_weight", "in_proj_bias"]
    x = rng.standard_normal((B, L, 8))
    positions = rng.uniform(0, 30, size=(B, L))           # real-valued depths, one row per batch
    rep = gradcheck(SelfAttention(mha), (x,), kwargs={"positions": positions, "is_causal": True})
    assert rep.max_error <= 1e-6, str(rep)


def test_backward_returns_three_gradients_whichever_arrays_are_shared():
    """(d_query, d_key, d_value) always, as PyTorch's autograd; a shared array's gradient is their sum,
    equal to the fused gradient the transformer layers take internally."""
    rng = np.random.default_rng(5)
    mha = _mha()
    x, g = rng.standard_normal((B, L, E)), rng.standard_normal((B, L, E))
    mem = rng.standard_normal((B, S, E))
    mha(x, x.copy(), x.copy())
    separate = mha.backward(g)                                  # three distinct arrays
    mha(x, x, x)
    shared = mha.backward(g)                                    # q is k is v
    assert len(separate) == len(shared) == 3
    for a, b in zip(shared, separate):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    assert not np.allclose(shared[0], shared[1])                # each is its own input's part, not the sum
    mha(x, x, x)
    (grouped,) = mha._backward_grouped(g)
    np.testing.assert_allclose(sum(shared), grouped, rtol=1e-12, atol=1e-13)
    mha(x, mem, mem)                                            # k is v
    d_query, d_key, d_value = mha.backward(g)
    assert (d_query.shape, d_key.shape, d_value.shape) == ((B, L, E), (B, S, E), (B, S, E))
    mha(x, mem, mem)
    d_q2, d_mem = mha._backward_grouped(g)
    np.testing.assert_allclose(d_key + d_value, d_mem, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(d_query, d_q2, rtol=1e-12, atol=1e-13)


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
    with mha.tracing():
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
    with mha.tracing():
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


# --------------------------------------------------------------------------- PyTorch parity
MASKS = ["none", "causal", "bool2d", "bool3d", "float2d", "float3d_inf", "kpm_bool", "kpm_float", "fully_masked"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("kind", ["self", "cross", "separate"])
def test_mha_parity(kind, mask, dtype, tp):
    rng = np.random.default_rng(tp.seed(kind, mask))
    tp.torch.manual_seed(0)
    tm = tp.torch.nn.MultiheadAttention(tp.E, tp.H, batch_first=True).to(tp.DTYPES[dtype])
    # torch initialises the biases to zero: give them values so their gradients are exercised
    with tp.torch.no_grad():
        tm.in_proj_bias.normal_()
        tm.out_proj.bias.normal_()
    tm.train()
    ours = MultiheadAttention(tp.E, tp.H, rng=1, dtype=dtype)
    tp.load(ours, tm)

    Sk = tp.L if kind == "self" else tp.S
    x = tp.rand(rng, (tp.B, tp.L, tp.E), dtype)
    mem = tp.rand(rng, (tp.B, tp.S, tp.E), dtype)
    v_sep = tp.rand(rng, (tp.B, tp.S, tp.E), dtype)
    R = tp.rand(rng, (tp.B, tp.L, tp.E), dtype)
    blocked = None
    if mask == "fully_masked":
        ok, tk, blocked = tp.fully_masked_setup(rng, tp.L, Sk)
    else:
        ok, tk = tp.make_masks(mask, rng, tp.L, Sk, dtype)

    tx, tmem, tv = tp.t(x, True), tp.t(mem, True), tp.t(v_sep, True)
    if kind == "self":
        args_t, args_o = (tx, tx, tx), (x, x, x)
    elif kind == "cross":
        args_t, args_o = (tx, tmem, tmem), (x, mem, mem)
    else:
        args_t, args_o = (tx, tmem, tv), (x, mem, v_sep)

    for average in (True, False):
        out, w = ours(*args_o, average_attn_weights=average, **ok)
        tout, tw = tm(*args_t, average_attn_weights=average, **tk)
        tout, tw = tout.detach().numpy(), tw.detach().numpy()
        if blocked is not None:
            # Our rule for blocked rows; torch (unmasked reference) for the rest.
            bias = ours.out_proj.bias.data
            np.testing.assert_array_equal(out[blocked], np.broadcast_to(bias, out[blocked].shape))
            wb = w[blocked] if average else w.transpose(0, 2, 1, 3)[blocked]
            assert np.all(wb == 0.0)
            out, tout = out[~blocked], tout[~blocked]
            w = w[~blocked] if average else w.transpose(0, 2, 1, 3)[~blocked]
            tw = tw[~blocked] if average else tw.transpose(0, 2, 1, 3)[~blocked]
        tp.assert_match(out, tout, dtype, f"output (average={average})")
        tp.assert_match(w, tw, dtype, f"weights (average={average})")

    # gradients of sum(R * output)
    ours.zero_grad()
    out, _ = ours(*args_o, need_weights=False, **ok)
    grads = ours.backward(R)                   # (d_query, d_key, d_value) whichever arrays are shared
    Rt = R.copy()
    extra = None
    if blocked is not None:
        Rt[blocked] = 0.0                       # ... and given no upstream gradient
        extra = {"out_proj.bias": R[blocked].sum(axis=0).astype(np.float64)}
    tm.zero_grad()
    tout, _ = tm(*args_t, **tk)
    tout.backward(tp.t(Rt))
    tp.compare_param_grads(ours, tm, dtype, extra)
    assert len(grads) == 3
    if kind == "self":
        tp.assert_match(sum(grads), tx.grad.numpy(), dtype, "d_x")        # x was query, key and value
    elif kind == "cross":
        dq, dk, dv = grads
        tp.assert_match(dq, tx.grad.numpy(), dtype, "d_query")
        tp.assert_match(dk + dv, tmem.grad.numpy(), dtype, "d_memory")   # memory was key and value
    else:
        dq, dk, dv = grads
        tp.assert_match(dq, tx.grad.numpy(), dtype, "d_query")
        tp.assert_match(dk, tmem.grad.numpy(), dtype, "d_key")
        tp.assert_match(dv, tv.grad.numpy(), dtype, "d_value")


def test_mha_parity_unbatched(tp):
    rng = np.random.default_rng(5)
    tp.torch.manual_seed(1)
    tm = tp.torch.nn.MultiheadAttention(tp.E, tp.H).double().train()
    ours = MultiheadAttention(tp.E, tp.H, rng=0)
    tp.load(ours, tm)
    x = rng.standard_normal((tp.L, tp.E))
    m = causal_mask(tp.L)
    out, w = ours(x, x, x, attn_mask=m, average_attn_weights=False)
    tx = tp.t(x, True)
    tout, tw = tm(tx, tx, tx, attn_mask=tp.t(m), average_attn_weights=False)
    assert out.shape == (tp.L, tp.E) and w.shape == (tp.H, tp.L, tp.L)
    tp.assert_match(out, tout.detach().numpy(), np.float64, "unbatched output")
    tp.assert_match(w, tw.detach().numpy(), np.float64, "unbatched weights")
    R = rng.standard_normal((tp.L, tp.E))
    tout.backward(tp.t(R))
    tp.assert_match(sum(ours.backward(R)), tx.grad.numpy(), np.float64, "unbatched d_x")


# --------------------------------------------------------------------------- cases from public bug reports (B01, B07, B08)


# --------------------------------------------------------------------------- B07
def _b07_layer(wq):
    mha = MultiheadAttention(4, 2, rng=0)
    mha.in_proj_weight.data[...] = np.vstack([wq, np.eye(4), np.eye(4)])
    mha.in_proj_bias.data[...] = 0.0
    mha.out_proj.weight.data[...] = np.eye(4)
    mha.out_proj.bias.data[...] = 0.0
    return mha


# --------------------------------------------------------------------------- B08


# --------------------------------------------------------------------------- hooks
def test_override_weights_replaces_the_softmax_and_restores():
    rng = np.random.default_rng(20)
    mha = _mha()
    x = rng.standard_normal((B, L, E))
    normal, _ = mha(x, x, x)
    uniform = np.full((L, L), 1.0 / L)
    with mha.override_weights(uniform):
        out, w = mha(x, x, x, average_attn_weights=False)
        it = mha.intermediates()
    assert "S" not in it                                   # no scores are formed
    np.testing.assert_array_equal(w, np.broadcast_to(uniform, (B, H, L, L)))
    # by hand: U = A V per head with V = x W_V^T + b_V, then out_proj
    V = x @ mha.in_proj_weight.data[2 * E:].T + mha.in_proj_bias.data[2 * E:]
    U = np.broadcast_to(V.mean(axis=1, keepdims=True), (B, L, E))
    np.testing.assert_allclose(out, U @ mha.out_proj.weight.data.T + mha.out_proj.bias.data, atol=1e-12)
    np.testing.assert_array_equal(mha(x, x, x)[0], normal)    # the override ends with the block
    with mha.override_weights(np.eye(L + 1)):
        with pytest.raises(ShapeError, match="override_weights"):
            mha(x, x, x)


def test_override_weights_gradients_flow_to_the_values_only():
    rng = np.random.default_rng(21)
    mha = _mha()
    q, k, v = rng.standard_normal((B, L, E)), rng.standard_normal((B, S, E)), rng.standard_normal((B, S, E))
    A = rng.random((H, L, S))
    with mha.override_weights(A):
        rep = gradcheck(mha, (q, k, v))
        assert rep.max_error <= 1e-6, str(rep)
        mha(q, k, v)
        dq, dk, dv = mha.backward(np.ones((B, L, E)))
    assert not dq.any() and not dk.any() and dv.any()      # queries and keys only reach the (fixed) weights


def test_scores_are_recorded_only_when_tracing():
    rng = np.random.default_rng(22)
    mha = _mha()
    x = rng.standard_normal((1, L, E))
    mha(x, x, x, is_causal=True)
    assert "S" not in mha.intermediates()                   # training forwards keep no copy of S
    with mha.tracing():
        mha(x, x, x, is_causal=True)
    assert not mha._tracing
    S_ = mha.intermediates()["S"]
    assert np.all(np.isneginf(S_[..., np.triu_indices(L, 1)[0], np.triu_indices(L, 1)[1]]))
    A = mha.intermediates()["A"]
    e = np.exp(S_ - S_.max(-1, keepdims=True))
    np.testing.assert_allclose(A, e / e.sum(-1, keepdims=True), atol=1e-12)


class _ScaleKeys:
    """A head hook that is not RoPE: multiplies every key by its (positive) position."""

    def forward(self, q, k, positions):
        return q, k * np.asarray(positions[1])[..., :, None]

    def backward(self, dq, dk, positions):
        return dq, dk * np.asarray(positions[1])[..., :, None]


def test_any_object_with_forward_and_backward_is_a_head_hook():
    rng = np.random.default_rng(23)
    mha = _mha(head_hook=_ScaleKeys())
    x = rng.standard_normal((B, L, E))
    pos = np.array([0.5, 1.0, 2.0, 3.0])
    with mha.tracing():
        mha(x, x, x, positions=pos)
    it = mha.intermediates()
    K = (x @ mha.in_proj_weight.data[E:2 * E].T + mha.in_proj_bias.data[E:2 * E]).reshape(B, L, H, E // H)
    np.testing.assert_allclose(it["K"], K.transpose(0, 2, 1, 3) * pos[:, None], atol=1e-12)
    rep = gradcheck(SelfAttention(mha), (x,), kwargs={"positions": pos})
    assert rep.max_error <= 1e-6, str(rep)
    with pytest.raises(InputError, match="head_hook"):
        MultiheadAttention(E, H, head_hook=object())
    with pytest.raises(InputError, match="head_dim"):
        MultiheadAttention(E, H, head_hook=RotaryEmbedding(4))


# --------------------------------------------------------------------------- cases from public bug reports
# (inputs and expected values are stored once, in glassformer/selftest/published.json, with their sources)
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


def test_is_causal_builds_the_mask():
    rng = np.random.default_rng(3)
    mha = MultiheadAttention(6, 2, rng=0)
    x = rng.standard_normal((2, 4, 6))
    _, w = mha(x, x, x, is_causal=True, average_attn_weights=False)
    assert np.all(w[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0)
    out_a, _ = mha(x, x, x, is_causal=True)
    out_b, _ = mha(x, x, x, attn_mask=causal_mask(4))
    np.testing.assert_array_equal(out_a, out_b)


def test_query_blocks_keep_no_weights_yet_give_the_same_layer_and_every_weight_to_inspect():
    rng = np.random.default_rng(21)
    x = rng.standard_normal((2, 10, 8))
    dO = rng.standard_normal((2, 10, 8))
    results = []
    for block in (None, 3):
        att = MultiheadAttention(8, 2, rng=5, query_block=block)
        out, w = att(x, x, x, need_weights=True, is_causal=True)
        assert (att._cache["A"] is None) == (block is not None)          # blocks: no (L, S) weights kept
        dx = sum(att.backward(dO))
        results.append((out, w, dx, att.intermediates()["A"], att.in_proj_weight.grad.copy()))
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert "query_block=3" in repr(att)
