"""Fast sums over the short last axis of activations (attention rows, LayerNorm features), and
over the leading axes (bias gradients).

NumPy's own reductions (``np.sum(x, axis=-1)``) pay a fixed cost per row, which dominates when
rows are short: at ``(256, 2, 32, 32)`` float32 attention scores ``np.add.reduce`` takes ~350 µs
and the same sums as one matrix-vector product ~40 µs; on demonstration 2's ``(32, 7, 4)``
arrays the product is also faster (1.8 µs against 4.8 µs).  Subtracting a row mean is slow for the
same reason (a broadcast over short rows): up to 32 features, ``x (I - 11^T / D)`` -- one GEMM --
is faster than the mean and the subtraction (1.5 µs against 7.8 µs at ``(224, 4)``, 13 µs against
34 µs at ``(2048, 16)``); wider rows keep the two passes.

``members=True`` keeps the first axis apart: ``x[k]`` belongs to member ``k`` of models trained
side by side (:mod:`glassformer.models.members`), and each member's rows go through their own
BLAS call of the very shape a model alone would make, so its sums are bitwise its own.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["centre", "lead_sum", "row_mean", "row_sum", "rows"]

#: Up to this many features, :func:`centre` is one GEMM with the centring matrix.
CENTRE_GEMM_MAX = 32


def rows(x: np.ndarray, members: bool = False) -> np.ndarray:
    """``x`` as a matrix of its last axis, ``(N, D)``, or a stack ``(K, N, D)`` with ``members``."""
    return x.reshape(x.shape[0], -1, x.shape[-1]) if members else x.reshape(-1, x.shape[-1])


def row_sum(x: np.ndarray, members: bool = False) -> np.ndarray:
    """``x.sum(axis=-1, keepdims=True)`` computed as ``x @ ones`` (one BLAS call; shape (..., 1)).

    The summation order is the BLAS kernel's, so results differ from ``np.sum`` by rounding only;
    the dtype of ``x`` is kept.
    """
    return (rows(x, members) @ _ones(x.shape[-1], x.dtype)).reshape(x.shape[:-1] + (1,))


def row_mean(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis of ``x`` rows ``(..., N, D)``, as ``x @ (ones / D)``: shape ``(..., N, 1)``."""
    return x @ _mean_column(x.shape[-1], x.dtype)


def centre(x: np.ndarray) -> np.ndarray:
    """``x - mean(x)`` over the last axis of rows ``(..., N, D)`` (a new array).

    Up to :data:`CENTRE_GEMM_MAX` features one GEMM with ``I - 11^T / D``, else the mean and a
    subtraction; the two differ by rounding only.
    """
    d = x.shape[-1]
    if d <= CENTRE_GEMM_MAX:
        return x @ _centring(d, x.dtype)
    return x - row_mean(x)


def lead_sum(x: np.ndarray, members: bool = False) -> np.ndarray:
    """Sum over every axis but the last, as ``ones @ x`` (bias gradients): ``(D,)``, or ``(K, D)`` with ``members``."""
    r = rows(x, members)
    return _ones(r.shape[-2], x.dtype) @ r


@lru_cache(maxsize=64)
def _ones(n: int, dtype: np.dtype) -> np.ndarray:
    """A read-only vector of ``n`` ones (cached: ``np.ones`` costs more than the product on small rows)."""
    ones = np.ones(n, dtype=dtype)
    ones.setflags(write=False)
    return ones


@lru_cache(maxsize=64)
def _mean_column(n: int, dtype: np.dtype) -> np.ndarray:
    """A read-only ``(n, 1)`` column of ``1 / n``."""
    col = np.full((n, 1), 1.0 / n, dtype=dtype)
    col.setflags(write=False)
    return col


@lru_cache(maxsize=64)
def _centring(n: int, dtype: np.dtype) -> np.ndarray:
    """The read-only centring matrix ``I - 11^T / n`` (symmetric, ``(n, n)``)."""
    c = (np.eye(n) - 1.0 / n).astype(dtype)
    c.setflags(write=False)
    return c
