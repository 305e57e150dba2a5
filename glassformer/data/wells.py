"""Well logs: the :class:`WellLog` container and the LAS / CSV readers.

Conventions (DESIGN.md, decision 12)
------------------------------------
* ``depth`` is strictly increasing, float64, in the file's own depth unit, reported in
  ``WellLog.depth_unit`` as ``"m"`` or ``"ft"``.  Files whose depth decreases (logged
  bottom-up) are reversed, every value staying with its own depth.  Nothing is converted
  between metres and feet behind the user's back.
* Curves are float arrays of shape ``(n_samples,)`` keyed by upper-case mnemonic; missing
  values (LAS ``NULL``, common sentinels, empty CSV cells) are NaN.  Nothing is filled.
* Porosity is whatever the file holds (the Volve CPI logs: fraction v/v; the Volve core table:
  percent); permeability is in mD.  ``units`` carries the file's unit strings.

Null values
-----------
A value is treated as missing when it is numerically equal to the file's declared ``NULL``
(LAS) or to one of ``null_values`` (default ``(-999.25, -999, -9999)``).  So a LAS file that
declares ``NULL = -999.25`` but writes ``-9999`` in its data still gets NaN there; pass
``null_values=()`` to keep undeclared sentinels as numbers (the declared ``NULL`` is always
honoured).  Comparison is exact equality of the parsed float, never a tolerance.

Errors
------
Every problem with a file raises :class:`~glassformer.errors.DataFileError` or a subclass,
with the file path in the message: :class:`~glassformer.errors.CurveNotFoundError` for a
missing mnemonic/column (the message lists those present), :class:`~glassformer.errors.DepthError`
for null, duplicate or non-monotonic depths and for intervals outside the file's range.
"""

from __future__ import annotations

import csv
import io
import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from .._validation import FLOAT_DTYPES
from ..errors import CurveNotFoundError, DataFileError, DepthError, InputError, ShapeError

__all__ = [
    "DEFAULT_NULL_VALUES",
    "DEPTH_COLUMN_NAMES",
    "WellLog",
    "common_depth_unit",
    "depth_unit_from_string",
    "read_csv",
    "read_las",
    "read_well",
]

#: Sentinels mapped to NaN in addition to a LAS file's declared ``NULL`` (exact float equality).
DEFAULT_NULL_VALUES: tuple[float, ...] = (-999.25, -999.0, -9999.0)

#: Column names tried, in this order and case-insensitively, as the depth column of a CSV file.
DEPTH_COLUMN_NAMES: tuple[str, ...] = ("DEPTH", "DEPT", "MD", "TDEP")

# Unit strings of a depth index, as vendors write them, mapped to our two names.
_METRE_UNITS = {"M", "METER", "METERS", "METRE", "METRES"}
_FOOT_UNITS = {"FT", "F", "FEET", "FOOT", "USFT"}

# CSV cells read as missing (after stripping, case-insensitive), besides the empty cell.
_CSV_NA_TOKENS = {"", "NA", "N/A", "NAN", "-NAN", "NULL", "NONE", "#N/A"}

_WRAP_RE = re.compile(r"^\s*WRAP\s*\.\s*([^\s:]*)", re.IGNORECASE)
_VERS_RE = re.compile(r"^\s*VERS\s*\.\s*([^\s:]*)", re.IGNORECASE)


def depth_unit_from_string(unit: str, source: str = "") -> str:
    """Map a file's depth-unit string to ``"m"`` or ``"ft"``.

    An empty string means metres (DESIGN.md decision 12: metres unless the file says otherwise).

    Raises
    ------
    DepthError
        If the unit is neither metres (M, METER, METRE, ...) nor feet (FT, F, FEET, ...).
    """
    u = (unit or "").strip().upper()
    if u == "" or u in _METRE_UNITS:
        return "m"
    if u in _FOOT_UNITS:
        return "ft"
    where = f"{source}: " if source else ""
    raise DepthError(f"{where}depth unit {unit!r} is neither metres (M) nor feet (FT)")


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

    # ------------------------------------------------------------------ access
    def __len__(self) -> int:
        return int(self.depth.size)

    @property
    def mnemonics(self) -> list[str]:
        """Curve mnemonics in file order (the depth index excluded)."""
        return list(self.curves)

    def curve(self, mnemonic: str) -> np.ndarray:
        """Return the curve ``mnemonic`` (case-insensitive), shape ``(n_samples,)``.

        The depth mnemonic (e.g. ``"DEPT"``) returns ``depth``.

        Raises
        ------
        CurveNotFoundError
            If the well has no such curve; the message lists the available mnemonics.
        """
        key = str(mnemonic).strip().upper()
        if key in self.curves:
            return self.curves[key]
        if key == self.depth_mnemonic:
            return self.depth
        raise CurveNotFoundError(
            f"curve {mnemonic!r} not found in {self._where()}; available: "
            f"{', '.join([self.depth_mnemonic, *self.curves]) }"
        )

    def matrix(self, mnemonics: Sequence[str]) -> np.ndarray:
        """Stack curves as columns: ``(n_samples, len(mnemonics))`` (raises CurveNotFoundError)."""
        if isinstance(mnemonics, str):
            mnemonics = [mnemonics]
        if len(mnemonics) == 0:
            raise InputError(f"{self._where()}: matrix() needs at least one mnemonic")
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
            raise InputError(f"{self._where()}: interval bounds must be numbers, got {top!r}, {base!r}") from None
        if not (np.isfinite(top) and np.isfinite(base)):
            raise InputError(f"{self._where()}: interval bounds must be finite, got {top}, {base}")
        if top > base:
            raise InputError(f"{self._where()}: interval top {top:g} is below its base {base:g}")
        lo, hi = float(self.depth[0]), float(self.depth[-1])
        # Tolerate decimal round-off in bounds typed from a header (e.g. 4744.8 vs 4744.800000001).
        tol = 1e-6 * max(1.0, abs(lo), abs(hi))
        u = self.depth_unit
        if top < lo - tol or base > hi + tol:
            # "lies outside" when nothing of the interval is logged, "reaches outside" when part of it is.
            verb = "lies" if base < lo - tol or top > hi + tol else "reaches"
            raise DepthError(
                f"{self._where()}: interval {top:g} to {base:g} {u} {verb} outside the log's depth "
                f"range {lo:g} to {hi:g} {u}"
            )
        keep = (self.depth >= top - tol) & (self.depth <= base + tol)
        if not keep.any():
            raise DepthError(
                f"{self._where()}: interval {top:g} to {base:g} {u} holds no sample "
                f"(log range {lo:g} to {hi:g} {u})"
            )
        return self._take(keep)

    def _take(self, keep: np.ndarray) -> "WellLog":
        return WellLog(
            name=self.name,
            depth=self.depth[keep],
            curves={k: v[keep] for k, v in self.curves.items()},
            units=dict(self.units),
            depth_unit=self.depth_unit,
            source=self.source,
            descriptions=dict(self.descriptions),
            depth_mnemonic=self.depth_mnemonic,
        )

    def to_frame(self):
        """Return a pandas DataFrame: one column per curve, indexed by depth (named after the index curve).

        ``frame.attrs`` holds ``units``, ``depth_unit``, ``name`` and ``source``.
        """
        import pandas as pd  # imported here so `import glassformer` stays light

        frame = pd.DataFrame(dict(self.curves), index=pd.Index(self.depth, name=self.depth_mnemonic))
        frame.attrs.update(
            units=dict(self.units), depth_unit=self.depth_unit, name=self.name, source=self.source
        )
        return frame

    def _where(self) -> str:
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


# ---------------------------------------------------------------------- shared helpers
def _read_text(path) -> tuple[Path, str]:
    """Read a text file: UTF-8 (BOM allowed), else Latin-1, which maps every byte.

    Latin-1 keeps vendor headers with a stray degree sign readable; a non-UTF-8 byte inside a
    number then shows up as text in a numeric column and is reported there.
    """
    p = Path(path)
    if not p.exists():
        raise DataFileError(f"{p}: file not found")
    if not p.is_file():
        raise DataFileError(f"{p}: not a regular file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise DataFileError(f"{p}: cannot be read ({exc.strerror or exc})") from None
    if b"\x00" in raw:
        raise DataFileError(f"{p}: contains NUL bytes; a binary file, not a LAS/CSV text file")
    try:
        return p, raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return p, raw.decode("latin-1")


def _check_depth_order(
    depth: np.ndarray, source: Path, unit: str, row_label: Callable[[int], str]
) -> np.ndarray | None:
    """Return ``None`` if depth increases, a reversing index if it strictly decreases.

    Raises DepthError for a missing, duplicate or non-monotonic depth (naming rows and lines).
    """
    bad = np.flatnonzero(~np.isfinite(depth))
    if bad.size:
        raise DepthError(f"{source}: depth is missing (null/NaN/inf) at {row_label(int(bad[0]))}")
    if depth.size < 2:
        return None
    step = np.diff(depth)
    if (step > 0).all():
        return None
    if (step < 0).all():
        return np.arange(depth.size)[::-1]
    dup = np.flatnonzero(step == 0)
    if dup.size:
        i = int(dup[0])
        raise DepthError(
            f"{source}: duplicate depth {depth[i]:g} {unit} at {row_label(i)} and {row_label(i + 1)}"
        )
    direction = np.sign(step[0])
    i = int(np.flatnonzero(np.sign(step) != direction)[0])
    trend = "increases" if direction > 0 else "decreases"
    raise DepthError(
        f"{source}: depth is not monotonic: it {trend} at first, but {depth[i + 1]:g} {unit} at "
        f"{row_label(i + 1)} follows {depth[i]:g} {unit} at {row_label(i)}"
    )


def _mask_nulls(values: np.ndarray, null_values: Sequence[float]) -> np.ndarray:
    if len(null_values):
        values = np.where(np.isin(values, np.asarray(null_values, dtype=np.float64)), np.nan, values)
    return values


def _first_bad_token(values) -> tuple[int, str] | None:
    for i, v in enumerate(values):
        try:
            float(v)
        except (TypeError, ValueError):
            return i, str(v)
    return None


def _check_no_inf(values: np.ndarray, mnem: str, source: Path, row_label) -> None:
    inf = np.flatnonzero(np.isinf(values))
    if inf.size:
        raise DataFileError(f"{source}: curve {mnem} holds an infinite value at {row_label(int(inf[0]))}")


# ---------------------------------------------------------------------- LAS
@dataclass
class _LasLayout:
    """What a plain line scan learns before lasio runs: sections, WRAP, data line widths."""

    sections: dict[str, int] = field(default_factory=dict)  # section letter -> line number
    wrap: str | None = None
    version: str | None = None
    curve_lines: int = 0
    data_lines: list[tuple[int, int]] = field(default_factory=list)  # (line number, n tokens)


def _scan_las(text: str) -> _LasLayout:
    lay = _LasLayout()
    current = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("~"):
            current = s[1:2].upper()
            lay.sections.setdefault(current, lineno)
            continue
        if current == "V":
            if lay.wrap is None and (m := _WRAP_RE.match(s)):
                lay.wrap = m.group(1).upper()
            elif lay.version is None and (m := _VERS_RE.match(s)):
                lay.version = m.group(1)
        elif current == "C":
            lay.curve_lines += 1
        elif current == "A":
            lay.data_lines.append((lineno, len(s.split())))
    return lay


def _check_las_layout(lay: _LasLayout, source: Path) -> bool:
    """Validate sections, WRAP and row widths; return True if the data are wrapped."""
    if not lay.sections:
        raise DataFileError(f"{source}: no ~ sections found; not a LAS file")
    if "C" not in lay.sections or lay.curve_lines == 0:
        raise DataFileError(f"{source}: no ~Curve section (or it lists no curve); cannot name the data columns")
    if "A" not in lay.sections:
        raise DataFileError(f"{source}: no ~A (ASCII data) section")
    if not lay.data_lines:
        raise DataFileError(f"{source}: the ~A data section (line {lay.sections['A']}) is empty")
    wrap = lay.wrap or "NO"
    if wrap not in ("YES", "NO"):
        raise DataFileError(f"{source}: WRAP must be YES or NO, got {lay.wrap!r}")
    if lay.version is not None and lay.version.startswith("3"):
        return wrap == "YES"  # LAS 3 data may be comma-delimited; lasio checks those rows itself
    n = lay.curve_lines
    if wrap == "NO":
        for lineno, width in lay.data_lines:
            if width != n:
                hint = (
                    " (the row is truncated)"
                    if (lineno, width) == lay.data_lines[-1] and width < n
                    else " (is the file wrapped although WRAP is NO?)"
                )
                raise DataFileError(
                    f"{source}: line {lineno} of the ~A section has {width} values, expected {n}, "
                    f"one per curve of the ~Curve section{hint}"
                )
    else:
        total = sum(width for _, width in lay.data_lines)
        if total % n:
            raise DataFileError(
                f"{source}: the wrapped ~A section holds {total} values, not a multiple of the {n} "
                f"curves; the last depth step (ending line {lay.data_lines[-1][0]}) is truncated"
            )
    return wrap == "YES"


@contextmanager
def _quiet_lasio():
    """Silence lasio's warnings while it reads: each problem it warns about (unconvertible
    curve, empty data) becomes one of our exceptions, and a CLI must print one line, not two."""
    logger = logging.getLogger("lasio")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def read_las(path, *, null_values: Sequence[float] = DEFAULT_NULL_VALUES) -> WellLog:
    """Read a LAS 1.2/2.0 file (wrapped or not) into a :class:`WellLog`, through lasio.

    Parameters
    ----------
    path : str or Path
        The LAS file.  UTF-8 or, failing that, Latin-1 text; LF or CRLF line endings.
    null_values : sequence of float, default (-999.25, -999, -9999)
        Values mapped to NaN by exact numeric equality, in addition to the header's ``NULL``.

    Returns
    -------
    WellLog
        ``depth`` is the first (index) curve, sorted increasing: a file logged bottom-up
        (decreasing depth) is reversed with every value kept with its own depth.
        ``depth_unit`` comes from the index curve's unit (M -> "m", FT/F -> "ft"; blank -> "m").
        ``name`` is the ``WELL`` header field, else the file stem.  Mnemonics are upper-case
        (lasio renames repeated ones ``GR:1``, ``GR:2``).

    Notes
    -----
    The data are read strictly: whitespace-separated numbers with ``.`` as decimal mark
    (lasio's repair substitutions for run-on numbers and comma decimals are switched off, so a
    malformed value is reported instead of guessed).  With ``WRAP NO`` every ``~A`` line must
    hold one value per curve; with ``WRAP YES`` the values are read as a stream of depth steps
    (so a file that is not actually wrapped reads correctly too).

    Raises
    ------
    DataFileError
        File missing or binary; no ``~`` sections, no ``~Curve`` or ``~A`` section, empty
        ``~A``; WRAP not YES/NO; a ``~A`` line of the wrong width (wrapped data under
        ``WRAP NO`` or a row truncated mid-way, naming the line); text or infinity in a numeric
        column (naming the curve, the depth step and, when known, the line); any other lasio
        failure (naming the file).
    DepthError
        Depth index null, duplicated or non-monotonic (naming the rows/lines), or a depth unit
        that is neither metres nor feet.
    """
    import lasio  # imported here so `import glassformer` stays light

    source, text = _read_text(path)
    layout = _scan_las(text)
    wrapped = _check_las_layout(layout, source)
    try:
        with _quiet_lasio():
            las = lasio.read(
                io.StringIO(text),
                read_policy=(),
                engine="normal" if wrapped else "numpy",
                ignore_header_errors=False,
            )
    except Exception as exc:  # lasio raises a variety of types; report them all as file errors
        msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise DataFileError(f"{source}: lasio could not read the file: {msg}") from None

    if len(las.curves) == 0 or las.data.size == 0:
        raise DataFileError(f"{source}: no data rows in the ~A section")

    # Under WRAP NO (LAS 1.2/2.0) data row i is the i-th ~A line: messages can name the line.
    las3 = layout.version is not None and layout.version.startswith("3")
    lines = None if (wrapped or las3) else [ln for ln, _ in layout.data_lines]

    def row_label(i: int) -> str:
        if lines is not None and i < len(lines):
            return f"depth step {i + 1} (line {lines[i]})"
        return f"depth step {i + 1}"

    columns: list[np.ndarray] = []
    for item in las.curves:
        data = np.asarray(item.data)
        if data.dtype.kind not in "fiu":
            hit = _first_bad_token(data)
            i, token = hit if hit is not None else (0, "?")
            raise DataFileError(
                f"{source}: curve {item.mnemonic} holds non-numeric value {token!r} at {row_label(i)}"
            )
        values = _mask_nulls(data.astype(np.float64), null_values)
        _check_no_inf(values, item.mnemonic, source, row_label)
        columns.append(values)

    index_item = las.curves[0]
    depth_unit = depth_unit_from_string(index_item.unit, str(source))
    depth = columns[0]
    order = _check_depth_order(depth, source, depth_unit, row_label)
    if order is not None:
        columns = [c[order] for c in columns]

    well = las.well["WELL"].value if "WELL" in las.well else ""
    well = str(well).strip() or source.stem
    rest = las.curves[1:]
    return WellLog(
        name=well,
        source=str(source),
        depth=columns[0],
        depth_unit=depth_unit,
        curves={c.mnemonic: v for c, v in zip(rest, columns[1:])},
        units={c.mnemonic: str(c.unit or "") for c in rest},
        descriptions={c.mnemonic: str(c.descr or "") for c in rest},
        depth_mnemonic=index_item.mnemonic,
    )


# ---------------------------------------------------------------------- CSV
def read_csv(
    path,
    *,
    depth_column: str | None = None,
    columns: Sequence[str] | None = None,
    units: dict[str, str] | None = None,
    depth_unit: str = "m",
    null_values: Sequence[float] = DEFAULT_NULL_VALUES,
    name: str | None = None,
) -> WellLog:
    """Read a comma-separated table (one header row, one row per depth) into a :class:`WellLog`.

    Parameters
    ----------
    path : str or Path
        The CSV file (UTF-8, else Latin-1).
    depth_column : str, optional
        Name of the depth column; by default the first of DEPTH, DEPT, MD, TDEP found
        (case-insensitive).
    columns : sequence of str, optional
        Read only these columns (plus depth); by default every column, which must all be numeric.
    units : dict, optional
        Units per column; a CSV carries none, so they are ``""`` unless given here.
    depth_unit : {"m", "ft"}, default "m"
        Unit of the depth column (a CSV cannot say; metres per DESIGN.md decision 12).
    null_values : sequence of float, default (-999.25, -999, -9999)
        Values mapped to NaN by exact numeric equality.  Empty cells and the tokens NA, N/A,
        NaN, NULL, None, #N/A (any case) are missing too.
    name : str, optional
        Well name; default the file stem.

    Returns
    -------
    WellLog
        Sorted by increasing depth (a decreasing file is reversed, values kept with their depths).
        Column names become upper-case mnemonics.

    Raises
    ------
    DataFileError
        File missing, binary or empty; no data rows; a header cell empty or repeated
        (case-insensitive); a row with fewer or more fields than the header (naming the line);
        text or infinity in a numeric column (naming the column, line and value).
    CurveNotFoundError
        No depth column, or a requested column absent (the message lists those present).
    DepthError
        Missing, duplicate or non-monotonic depths (naming rows and lines).
    """
    import pandas as pd  # imported here so `import glassformer` stays light

    source, text = _read_text(path)
    depth_unit = depth_unit_from_string(depth_unit, str(source))
    # The csv module checks the table's shape and keeps exact line numbers for messages;
    # pandas then converts the cells.
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        for row in reader:
            if any(cell.strip() for cell in row):  # blank lines are skipped, as pandas does
                rows.append(row)
                lines.append(reader.line_num)
    except csv.Error as exc:
        raise DataFileError(f"{source}: not a well-formed CSV table near line {reader.line_num}: {exc}") from None
    if not rows:
        raise DataFileError(f"{source}: the file is empty")

    def line_of(i: int) -> str:
        return f"line {lines[i + 1]}"

    def row_label(i: int) -> str:
        return f"data row {i + 1} ({line_of(i)})"

    header = [h.strip() for h in rows[0]]
    seen: dict[str, int] = {}
    for k, h in enumerate(header):
        if not h:
            raise DataFileError(f"{source}: header cell {k + 1} is empty; every column needs a name")
        key = h.upper()
        if key in seen:
            raise DataFileError(
                f"{source}: duplicate column header {h!r} (columns {seen[key] + 1} and {k + 1})"
            )
        seen[key] = k
    if len(rows) == 1:
        raise DataFileError(f"{source}: the table has a header but no data rows")
    for i, row in enumerate(rows[1:]):
        if len(row) != len(header):
            hint = " (row truncated?)" if len(row) < len(header) else ""
            raise DataFileError(
                f"{source}: {line_of(i)} has {len(row)} fields, the header has {len(header)}{hint}"
            )
    body = pd.DataFrame(rows[1:], columns=[h.upper() for h in header], dtype=str)

    available = ", ".join(header)
    if depth_column is None:
        found = [c for c in DEPTH_COLUMN_NAMES if c in body.columns]
        if not found:
            raise CurveNotFoundError(
                f"{source}: no depth column (looked for {', '.join(DEPTH_COLUMN_NAMES)}); "
                f"columns: {available}; name the depth column DEPTH "
                f"(Python: read_csv(..., depth_column=NAME))"
            )
        depth_key = found[0]
    else:
        depth_key = str(depth_column).strip().upper()
        if depth_key not in body.columns:
            raise CurveNotFoundError(
                f"{source}: depth column {depth_column!r} not found; columns: {available}"
            )
    if columns is None:
        keys = [c for c in body.columns if c != depth_key]
    else:
        keys = []
        for c in columns:
            key = str(c).strip().upper()
            if key not in body.columns:
                raise CurveNotFoundError(f"{source}: column {c!r} not found; columns: {available}")
            if key != depth_key and key not in keys:
                keys.append(key)

    values: dict[str, np.ndarray] = {}
    for key in [depth_key, *keys]:
        cells = body[key].str.strip()
        missing = cells.str.upper().isin(_CSV_NA_TOKENS).to_numpy()
        numbers = pd.to_numeric(cells.where(~missing), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(~missing & np.isnan(numbers))
        if bad.size:
            i = int(bad[0])
            hint = "" if columns is not None else \
                "; remove that column from the file (Python: read_csv(..., columns=[...]) reads only those named)"
            raise DataFileError(
                f"{source}: column {header[seen[key]]} holds non-numeric value {cells.iloc[i]!r} "
                f"at {line_of(i)}{hint}"
            )
        arr = _mask_nulls(numbers, null_values) if key != depth_key else numbers
        _check_no_inf(arr, key, source, row_label)
        values[key] = arr

    depth = values.pop(depth_key)
    order = _check_depth_order(depth, source, depth_unit, row_label)
    if order is not None:
        depth = depth[order]
        values = {k: v[order] for k, v in values.items()}
    units = {str(k).upper(): str(v) for k, v in (units or {}).items()}
    return WellLog(
        name=name or source.stem,
        source=str(source),
        depth=depth,
        depth_unit=depth_unit,
        curves=values,
        units={k: units.get(k, "") for k in values},
        depth_mnemonic=depth_key,
    )


def read_well(path, **kwargs) -> WellLog:
    """Read a LAS (``.las``, any case) or CSV (``.csv``) file; keyword arguments go to that reader.

    Raises
    ------
    DataFileError
        For any other suffix, or anything the chosen reader raises.
    """
    suffix = Path(path).suffix.lower()
    if suffix == ".las":
        return read_las(path, **kwargs)
    if suffix == ".csv":
        return read_csv(path, **kwargs)
    raise DataFileError(f"{path}: unknown well file type {suffix or '(no suffix)'!r}; expected .las or .csv")
