"""Private gatekeepers used at public entry points.

Each returns the (possibly converted) array or raises an :mod:`glassformer.errors`
exception whose message names the argument, the caller, and the shape seen vs.
expected.  They never copy data they do not have to.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .errors import InputError, ShapeError

FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def as_float_array(x, name: str, where: str, *, dtype=None, allow_nan: bool = False) -> np.ndarray:
    """Return ``x`` as a floating ndarray (float64/float32 kept, ints/bools converted to ``dtype``).

    Raises
    ------
    InputError
        If ``x`` is not numeric, is empty, or holds NaN/inf (unless ``allow_nan``; inf is never allowed).
    """
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise InputError(f"{where}: {name} could not be converted to an array ({exc})") from None
    if arr.dtype.kind not in "fiub":
        raise InputError(f"{where}: {name} must be a numeric array, got dtype {arr.dtype}")
    if dtype is not None and arr.dtype != np.dtype(dtype):
        arr = arr.astype(dtype)
    elif arr.dtype not in FLOAT_DTYPES:
        arr = arr.astype(np.float64)
    if arr.size == 0:
        raise InputError(f"{where}: {name} is empty (shape {arr.shape})")
    check_finite(arr, name, where, allow_nan=allow_nan)
    return arr


def as_input(x, name: str, where: str, dtype, check: bool) -> np.ndarray:
    """A layer's input: fully validated by :func:`as_float_array` when ``check`` (a module called on
    its own), else only cast to ``dtype`` if needed (a parent module already validated the data, see
    ``Module.check_inputs``) -- no scan of the values."""
    if check:
        return as_float_array(x, name, where, dtype=dtype)
    x = np.asarray(x)
    return x if x.dtype == dtype else x.astype(dtype)


def check_finite(arr: np.ndarray, name: str, where: str, *, allow_nan: bool = False) -> None:
    """Raise :class:`InputError` if ``arr`` holds inf, or NaN when ``allow_nan`` is False."""
    if np.isfinite(arr).all():
        return
    if allow_nan and not np.isinf(arr).any():
        return
    bad = np.argwhere(~np.isfinite(arr) if not allow_nan else np.isinf(arr))[0]
    raise InputError(
        f"{where}: {name} contains non-finite values (first at index {tuple(int(i) for i in bad)})"
    )


def check_ndim(arr: np.ndarray, ndims: Iterable[int], name: str, where: str, *, layout: str = "") -> None:
    """Raise :class:`ShapeError` unless ``arr.ndim`` is one of ``ndims``."""
    ndims = tuple(ndims)
    if arr.ndim not in ndims:
        want = " or ".join(f"{d}-D" for d in ndims)
        hint = f" {layout}" if layout else ""
        raise ShapeError(f"{where}: {name} must be {want}{hint}, got shape {arr.shape}")


def check_last_dim(arr: np.ndarray, size: int, name: str, where: str) -> None:
    """Raise :class:`ShapeError` unless the last axis of ``arr`` has length ``size``."""
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise ShapeError(
            f"{where}: last dimension of {name} must be {size}, got shape {arr.shape}"
        )


def check_positive_int(value, name: str, where: str, *, minimum: int = 1) -> int:
    """Return ``value`` as int, raising :class:`InputError` unless it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{where}: {name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_probability(value, name: str, where: str) -> float:
    """Return ``value`` as float, raising :class:`InputError` unless 0 <= value < 1."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {name} must be a number in [0, 1), got {value!r}") from None
    if not 0.0 <= v < 1.0:
        raise InputError(f"{where}: {name} must be in [0, 1), got {value!r}")
    return v


def check_dtype(dtype) -> np.dtype:
    """Return ``np.dtype(dtype)``, raising :class:`InputError` unless it is float64 or float32."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise InputError(f"dtype must be float64 or float32, got {dtype!r}") from None
    if dt not in FLOAT_DTYPES:
        raise InputError(f"dtype must be float64 or float32, got {dt}")
    return dt
