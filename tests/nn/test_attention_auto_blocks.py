"""Attention blocks itself when its weights would exceed the memory budget (query_block="auto").

Outputs and gradients equal the unblocked path (``query_block=None``) to 1e-12 in float64; the
chosen block's weights respect the budget; ``trace``/``intermediates()`` and ``need_weights=True``
still give every weight.  The blocked kernels are checked against the kernel at once on
hypothesis-drawn shapes, float32 and float64, with masks and fully masked rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassformer.nn import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer
from glassformer.nn import functional as F
from glassformer.nn.attention_blocks import (CACHE_BLOCK, WEIGHTS_BUDGET, attention_blocks,
                                             attention_blocks_backward, choose_query_block)


# ----------------------------------------------------------------------------- the choice
def test_choice_by_hand():
    # (8, 4, 1024, 1024) float32 weights: 128 MiB > 32 MiB; one query row of all heads is 128 KiB,
    # so 256 rows fit and the cache-sized block (128) is taken.
    assert choose_query_block((8, 4, 1024, 1024), 4) == CACHE_BLOCK == 128
    assert choose_query_block((8, 4, 1024, 1024), 4, budget=4 * 2 ** 20) == 32        # 32 rows fit in 4 MiB
    assert choose_query_block((8, 4, 1024, 1024), 4, budget=1) == 1                   # not even one row: 1
    assert choose_query_block((32, 4, 128, 128), 4) is None                           # 8 MiB: at once
    assert choose_query_block((8, 4, 1024, 1024), 4, budget=128 * 2 ** 20) is None    # exactly the budget
    assert WEIGHTS_BUDGET == 32 * 2 ** 20


@settings(max_examples=60, deadline=None)
@given(lead=st.lists(st.integers(1, 6), min_size=1, max_size=3), L=st.integers(1, 300), S=st.integers(1, 300),
       itemsize=st.sampled_from([4, 8]), budget=st.integers(1, 2 ** 22))
def test_the_chosen_block_respects_the_budget(lead, L, S, itemsize, budget):
    block = choose_query_block((*lead, L, S), itemsize, budget)
    row = int(np.prod(lead)) * S * itemsize
    if block is None:
        assert row * L <= budget or row > budget and L == 1
    else:
        assert 1 <= block < L
        assert block * row <= budget or block == 1          # a block holds at most the budget (unless one row exceeds it)


# ----------------------------------------------------------------------------- the layer
def _pair(budget, dtype=np.float64, **kw):
    """The same attention twice: automatic blocks under ``budget`` and never blocked."""
    auto = MultiheadAttention(8, 2, rng=5, weights_budget=budget, dtype=dtype, **kw)
    plain = MultiheadAttention(8, 2, rng=5, query_block=None, dtype=dtype, **kw)
    return auto, plain


@pytest.mark.parametrize("mask", ["none", "causal", "padding"])
def test_auto_blocks_equal_the_unblocked_path_in_float64(mask):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 40, 8))
    dO = rng.standard_normal((3, 40, 8))
    kw = {}
    if mask == "causal":
        kw["is_causal"] = True
    elif mask == "padding":
        kpm = np.zeros((3, 40), bool)
        kpm[1, 25:] = True
        kpm[2, :] = True                                      # every key of one sequence: fully masked rows
        kw["key_padding_mask"] = kpm
    budget = 3 * 2 * 40 * 8 * 10                             # 10 query rows of float64 weights
    auto, plain = _pair(budget)
    got, want = [], []
    for att, into in ((auto, got), (plain, want)):
        out, _ = att(x, x, x, need_weights=False, **kw)
        dx = sum(att.backward(dO))                            # query is key is value: the three gradients add
        into += [out, dx, att.in_proj_weight.grad.copy(), att.in_proj_bias.grad.copy(), att.out_proj.weight.grad.copy(),
                 att.intermediates()["A"]]
    assert auto._cache["A"] is None and auto._cache["block"] == 10        # blocked, no weights kept
    assert plain._cache["A"] is not None
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    if mask == "padding":
        assert np.all(got[-1][2] == 0)                       # fully masked rows: zero weights


def test_auto_blocks_still_return_every_weight_and_trace_them():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 30, 8))
    auto, plain = _pair(budget=2 * 2 * 30 * 8 * 7)
    for average in (True, False):
        w_auto = auto(x, x, x, need_weights=True, average_attn_weights=average)[1]
        w_plain = plain(x, x, x, need_weights=True, average_attn_weights=average)[1]
        assert w_auto.shape == w_plain.shape == ((2, 30, 30) if average else (2, 2, 30, 30))
        np.testing.assert_allclose(w_auto, w_plain, rtol=1e-12, atol=1e-14)
    with auto.tracing():
        auto(x, x, x, need_weights=False)
    inter = auto.intermediates()
    assert inter["A"].shape == inter["S"].shape == (2, 2, 30, 30)
    np.testing.assert_allclose(inter["A"].sum(-1), 1.0, rtol=1e-12)


def test_encoder_layer_blocks_by_default_over_the_budget_and_equals_the_unblocked_stack():
    rng = np.random.default_rng(6)
    x, dy = rng.standard_normal((2, 24, 8)), rng.standard_normal((2, 24, 8))
    outs = []
    for qb in ("auto", None):
        layer = TransformerEncoderLayer(8, 2, 16, dropout=0.0, rng=1, query_block=qb)
        model = TransformerEncoder(layer, 2)
        for lay in model.layers:
            lay.self_attn.weights_budget = 2 * 2 * 24 * 8 * 5            # 5 rows fit: blocks of 5
        y = model(x)
        dx = model.backward(dy)
        outs.append((y, dx, [p.grad.copy() for _, p in model.named_parameters()]))
        if qb == "auto":
            assert all(lay.self_attn._cache["blocked"] for lay in model.layers)
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12, atol=1e-12)
    for g, w in zip(outs[0][2], outs[1][2]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_small_calls_are_not_blocked_and_bad_settings_are_refused():
    att = MultiheadAttention(8, 2, rng=0)
    x = np.ones((2, 16, 8))
    att(x, x, x, need_weights=False)
    assert att._cache["blocked"] is False and att._cache["A"] is not None
    assert "query_block" not in repr(att)
    with pytest.raises(Exception, match="query_block"):
        MultiheadAttention(8, 2, query_block="often")
    with pytest.raises(Exception, match="weights_budget"):
        MultiheadAttention(8, 2, weights_budget=0)


# ----------------------------------------------------------------------------- the kernels by blocks
@settings(max_examples=40, deadline=None)
@given(B=st.integers(1, 3), H=st.integers(1, 3), L=st.integers(1, 19), S=st.integers(1, 17), d=st.integers(1, 6),
       block=st.integers(1, 8), dtype=st.sampled_from([np.float32, np.float64]),
       mask=st.sampled_from(["none", "allowed", "bias", "fully_masked"]), seed=st.integers(0, 2 ** 16))
def test_blocks_equal_the_kernel_at_once(B, H, L, S, d, block, dtype, mask, seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((B, H, n, d)).astype(dtype) for n in (L, S, S))
    allowed = bias = None
    if mask in ("allowed", "fully_masked"):
        allowed = rng.random((B, 1, L, S)) > 0.3
        if mask == "fully_masked":
            allowed[0, 0, rng.integers(L)] = False           # one query sees no key
    elif mask == "bias":
        bias = rng.standard_normal((L, S)).astype(dtype)
    out, A = F.scaled_dot_product_attention(q, k, v, allowed, bias, 0.7)
    got = attention_blocks(q, k, v, allowed, bias, 0.7, block=block)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(got, out, rtol=tol, atol=tol)
    dout = rng.standard_normal(out.shape).astype(dtype)
    want = F.scaled_dot_product_attention_backward(dout, q, k, v, A, 0.7)
    grads = attention_blocks_backward(dout, q, k, v, got, allowed, bias, 0.7, block=block)
    for g, w in zip(grads, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, rtol=10 * tol, atol=10 * tol)
    if mask == "fully_masked":
        row = np.flatnonzero(~allowed[0, 0].any(-1))
        assert np.all(got[0, :, row] == 0) and np.all(grads[0][0, :, row] == 0)


def test_averaged_weights_by_blocks_equal_the_mean_of_every_weight_unbatched_and_masked():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((30, 8))                          # unbatched (L, E)
    kpm = np.zeros(30, bool)
    kpm[20:] = True
    auto, plain = _pair(budget=2 * 30 * 8 * 4)                # blocks of 4 queries
    out_a, w_a = auto(x, x, x, key_padding_mask=kpm)
    out_p, w_p = plain(x, x, x, key_padding_mask=kpm)
    assert auto._cache["blocked"] and w_a.shape == (30, 30)
    np.testing.assert_allclose(out_a, out_p, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w_a, w_p, rtol=1e-12, atol=1e-14)
    assert np.all(w_a[:, 20:] == 0)                           # padded keys get no weight


@pytest.mark.parametrize("mask_shape", [(3, 7, 9), (2, 1, 1, 9), (1, 3, 7, 9), (2, 3, 7, 9), (7, 9), (1, 9)])
@pytest.mark.parametrize("kind", ["allowed", "bias"])
def test_blocks_by_batch_and_head_take_each_pairs_part_of_a_mask(mask_shape, kind):
    """The blocks loop over (batch, head) pairs; a mask that broadcasts over some leading axes gives each pair
    its own part (trailing axes aligned, as NumPy broadcasts), so the result equals the kernel at once."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 3, n, 4)) for n in (7, 9, 9))
    allowed = rng.random(mask_shape) > 0.4 if kind == "allowed" else None
    bias = rng.standard_normal(mask_shape) if kind == "bias" else None
    out, A = F.scaled_dot_product_attention(q, k, v, allowed, bias, 0.5)
    got = attention_blocks(q, k, v, allowed, bias, 0.5, block=3)
    np.testing.assert_allclose(got, out, rtol=1e-12, atol=1e-12)
    dout = rng.standard_normal(out.shape)
    for g, w in zip(attention_blocks_backward(dout, q, k, v, got, allowed, bias, 0.5, block=3),
                    F.scaled_dot_product_attention_backward(dout, q, k, v, A, 0.5)):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12)
