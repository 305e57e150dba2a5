"""The fast kernels equal the reference (Pyrcz 2024's equations in glassformer/nn/reference.py).

Every layer runs forward and backward once with ``kernels("fast")`` and once with
``kernels("reference")`` from the same parameters and inputs; outputs, input gradients and every
parameter gradient must agree to 1e-12 (relative to the array's largest entry) in float64 and to
float32's own rounding in float32.  Shapes and paths are drawn by hypothesis: bounded scores (long
rows of small scores, the fast softmax's unshifted path) and unbounded ones, boolean and float masks,
fully masked rows, members trained side by side, query blocks, caches and dropout.

Large scores (|S| up to ~1e3 at the drawn scale 30) carry a rounding of eps |S| themselves, which
exp turns into a relative error of eps |S| in the weights, in either tier; so in attention the
tolerance is multiplied by ``max(1, max|S|)``.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassformer import active_kernels, kernels
from glassformer.errors import InputError
from glassformer.models.members import stack_members
from glassformer.nn import (AttentionCache, FeedForward, LayerNorm, Linear, MultiheadAttention, RotaryEmbedding,
                            TransformerDecoderLayer, TransformerEncoderLayer, functional, get_activation)

SETTINGS = settings(max_examples=12, deadline=None)
TOL = {np.float64: 1e-12, np.float32: 1e-4}


def assert_same(ref, fast, dtype, what, exact=None, condition=1.0):
    """``fast`` equals ``ref`` to 1e-12 of the array's largest entry (float64); in float32 to float32's
    own rounding: no further from ``ref`` than 4 times the float32 reference's own distance from
    ``exact`` (the reference in float64 on the same inputs), or 1e-4 of the largest entry."""
    ref, fast = np.asarray(ref, dtype=np.float64), np.asarray(fast, dtype=np.float64)
    assert ref.shape == fast.shape, f"{what}: {ref.shape} vs {fast.shape}"
    assert np.array_equal(np.isfinite(ref), np.isfinite(fast)), what
    ok = np.isfinite(ref)
    scale = max(float(np.max(np.abs(ref[ok]), initial=0.0)), 1.0)
    err = float(np.max(np.abs(ref[ok] - fast[ok]), initial=0.0))
    allowed = TOL[dtype] * scale * condition
    if exact is not None:
        allowed = max(allowed, 4 * float(np.max(np.abs(ref[ok] - np.asarray(exact)[ok]), initial=0.0)))
    assert err <= allowed, f"{what}: max difference {err:.3e} > {allowed:.3e} (scale {scale:.3e})"


def _run_tier(layer, run, mode, float64=False):
    layer = copy.deepcopy(layer)                             # the same weights and the same dropout draws
    if float64:
        for p in layer.parameters():
            p.data, p.grad = p.data.astype(np.float64), np.zeros(p.shape, dtype=np.float64)
    layer.zero_grad()
    with kernels(mode):
        out = run(layer)
    return out, {n: p.grad.copy() for n, p in layer.named_parameters()}


def both(layer, run, dtype, condition=1.0):
    """``run(layer)`` -> outputs and input gradients, in each tier on copies of ``layer``; compares
    them and every parameter gradient."""
    out_f, g_f = _run_tier(layer, run, "fast")
    out_r, g_r = _run_tier(layer, run, "reference")
    out_x, g_x = _run_tier(layer, run, "reference", float64=True) if dtype == np.float32 else (None, None)
    for i, (a, b) in enumerate(zip(out_r, out_f)):
        assert_same(a, b, dtype, f"output/gradient {i}", None if out_x is None else out_x[i], condition)
    assert g_f.keys() == g_r.keys()
    for name in g_f:
        assert_same(g_r[name], g_f[name], dtype, f"d{name}", None if g_x is None else g_x[name], condition)


def _condition(attn, query, key) -> float:
    """``max(1, max|S|)`` of ``attn``'s scores from ``query`` to ``key`` (masks aside)."""
    E, H = attn.embed_dim, attn.num_heads
    W = np.asarray(attn.in_proj_weight.data, dtype=np.float64)
    Q = (query @ W[:E].T).reshape(*query.shape[:-1], H, E // H)
    K = (key @ W[E:2 * E].T).reshape(*key.shape[:-1], H, E // H)
    S = np.einsum("...lhd,...shd->...hls", Q, K) / np.sqrt(E // H)
    return max(1.0, float(np.abs(S).max()))


def _data(seed, shape, scale, dtype):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


dtypes = st.sampled_from([np.float64, np.float32])


# --------------------------------------------------------------------------- position-wise layers
@SETTINGS
@given(lead=st.lists(st.integers(1, 4), min_size=0, max_size=3), n_in=st.integers(1, 7),
       n_out=st.integers(1, 7), bias=st.booleans(), dtype=dtypes, seed=st.integers(0, 99))
def test_linear(lead, n_in, n_out, bias, dtype, seed):
    layer = Linear(n_in, n_out, bias, rng=seed, dtype=dtype)
    x, g = _data(seed, (*lead, n_in), 1.0, dtype), _data(seed + 1, (*lead, n_out), 1.0, dtype)
    both(layer, lambda m: (m(x), m.backward(g)), dtype)


@SETTINGS
@given(lead=st.lists(st.integers(1, 4), min_size=1, max_size=3), d=st.integers(1, 9), affine=st.booleans(),
       dtype=dtypes, seed=st.integers(0, 99))
def test_layer_norm(lead, d, affine, dtype, seed):
    layer = LayerNorm(d, elementwise_affine=affine, dtype=dtype)
    if affine:
        layer.weight.data[...] = _data(seed + 2, d, 1.0, dtype)
        layer.bias.data[...] = _data(seed + 3, d, 1.0, dtype)
    x, g = _data(seed, (*lead, d), 3.0, dtype), _data(seed + 1, (*lead, d), 1.0, dtype)
    # The input gradient is divided by each row's sd (rstd): rows of nearly equal values amplify
    # rounding by that much in both tiers (with two features the exact gradient is 0, all rounding).
    rstd = 1.0 / np.sqrt(np.var(x.astype(np.float64), axis=-1) + layer.eps)
    both(layer, lambda m: (m(x), m.backward(g)), dtype, condition=max(1.0, float(rstd.max())))


@SETTINGS
@given(name=st.sampled_from(["relu", "gelu", "gelu_tanh", "tanh"]), shape=st.lists(st.integers(1, 5), min_size=1,
       max_size=3), dtype=dtypes, seed=st.integers(0, 99))
def test_activations(name, shape, dtype, seed):
    x, g = _data(seed, shape, 2.0, dtype), _data(seed + 1, shape, 1.0, dtype)
    both(get_activation(name), lambda m: (m(x), m.backward(g)), dtype)


@SETTINGS
@given(d_model=st.integers(1, 6), d_ff=st.integers(1, 9), p=st.sampled_from([0.0, 0.3]), dtype=dtypes,
       seed=st.integers(0, 99))
def test_feed_forward_with_dropout(d_model, d_ff, p, dtype, seed):
    layer = FeedForward(d_model, d_ff, p, rng=seed, dtype=dtype)
    x, g = _data(seed, (2, 3, d_model), 1.0, dtype), _data(seed + 1, (2, 3, d_model), 1.0, dtype)
    both(layer, lambda m: (m(x), m.backward(g)), dtype)


# --------------------------------------------------------------------------- attention
def _masks(kind, B, H, L, S, seed):
    rng = np.random.default_rng(seed)
    if kind == "bool":
        m = rng.random((L, S)) < 0.4
        m[0] = True                                         # query 0 sees no key: a fully masked row
        return {"attn_mask": m}
    if kind == "float":
        m = rng.standard_normal((B * H, L, S))
        m[:, -1] = -np.inf                                  # the last query of every head: fully masked
        return {"attn_mask": m}
    if kind == "padding":
        return {"key_padding_mask": rng.random((B, S)) < 0.5}
    if kind == "causal":
        return {"is_causal": True} if L == S else {}
    return {}


@SETTINGS
@given(B=st.integers(1, 3), L=st.integers(1, 6), S=st.integers(1, 40), heads=st.sampled_from([1, 2]),
       head_dim=st.integers(1, 3), sharing=st.sampled_from(["qkv", "kv", "none"]),
       mask=st.sampled_from(["none", "bool", "float", "padding", "causal"]), scale=st.sampled_from([0.05, 1.0, 30.0]),
       out_proj=st.booleans(), dtype=dtypes, seed=st.integers(0, 99))
def test_multihead_attention(B, L, S, heads, head_dim, sharing, mask, scale, out_proj, dtype, seed):
    """Scale 0.05 on long rows: bounded scores (no max shift in the fast softmax); 30: scores far
    beyond exp's safe range, where the shift matters."""
    E = heads * head_dim
    if sharing == "qkv":
        S = L
    layer = MultiheadAttention(E, heads, out_proj=out_proj, rng=seed, dtype=dtype)
    layer.in_proj_weight.data *= dtype(scale)
    q = _data(seed, (B, L, E), 1.0, dtype)
    kv = q if sharing == "qkv" else _data(seed + 1, (B, S, E), 1.0, dtype)
    v = kv if sharing != "none" else _data(seed + 2, (B, S, E), 1.0, dtype)
    g = _data(seed + 3, (B, L, E), 1.0, dtype)
    masks = _masks(mask, B, heads, L, S, seed)

    def run(m):
        out, w = m(q, kv, v, average_attn_weights=False, **masks)
        return (out, w, *m.backward(g))
    both(layer, run, dtype, _condition(layer, q, kv))


@SETTINGS
@given(L=st.integers(2, 12), block=st.integers(1, 5), causal=st.booleans(), dtype=dtypes, seed=st.integers(0, 99))
def test_attention_by_query_blocks(L, block, causal, dtype, seed):
    layer = MultiheadAttention(4, 2, query_block=block, rng=seed, dtype=dtype)
    x, g = _data(seed, (2, L, 4), 1.0, dtype), _data(seed + 1, (2, L, 4), 1.0, dtype)

    def run(m):
        out, w = m(x, x, x, is_causal=causal, average_attn_weights=False)
        return (out, w, *m.backward(g), m.intermediates()["A"])
    both(layer, run, dtype)


@SETTINGS
@given(steps=st.lists(st.integers(1, 3), min_size=1, max_size=4), rotary=st.booleans(), dtype=dtypes,
       seed=st.integers(0, 99))
def test_incremental_decoding_with_a_cache(steps, rotary, dtype, seed):
    hook = RotaryEmbedding(2) if rotary else None
    layer = MultiheadAttention(4, 2, head_hook=hook, rng=seed, dtype=dtype)
    x = _data(seed, (2, sum(steps), 4), 1.0, dtype)

    def run(m):
        cache, outs, t = AttentionCache(), [], 0
        for n in steps:
            outs.append(m(x[:, t:t + n], x[:, t:t + n], x[:, t:t + n], is_causal=True, cache=cache)[0])
            t += n
        return (np.concatenate(outs, axis=1),)
    both(layer, run, dtype)


@SETTINGS
@given(norm_first=st.booleans(), dropout=st.sampled_from([0.0, 0.2]), heads=st.sampled_from([1, 2]),
       activation=st.sampled_from(["relu", "gelu"]), dtype=dtypes, seed=st.integers(0, 99))
def test_encoder_and_decoder_layers(norm_first, dropout, heads, activation, dtype, seed):
    enc = TransformerEncoderLayer(4, heads, 6, dropout, activation, norm_first=norm_first, rng=seed, dtype=dtype)
    x, g = _data(seed, (2, 5, 4), 1.0, dtype), _data(seed + 1, (2, 5, 4), 1.0, dtype)
    both(enc, lambda m: (m(x, is_causal=True), m.backward(g)), dtype)
    dec = TransformerDecoderLayer(4, heads, 6, dropout, activation, norm_first=norm_first, rng=seed, dtype=dtype)
    mem = _data(seed + 2, (2, 3, 4), 1.0, dtype)
    both(dec, lambda m: (m(x, mem, tgt_is_causal=True), *m.backward(g)), dtype)


@SETTINGS
@given(K=st.integers(1, 3), scale=st.sampled_from([0.05, 30.0]), dtype=dtypes, seed=st.integers(0, 99))
def test_members_trained_side_by_side(K, scale, dtype, seed):
    """A member axis: ``K`` encoder layers stacked, each member's parameters a row (models.members)."""
    layers = [TransformerEncoderLayer(4, 2, 6, 0.0, rng=seed + k, dtype=dtype) for k in range(K)]
    for k, layer in enumerate(layers):
        layer.self_attn.in_proj_weight.data *= dtype(scale if k % 2 else 1.0)   # members on different paths
    stacked = stack_members(layers)
    x = _data(seed, (K, 2, 9, 4), 1.0, dtype)
    g = _data(seed + 1, (K, 2, 9, 4), 1.0, dtype)
    condition = max(_condition(layer.self_attn, x[k], x[k]) for k, layer in enumerate(layers))
    both(stacked, lambda m: (m(x), m.backward(g)), dtype, condition)


def test_given_weights_and_attention_dropout():
    x, g = _data(0, (2, 4, 4), 1.0, np.float64), _data(1, (2, 4, 4), 1.0, np.float64)
    layer = MultiheadAttention(4, 2, dropout=0.5, rng=3)

    def run(m):
        with m.override_weights(np.full((4, 4), 0.25)):
            out = m(x, x, x)[0]
        return (out, *m.backward(g))
    both(layer, run, np.float64)
    both(layer, lambda m: (m(x, x, x)[0], *m.backward(g)), np.float64)      # dropout on the weights


# --------------------------------------------------------------------------- the switch itself
def test_the_reference_mode_runs_no_fast_kernel(monkeypatch):
    def broken(*args, **kwargs):
        raise AssertionError("a fast kernel ran in reference mode")
    for name in ("linear", "linear_backward", "layer_norm", "layer_norm_backward", "scaled_dot_product_attention",
                 "scaled_dot_product_attention_backward", "relu", "relu_backward", "attention_weights"):
        monkeypatch.setattr(functional, name, broken)
    layer = TransformerEncoderLayer(4, 2, 6, 0.0, rng=0)
    x = _data(0, (2, 5, 4), 1.0, np.float64)
    with kernels("reference"):
        layer.backward(layer(x))
    with pytest.raises(AssertionError, match="fast kernel"):
        layer(x)                                             # the default is the fast tier


def test_the_switch_nests_restores_and_refuses_unknown_names():
    assert active_kernels() == "fast"
    with kernels("reference"):
        assert active_kernels() == "reference"
        with kernels("fast"):
            assert active_kernels() == "fast"
        with kernels(None):
            assert active_kernels() == "reference"
        with pytest.raises(RuntimeError):
            with kernels("fast"):
                raise RuntimeError("boom")
        assert active_kernels() == "reference"
    assert active_kernels() == "fast"
    with pytest.raises(InputError, match="'fast' or 'reference'"):
        with kernels("math"):
            pass
