"""Feature scaling fitted on the training interval only, and the opt-in log10 of permeability.

The scalers are NaN-aware (``fit`` ignores NaN, ``transform`` keeps it) and act on the last
axis, so the same object scales ``(n_samples, n_features)`` logs and
``(n_windows, window, n_features)`` windows.  Fit them on the training interval alone: the
forecast interval is then transformed with the *training* statistics, which is what keeps
information from the test interval out of the model.

A constant column (zero range or zero standard deviation) maps to 0: its range/std is treated
as 1, so ``(x - min) / 1 = 0`` on the training values.

Every object round-trips through ``to_dict()`` / ``from_dict()`` (plain JSON types) so it can
be saved beside a model; :func:`scaler_from_dict` rebuilds whichever kind was saved.

Why not scikit-learn's scalers, which also ignore NaN in ``fit`` and keep it in ``transform``:
its ``MinMaxScaler`` computes ``x * scale_ + min_`` rather than ``(x - min) / (max - min)``,
which differs in the last bit for about half of the values of a Volve well; a well model trained
40 epochs on those inputs then predicts permeability differing by up to 2e-9 in log10 mD, so
every trained number would move.  Its ``StandardScaler`` gives the same bits as this one on the
Volve targets, but it takes only ``(n_samples, n_features)`` arrays and keeps its statistics in
attributes a JSON file cannot rebuild without setting them by hand.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, check_ndim
from ..errors import InputError, NotReadyError, ShapeError

__all__ = ["Log10Transform", "MinMaxScaler", "StandardScaler", "scaler_from_dict"]


def _fit_input(X, where: str) -> np.ndarray:
    """(n_samples, n_features) float64 view of X for fitting; 1-D means one feature."""
    arr = as_float_array(X, "X", where, allow_nan=True)
    check_ndim(arr, (1, 2), "X", where, layout="(n_samples,) or (n_samples, n_features)")
    arr = arr.astype(np.float64, copy=False)
    arr = arr[:, None] if arr.ndim == 1 else arr
    empty = np.flatnonzero(~np.isfinite(arr).any(axis=0))
    if empty.size:
        raise InputError(
            f"{where}: column {int(empty[0])} of X has no finite value to fit on (all NaN in the training interval)"
        )
    return arr


class _Scaler:
    """Shared machinery: ``y = (x - offset) / scale`` per feature, on the last axis."""

    kind = ""
    _params: tuple[str, ...] = ()

    def __init__(self):
        self.offset_: np.ndarray | None = None
        self.scale_: np.ndarray | None = None
        self.n_features_: int | None = None

    def _set(self, offset: np.ndarray, scale: np.ndarray) -> None:
        scale = np.where(scale > 0, scale, 1.0)  # constant column -> maps to 0
        self.offset_, self.scale_, self.n_features_ = offset, scale, int(offset.size)

    def _check(self, X, where: str) -> np.ndarray:
        if self.offset_ is None:
            raise NotReadyError(f"{where}: call fit() before transform()")
        arr = as_float_array(X, "X", where, allow_nan=True)
        if arr.ndim == 0:
            raise ShapeError(f"{where}: X must be an array (..., n_features), got a scalar (shape ())")
        if arr.ndim == 1 and self.n_features_ == 1:
            return arr
        if arr.shape[-1] != self.n_features_:
            raise ShapeError(
                f"{where}: X has {arr.shape[-1]} features on its last axis (shape {arr.shape}), "
                f"the scaler was fitted on {self.n_features_}"
            )
        return arr

    def _broadcast(self, arr: np.ndarray):
        offset, scale = self.offset_.astype(arr.dtype), self.scale_.astype(arr.dtype)
        if arr.ndim == 1 and self.n_features_ == 1:  # one feature given as (n_samples,)
            return offset[0], scale[0]
        return offset, scale

    def transform(self, X) -> np.ndarray:
        """Scale ``X (..., n_features)`` with the fitted statistics (NaN stays NaN; dtype kept)."""
        arr = self._check(X, f"{type(self).__name__}.transform")
        offset, scale = self._broadcast(arr)
        return (arr - offset) / scale

    def inverse_transform(self, Z) -> np.ndarray:
        """Undo :meth:`transform`: ``Z * scale + offset`` (dtype kept)."""
        arr = self._check(Z, f"{type(self).__name__}.inverse_transform")
        offset, scale = self._broadcast(arr)
        return arr * scale + offset

    def to_dict(self) -> dict:
        """JSON-ready dict: ``kind`` and the fitted per-feature statistics as lists."""
        if self.offset_ is None:
            raise NotReadyError(f"{type(self).__name__}.to_dict: the scaler is not fitted")
        out = {"kind": self.kind}
        out.update({name: getattr(self, name).tolist() for name in self._params})
        return out

    @classmethod
    def from_dict(cls, d: dict):
        """Rebuild a fitted scaler from :meth:`to_dict` output."""
        if not isinstance(d, dict) or d.get("kind") != cls.kind:
            raise InputError(f"{cls.__name__}.from_dict: expected kind {cls.kind!r}, got {d!r:.80}")
        try:
            arrays = [np.asarray(d[name], dtype=np.float64) for name in cls._params]
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{cls.__name__}.from_dict: bad or missing entry ({exc})") from None
        if any(a.ndim != 1 or a.shape != arrays[0].shape or not np.isfinite(a).all() for a in arrays):
            raise InputError(f"{cls.__name__}.from_dict: statistics must be finite 1-D lists of one length")
        obj = cls()
        obj._restore(*arrays)
        return obj

    def __repr__(self) -> str:
        state = f"n_features={self.n_features_}" if self.offset_ is not None else "not fitted"
        return f"{type(self).__name__}({state})"


class MinMaxScaler(_Scaler):
    """Min-max scaling to [0, 1] on the training data: ``(x - min) / (max - min)``.

    The chapter (Pyrcz, 2024) scales porosity and permeability this way, fitted on the training
    depths only.
    NaN is ignored when fitting; a constant column (max == min) maps to 0.

    Attributes
    ----------
    data_min_, data_max_ : ndarray (n_features,)
        Training minimum and maximum (float64).
    """

    kind = "minmax"
    _params = ("data_min_", "data_max_")

    def fit(self, X) -> "MinMaxScaler":
        """Learn per-feature min and max from ``X (n_samples, n_features)`` or ``(n_samples,)``.

        Raises
        ------
        InputError
            Empty, non-numeric, inf, or a column with no finite value.
        """
        arr = _fit_input(X, "MinMaxScaler.fit")
        self._restore(np.nanmin(arr, axis=0), np.nanmax(arr, axis=0))
        return self

    def _restore(self, data_min, data_max):
        self.data_min_, self.data_max_ = data_min, data_max
        self._set(data_min, data_max - data_min)


class StandardScaler(_Scaler):
    """Standardisation on the training data: ``(x - mean) / std`` (population std, ddof 0).

    NaN is ignored when fitting; a constant column (std == 0) maps to 0.

    Attributes
    ----------
    mean_, std_ : ndarray (n_features,)
        Training mean and standard deviation (float64).
    """

    kind = "standard"
    _params = ("mean_", "std_")

    def fit(self, X) -> "StandardScaler":
        """Learn per-feature mean and std from ``X (n_samples, n_features)`` or ``(n_samples,)``.

        Raises
        ------
        InputError
            Empty, non-numeric, inf, or a column with no finite value.
        """
        arr = _fit_input(X, "StandardScaler.fit")
        self._restore(np.nanmean(arr, axis=0), np.nanstd(arr, axis=0))
        return self

    def _restore(self, mean, std):
        self.mean_, self.std_ = mean, std
        self._set(mean, std)


class Log10Transform:
    """Opt-in ``log10`` of permeability (mD), with a floor for zeros and negatives.

    ``transform(k) = log10(max(k, floor))``: every value below ``floor`` -- including 0 and
    negative values, which have no logarithm -- is raised to ``floor`` first, so the result is
    never below ``log10(floor)``.  NaN stays NaN.  The default floor, 1e-3 mD, is the lowest
    KLOGH value of the Volve F-wells (apparently the interpretation's clip; the 15/9-19 A log
    holds exact zeros, which become -3).  ``inverse_transform(z) = 10 ** z`` (so clipped
    values come back as ``floor``, not as 0).

    Parameters
    ----------
    floor : float, default 1e-3
        Smallest permeability kept, in the data's unit (mD); must be > 0.

    Raises
    ------
    InputError
        If ``floor`` is not a finite number > 0, or the data hold inf.
    """

    kind = "log10"

    def __init__(self, floor: float = 1e-3):
        try:
            floor = float(floor)
        except (TypeError, ValueError):
            raise InputError(f"Log10Transform: floor must be a number > 0, got {floor!r}") from None
        if not (np.isfinite(floor) and floor > 0):
            raise InputError(f"Log10Transform: floor must be a finite number > 0, got {floor!r}")
        self.floor = floor

    def fit(self, X=None) -> "Log10Transform":
        """Nothing to learn; present so the transform composes like the scalers."""
        return self

    def transform(self, X) -> np.ndarray:
        """``log10(max(X, floor))`` elementwise, any shape, dtype kept, NaN kept."""
        arr = as_float_array(X, "X", "Log10Transform.transform", allow_nan=True)
        with np.errstate(invalid="ignore"):
            return np.log10(np.maximum(arr, arr.dtype.type(self.floor)))

    def inverse_transform(self, Z) -> np.ndarray:
        """``10 ** Z`` elementwise (permeability in mD), dtype kept."""
        arr = as_float_array(Z, "Z", "Log10Transform.inverse_transform", allow_nan=True)
        return np.power(arr.dtype.type(10.0), arr)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "floor": self.floor}

    @classmethod
    def from_dict(cls, d: dict) -> "Log10Transform":
        if not isinstance(d, dict) or d.get("kind") != cls.kind or "floor" not in d:
            raise InputError(f"Log10Transform.from_dict: expected {{'kind': 'log10', 'floor': ...}}, got {d!r:.80}")
        return cls(floor=d["floor"])

    def __repr__(self) -> str:
        return f"Log10Transform(floor={self.floor:g})"


_KINDS = {c.kind: c for c in (MinMaxScaler, StandardScaler, Log10Transform)}


def scaler_from_dict(d: dict):
    """Rebuild a MinMaxScaler, StandardScaler or Log10Transform from its ``to_dict()`` output.

    Raises
    ------
    InputError
        If ``d`` is not such a dict (unknown ``kind``, missing or malformed statistics).
    """
    kind = d.get("kind") if isinstance(d, dict) else None
    if kind not in _KINDS:
        raise InputError(f"scaler_from_dict: unknown kind {kind!r}; expected one of {sorted(_KINDS)}")
    return _KINDS[kind].from_dict(d)
