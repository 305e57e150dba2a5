"""CSV well files: one header row, one row per depth, through the csv module and pandas."""

from __future__ import annotations

import csv
import io
from typing import Callable, Sequence

import numpy as np

from ..errors import CurveNotFoundError, DataFileError, DepthError
from .parsing import (
    DEFAULT_NULL_VALUES,
    DEPTH_NAMES,
    check_depth_order,
    check_no_inf,
    mask_nulls,
    parse_numbers,
    read_text,
)
from .units import curve_name, depth_unit_from_string, did_you_mean, split_header
from .welllog import WellLog

__all__ = ["read_csv", "table_log"]


def read_csv(
    path,
    *,
    depth_column: str | None = None,
    columns: Sequence[str] | None = None,
    units: dict[str, str] | None = None,
    depth_unit: str | None = None,
    null_values: Sequence[float] = DEFAULT_NULL_VALUES,
    name: str | None = None,
) -> WellLog:
    """Read a comma-separated table (one header row, one row per depth) into a :class:`WellLog`.

    Parameters
    ----------
    path : str or Path
        The CSV file (UTF-8, UTF-16 or Latin-1; see :mod:`glassformer.data.parsing`).
    depth_column : str, optional
        Name of the depth column (its header as written, or its name without the unit); by
        default the first of DEPTH, DEPT, MD, TDEP found (case-insensitive), also with its unit
        written after it: ``DEPTH_FT``, ``DEPTH (ft)``, ``DEPTH [m]``.
    columns : sequence of str, optional
        Read only these columns (plus depth); by default every column, which must all be numeric.
    units : dict, optional
        Units per column (keyed by curve name or header); they replace the unit a header writes.
        A header ``Por (%)``, ``Por [%]`` or ``POR_PCT`` names the curve ``POR`` in ``%``
        (:func:`glassformer.data.units.split_header`); a curve whose header names no unit and that
        is not given here has the unit ``""``.
    depth_unit : {"m", "ft"}, optional
        Unit of the depth column.  By default the unit its header names (``DEPTH_FT`` is in
        feet), else metres: a plain ``DEPTH`` column cannot say, so give feet here or in the header.
    null_values : sequence of float, default (-999.25, -999, -9999)
        Values mapped to NaN by exact numeric equality.  Empty cells and the missing-value
        markers of :mod:`glassformer.data.parsing` (NA, N/A, #N/A, NaN, NULL, None, ...) are
        missing too.
    name : str, optional
        Well name; default the file stem.

    Returns
    -------
    WellLog
        Sorted by increasing depth (a decreasing file is reversed, values kept with their depths).
        Column names become upper-case mnemonics without their units (``Por (%)`` -> ``POR``,
        blanks as ``_``); ``descriptions`` keeps each header as written.

    Raises
    ------
    DataFileError
        File missing, binary or empty; no data rows; a header cell empty or repeated
        (case-insensitive); a row with fewer or more fields than the header (naming the line);
        text or infinity in a numeric column (naming the column, line and value).
    CurveNotFoundError
        No depth column, or a requested column absent (the message lists those present).
    DepthError
        Missing, duplicate or non-monotonic depths (naming rows and lines); a ``depth_unit``
        other than the one the depth column's header names.
    """
    source, text = read_text(path)
    header, rows, lines = _table(text, source)
    return table_log(header, rows, source, lambda i: f"data row {i + 1} (line {lines[i + 1]})",
                     lambda i, k: f"line {lines[i + 1]}", depth_column=depth_column, columns=columns, units=units,
                     depth_unit=depth_unit, null_values=null_values, name=name)


def table_log(header: list, rows: list, source, row_label: Callable[[int], str], cell_label: Callable[[int, int], str],
              *, depth_column=None, columns=None, units=None, depth_unit=None,
              null_values: Sequence[float] = DEFAULT_NULL_VALUES, name: str | None = None) -> WellLog:
    """A :class:`WellLog` of a table of text cells (CSV rows, or an Excel sheet's cells as text).

    ``header`` holds the column headers as written, ``rows`` the data rows (lists of str, each as
    long as the header); ``row_label(i)`` and ``cell_label(i, k)`` name data row ``i`` (column
    ``k``) in messages.  The other parameters, the result and the errors are :func:`read_csv`'s.
    """
    named = _header_names(header, source)
    depth_k, keys = _choose_columns(header, named, depth_column, columns, source)
    depth_unit = _depth_unit(header[depth_k], named[depth_k][1], depth_unit, source)
    values = {k: _column(header, rows, k, source, cell_label, hint=columns is None) for k in [depth_k, *keys]}
    for k in keys:
        values[k] = mask_nulls(values[k], null_values)
    for k, v in values.items():
        check_no_inf(v, named[k][0], source, row_label)
    depth = values.pop(depth_k)
    order = check_depth_order(depth, source, depth_unit, row_label)
    if order is not None:
        depth = depth[order]
        values = {k: v[order] for k, v in values.items()}
    given = _given_units(units, header, named, keys, source)
    return WellLog(
        name=name or source.stem,
        source=str(source),
        depth=depth,
        depth_unit=depth_unit,
        curves={named[k][0]: v for k, v in values.items()},
        units={named[k][0]: given.get(k, named[k][1] or "") for k in keys},
        descriptions={named[k][0]: header[k] for k in keys if header[k].strip().upper() != named[k][0]},
        depth_mnemonic=named[depth_k][0],
    )


def _header_names(header: list, source) -> list:
    """``(curve name, unit or None)`` of every header (:func:`~glassformer.data.units.split_header`);
    DataFileError when two headers name one curve (``POR (%)`` and ``POR [v/v]``)."""
    named = [split_header(h) for h in header]
    seen: dict = {}
    for k, (n, _) in enumerate(named):
        if n in seen:
            raise DataFileError(f"{source}: columns {seen[n] + 1} ({header[seen[n]]}) and {k + 1} ({header[k]}) "
                                f"both name the curve {n}; rename one of them")
        seen[n] = k
    return named


def _given_units(units, header, named, keys, source) -> dict:
    """Column index -> unit, from ``units`` keyed by curve name or header (these override the header's)."""
    out = {}
    for key, unit in (units or {}).items():
        want = curve_name(key)
        found = [k for k in keys if want in (named[k][0], curve_name(header[k]))]
        if found:
            out[found[0]] = str(unit)
    return out


#: Text cells of one column named in its error message (the rest are counted).
_CELLS_SHOWN = 3


def _column(header: list, rows: list, k: int, source, cell_label, hint: bool) -> np.ndarray:
    """Column ``k`` as float64, NaN where missing; DataFileError naming a non-numeric cell."""
    numbers, bad = parse_numbers([row[k] for row in rows])
    if bad.any():                      # every text cell of the column in one message: the first few, and the count
        where = np.flatnonzero(bad)
        shown = [f"{str(rows[i][k]).strip()!r} at {cell_label(i, k)}" for i in where[:_CELLS_SHOWN]]
        more = f" and {where.size - _CELLS_SHOWN} more" if where.size > _CELLS_SHOWN else ""
        cells = "that cell" if where.size == 1 else "those cells"
        how = (f"; correct {cells} or leave {'it' if where.size == 1 else 'them'} empty (read as missing), or delete "
               "the column if no model needs it (Python: read_csv(..., columns=[...]) reads only those named)")
        what = "value" if where.size == 1 else f"values in {where.size} cells:"
        raise DataFileError(f"{source}: column {header[k]} holds non-numeric {what} {', '.join(shown)}{more}"
                            f"{how if hint else ''}")
    return numbers


def _table(text: str, source) -> tuple[list[str], list[list[str]], list[int]]:
    """Header, data rows and the line number of every row (header first), checked for shape.

    The csv module checks the table's shape and keeps exact line numbers for messages.
    """
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
    while rows and rows[0][0].lstrip().startswith("#"):    # notes above the table (glassformer predict writes them)
        rows, lines = rows[1:], lines[1:]
    if not rows:
        raise DataFileError(f"{source}: the file is empty")
    header = [h.strip() for h in rows[0]]
    seen: dict[str, int] = {}
    for k, h in enumerate(header):
        if not h:
            raise DataFileError(f"{source}: header cell {k + 1} is empty; every column needs a name")
        if h.upper() in seen:
            raise DataFileError(
                f"{source}: duplicate column header {h!r} (columns {seen[h.upper()] + 1} and {k + 1})"
            )
        seen[h.upper()] = k
    if len(rows) == 1:
        raise DataFileError(f"{source}: the table has a header but no data rows")
    for i, row in enumerate(rows[1:]):
        if len(row) != len(header):
            hint = " (row truncated?)" if len(row) < len(header) else ""
            raise DataFileError(
                f"{source}: line {lines[i + 1]} has {len(row)} fields, the header has {len(header)}{hint}"
            )
    return header, rows[1:], lines


def _depth_unit(header: str, named: str | None, given: str | None, source) -> str:
    """The depth unit: the one the header names (checked against ``given``), else ``given``, else metres."""
    if named is None:
        return depth_unit_from_string(given or "m", str(source))
    named = depth_unit_from_string(named, str(source))
    if given is not None and depth_unit_from_string(given, str(source)) != named:
        raise DepthError(f"{source}: depth column {header} is in {named}, but depth_unit={given!r} was given")
    return named


def _find(header: list, named: list, text, source, what: str) -> int:
    """The index of the column ``text`` names: its header as written or its curve name (any case)."""
    want, exact = curve_name(text), str(text).strip().upper()
    for k, h in enumerate(header):
        if h.strip().upper() == exact:
            return k
    for k, (n, _) in enumerate(named):
        if n in (want, split_header(str(text))[0]):
            return k
    raise CurveNotFoundError(f"{source}: {what} {text!r} not found{did_you_mean(str(text), header)}; columns: "
                             f"{', '.join(header)}")


def _choose_columns(header: list, named: list, depth_column, columns, source) -> tuple[int, list]:
    """The depth column's index and the other columns' indices, in file order."""
    if depth_column is None:
        names = [n for n, _ in named]
        found = [c for c in DEPTH_NAMES if c in names]
        if not found:
            raise CurveNotFoundError(
                f"{source}: no depth column (looked for {', '.join(DEPTH_NAMES)}, also as DEPTH_FT or DEPTH (m)); "
                f"columns: {', '.join(header)}; name the depth column DEPTH or pass --depth-column NAME "
                f"(Python: read_csv(..., depth_column=NAME))"
            )
        depth_k = names.index(found[0])
    else:
        depth_k = _find(header, named, depth_column, source, "depth column")
    if columns is None:
        return depth_k, [k for k in range(len(header)) if k != depth_k]
    keys: list = []
    for c in columns:
        k = _find(header, named, c, source, "column")
        if k != depth_k and k not in keys:
            keys.append(k)
    return depth_k, keys
