"""Attention by blocks of queries: long sequences without every ``(L, S)`` weight in memory.

At ``T = 1024`` tokens the attention weights of one layer of an 8 x 4-head batch are 128 MiB in
float32, and backward needs them (and as much again for their gradient).  These two functions run
the kernels of :mod:`glassformer.nn.functional` -- :func:`~glassformer.nn.functional.attention_weights`,
:func:`~glassformer.nn.functional.scaled_dot_product_attention` and its backward -- on one block of
queries at a time, keep no weights, and form each block's weights again in backward from ``q`` and
``k`` with the same calls (so with the same numbers): FlashAttention's recomputation (Dao et al.,
2022) at the granularity of NumPy blocks.  The memory of the weights is then ``block / L`` of the
whole.  :class:`~glassformer.nn.MultiheadAttention` uses them when its ``query_block`` is set;
its ``intermediates()`` still returns every weight.  Both must equal the unblocked
:func:`glassformer.nn.reference.attention` and :func:`glassformer.nn.reference.attention_backward`
(tested; under ``kernels("reference")`` the reference attends to every query at once).
"""

from __future__ import annotations

import numpy as np

from .functional import (attention_scale, attention_weights, key_bound, scaled_dot_product_attention,
                         scaled_dot_product_attention_backward, transposed)

__all__ = ["attention_blocks", "attention_blocks_backward"]


def _block_of(mask, rows_):
    """Rows ``rows_`` of a mask broadcastable to ``(..., L, S)`` (unchanged where it broadcasts over L)."""
    return None if mask is None or np.shape(mask)[-2] == 1 else mask[..., rows_, :]


def attention_blocks(q, k, v, allowed=None, bias=None, scale=None, *, block: int, members=False, out=None):
    """:func:`~glassformer.nn.functional.scaled_dot_product_attention` by blocks of ``block`` queries.

    Arguments as there (no dropout, no given weights); ``scale k^T`` and its bound are formed once.
    Returns ``out (..., L, dv)``, written into ``out`` when given.
    """
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    k_t = transposed(k, scale)                                 # (..., d, S), formed once for every block
    k_bound = key_bound(k_t)
    if out is None:
        out = np.empty(q.shape[:-1] + v.shape[-1:], dtype=v.dtype)
    for i in range(0, q.shape[-2], block):
        b = slice(i, i + block)
        scaled_dot_product_attention(q[..., b, :], k, v, _block_of(allowed, b), _block_of(bias, b), scale,
                                     members=members, out=out[..., b, :], k_t=k_t, k_bound=k_bound)
    return out


def attention_blocks_backward(dout, q, k, v, o, allowed=None, bias=None, scale=None, *, block: int,
                              members=False, out=None):
    """``(dq, dk, dv)`` of :func:`attention_blocks` (``o`` its output): per block, the weights again, then
    the backward kernel, whose softmax row dots come from ``o`` (no pass over the block's weights)."""
    dq, dk, dv = (None, None, None) if out is None else out
    dq = np.empty_like(q) if dq is None else dq
    dk = np.zeros_like(k) if dk is None else dk
    dv = np.zeros_like(v) if dv is None else dv
    dk[...] = dv[...] = 0.0
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    k_t, v_t = transposed(k, scale), transposed(v)            # formed once for every block
    k_bound = key_bound(k_t)
    for i in range(0, q.shape[-2], block):
        b = slice(i, i + block)
        A = attention_weights(q[..., b, :], k, _block_of(allowed, b), _block_of(bias, b), scale, members=members,
                              k_t=k_t, k_bound=k_bound)
        _, dk_b, dv_b = scaled_dot_product_attention_backward(dout[..., b, :], q[..., b, :], k, v, A, scale,
                                                              out=(dq[..., b, :], None, None), v_t=v_t,
                                                              o=o[..., b, :])
        dk += dk_b
        dv += dv_b
    return dq, dk, dv
