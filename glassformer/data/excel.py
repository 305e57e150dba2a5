"""Excel well files (``.xlsx``): one well per sheet, read through pandas and openpyxl.

A sheet is read as a CSV file is (:func:`glassformer.data.csv.table_log`): its first non-empty
row is the header (units in it as in a CSV: ``Por (%)``, ``Perm [mD]``, ``PERM_MD``), every
other non-empty row one depth; an empty cell is a gap, text in a number column is refused
naming the sheet, the cell (``C7``) and the column.  openpyxl is an optional dependency
(``pip install "glassformer[excel]"``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import pandas as pd

from ..errors import DataFileError
from .csv import table_log
from .parsing import DEFAULT_NULL_VALUES
from .welllog import WellLog

__all__ = ["read_excel"]

INSTALL_HINT = 'reading .xlsx files needs openpyxl: pip install "glassformer[excel]" (or pip install openpyxl)'


def _workbook(path):
    """All sheets of ``path`` as ``{name: DataFrame of objects, no header}`` (pandas, openpyxl engine)."""
    try:
        import openpyxl  # noqa: F401  (optional dependency: imported here to say how to install it)
    except ImportError:
        raise DataFileError(f"{path}: {INSTALL_HINT}") from None
    p = Path(path)
    if not p.is_file():
        raise DataFileError(f"{p}: file not found" if not p.exists() else f"{p}: not a regular file")
    try:
        return pd.read_excel(p, sheet_name=None, header=None, dtype=object, engine="openpyxl")
    except (OSError, ValueError, KeyError) as exc:
        raise DataFileError(f"{p}: cannot be read as an Excel .xlsx workbook ({' '.join(str(exc).split())})") \
            from None
    except Exception as exc:   # openpyxl raises zipfile.BadZipFile and its own errors on a damaged file
        raise DataFileError(f"{p}: not a readable .xlsx workbook ({type(exc).__name__}: {exc})") from None


def _text(cell) -> str:
    """A cell as the text a CSV would hold: empty for an empty cell, ``repr`` of a number (no rounding)."""
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return ""
    if isinstance(cell, bool):
        return str(cell)           # TRUE/FALSE in a number column is text, refused as such
    if isinstance(cell, (int, float)):
        return repr(float(cell))
    return str(cell)


def _column_letter(k: int) -> str:
    letters = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        letters = chr(65 + r) + letters
    return letters


def _sheet_log(frame, path: Path, sheet: str, name: str | None, **options) -> WellLog:
    cells = [[_text(c) for c in row] for row in frame.itertuples(index=False, name=None)]
    kept = [(r, row) for r, row in enumerate(cells) if any(c.strip() for c in row)]
    where = f"{path} (sheet {sheet!r})"
    if not kept:
        raise DataFileError(f"{where}: the sheet is empty")
    (header_row, header), data = kept[0], kept[1:]
    width = max(k + 1 for k, h in enumerate(header) if h.strip())
    for k in range(width):
        if not header[k].strip():
            raise DataFileError(f"{where}: header cell {_column_letter(k)}{header_row + 1} is empty; every column "
                                "needs a name")
    for r, row in data:
        extra = [k for k in range(width, len(row)) if row[k].strip()]
        if extra:
            k = extra[0]
            raise DataFileError(f"{where}: cell {_column_letter(k)}{r + 1} holds {row[k]!r} in a column without a "
                                "header")
    if not data:
        raise DataFileError(f"{where}: the sheet has a header but no data rows")
    rows = [row[:width] for _, row in data]
    header = header[:width]
    excel_row = [r + 1 for r, _ in data]

    def row_label(i: int) -> str:
        return f"row {excel_row[i]}"

    def cell_label(i: int, k: int) -> str:
        return f"cell {_column_letter(k)}{excel_row[i]}"

    return table_log(header, rows, where, row_label, cell_label, name=name or sheet, **options)


def read_excel(path, *, sheet: str | None = None, all_sheets: bool = False, depth_column: str | None = None,
               columns: Sequence[str] | None = None, units: dict | None = None, depth_unit: str | None = None,
               null_values: Sequence[float] = DEFAULT_NULL_VALUES, name: str | None = None):
    """Read one well (``sheet``), or every sheet as a well (``all_sheets``), of an ``.xlsx`` workbook.

    Parameters
    ----------
    path : str or Path
        The workbook.
    sheet : str, optional
        The sheet to read; by default the only sheet (a workbook of several sheets needs ``sheet``
        or ``all_sheets``).
    all_sheets : bool, default False
        Return a list of wells, one per sheet, each named after its sheet.
    depth_column, columns, units, depth_unit, null_values, name
        As :func:`glassformer.data.read_csv`; ``name`` defaults to the sheet's name.

    Returns
    -------
    WellLog, or list of WellLog with ``all_sheets``
        ``source`` names the file and the sheet.

    Raises
    ------
    DataFileError
        openpyxl missing (the message says ``pip install``), an unreadable workbook, an unknown
        sheet or several sheets without ``sheet`` (listing the sheets), and whatever
        :func:`~glassformer.data.read_csv` refuses (an empty header cell, text in a number column
        named by its cell, e.g. ``cell B7``).
    CurveNotFoundError, DepthError
        As :func:`~glassformer.data.read_csv`.
    """
    path = Path(path)
    book = _workbook(path)
    options = dict(depth_column=depth_column, columns=columns, units=units, depth_unit=depth_unit,
                   null_values=null_values)
    if all_sheets and sheet is None:
        return [_sheet_log(frame, path, str(s), None, **options) for s, frame in book.items()]
    if sheet is None:
        if len(book) > 1:
            raise DataFileError(f"{path}: the workbook has {len(book)} sheets ({', '.join(map(str, book))}); name "
                                "one with --sheet NAME (Python: sheet=NAME), or give the file as a list of wells "
                                "(one per sheet)")
        sheet = next(iter(book))
    if str(sheet) not in map(str, book):
        raise DataFileError(f"{path}: no sheet {sheet!r}; sheets: {', '.join(map(str, book))}")
    frame = next(f for s, f in book.items() if str(s) == str(sheet))
    log = _sheet_log(frame, path, str(sheet), name, **options)
    return [log] if all_sheets else log
