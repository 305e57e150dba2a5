"""Core tables: routine core analysis (plug porosity and permeability) read from CSV.

A core table holds one row per plug: the depth the plug was cut at, the core (run) it came
from, and the measured porosity and permeability.  Plugs are sparse (every 0.2-0.3 m, with
gaps of metres between cores) and their depths are the driller's depths, which differ from
the wireline log depths by a shift that is usually constant within one core run; see
:mod:`glassformer.data.depth_matching` for estimating it and :mod:`glassformer.data.plugs_merge`
for placing the plugs on a log's depth grid.

Units
-----
A CSV table usually carries no units, so the caller states them: porosity in percent
(``"%"``, also ``"pu"``) or as a fraction (``"v/v"``, also ``"frac"``, ``"dec"``); permeability
in mD; depth in metres unless ``depth_unit="ft"``.  A table whose second line is a units row
(its depth cell reads ``m``, ``M``, ``ft``, ...) supplies them itself; a unit the caller states
must then agree.  Porosity is stored as a fraction (v/v) whatever the file holds, and
``porosity_unit_read`` keeps what was read.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from ..errors import CurveNotFoundError, DataFileError, DepthError, InputError, ShapeError

__all__ = ["PlugTable", "RUN_COLUMNS", "porosity_scale", "read_plugs"]

#: Run-number columns looked for by ``read_plugs(run="auto")`` (compared without case).
RUN_COLUMNS = ("CORE_NO", "CORE", "CORE_NUMBER", "CORE_ID", "COREID", "RUN", "RUN_NO")

_PERCENT = {"%", "PCT", "PERCENT", "PU", "P.U."}
_FRACTION = {"V/V", "FRAC", "FRACTION", "DEC", "M3/M3"}
_MILLIDARCY = {"MD", "MILLIDARCY", "MILLIDARCIES"}
_DEPTH_UNITS = {"M": "m", "METRE": "m", "METRES": "m", "METER": "m", "METERS": "m",
                "FT": "ft", "F": "ft", "FEET": "ft", "FOOT": "ft"}
_MAX_LISTED = 5  # rows named in one error message before "... and N more"


def porosity_scale(unit: str, where: str = "") -> float:
    """Factor that turns porosity in ``unit`` into a fraction: 0.01 for percent, 1 for v/v.

    Raises
    ------
    InputError
        If ``unit`` is neither percent (%, pu, percent) nor a fraction (v/v, frac, dec).
    """
    u = str(unit).strip().upper()
    if u in _PERCENT:
        return 0.01
    if u in _FRACTION:
        return 1.0
    at = f"{where}: " if where else ""
    raise InputError(f"{at}porosity unit {unit!r} is neither percent ('%') nor a fraction ('v/v')")


@dataclass(eq=False, kw_only=True)
class PlugTable:
    """Plugs of a routine core analysis, in file order.

    Parameters
    ----------
    depth : array of shape (n_plugs,)
        Plug depth in ``depth_unit`` (finite; repeated depths are allowed, e.g. two plugs cut
        side by side).
    porosity : array of shape (n_plugs,)
        Core porosity as a fraction (v/v); NaN where the plug has none.
    permeability : array of shape (n_plugs,)
        Core permeability in mD (>= 0); NaN where the plug has none.
    run : array of shape (n_plugs,), optional
        Core (run) label of each plug; None when the table has no run column, and then every
        plug belongs to one run labelled ``"all"``.
    line : array of int of shape (n_plugs,), optional
        Line of the source file each plug was read from (for messages); default 1, 2, ...
    depth_unit : {"m", "ft"}
    porosity_unit_read : str
        The porosity unit of the file ("%" or "v/v"); ``porosity`` is always v/v.
    columns : dict
        Column of the file behind each role: ``depth``, ``run``, ``porosity``, ``permeability``.
    source : str
        File path or description.

    Raises
    ------
    ShapeError
        If the arrays are not 1-D of one length.
    DepthError
        If a depth is NaN/inf or the table is empty.
    InputError
        If a permeability is negative or a porosity lies outside [0, 1].
    """

    depth: np.ndarray
    porosity: np.ndarray
    permeability: np.ndarray
    run: np.ndarray | None = None
    line: np.ndarray | None = None
    depth_unit: str = "m"
    porosity_unit_read: str = "v/v"
    columns: dict = field(default_factory=dict)
    source: str = "core table"

    def __post_init__(self):
        where = self.source
        self.depth = np.asarray(self.depth, dtype=np.float64)
        n = self.depth.shape[0] if self.depth.ndim == 1 else -1
        self.porosity = np.asarray(self.porosity, dtype=np.float64)
        self.permeability = np.asarray(self.permeability, dtype=np.float64)
        self.line = np.arange(1, n + 1) if self.line is None else np.asarray(self.line, dtype=np.int64)
        arrays = {"depth": self.depth, "porosity": self.porosity, "permeability": self.permeability,
                  "line": self.line}
        if self.run is not None:
            self.run = np.asarray(self.run, dtype=object)
            arrays["run"] = self.run
        for name, arr in arrays.items():
            if arr.ndim != 1 or arr.shape[0] != n:
                raise ShapeError(f"{where}: {name} must have shape (n_plugs,) = ({n},), got {arr.shape}")
        if n == 0:
            raise DepthError(f"{where}: the core table holds no plug")
        if not np.isfinite(self.depth).all():
            raise DepthError(f"{where}: plug depth is missing (NaN/inf) at {self.rows(~np.isfinite(self.depth))}")
        if self.depth_unit not in ("m", "ft"):
            raise InputError(f"{where}: depth_unit must be 'm' or 'ft', got {self.depth_unit!r}")
        if (self.permeability < 0).any():
            raise InputError(f"{where}: negative permeability at {self.rows(self.permeability < 0)}")
        if ((self.porosity < 0) | (self.porosity > 1)).any():
            raise InputError(f"{where}: porosity outside 0-1 v/v at "
                             f"{self.rows((self.porosity < 0) | (self.porosity > 1))}")

    def __len__(self) -> int:
        return int(self.depth.shape[0])

    @property
    def runs(self) -> tuple:
        """Run labels in order of first appearance (``("all",)`` without a run column)."""
        return tuple(dict.fromkeys(self.run_labels.tolist()))

    @property
    def run_labels(self) -> np.ndarray:
        """Run label of each plug, shape ``(n_plugs,)`` (``"all"`` without a run column)."""
        return np.full(len(self), "all", dtype=object) if self.run is None else self.run

    @property
    def units(self) -> dict[str, str]:
        """Units of ``depth``, ``porosity`` and ``permeability`` as stored."""
        return {"depth": self.depth_unit, "porosity": "v/v", "permeability": "mD"}

    def rows(self, mask: np.ndarray) -> str:
        """Name the plugs where ``mask`` is True: file line and depth, the first few of them."""
        idx = np.flatnonzero(mask)
        named = ", ".join(f"line {self.line[i]} ({self.depth[i]:g} {self.depth_unit})"
                          for i in idx[:_MAX_LISTED])
        more = f" and {idx.size - _MAX_LISTED} more" if idx.size > _MAX_LISTED else ""
        return f"{named}{more}"

    def shifted(self, shifts: Mapping) -> "PlugTable":
        """A copy whose depths are moved by each run's shift: ``depth + shifts[run]``.

        Parameters
        ----------
        shifts : mapping of run label -> float, or a ``DepthMatch``
            Shift in ``depth_unit``, positive = deeper.  Runs absent from the mapping keep their
            depths.  Keys match run labels by value or by text (``1`` and ``"1"`` are one run).

        Raises
        ------
        InputError
            If a key names no run of the table, or a shift is not a finite number.
        """
        shifts = getattr(shifts, "shifts", shifts)
        by_text = {str(r): r for r in self.runs}
        offset = np.zeros(len(self))
        labels = np.array([str(r) for r in self.run_labels], dtype=object)
        for key, value in dict(shifts).items():
            if str(key) not in by_text:
                raise InputError(f"{self.source}: shift given for run {key!r}, but the runs are "
                                 f"{', '.join(map(str, self.runs))}")
            value = float(value)
            if not np.isfinite(value):
                raise InputError(f"{self.source}: the shift of run {key!r} must be finite, got {value}")
            offset[labels == str(key)] = value
        return replace(self, depth=self.depth + offset)

    def __repr__(self) -> str:
        return (f"PlugTable({len(self)} plugs, {len(self.runs)} run(s), depth {self.depth.min():g} to "
                f"{self.depth.max():g} {self.depth_unit}, source={self.source!r})")


def read_plugs(path, *, depth: str = "DEPTH", porosity: str | None = "CPOR",
               permeability: str | None = "CKHL", run: str | None = None,
               porosity_unit: str | None = None, depth_unit: str | None = None) -> PlugTable:
    """Read a routine core-analysis table (CSV, one row per plug) into a :class:`PlugTable`.

    Parameters
    ----------
    path : str or Path
        The CSV file (UTF-8, else Latin-1); empty cells and NA/NaN/NULL are missing values.
    depth : str, default "DEPTH"
        Depth column, e.g. ``"OrigDepth"`` for the driller's depth (names are case-insensitive).
    porosity : str or None, default "CPOR"
        Core porosity column; None when the table has none (no depth matching is then possible).
    permeability : str or None, default "CKHL"
        Core permeability column, in mD (CKHL: horizontal, Klinkenberg-corrected).
    run : str, optional
        Core (run) number column, e.g. ``"CORE_NO"``; each run then gets its own depth shift.
        ``"auto"``: the first of :data:`RUN_COLUMNS` the table has (none: one run); ``"none"``: one run.
    porosity_unit : {"%", "v/v"}, optional
        Required unless the file has a units row: a CSV cannot say whether 18.4 means percent.
    depth_unit : {"m", "ft"}, optional
        Default: the units row's, else metres.

    Returns
    -------
    PlugTable
        Plugs with a depth and at least one of porosity and permeability, in file order.

    Raises
    ------
    DataFileError
        File missing, empty or not a table; non-numeric cells in a used column (naming rows);
        the porosity unit not stated; values that contradict the stated unit.
    CurveNotFoundError
        A named column is absent (the message lists the columns).
    DepthError
        A plug with values but no depth (naming the rows).
    InputError
        Negative permeability or porosity (naming the rows).

    Warns
    -----
    UserWarning
        Porosity read as percent that never exceeds 1 (probably a fraction).
    """
    if porosity is None and permeability is None:
        raise InputError(f"{path}: name a porosity or a permeability column (both are None)")
    source, frame = _read_frame(path)
    if str(run).lower() in ("auto", "none"):
        header = {str(c).strip().upper() for c in frame.columns}
        run = next((c for c in RUN_COLUMNS if c in header), None) if str(run).lower() == "auto" else None
    roles = {"depth": depth, "run": run, "porosity": porosity, "permeability": permeability}
    columns = _find_columns(frame, roles, source)
    file_units = _units_row(frame, columns)
    if file_units:
        frame = frame.iloc[1:]
    depth_unit = _depth_unit(depth_unit, file_units.get("depth"), source)
    line = frame.index.to_numpy() + 2  # header on line 1, data from line 2
    values = {role: _numbers(frame[col], col, line, source)
              for role, col in columns.items() if role != "run"}
    nan = np.full(len(frame), np.nan)
    por, perm = values.get("porosity", nan), values.get("permeability", nan)
    has_value = np.isfinite(por) | np.isfinite(perm)
    no_depth = ~np.isfinite(values["depth"])
    if (no_depth & has_value).any():
        raise DepthError(f"{source}: plugs without a depth in column {columns['depth']!r} at "
                         f"{_lines(line, no_depth & has_value)}")
    keep = has_value & ~no_depth
    if not keep.any():
        raise DataFileError(f"{source}: no row holds both a depth and a core porosity or permeability "
                            f"(columns {', '.join(c for r, c in columns.items() if r != 'run')})")
    _check_permeability(perm, file_units.get("permeability"), columns, line, source)
    scale = _porosity_scale(por, porosity_unit, file_units.get("porosity"), columns, line, source)
    runs = None if run is None else _run_labels(frame[columns["run"]].to_numpy()[keep])
    return PlugTable(depth=values["depth"][keep], porosity=por[keep] * scale, permeability=perm[keep],
                     run=runs, line=line[keep], depth_unit=depth_unit,
                     porosity_unit_read="%" if scale == 0.01 else "v/v",
                     columns=columns, source=str(source))


def _read_frame(path):
    """The table as text cells (pandas), blank rows dropped, index = data row number from 0."""
    source = Path(path)
    if not source.is_file():
        raise DataFileError(f"{source}: file not found" if not source.exists() else f"{source}: not a regular file")
    frame = None
    for encoding in ("utf-8", "latin-1"):
        try:
            frame = pd.read_csv(source, dtype=str, keep_default_na=False, skip_blank_lines=False,
                                encoding=encoding)
            break
        except UnicodeDecodeError:
            continue
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise DataFileError(f"{source}: not a readable CSV table ({str(exc).strip()})") from None
    frame = frame.apply(lambda col: col.str.strip())
    frame = frame[(frame != "").any(axis=1)]
    if frame.empty:
        raise DataFileError(f"{source}: the table has a header but no data rows")
    return source, frame


def _find_columns(frame, roles, source) -> dict[str, str]:
    by_upper = {str(c).strip().upper(): c for c in frame.columns}
    found = {}
    for role, name in roles.items():
        if name is None:
            continue
        key = str(name).strip().upper()
        same = [str(c) for c in frame.columns if str(c).strip().upper() == key]
        if len(same) > 1:
            raise DataFileError(f"{source}: {len(same)} columns are named {name!r} ({', '.join(same)}); "
                                f"names are compared without case")
        if key not in by_upper:
            raise CurveNotFoundError(f"{source}: {role} column {name!r} not found; columns: "
                                     f"{', '.join(map(str, frame.columns))}")
        found[role] = by_upper[key]
    return found


def _units_row(frame, columns) -> dict[str, str]:
    """Units from a units row (the first data row whose depth cell is a depth unit), else {}."""
    first = frame.iloc[0]
    if str(first[columns["depth"]]).upper() not in _DEPTH_UNITS:
        return {}
    return {role: str(first[col]) for role, col in columns.items()}


def _depth_unit(stated, from_file, source) -> str:
    unit = stated if stated is not None else (from_file or "m")
    name = _DEPTH_UNITS.get(str(unit).strip().upper())
    if name is None:
        raise DataFileError(f"{source}: depth unit {unit!r} is neither metres ('m') nor feet ('ft')")
    if stated is not None and from_file and _DEPTH_UNITS.get(from_file.upper()) != name:
        raise DataFileError(f"{source}: depth_unit={stated!r} contradicts the file's units row ({from_file!r})")
    return name


def _numbers(cells, column, line, source) -> np.ndarray:
    missing = cells.str.upper().isin({"", "NA", "N/A", "NAN", "NULL", "NONE", "#N/A"}).to_numpy()
    numbers = pd.to_numeric(cells.where(~missing), errors="coerce").to_numpy(dtype=np.float64)
    bad = (~missing & np.isnan(numbers)) | np.isinf(numbers)
    if bad.any():
        shown = ", ".join(f"line {line[i]} ({cells.iloc[i]!r})" for i in np.flatnonzero(bad)[:_MAX_LISTED])
        more = f" and {bad.sum() - _MAX_LISTED} more" if bad.sum() > _MAX_LISTED else ""
        raise DataFileError(f"{source}: column {column!r} holds non-numeric values at {shown}{more}")
    return numbers


def _lines(line, mask) -> str:
    idx = np.flatnonzero(mask)
    more = f" and {idx.size - _MAX_LISTED} more" if idx.size > _MAX_LISTED else ""
    return "lines " + ", ".join(str(line[i]) for i in idx[:_MAX_LISTED]) + more


def _check_permeability(perm, file_unit, columns, line, source) -> None:
    if file_unit is not None and file_unit.strip().upper() not in _MILLIDARCY:
        raise DataFileError(f"{source}: permeability column {columns['permeability']!r} is in "
                            f"{file_unit!r}; glassformer expects mD")
    if (perm < 0).any():
        raise InputError(f"{source}: negative permeability in column {columns['permeability']!r} at "
                         f"{_lines(line, perm < 0)}")


def _porosity_scale(por, stated, from_file, columns, line, source) -> float:
    if "porosity" not in columns:
        return 1.0
    col = columns["porosity"]
    if stated is None and not from_file:
        top = np.nanmax(por) if np.isfinite(por).any() else float("nan")
        guess = "which looks like percent" if top > 1 else "which looks like a fraction"
        raise DataFileError(f"{source}: the table gives no units; state the porosity unit of column "
                            f"{col!r} as '%' or 'v/v' (its largest value is {top:g}, {guess})")
    scale = porosity_scale(stated if stated is not None else from_file, str(source))
    if stated is not None and from_file and porosity_scale(from_file, str(source)) != scale:
        raise DataFileError(f"{source}: porosity unit {stated!r} contradicts the file's units row ({from_file!r})")
    if (por < 0).any():
        raise InputError(f"{source}: negative porosity in column {col!r} at {_lines(line, por < 0)}")
    if scale == 0.01 and np.isfinite(por).any() and np.nanmax(por) <= 1:
        warnings.warn(f"{source}: porosity in column {col!r} is read as percent but never exceeds 1 "
                      f"(largest {np.nanmax(por):g}); if it is a fraction, say porosity_unit='v/v'",
                      UserWarning, stacklevel=3)
    too_big = por * scale > 1
    if too_big.any():
        unit = "%" if scale == 0.01 else "v/v"
        raise DataFileError(f"{source}: porosity in column {col!r} exceeds 100 % read as {unit!r} at "
                            f"{_lines(line, too_big)}; is the unit right?")
    return scale


def _run_labels(cells) -> np.ndarray:
    """Run labels as integers when every cell is a whole number (``"3"``, ``"3.0"``), else text."""
    try:
        numbers = np.array([float(c) for c in cells])
    except ValueError:
        return np.array([str(c) if c != "" else "(none)" for c in cells], dtype=object)
    if np.isfinite(numbers).all() and (numbers == np.round(numbers)).all():
        return np.array([int(v) for v in numbers], dtype=object)
    return np.array([str(c) for c in cells], dtype=object)
