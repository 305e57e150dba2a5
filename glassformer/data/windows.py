"""Cut a log into fixed-length windows along depth, and stitch per-window predictions back.

A transformer sees a window of ``window`` consecutive samples at a time (the chapter's
"sequence of depths").  :func:`make_windows` cuts ``(n, n_features)`` arrays into
``(n_windows, window, n_features)`` with a stride; :func:`stitch_windows` turns
``(n_windows, window, k)`` predictions back into one value per sample, averaging where windows
overlap.  :func:`contiguous_runs` finds the gap-free stretches of a log to window separately.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._validation import as_float_array, check_ndim, check_positive_int
from ..errors import InputError, ShapeError

__all__ = ["Windows", "contiguous_runs", "make_windows", "stitch_windows", "window_starts"]


class Windows(NamedTuple):
    """The result of :func:`make_windows` (a tuple: ``x, y, positions, starts = make_windows(...)``).

    Attributes
    ----------
    x : ndarray (n_windows, window, n_features)
    y : ndarray (n_windows, window, n_targets) or None
    positions : ndarray (n_windows, window) -- the positions (sample index or depth) of each entry
    starts : ndarray (n_windows,) of int -- index of each window's first sample in the input
    """

    x: np.ndarray
    y: np.ndarray | None
    positions: np.ndarray
    starts: np.ndarray


def window_starts(n: int, window: int, stride: int, *, pad_last: bool = False) -> np.ndarray:
    """Start indices of the windows over ``n`` samples: ``0, stride, 2*stride, ...``.

    Only whole windows are made.  When ``(n - window)`` is not a multiple of ``stride`` the last
    ``(n - window) % stride`` samples are covered by no window, unless ``pad_last=True``, which
    appends one more window ending exactly at sample ``n - 1`` (overlapping its predecessor more
    than ``stride`` would), so that every sample lies in at least one window when
    ``stride <= window`` (a larger stride leaves gaps between windows by design).

    Raises
    ------
    InputError
        If ``window`` or ``stride`` is not a positive integer, or ``n < window`` (names both).
    """
    n = check_positive_int(n, "n", "window_starts", minimum=0)
    window = check_positive_int(window, "window", "window_starts")
    stride = check_positive_int(stride, "stride", "window_starts")
    if n < window:
        raise InputError(f"window_starts: the sequence has {n} samples, shorter than the window of {window}")
    starts = np.arange(0, n - window + 1, stride)
    if pad_last and starts[-1] + window < n:
        starts = np.append(starts, n - window)
    return starts


def _as_2d(a, name: str, where: str, allow_nan: bool) -> np.ndarray:
    arr = as_float_array(a, name, where, allow_nan=allow_nan)
    check_ndim(arr, (1, 2), name, where, layout="(n_samples,) or (n_samples, n_features)")
    return arr[:, None] if arr.ndim == 1 else arr


def make_windows(
    X,
    y=None,
    positions=None,
    window: int = 7,
    stride: int = 1,
    *,
    pad_last: bool = False,
) -> Windows:
    """Cut a depth-ordered sequence into windows of ``window`` consecutive samples.

    Parameters
    ----------
    X : array (n_samples, n_features) or (n_samples,)
        Input logs along depth (a 1-D array is one feature).  NaN is passed through (mask it
        downstream); inf is rejected.
    y : array (n_samples, n_targets) or (n_samples,), optional
        Target logs; NaN allowed (masked out of the loss, never filled).
    positions : array (n_samples,), optional
        The position of each sample: sample index or depth (m).  Default ``arange(n_samples)``.
    window : int, default 7 (the sequence length of "demonstration 1: seven depths")
        Samples per window.
    stride : int, default 1
        Step between window starts.
    pad_last : bool, default False
        Add a final window aligned to the end so every sample is covered (see :func:`window_starts`).

    Returns
    -------
    Windows
        ``x (n_windows, window, n_features)``, ``y (n_windows, window, n_targets)`` or None,
        ``positions (n_windows, window)``, ``starts (n_windows,)``; copies, dtype of the inputs.

    Raises
    ------
    InputError
        Bad ``window``/``stride``, inf in the data, or fewer samples than ``window``.
    ShapeError
        Wrong rank, or ``y``/``positions`` not of length ``n_samples``.
    """
    where = "make_windows"
    X = _as_2d(X, "X", where, allow_nan=True)
    n = X.shape[0]
    if y is not None:
        y = _as_2d(y, "y", where, allow_nan=True)
        if y.shape[0] != n:
            raise ShapeError(f"{where}: y has {y.shape[0]} samples, X has {n} (shapes {y.shape} vs {X.shape})")
    if positions is None:
        positions = np.arange(n, dtype=X.dtype)
    else:
        positions = as_float_array(positions, "positions", where)
        check_ndim(positions, (1,), "positions", where, layout="(n_samples,)")
        if positions.shape[0] != n:
            raise ShapeError(f"{where}: positions has {positions.shape[0]} entries, X has {n} samples")
    window = check_positive_int(window, "window", where)
    if n < window:
        raise InputError(f"{where}: the sequence has {n} samples, shorter than the window of {window}")
    starts = window_starts(n, window, stride, pad_last=pad_last)
    idx = starts[:, None] + np.arange(window)  # (n_windows, window)
    return Windows(
        x=X[idx],
        y=None if y is None else y[idx],
        positions=positions[idx],
        starts=starts,
    )


def stitch_windows(pred, starts, n: int) -> np.ndarray:
    """Average overlapping window predictions back onto the ``n`` samples they came from.

    Parameters
    ----------
    pred : array (n_windows, window, k) or (n_windows, window)
        One prediction per window entry.
    starts : array (n_windows,) of int
        Start index of each window (``Windows.starts``).
    n : int
        Length of the original sequence.

    Returns
    -------
    ndarray (n, k), or (n,) when ``pred`` is 2-D
        The mean over every window covering each sample, ignoring NaN predictions; NaN where no
        window covers the sample (use ``pad_last=True`` to cover them all).

    Raises
    ------
    ShapeError
        Wrong rank, or ``starts`` not of length ``n_windows``.
    InputError
        A window reaching outside ``[0, n)``, or inf in ``pred``.
    """
    where = "stitch_windows"
    pred = as_float_array(pred, "pred", where, allow_nan=True)
    check_ndim(pred, (2, 3), "pred", where, layout="(n_windows, window, k) or (n_windows, window)")
    squeeze = pred.ndim == 2
    if squeeze:
        pred = pred[..., None]
    n = check_positive_int(n, "n", where)
    starts = np.asarray(starts)
    if starts.ndim != 1 or starts.shape[0] != pred.shape[0] or starts.dtype.kind not in "iu":
        raise ShapeError(
            f"{where}: starts must be integers of shape ({pred.shape[0]},), got {starts.dtype} {starts.shape}"
        )
    n_windows, window, k = pred.shape
    if starts.min() < 0 or starts.max() + window > n:
        raise InputError(
            f"{where}: windows of length {window} starting at {starts.min()}..{starts.max()} "
            f"do not fit in n={n} samples"
        )
    idx = (starts[:, None] + np.arange(window)).ravel()
    flat = pred.reshape(-1, k)
    finite = np.isfinite(flat)
    total = np.zeros((n, k), dtype=pred.dtype)
    count = np.zeros((n, k), dtype=pred.dtype)
    np.add.at(total, idx, np.where(finite, flat, 0))
    np.add.at(count, idx, finite.astype(pred.dtype))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(count > 0, total / np.maximum(count, 1), np.nan).astype(pred.dtype)
    return out[:, 0] if squeeze else out


def contiguous_runs(valid) -> list[tuple[int, int]]:
    """Half-open ``(start, stop)`` index ranges of the runs of True in a boolean ``(n,)`` mask.

    Use it to split a log at gaps (e.g. ``log.valid_mask(["PHIF", "KLOGH"])``) and window each
    gap-free run on its own, so no window straddles missing data.
    """
    v = np.asarray(valid, dtype=bool)
    if v.ndim != 1:
        raise ShapeError(f"contiguous_runs: valid must be 1-D (n_samples,), got shape {v.shape}")
    edges = np.diff(np.concatenate([[False], v, [False]]).astype(np.int8))
    starts = np.flatnonzero(edges == 1)
    stops = np.flatnonzero(edges == -1)
    return [(int(a), int(b)) for a, b in zip(starts, stops)]
