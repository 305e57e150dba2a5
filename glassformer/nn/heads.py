"""Attention heads: the fused query/key/value projection split into heads, and back.

Layout only, no equation of its own: :func:`project_heads` is :func:`~glassformer.nn.functional.linear`
(one GEMM for every part that reads the same input) seen as ``(n_parts, ..., H, T, hd)`` views;
:func:`empty_heads` is a gradient buffer in that layout, which
:func:`~glassformer.nn.functional.scaled_dot_product_attention_backward` writes into, so that
:func:`project_heads_backward` reads it without a copy.  :func:`split_heads` turns ``(..., T, E)``
into ``(..., H, T, hd)``; the attention layer lays the heads side by side again (the chapter's U
concatenates the heads).
"""

from __future__ import annotations

import numpy as np

from .tiers import ops as F

__all__ = ["project_heads", "empty_heads", "project_heads_backward", "split_heads"]


def project_heads(x, weight, bias, num_heads: int, n_parts: int = 1):
    """Project ``x (..., T, E_in)`` with ``n_parts`` stacked weight blocks and split each into heads.

    ``weight (n_parts * E, E_in)`` holds the rows of, e.g., ``W_Q``, ``W_K`` and ``W_V`` (fused
    projection: one GEMM for every part that reads the same input).  Returns views of shape
    ``(n_parts, ..., H, T, hd)``; each ``(T, hd)`` matrix has unit column stride, which BLAS takes.
    """
    *lead, T, _ = x.shape
    y = F.linear(x, weight, bias)                               # (..., T, n_parts * E)
    head_dim = weight.shape[-2] // (n_parts * num_heads)
    y = y.reshape(*lead, T, n_parts, num_heads, head_dim)       # (..., T, n, H, hd)
    n = len(lead)
    return y.transpose(n + 1, *range(n), n + 2, n, n + 3)       # (n, ..., H, T, hd)


def empty_heads(x_shape, n_parts: int, num_heads: int, head_dim: int, dtype):
    """An uninitialised ``(n_parts, ..., H, T, hd)`` array laid out as :func:`project_heads`'s output.

    Gradients written into it (:func:`scaled_dot_product_attention_backward`'s ``out``) are already
    in the layout of the projection, so :func:`project_heads_backward` reads them without a copy.
    """
    *lead, T, _ = x_shape
    buf = np.empty((*lead, T, n_parts, num_heads, head_dim), dtype=dtype)
    n = len(lead)
    return buf.transpose(n + 1, *range(n), n + 2, n, n + 3)


def project_heads_backward(d_parts, x, weight, has_bias=True):
    """Return ``(dx, dW, db)`` of :func:`project_heads` from the ``(n_parts, ..., H, T, hd)`` gradient.

    ``d_parts``: an :func:`empty_heads` array (read in place) or a sequence of one ``(..., H, T, hd)``
    gradient per part (gathered into that layout first).
    """
    d = d_parts if isinstance(d_parts, np.ndarray) else np.stack(d_parts)
    n = d.ndim - 4                                              # leading axes of x
    d = d.transpose(*range(1, n + 1), n + 2, 0, n + 1, n + 3)   # (..., T, n, H, hd)
    return F.linear_backward(d.reshape(x.shape[:-1] + (-1,)), x, weight, has_bias)  # dx (..., T, E_in)


def split_heads(x, num_heads: int):
    """``(..., T, E) -> (..., H, T, hd)``."""
    return x.reshape(x.shape[:-1] + (num_heads, x.shape[-1] // num_heads)).swapaxes(-3, -2)
