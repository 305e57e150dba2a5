"""CSV well files: one header row, one row per depth, through the csv module and pandas."""

from __future__ import annotations

import csv
import io
import re
from typing import Sequence

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
from .units import depth_unit_from_string
from .welllog import WellLog

__all__ = ["read_csv"]


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
        Name of the depth column; by default the first of DEPTH, DEPT, MD, TDEP found
        (case-insensitive), also with its unit written after it: ``DEPTH_FT``, ``DEPTH (ft)``,
        ``DEPTH [m]``.
    columns : sequence of str, optional
        Read only these columns (plus depth); by default every column, which must all be numeric.
    units : dict, optional
        Units per column; a CSV carries none, so they are ``""`` unless given here.
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
        Missing, duplicate or non-monotonic depths (naming rows and lines); a ``depth_unit``
        other than the one the depth column's header names.
    """
    source, text = read_text(path)
    header, rows, lines = _table(text, source)

    def row_label(i: int) -> str:
        return f"data row {i + 1} (line {lines[i + 1]})"

    depth_key, keys = _choose_columns(header, depth_column, columns, source)
    depth_unit = _depth_unit(depth_key, depth_unit, source)
    values = {key: _column(header, rows, lines, key, source, hint=columns is None) for key in [depth_key, *keys]}
    for key in keys:
        values[key] = mask_nulls(values[key], null_values)
    for key, v in values.items():
        check_no_inf(v, key, source, row_label)
    depth = values.pop(depth_key)
    order = check_depth_order(depth, source, depth_unit, row_label)
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


def _column(header: list[str], rows: list[list[str]], lines: list[int], key: str, source, hint: bool) -> np.ndarray:
    """The column ``key`` as float64, NaN where missing; DataFileError naming a non-numeric cell."""
    k = [h.upper() for h in header].index(key)
    numbers, bad = parse_numbers([row[k] for row in rows])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        how = ("; correct that cell or leave it empty (read as missing), or delete the column if no model needs it "
               "(Python: read_csv(..., columns=[...]) reads only those named)")
        raise DataFileError(
            f"{source}: column {header[k]} holds non-numeric value {rows[i][k].strip()!r} "
            f"at line {lines[i + 1]}{how if hint else ''}"
        )
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


#: A depth column's header with its unit after it: DEPTH_FT, DEPTH (ft), DEPT[M], MD_M.
_DEPTH_WITH_UNIT = re.compile(r"^(?:%s)\s*(?:_\s*|\(\s*|\[\s*)([A-Z.]+)\s*[)\]]?$" % "|".join(DEPTH_NAMES))


def _depth_unit(depth_key: str, given: str | None, source) -> str:
    """The depth unit: the one the header names (checked against ``given``), else ``given``, else metres."""
    match = _DEPTH_WITH_UNIT.match(depth_key)
    if match is None:
        return depth_unit_from_string(given or "m", str(source))
    named = depth_unit_from_string(match.group(1), str(source))
    if given is not None and depth_unit_from_string(given, str(source)) != named:
        raise DepthError(f"{source}: depth column {depth_key} is in {named}, but depth_unit={given!r} was given")
    return named


def _choose_columns(header: list[str], depth_column, columns, source) -> tuple[str, list[str]]:
    """The depth column's key and the other columns' keys (upper-case), in file order."""
    present = [h.upper() for h in header]
    available = ", ".join(header)
    if depth_column is None:
        found = [c for c in DEPTH_NAMES if c in present] or [c for c in present if _DEPTH_WITH_UNIT.match(c)]
        if not found:
            raise CurveNotFoundError(
                f"{source}: no depth column (looked for {', '.join(DEPTH_NAMES)}, also as DEPTH_FT or DEPTH (m)); "
                f"columns: {available}; name the depth column DEPTH "
                f"(Python: read_csv(..., depth_column=NAME))"
            )
        depth_key = found[0]
    else:
        depth_key = str(depth_column).strip().upper()
        if depth_key not in present:
            raise CurveNotFoundError(f"{source}: depth column {depth_column!r} not found; columns: {available}")
    if columns is None:
        return depth_key, [c for c in present if c != depth_key]
    keys: list[str] = []
    for c in columns:
        key = str(c).strip().upper()
        if key not in present:
            raise CurveNotFoundError(f"{source}: column {c!r} not found; columns: {available}")
        if key != depth_key and key not in keys:
            keys.append(key)
    return depth_key, keys
