"""Attention by blocks of queries: long sequences without every ``(L, S)`` weight in memory.

At ``T = 1024`` tokens the attention weights of one layer of an 8 x 4-head batch are 128 MiB in
float32, and backward needs them (and as much again for their gradient).  These two functions run
the kernels of :mod:`glassformer.nn.functional` -- :func:`~glassformer.nn.functional.attention_weights`,
:func:`~glassformer.nn.functional.scaled_dot_product_attention` and its backward -- on one block of
queries at a time, keep no weights, and form each block's weights again in backward from ``q`` and
``k`` with the same calls (so with the same numbers): FlashAttention's recomputation (Dao et al.,
2022) at the granularity of NumPy blocks.  The memory of the weights is then ``block / L`` of the
whole.  :class:`~glassformer.nn.MultiheadAttention` uses them when its ``query_block`` is set,
or by default (``query_block="auto"``) when :func:`choose_query_block` finds that the weights of
one call would exceed the memory budget; its ``intermediates()`` still returns every weight.
Both must equal the unblocked :func:`glassformer.nn.reference.attention` and
:func:`glassformer.nn.reference.attention_backward` (tested; under ``kernels("reference")`` the
reference attends to every query at once).  The blocks loop over each (batch, head) pair as well:
a block spanning every pair (16 MiB of scores at T = 1024, batch 8, 4 heads) leaves the cache
between the half-dozen NumPy passes over it, one pair's block (512 KiB) does not; the T = 1024
training step is about 12 % faster so.  :func:`head_mean_weights` equals
``reference.attention``'s weights averaged over the heads.
"""

from __future__ import annotations

import math

import numpy as np

from .functional import (attention_scale, attention_weights, key_bound, scaled_dot_product_attention,
                         scaled_dot_product_attention_backward, transposed)

__all__ = ["WEIGHTS_BUDGET", "CACHE_BLOCK", "attention_blocks", "attention_blocks_backward", "choose_query_block",
           "head_mean_weights"]

#: Default memory budget of one attention call's weights ``(batch, heads, L, S)``, in bytes (32 MiB):
#: above it attention runs by blocks of queries.  At the budget a training step's weights, kept
#: for backward in every layer, stay below the rest of its activations (measured in
#: benchmarks/RESULTS.md, "Round three").
WEIGHTS_BUDGET = 32 * 2 ** 20

#: Queries per block when blocking: measured on the T = 1024 training step (batch 8, 4 heads,
#: float32), blocks of 64 and 128 tie and 256 is 30% slower when a block spans every (batch, head);
#: looping over the pairs, one pair's ``(128, 1024)`` float32 slab of scores (512 KiB) stays in the
#: L2 cache between the passes over it, and 128, 256 and 512 tie within the noise.
CACHE_BLOCK = 128


def choose_query_block(weights_shape, itemsize: int, budget: int = WEIGHTS_BUDGET, preferred: int = CACHE_BLOCK):
    """Queries per block for weights of shape ``(..., L, S)`` and ``itemsize`` bytes, or None (no blocks).

    None when every weight fits in ``budget`` bytes; otherwise ``preferred``, lowered to the most
    rows whose weights fit in the budget (at least 1).  So a block's ``(..., block, S)`` weights
    never exceed the budget unless a single row does.
    """
    *lead, L, S = weights_shape
    row = math.prod(lead) * S * itemsize                              # bytes of one query row, all heads
    if row * L <= budget:
        return None
    block = min(preferred, max(1, budget // max(row, 1)))
    return block if block < L else None


def _block_of(mask, rows_):
    """Rows ``rows_`` of a mask broadcastable to ``(..., L, S)`` (unchanged where it broadcasts over L)."""
    if mask is None or np.ndim(mask) < 2 or np.shape(mask)[-2] == 1:
        return mask                                               # broadcasts over the queries: every block uses all of it
    return mask[..., rows_, :]


def _of_pair(mask, index):
    """The ``(L, S)`` part of a mask broadcastable to ``(..., L, S)`` for one leading index (e.g. (batch, head))."""
    if mask is None or np.ndim(mask) <= 2:
        return mask                                               # shared by every (batch, head)
    lead = np.shape(mask)[:-2]
    at = index[len(index) - len(lead):]                           # broadcasting aligns the trailing axes
    return mask[tuple(0 if n == 1 else i for n, i in zip(lead, at))]


def _pairs(shape, members: bool):
    """The leading indices the blocks loop over: each (batch, head) on its own, so that a block's
    ``(block, S)`` scores stay in the cache between the passes over them; members trained side by
    side keep their whole arrays (each member takes the softmax path it would take alone)."""
    return [(...,)] if members else list(np.ndindex(*shape[:-2]))


def attention_blocks(q, k, v, allowed=None, bias=None, scale=None, *, block: int, members=False, out=None):
    """:func:`~glassformer.nn.functional.scaled_dot_product_attention` by blocks of ``block`` queries of
    one (batch, head) at a time.

    Arguments as there (no dropout, no given weights); each pair's ``scale k^T`` and its bound are
    formed once for its blocks.  Returns ``out (..., L, dv)``, written into ``out`` when given.
    """
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    if out is None:
        out = np.empty(q.shape[:-1] + v.shape[-1:], dtype=v.dtype)
    for index in _pairs(q.shape, members):
        qp, kp, vp, op = q[index], k[index], v[index], out[index]                 # (L, d), (S, d), (S, dv), (L, dv)
        allowed_p, bias_p = _of_pair(allowed, index), _of_pair(bias, index)
        k_t = transposed(kp, scale)                               # (d, S), formed once for every block
        k_bound = key_bound(k_t)
        for i in range(0, q.shape[-2], block):
            b = slice(i, i + block)
            scaled_dot_product_attention(qp[..., b, :], kp, vp, _block_of(allowed_p, b), _block_of(bias_p, b), scale,
                                         members=members, out=op[..., b, :], k_t=k_t, k_bound=k_bound)
    return out


def attention_blocks_backward(dout, q, k, v, o, allowed=None, bias=None, scale=None, *, block: int,
                              members=False, out=None):
    """``(dq, dk, dv)`` of :func:`attention_blocks` (``o`` its output): per (batch, head) and block, the
    weights again, then the backward kernel, whose softmax row dots come from ``o`` (no pass over the
    block's weights)."""
    dq, dk, dv = (None, None, None) if out is None else out
    dq = np.empty_like(q) if dq is None else dq
    dk = np.zeros_like(k) if dk is None else dk
    dv = np.zeros_like(v) if dv is None else dv
    dk[...] = dv[...] = 0.0
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    for index in _pairs(q.shape, members):
        qp, kp, vp, gp, op = q[index], k[index], v[index], dout[index], o[index]
        dqp = dq[index]                                           # a view: the blocks write into it
        allowed_p, bias_p = _of_pair(allowed, index), _of_pair(bias, index)
        k_t, v_t = transposed(kp, scale), transposed(vp)          # formed once for every block
        k_bound = key_bound(k_t)
        for i in range(0, q.shape[-2], block):
            b = slice(i, i + block)
            A = attention_weights(qp[..., b, :], kp, _block_of(allowed_p, b), _block_of(bias_p, b), scale,
                                  members=members, k_t=k_t, k_bound=k_bound)
            _, dk_b, dv_b = scaled_dot_product_attention_backward(gp[..., b, :], qp[..., b, :], kp, vp, A, scale,
                                                                  out=(dqp[..., b, :], None, None), v_t=v_t,
                                                                  o=op[..., b, :])
            dk[index] += dk_b                                     # basic indexing: in place
            dv[index] += dv_b
    return dq, dk, dv


def head_mean_weights(q, k, allowed=None, bias=None, scale=None, *, block: int, members=False):
    """The weights of :func:`~glassformer.nn.functional.attention_weights` averaged over the heads
    (axis -3), formed by blocks of ``block`` queries: ``(..., L, S)`` without the ``(..., H, L, S)``
    array.  Equals ``attention_weights(...).mean(axis=-3)`` up to rounding."""
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    k_t = transposed(k, scale)                                 # (..., d, S)
    k_bound = key_bound(k_t)
    out = np.empty(q.shape[:-3] + (q.shape[-2], k.shape[-2]), dtype=q.dtype)     # (..., L, S)
    for i in range(0, q.shape[-2], block):
        b = slice(i, i + block)
        A = attention_weights(q[..., b, :], k, _block_of(allowed, b), _block_of(bias, b), scale, members=members,
                              k_t=k_t, k_bound=k_bound)          # (..., H, block, S)
        np.mean(A, axis=-3, out=out[..., b, :])
    return out
