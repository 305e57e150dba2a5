"""Fast sums over the short last axis of activations (attention rows, LayerNorm features), and
over the leading axes (bias gradients); a row vector broadcast fast over many short rows.

NumPy's own reductions (``np.sum(x, axis=-1)``) pay a fixed cost per row, which dominates when
rows are short: at ``(256, 2, 32, 32)`` float32 attention scores ``np.add.reduce`` takes ~350 µs
and the same sums as one matrix-vector product ~40 µs; on demonstration 2's ``(32, 7, 4)``
arrays the product is also faster (1.8 µs against 4.8 µs).  Subtracting a row mean is slow for the
same reason (a broadcast over short rows): up to 32 features, ``x (I - 11^T / D)`` -- one GEMM --
is faster than the mean and the subtraction (1.5 µs against 7.8 µs at ``(224, 4)``, 13 µs against
34 µs at ``(2048, 16)``); wider rows keep the two passes.  Broadcasting a row vector (a bias, LayerNorm's weight) over
short rows costs NumPy one inner loop per row: at ``(8192, 16)`` float32 ``y += b`` takes ~105 µs,
against ~40 µs when the rows are viewed 32 at a time as rows of 512 and ``b`` is tiled 32 times
(:func:`with_row_vector`; the same element-wise operations, so the same bits).

``members=True`` keeps the first axis apart: ``x[k]`` belongs to member ``k`` of models trained
side by side (:mod:`glassformer.models.members`), and each member's rows go through their own
BLAS call of the very shape a model alone would make, so its sums are bitwise its own.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

__all__ = ["centre", "ones_vector", "row_mean", "row_sum", "rows", "with_row_vector"]

#: Up to this many features, :func:`centre` is one GEMM with the centring matrix.
CENTRE_GEMM_MAX = 32

#: From this many rows on, :func:`with_row_vector` views the rows several at a time (below it the
#: tiled copy of the vector costs more than the per-row loop it saves).
TILE_MIN_ROWS = 1024
#: The widest row :func:`with_row_vector` forms by viewing rows together (elements).
_TILE_WIDTH = 512


def rows(x: np.ndarray, members: bool = False) -> np.ndarray:
    """``x`` as a matrix of its last axis, ``(N, D)``, or a stack ``(K, N, D)`` with ``members``."""
    return x.reshape(x.shape[0], -1, x.shape[-1]) if members else x.reshape(-1, x.shape[-1])


def row_sum(x: np.ndarray, members: bool = False) -> np.ndarray:
    """``x.sum(axis=-1, keepdims=True)`` computed as ``x @ ones`` (one BLAS call; shape (..., 1)).

    The summation order is the BLAS kernel's, so results differ from ``np.sum`` by rounding only;
    the dtype of ``x`` is kept.
    """
    return (rows(x, members) @ ones_vector(x.shape[-1], x.dtype)).reshape(x.shape[:-1] + (1,))


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


def with_row_vector(op, x: np.ndarray, vec: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``op(x, vec, out=out)`` for a ufunc ``op`` (``np.add``, ``np.multiply``) and ``vec (D,)`` broadcast
    over the rows of ``x (..., D)``; returns the result, shaped as ``x``.

    With many short C-contiguous rows, ``k`` rows (a power of two dividing their number) are viewed
    as one row of ``k D`` and ``vec`` is tiled ``k`` times: each element meets the same operand, so
    the result is bitwise that of the plain broadcast.
    """
    d = x.shape[-1]
    if x.size < TILE_MIN_ROWS * d or not 0 < d <= _TILE_WIDTH // 2:         # few rows (checked first: cheap)
        return op(x, vec, out=out)
    n = x.size // d
    k = math.gcd(n, 1 << ((_TILE_WIDTH // d).bit_length() - 1))
    if k == 1 or vec.shape != (d,) or not x.flags.c_contiguous or (out is not None and not out.flags.c_contiguous):
        return op(x, vec, out=out)
    wide = (n // k, k * d)                                      # k rows side by side
    res = op(x.reshape(wide), np.tile(vec, k), out=None if out is None else out.reshape(wide))
    return out if out is not None else res.reshape(x.shape)


@lru_cache(maxsize=64)
def ones_vector(n: int, dtype: np.dtype) -> np.ndarray:
    """A read-only vector of ``n`` ones (cached: ``np.ones`` costs more than the product on small rows).

    ``ones_vector(N, dtype) @ x2`` sums the rows of ``x2 (N, D)`` (bias gradients) in one BLAS call.
    """
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
