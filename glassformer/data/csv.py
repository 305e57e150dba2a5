"""CSV well files: one header row, one row per depth, through the csv module and pandas."""

from __future__ import annotations

import csv
import io
import re
from typing import Callable, Sequence

import numpy as np

from ..errors import CurveNotFoundError, DataFileError, DepthError, InputError
from ..reporting import say
from .parsing import (
    DEFAULT_NULL_VALUES,
    DEPTH_NAMES,
    check_depth_order,
    check_no_inf,
    mask_nulls,
    parse_numbers,
    read_text,
)
from .units import curve_name, depth_unit_from_string, did_you_mean, split_header, stated_unit
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

    The field separator is told by the header line: a comma, else ``;`` (then ``0,25`` is read as
    0.25, the decimal comma of European spreadsheets), else a tab.  A units row right under the
    header (``m,%,v/v,mD``: every cell empty or a unit of
    :func:`~glassformer.data.units.stated_unit`, none a number) gives the units of the columns
    whose header names none.  A column in which no cell is a number (zone, formation, well name)
    is descriptive: it is left out of the curves, listed in ``skipped`` and named in a note
    (:func:`glassformer.reporting.say`).

    Parameters
    ----------
    path : str or Path
        The CSV file (UTF-8, UTF-16 or Latin-1; see :mod:`glassformer.data.parsing`).
    depth_column : str, optional
        Name of the depth column (its header as written, or its name without the unit); by
        default the first of DEPTH, DEPT, MD, TDEP found (case-insensitive), also with its unit
        written after it: ``DEPTH_FT``, ``DEPTH (ft)``, ``DEPTH [m]``.  A unit written in
        ``depth_column`` itself (``"Depth (ft)"`` for a column headed ``Depth``) is the depth unit,
        as if the header wrote it.
    columns : sequence of str, optional
        Read only these columns (plus depth), which must all be numeric; by default every numeric
        column (columns of text alone are left out).
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
        (case-insensitive); a row with fewer or more fields than the header (naming the line, the
        separator assumed and the fields of the first lines); text among the numbers of a column
        (naming every such column, its lines and values) or infinity; a units row stating a unit
        other than its column's header.
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
    row_units = _units_row(header, named, rows, source, cell_label)
    if row_units is not None:                  # a units row under the header: the curves' units, not data
        if len(rows) == 1:
            raise DataFileError(f"{source}: the table has a header and a units row but no data rows")
        named = [(n, u if u is not None else row_units[k]) for k, (n, u) in enumerate(named)]
        rows = rows[1:]
        row_label, cell_label = _shifted(row_label), _shifted_cell(cell_label)
    depth_k, keys = _choose_columns(header, named, depth_column, columns, source)
    depth_unit = _depth_unit(header[depth_k], named[depth_k][1], _named_depth_unit(depth_column, depth_unit, source),
                             source)
    values, skipped = _columns(header, rows, depth_k, keys, source, cell_label, text_ok=columns is None)
    keys = [k for k in keys if k in values]
    if skipped:
        say(f"{source}: column{'s' if len(skipped) > 1 else ''} {', '.join(header[k] for k in skipped)} "
            f"hold{'' if len(skipped) > 1 else 's'} text in every cell (no number), so "
            f"{'they are' if len(skipped) > 1 else 'it is'} descriptive, not a curve: left out of the well's curves")
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
        skipped={named[k][0]: f"it holds text such as {text!r}, not numbers" for k, text in skipped.items()},
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


def _columns(header: list, rows: list, depth_k: int, keys: list, source, cell_label, text_ok: bool) -> tuple:
    """Columns ``depth_k`` and ``keys`` as float64 (NaN where missing), and the text columns left out.

    A column in which no cell is a number (zone, formation, well name) is descriptive, not a curve:
    with ``text_ok`` it is left out (index -> its first text cell).  Text among numbers is a bad
    value: one DataFileError names every such column.
    """
    values: dict = {}
    skipped: dict = {}
    problems = []
    for k in [depth_k, *keys]:
        numbers, bad = parse_numbers([row[k] for row in rows])
        if bad.any() and text_ok and k != depth_k and np.isnan(numbers).all():
            skipped[k] = str(rows[int(np.flatnonzero(bad)[0])][k]).strip()
            continue
        if bad.any():
            problems.append((k, np.flatnonzero(bad)))
        values[k] = numbers
    if problems:
        _refuse_text(header, rows, problems, source, cell_label, hint=text_ok)
    return values, skipped


def _refuse_text(header: list, rows: list, problems: list, source, cell_label, hint: bool) -> None:
    """DataFileError naming every column with text among its numbers: per column its first few text
    cells and their count."""
    parts = []
    for k, where in problems:
        shown = [f"{str(rows[i][k]).strip()!r} at {cell_label(i, k)}" for i in where[:_CELLS_SHOWN]]
        more = f" and {where.size - _CELLS_SHOWN} more" if where.size > _CELLS_SHOWN else ""
        what = "value" if where.size == 1 else f"values in {where.size} cells:"
        parts.append(f"column {header[k]} holds non-numeric {what} {', '.join(shown)}{more}")
    one = len(problems) == 1 and problems[0][1].size == 1
    cells = "that cell" if one else "those cells"
    how = (f"; correct {cells} or leave {'it' if one else 'them'} empty (read as missing), or delete "
           "the column if no model needs it (Python: read_csv(..., columns=[...]) reads only those named)")
    raise DataFileError(f"{source}: {'; '.join(parts)}{how if hint else ''}")


def _units_row(header: list, named: list, rows: list, source, cell_label) -> list | None:
    """The units of a units row under the header (one unit or None per column), else None.

    The first data row is a units row when no cell of it is a number and every cell is empty or a
    unit glassformer knows (:func:`~glassformer.data.units.stated_unit`: ``m``, ``%``, ``v/v``,
    ``mD`` ...).  DataFileError when it states a unit other than the one its column's header names.
    """
    first = [str(c).strip() for c in rows[0]]
    numbers, bad = parse_numbers(first)
    if not bad.any():                          # all empty or all numbers: data
        return None
    units = []
    for k, cell in enumerate(first):
        if not bad[k]:
            if not np.isnan(numbers[k]):
                return None
            units.append(None)
            continue
        try:
            units.append(stated_unit(cell))
        except InputError:
            return None
    for k, unit in enumerate(units):
        written = named[k][1]
        if unit is not None and written is not None and _same_unit(written) != unit:
            raise DataFileError(f"{source}: column {header[k]} names the unit {written!r} in its header but "
                                f"{first[k]!r} in the units row ({cell_label(0, k)}); make them agree")
    return units


def _same_unit(unit: str) -> str:
    """A header's unit in :func:`~glassformer.data.units.stated_unit`'s spelling (as written if unknown)."""
    try:
        return stated_unit(unit)
    except InputError:
        return unit


def _shifted(row_label):
    """``row_label`` of the rows after a units row (data row ``i`` is the table's row ``i + 1``)."""
    return lambda i: row_label(i + 1)


def _shifted_cell(cell_label):
    """``cell_label`` of the rows after a units row."""
    return lambda i, k: cell_label(i + 1, k)


def _table(text: str, source) -> tuple[list[str], list[list[str]], list[int]]:
    """Header, data rows and the line number of every row (header first), checked for shape.

    The csv module checks the table's shape and keeps exact line numbers for messages.
    """
    delimiter = _delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
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
            counts = ", ".join(f"line {n}: {len(r)}" for r, n in zip(rows[:_LINES_COUNTED], lines))
            raise DataFileError(
                f"{source}: line {lines[i + 1]} has {len(row)} fields, the header has {len(header)}{hint}; "
                f"fields split at {_DELIMITER_NAMES[delimiter]} (fields per line: {counts}"
                f"{' ...' if len(rows) > _LINES_COUNTED else ''})"
            )
    data = rows[1:]
    if delimiter == ";":                       # European files: ';' between fields, ',' as the decimal mark
        data = [[_DECIMAL_COMMA.sub(r"\1.\2", cell) for cell in row] for row in data]
    return header, data, lines


#: Field separators told apart, by their names in messages.
_DELIMITER_NAMES = {",": "',' (comma)", ";": "';' (semicolon)", "\t": "tabs"}
#: Lines whose field counts a shape error lists.
_LINES_COUNTED = 5
#: A number written with a decimal comma (``0,25``, ``-1,5E-3``); the comma becomes a point.
_DECIMAL_COMMA = re.compile(r"^(\s*[+-]?\d*),(\d+(?:[eE][+-]?\d+)?\s*)$")


def _delimiter(text: str) -> str:
    """The field separator, told by the header line (the first that is neither blank nor a ``#`` note).

    A comma when the header holds one (or holds none of the three); else ``;`` (European
    spreadsheets, which write a decimal comma) when it holds one; else a tab when it holds one.
    """
    header = next((line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    for delimiter in (",", ";", "\t"):
        if delimiter in header:
            return delimiter
    return ","


def _named_depth_unit(depth_column, given: str | None, source) -> str | None:
    """``given``, else the unit written in ``depth_column`` (``--depth-column "Depth (ft)"``: feet, as a header
    says it); DepthError when the two differ or the unit written is not a depth unit."""
    written = split_header(str(depth_column))[1] if depth_column is not None else None
    if written is None:
        return given
    written = depth_unit_from_string(written, f"{source}: depth column {depth_column!r}")
    if given is not None and depth_unit_from_string(given, str(source)) != written:
        raise DepthError(f"{source}: depth column {depth_column!r} names {written}, but depth_unit={given!r} was given")
    return written


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
