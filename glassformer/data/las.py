"""LAS files, read and written through lasio: :func:`read_las` and :func:`write_las`.

lasio parses, with its own read policy (its comma-decimal-mark substitution) and its own choice
of parser (NumPy's for unwrapped data, its own for wrapped).  Around it, glassformer keeps what
lasio 0.32 does not do (see :mod:`glassformer.data.las_sections`): choosing the one data section
of a LAS 3.0 file (lasio matches LAS 3.0 section names case-sensitively and reads every ~A or
~Log_Data section into the same curves, the last one winning) and checking every data row's
width, so that a damaged row is reported by its line instead of being repaired or shifted.  The
text is decoded as the CSV reader decodes it (:mod:`glassformer.data.parsing`): without chardet,
lasio guesses an encoding from the first line and reads UTF-16 and UTF-8 files wrongly; with
chardet, it takes some Latin-1 files for code page 437.  Then this module checks the ``LASFile``
lasio returns and turns every problem into one clear :class:`~glassformer.errors.DataFileError`
naming the file, and the curve, line or depth.  What is read and what is refused is listed in
:func:`read_las`.
"""

from __future__ import annotations

import copy
import io
import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Mapping, Sequence

import lasio
import numpy as np

from ..errors import DataFileError, DepthError, InputError, ShapeError
from ..io import atomic_write_text
from .las_sections import LasLayout, check_layout, scan_las
from .parsing import (
    DEFAULT_NULL_VALUES,
    DEPTH_NAMES,
    check_depth_order,
    check_no_inf,
    mask_nulls,
    parse_numbers,
    read_text,
)
from .units import DEPTH_UNIT_NAMES, depth_unit_from_string
from .welllog import WellLog

__all__ = ["read_las", "write_las"]


@contextmanager
def _quiet_lasio():
    """Silence lasio's warnings while it reads: each problem it warns about becomes one of our
    exceptions, and a CLI must print one line, not two."""
    logger = logging.getLogger("lasio")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


#: lasio's read policy: its comma-decimal-mark substitution (``123,45`` is 123.45).  Its run-on
#: repairs are left out: they turn ``7.02.3`` into two NaN and split ``0.2-999.25`` in two, which
#: would read a damaged row as data; such a row is reported (see :mod:`.las_sections`).
READ_POLICY = ("comma-decimal-mark",)


def _lasio_read(text: str, source: Path):
    try:
        with _quiet_lasio():  # lasio picks its engine: numpy's parser, its own for wrapped files
            return lasio.read(io.StringIO(text), read_policy=READ_POLICY, ignore_header_errors=False)
    except Exception as exc:  # lasio raises a variety of types; report them all as file errors
        msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise DataFileError(f"{source}: lasio could not read the file: {msg}") from None


def _columns(las, source: Path, row_label, null_values) -> tuple[dict, dict]:
    """Numeric curves (NaN where missing) and the text curves left out, both by mnemonic.

    A curve is text when none of its values is a number (clock times, dates, formation names);
    a curve mixing numbers with other text holds a bad value and is refused.
    """
    numbers: dict[str, np.ndarray] = {}
    text: dict[str, str] = {}
    for item in las.curves:
        data = np.asarray(item.data)
        if data.dtype.kind in "fiu":
            values = data.astype(np.float64)
        else:
            values, bad = parse_numbers(data)
            if bad.any() and np.isnan(values).all():
                text[item.mnemonic] = f"it holds text such as {str(data[np.flatnonzero(bad)[0]]).strip()!r}"
                continue
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise DataFileError(
                    f"{source}: curve {item.mnemonic} holds non-numeric value {str(data[i]).strip()!r} "
                    f"at {row_label(i)}"
                )
        values = mask_nulls(values, null_values)
        check_no_inf(values, item.mnemonic, source, row_label)
        numbers[item.mnemonic] = values
    return numbers, text


def _is_length(unit: str) -> bool:
    u = (unit or "").strip().upper()
    return u == "" or any(u in spellings for spellings in DEPTH_UNIT_NAMES.values())


def _depth_curve(las, numbers: dict, text: dict, source: Path) -> int:
    """Position of the depth among the curves: the index (first curve) if it is a depth, else
    the first numeric curve named DEPTH, DEPT, MD or TDEP in metres or feet."""
    index = las.curves[0]
    if index.mnemonic in numbers and _is_length(index.unit):
        return 0
    for k, item in enumerate(las.curves[1:], start=1):
        if item.mnemonic.upper() in DEPTH_NAMES and item.mnemonic in numbers and _is_length(item.unit):
            return k
    if index.mnemonic in numbers:  # its unit is not a length, so this raises
        try:
            depth_unit_from_string(index.unit, str(source))
        except DepthError as exc:
            raise DepthError(f"{exc} (index curve {index.mnemonic}; glassformer reads logs indexed by depth)") from None
    raise DepthError(
        f"{source}: the index curve {index.mnemonic} is not a depth ({text.get(index.mnemonic, '')}) and no "
        f"curve is named {', '.join(DEPTH_NAMES)}; glassformer reads logs indexed by depth"
    )


def _row_labels(layout: LasLayout, wrapped: bool):
    """Name data row i: its depth step, and its line when rows are lines (not wrapped)."""
    lines = None if wrapped else [lineno for lineno, _ in layout.data.body]

    def row_label(i: int) -> str:
        if lines is not None and i < len(lines):
            return f"depth step {i + 1} (line {lines[i]})"
        return f"depth step {i + 1}"

    return row_label


def read_las(path, *, null_values: Sequence[float] = DEFAULT_NULL_VALUES) -> WellLog:
    """Read a LAS 1.2, 2.0 or 3.0 file (wrapped or not) into a :class:`WellLog`, through lasio.

    Parameters
    ----------
    path : str or Path
        The LAS file: UTF-8, UTF-16 or Latin-1 text, LF or CRLF line endings
        (see :mod:`glassformer.data.parsing`).
    null_values : sequence of float, default (-999.25, -999, -9999)
        Values mapped to NaN by exact numeric equality, in addition to the header's ``NULL``.

    Returns
    -------
    WellLog
        ``depth`` is the index (first) curve, sorted increasing: a file logged bottom-up is
        reversed, every value kept with its own depth.  When the index is not a depth (clock
        times, or a unit that is not a length) the first curve named DEPTH, DEPT, MD or TDEP in
        metres or feet is the depth and the index becomes an ordinary curve.  ``depth_unit`` is
        "m" or "ft" from the depth curve's unit (blank: metres).  ``name`` is the ``WELL`` field,
        else the file stem.  Mnemonics are upper-case (lasio renames repeated ones ``GR:1``,
        ``GR:2``); units are kept as written.  Curves holding only text are left out and listed
        in ``skipped``.

    Notes
    -----
    What is read: LAS 1.2/2.0 and LAS 3.0 with one data section (the log data section of a
    file that also holds core, tops or other LAS 3.0 data sets, or a file's only data section;
    see :mod:`glassformer.data.las_sections`); SPACE-, TAB- or COMMA-delimited rows (LAS 3.0's
    DLM); a comma decimal mark between digits (``123,45``; lasio's ``comma-decimal-mark`` read
    policy) in files whose fields are not separated by commas; the missing-value markers of
    :mod:`glassformer.data.parsing` (``(null)``, ``-``, ``NA``, ...).  With ``WRAP NO`` every data
    line must hold one value per curve; with ``WRAP YES`` the values are read as a stream of depth
    steps.  Nothing is guessed: lasio's run-on read policies, which repair run-together numbers,
    are not used, so such a row is reported.

    Raises
    ------
    DataFileError
        File missing or binary; no ``~`` sections, no ``~Curve`` or data section, an empty data
        section; several log data sections (or several LAS 3.0 data sections and none of them
        the log); a malformed curve line; WRAP not YES/NO; a data line of the wrong width (naming
        the line and, where it can tell, why); text or infinity in a numeric curve (naming the
        curve, the depth step and, when known, the line); any other lasio failure.
    DepthError
        Depth null, duplicated or non-monotonic (naming the rows and lines), a depth unit that
        is neither metres nor feet, or no depth curve at all.
    """
    source, text = read_text(path)
    layout = scan_las(text, source)
    wrapped = check_layout(layout, source)
    las = _lasio_read(layout.text_for_lasio(text), source)
    return _well_log(las, layout, source, _row_labels(layout, wrapped), null_values)


def _well_log(las, layout: LasLayout, source: Path, row_label, null_values) -> WellLog:
    """The WellLog of what lasio read: numeric curves checked, depth chosen and sorted."""
    if len(las.curves) == 0 or las.data.size == 0:
        raise DataFileError(f"{source}: no data rows in the {layout.data_label} section")
    numbers, text_curves = _columns(las, source, row_label, null_values)
    k = _depth_curve(las, numbers, text_curves, source)
    depth_item = las.curves[k]
    depth_unit = depth_unit_from_string(depth_item.unit, str(source))
    try:
        order = check_depth_order(numbers[depth_item.mnemonic], source, depth_unit, row_label)
    except DepthError as exc:
        if k == 0:
            raise
        raise DepthError(f"{exc} (depth from curve {depth_item.mnemonic}; the file is indexed by "
                         f"{las.curves[0].mnemonic})") from None
    if order is not None:
        numbers = {m: v[order] for m, v in numbers.items()}
    rest = [c for c in las.curves if c.mnemonic in numbers and c is not depth_item]
    well = las.well["WELL"].value if "WELL" in las.well else ""
    return WellLog(
        name=str(well).strip() or source.stem,
        source=str(source),
        depth=numbers[depth_item.mnemonic],
        depth_unit=depth_unit,
        curves={c.mnemonic: numbers[c.mnemonic] for c in rest},
        units={c.mnemonic: str(c.unit or "") for c in rest},
        descriptions={c.mnemonic: str(c.descr or "") for c in rest},
        depth_mnemonic=depth_item.mnemonic,
        skipped=text_curves,
    )


# ---------------------------------------------------------------------- writing
def _las_unit(unit: str) -> str:
    """A LAS unit ends at the first blank, so "log10 mD" is written "log10(mD)"."""
    head, _, rest = str(unit or "").strip().partition(" ")
    return f"{head}({rest.replace(' ', '')})" if rest else head


def _source_header(log: WellLog):
    """The header of the LAS file ``log`` was read from, through lasio; None for any other source."""
    source = Path(log.source) if log.source else None
    if source is None or source.suffix.lower() != ".las" or not source.is_file():
        return None
    try:
        path, text = read_text(source)
        layout = scan_las(text, path)
        with _quiet_lasio():  # read_las already reported what matters about this file
            return lasio.read(io.StringIO(layout.text_for_lasio(text, header=True)), ignore_data=True,
                              ignore_header_errors=True)
    except Exception:  # the file changed since it was read: write the header a CSV source gets
        return None


def _null_value(las) -> float:
    """The source's NULL; -999.25 (not lasio's -9999.25) when it declares none."""
    try:
        null = float(las.well["NULL"].value) if "NULL" in las.well else float("nan")
    except (TypeError, ValueError):
        null = float("nan")
    return null if np.isfinite(null) else -999.25


def _new_las(log: WellLog):
    """An empty LASFile with the source's header (or WELL, NULL for a CSV source) and its index."""
    las = lasio.LASFile()
    header = _source_header(log)
    if header is None:
        las.well["WELL"].value = log.name
        index = ("DEPT", log.depth_unit.upper(), "Depth")
        described = {}
    else:
        for section in ("Well", "Parameter", "Other"):
            if section in header.sections:
                las.sections[section] = copy.deepcopy(header.sections[section])
        index = (header.curves[0].mnemonic, header.curves[0].unit, header.curves[0].descr)
        described = {c.mnemonic.upper(): c for c in header.curves[1:]}
    for mnem, descr in (("STRT", "START DEPTH"), ("STOP", "STOP DEPTH"), ("STEP", "STEP")):
        if mnem not in las.well:  # lasio fills these in on writing; a LAS 3.0 source may lack them
            las.well[mnem] = lasio.HeaderItem(mnem, index[1], 0, descr)
    null = _null_value(las) if header is not None else -999.25
    if "NULL" in las.well:
        las.well["NULL"].value = null
    else:
        las.well["NULL"] = lasio.HeaderItem("NULL", "", null, "Null value")
    las.append_curve(index[0], np.asarray(log.depth, dtype=float), unit=index[1], descr=index[2])
    return las, described


def write_las(
    path,
    log: WellLog,
    curves: Mapping[str, np.ndarray] | None = None,
    *,
    units: Mapping[str, str] | None = None,
    descriptions: Mapping[str, str] | None = None,
    include: Sequence[str] | None = None,
    notes: Sequence[str] = (),
) -> Path:
    """Write a well log, and new curves beside it (e.g. predictions), as a LAS 2.0 file.

    Parameters
    ----------
    path : str or Path
        The file to write (atomically: a failure leaves any previous file untouched).
    log : WellLog
        Gives the depth index and the curves named in ``include``.  When ``log.source`` is a
        LAS file its header carries over: the ~Well items (WELL, COMP, FLD, LOC, ..., NULL),
        the ~Parameter and ~Other sections, and the index's and curves' mnemonics, units and
        descriptions as that file writes them.  Otherwise WELL is the log's name, the index is
        DEPT in the log's depth unit and NULL is -999.25.
    curves : mapping of str -> ndarray of shape (n_samples,), optional
        New curves, written after the log's, in this order.
    units, descriptions : mapping of str -> str, optional
        Unit and description of each new curve (``descriptions`` also describes a curve of the
        log that has none).  A unit with a blank is written ``head(rest)`` (LAS ends a unit at
        its first blank: "log10 mD" becomes "log10(mD)"); colons are left out of descriptions
        (LAS 2.0 ends a value at the line's last colon).
    include : sequence of str, optional
        The log's curves to write, in this order; default every curve of the log.
    notes : sequence of str, optional
        Lines added to the ~Other section (after the source's own): what a reader of the file
        must know about its curves (e.g. warnings given when they were computed).

    Returns
    -------
    Path
        The file written.  NaN is written as the NULL value.

    Raises
    ------
    CurveNotFoundError
        If ``include`` names a curve the log does not have.
    ShapeError
        If a new curve's shape is not ``(n_samples,)``.
    InputError
        If a new curve has the name of a written curve of the log, or of the index.
    """
    descriptions = {str(k).upper(): v for k, v in (descriptions or {}).items()}
    las, described = _new_las(log)
    for m in log.mnemonics if include is None else include:
        key, item = m.upper(), described.get(m.upper())
        descr = item.descr if item is not None else log.descriptions.get(key) or descriptions.get(key, "")
        las.append_curve(item.mnemonic if item is not None else key, np.asarray(log.curve(m), dtype=float),
                         unit=item.unit if item is not None else log.units.get(key, ""),
                         descr=str(descr).replace(":", ""))
    _append_new(las, log, dict(curves or {}), dict(units or {}), descriptions, path)
    if notes:
        las.other = "\n".join([*([str(las.other).rstrip()] if str(las.other or "").strip() else []), *map(str, notes)])
    buf = io.StringIO()
    las.write(buf, version=2.0, wrap=False, fmt="%.9g")
    atomic_write_text(path, buf.getvalue())
    return Path(path)


def _append_new(las, log: WellLog, curves: dict, units: dict, descriptions: dict, path) -> None:
    taken = {c.mnemonic.upper() for c in las.curves}
    for name, values in curves.items():
        values = np.asarray(values, dtype=float)
        if values.shape != log.depth.shape:
            raise ShapeError(f"write_las {path}: curve {name} has shape {values.shape}, expected {log.depth.shape}")
        if str(name).upper() in taken:
            raise InputError(f"write_las {path}: curve {name} is already a curve of the file")
        las.append_curve(str(name), values, unit=_las_unit(units.get(name, "")),
                         descr=str(descriptions.get(str(name).upper(), "")).replace(":", ""))
