"""The well log: curves sampled on a strictly increasing depth axis.

Conventions
-----------
* ``depth`` is strictly increasing, float64, in the file's own depth unit, reported in
  ``WellLog.depth_unit`` as ``"m"`` or ``"ft"`` (metres unless the file says otherwise).  Nothing
  is converted between metres and feet behind the user's back.
* Curves are float arrays of shape ``(n_samples,)`` keyed by upper-case mnemonic; missing values
  are NaN.  Nothing is filled.
* ``units`` keeps each curve's unit string exactly as the file writes it (``"V/V"``, ``"%"``,
  ``"mD"``, ``"MD"``, ``"PU"`` ...); :mod:`glassformer.data.units` classifies them.  Porosity is
  whatever the file holds (the Volve CPI logs: fraction v/v; the Volve core table: percent);
  permeability is in mD.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from .._validation import FLOAT_DTYPES
from ..errors import CurveNotFoundError, DepthError, InputError, ShapeError
from .units import curve_name, did_you_mean, split_header

__all__ = ["WellLog", "common_depth_unit"]


@dataclass(eq=False, kw_only=True)
class WellLog:
    """One well: curves sampled on a strictly increasing depth axis.

    Parameters
    ----------
    name : str
        Well name (the LAS ``WELL`` field, else the file stem).
    depth : array of shape (n_samples,)
        Strictly increasing depths in ``depth_unit``; stored as float64.
    curves : dict of str -> array of shape (n_samples,)
        Curves by mnemonic (stored upper-case), NaN where missing; float32 is kept, anything
        else becomes float64.
    units : dict of str -> str, optional
        Unit string per curve as the file gives it (``""`` when unknown).
    depth_unit : {"m", "ft"}, default "m"
        Unit of ``depth``.
    source : str, optional
        Where the log came from (file path, or a description for generated logs).
    descriptions : dict of str -> str, optional
        Curve descriptions from the file header.
    depth_mnemonic : str, default "DEPTH"
        Name of the depth index in the file (e.g. ``DEPT``); ``curve()`` accepts it.
    skipped : dict of str -> str, optional
        Curves of the file that were not read, by mnemonic, with the reason (e.g. a curve of
        clock times or formation names holds text, not numbers); ``curve()`` names the reason
        when one of them is asked for.

    Raises
    ------
    ShapeError
        If ``depth`` is not 1-D or a curve's length differs from it.
    DepthError
        If ``depth`` is empty, non-finite or not strictly increasing.
    InputError
        If two mnemonics coincide up to case, or ``depth_unit`` is not "m"/"ft".
    """

    name: str
    depth: np.ndarray
    curves: dict[str, np.ndarray]
    units: dict[str, str] = field(default_factory=dict)
    depth_unit: str = "m"
    source: str = ""
    descriptions: dict[str, str] = field(default_factory=dict)
    depth_mnemonic: str = "DEPTH"
    skipped: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        where = self.source or self.name or "WellLog"
        depth = np.asarray(self.depth, dtype=np.float64)
        if depth.ndim != 1:
            raise ShapeError(f"{where}: depth must be 1-D (n_samples,), got shape {depth.shape}")
        if depth.size == 0:
            raise DepthError(f"{where}: the log has no samples")
        if not np.isfinite(depth).all():
            i = int(np.flatnonzero(~np.isfinite(depth))[0])
            raise DepthError(f"{where}: depth is missing (NaN/inf) at sample {i}")
        if depth.size > 1 and not (np.diff(depth) > 0).all():
            i = int(np.flatnonzero(np.diff(depth) <= 0)[0])
            raise DepthError(
                f"{where}: depth must be strictly increasing; sample {i + 1} ({depth[i + 1]:g}) "
                f"follows {depth[i]:g}"
            )
        if self.depth_unit not in ("m", "ft"):
            raise InputError(f"{where}: depth_unit must be 'm' or 'ft', got {self.depth_unit!r}")
        curves: dict[str, np.ndarray] = {}
        for key, values in self.curves.items():
            mnem = str(key).upper()
            if mnem in curves:
                raise InputError(f"{where}: curve {key!r} appears twice (mnemonics are case-insensitive)")
            arr = np.asarray(values)
            if arr.dtype.kind not in "fiub":
                raise InputError(f"{where}: curve {mnem} must hold numbers, got dtype {arr.dtype}")
            if arr.dtype not in FLOAT_DTYPES:
                arr = arr.astype(np.float64)
            if arr.shape != depth.shape:
                raise ShapeError(
                    f"{where}: curve {mnem} has shape {arr.shape}, expected {depth.shape} like depth"
                )
            curves[mnem] = arr
        self.depth = depth
        self.curves = curves
        self.units = {str(k).upper(): str(v) for k, v in self.units.items()}
        self.descriptions = {str(k).upper(): str(v) for k, v in self.descriptions.items()}
        self.depth_mnemonic = str(self.depth_mnemonic).upper()
        self.skipped = {str(k).upper(): str(v) for k, v in self.skipped.items()}

    # ------------------------------------------------------------------ access
    def __len__(self) -> int:
        return int(self.depth.size)

    @property
    def mnemonics(self) -> list[str]:
        """Curve mnemonics in file order (the depth index excluded)."""
        return list(self.curves)

    @property
    def step(self) -> float:
        """The depth step: the median spacing of consecutive samples, in ``depth_unit``.

        The median, so that a few gaps (a log spliced from runs, a removed interval) do not move
        it; NaN for a log of one sample.
        """
        if self.depth.size < 2:
            return float("nan")
        return float(np.median(np.diff(self.depth)))

    def curve(self, mnemonic: str) -> np.ndarray:
        """Return the curve ``mnemonic`` (case-insensitive), shape ``(n_samples,)``.

        The depth mnemonic (e.g. ``"DEPT"``) returns ``depth``.

        Raises
        ------
        CurveNotFoundError
            If the well has no such curve; the message lists the available mnemonics (and says
            why, when the file has that curve but it was not read).
        """
        key = self.key_of(mnemonic)
        if key in self.curves:
            return self.curves[key]
        if key == self.depth_mnemonic:
            return self.depth
        why = f" (the file has {key} but it was not read: {self.skipped[key]})" if key in self.skipped else ""
        close = did_you_mean(mnemonic, [self.depth_mnemonic, *self.curves]) if not why else ""
        raise CurveNotFoundError(
            f"curve {mnemonic!r} not found in {self.label}{why}{close}; available: "
            f"{', '.join([self.depth_mnemonic, *self.curves])}"
        )

    def key_of(self, name: str) -> str:
        """The mnemonic of this log that ``name`` means: itself (upper-case), else the curve its header names.

        A table's header carries its unit (``Por (%)``, ``PERM_MD``) while the curve is ``POR``,
        ``PERM``; both spellings name it (:func:`glassformer.data.units.split_header`).  A name
        that means no curve of the log is returned upper-case, unchanged.
        """
        key = str(name).strip().upper()
        have = set(self.curves) | {self.depth_mnemonic}
        if key in have:
            return key
        for other in (curve_name(name), split_header(name)[0]):
            if other in have:
                return other
        return key

    def rename(self, mapping: Mapping[str, str]) -> "WellLog":
        """Return a copy whose curves ``old`` are named ``new`` (``mapping`` is old -> new).

        Units and descriptions follow their curves; the arrays are shared, not copied.

        Raises
        ------
        CurveNotFoundError
            If an ``old`` mnemonic is not a curve of the log.
        InputError
            If two curves would end up with the same name.
        """
        old = {self.key_of(k): str(v).strip().upper() for k, v in mapping.items()}
        for key in old:
            if key not in self.curves:
                self.curve(key)  # raises CurveNotFoundError listing what the log has
        names = [old.get(k, k) for k in self.curves]
        if len(set(names)) != len(names):
            clash = sorted({n for n in names if names.count(n) > 1})
            raise InputError(f"{self.label}: renaming would give two curves the name {', '.join(clash)}")
        return self._copy(
            curves={old.get(k, k): v for k, v in self.curves.items()},
            units={old.get(k, k): v for k, v in self.units.items()},
            descriptions={old.get(k, k): v for k, v in self.descriptions.items()},
        )

    def matrix(self, mnemonics: Sequence[str]) -> np.ndarray:
        """Stack curves as columns: ``(n_samples, len(mnemonics))`` (raises CurveNotFoundError)."""
        if isinstance(mnemonics, str):
            mnemonics = [mnemonics]
        if len(mnemonics) == 0:
            raise InputError(f"{self.label}: matrix() needs at least one mnemonic")
        return np.column_stack([self.curve(m) for m in mnemonics])

    def valid_mask(self, mnemonics: Sequence[str]) -> np.ndarray:
        """Boolean ``(n_samples,)``: True where every named curve is finite (not NaN/missing)."""
        return np.isfinite(self.matrix(mnemonics)).all(axis=1)

    def interval(self, top: float, base: float) -> "WellLog":
        """Return the part of the log with ``top <= depth <= base`` (in ``depth_unit``).

        Raises
        ------
        InputError
            If ``top``/``base`` are not finite numbers or ``top > base``.
        DepthError
            If the interval reaches outside the log's depth range, or holds no sample.
        """
        try:
            top, base = float(top), float(base)
        except (TypeError, ValueError):
            raise InputError(f"{self.label}: interval bounds must be numbers, got {top!r}, {base!r}") from None
        if not (np.isfinite(top) and np.isfinite(base)):
            raise InputError(f"{self.label}: interval bounds must be finite, got {top}, {base}")
        if top > base:
            raise InputError(f"{self.label}: interval top {top:g} is below its base {base:g}")
        lo, hi = float(self.depth[0]), float(self.depth[-1])
        # Tolerate decimal round-off in bounds typed from a header (e.g. 4744.8 vs 4744.800000001).
        tol = 1e-6 * max(1.0, abs(lo), abs(hi))
        u = self.depth_unit
        if top < lo - tol or base > hi + tol:
            # "lies outside" when nothing of the interval is logged, "reaches outside" when part of it is.
            verb = "lies" if base < lo - tol or top > hi + tol else "reaches"
            raise DepthError(
                f"{self.label}: interval {top:g} to {base:g} {u} {verb} outside the log's depth "
                f"range {lo:g} to {hi:g} {u}"
            )
        keep = (self.depth >= top - tol) & (self.depth <= base + tol)
        if not keep.any():
            raise DepthError(
                f"{self.label}: interval {top:g} to {base:g} {u} holds no sample "
                f"(log range {lo:g} to {hi:g} {u})"
            )
        return self._take(keep)

    def _take(self, keep: np.ndarray) -> "WellLog":
        return self._copy(depth=self.depth[keep], curves={k: v[keep] for k, v in self.curves.items()})

    def _copy(self, **changes) -> "WellLog":
        fields = dict(
            name=self.name, depth=self.depth, curves=self.curves, units=dict(self.units),
            depth_unit=self.depth_unit, source=self.source, descriptions=dict(self.descriptions),
            depth_mnemonic=self.depth_mnemonic, skipped=dict(self.skipped),
        )
        return WellLog(**{**fields, **changes})

    @property
    def label(self) -> str:
        """How messages name the log: ``well 'F-1 A' (path/to/file.las)``."""
        return f"well {self.name!r}" + (f" ({self.source})" if self.source else "")

    def __repr__(self) -> str:
        u = self.depth_unit
        curves = ", ".join(
            f"{k} [{self.units[k]}]" if self.units.get(k) else k for k in self.curves
        )
        return (
            f"WellLog({self.name!r}, {len(self)} samples, depth {self.depth[0]:g} to {self.depth[-1]:g} {u}, "
            f"curves: {curves or 'none'}" + (f", source={self.source!r})" if self.source else ")")
        )


def common_depth_unit(logs: Iterable[WellLog]) -> str:
    """Return the depth unit shared by ``logs``.

    Raises
    ------
    DepthError
        If the logs mix metres and feet (names each file and its unit).
    InputError
        If ``logs`` is empty.
    """
    logs = list(logs)
    if not logs:
        raise InputError("common_depth_unit: no well logs given")
    units = {log.depth_unit for log in logs}
    if len(units) > 1:
        listing = "; ".join(f"{log.source or log.name}: {log.depth_unit}" for log in logs)
        raise DepthError(f"wells mix depth units (convert them first): {listing}")
    return units.pop()
