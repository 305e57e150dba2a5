"""Read any well file: LAS, CSV or Excel, chosen by the file's suffix."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from ..errors import CurveNotFoundError, DataFileError, DepthError, InputError
from .csv import read_csv
from .excel import read_excel
from .las import read_las
from .units import curve_name, stated_unit
from .welllog import WellLog

__all__ = ["WELL_SUFFIXES", "names_depth", "parse_units", "read_well", "read_wells", "state_units"]

#: The suffixes of the well files glassformer reads (any case).
WELL_SUFFIXES = (".las", ".csv", ".xlsx")


def _suffix(path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in WELL_SUFFIXES:
        raise DataFileError(f"{path}: unknown well file type {suffix or '(no suffix)'!r}; expected .las, .csv or "
                            ".xlsx")
    return suffix


def read_well(path, *, sheet: str | None = None, depth_column: str | None = None, **kwargs) -> WellLog:
    """Read a LAS (``.las``), CSV (``.csv``) or Excel (``.xlsx``) file; keyword arguments go to that reader.

    ``sheet`` names the sheet of a workbook (:func:`glassformer.data.excel.read_excel`);
    ``depth_column`` the depth column of a table (a LAS file's depth is its index curve: naming
    another is refused).

    Raises
    ------
    DataFileError
        For any other suffix, a ``sheet`` for a file that is not a workbook, or anything the
        chosen reader raises.
    """
    suffix = _suffix(path)
    if sheet is not None and suffix != ".xlsx":
        raise DataFileError(f"{path}: --sheet {sheet} names a sheet of an Excel workbook, but this is a {suffix} "
                            "file")
    if suffix == ".las":
        log = read_las(path, **{k: v for k, v in kwargs.items() if k == "null_values"})
        if depth_column is not None and log.key_of(depth_column) != log.depth_mnemonic:
            raise DataFileError(f"{path}: a LAS file's depth is its index curve {log.depth_mnemonic}; "
                                f"--depth-column {depth_column} applies to CSV and Excel files")
        units = {log.key_of(k): v for k, v in (kwargs.get("units") or {}).items() if log.key_of(k) in log.curves}
        return log._copy(units={**log.units, **units}) if units else log
    if suffix == ".csv":
        return read_csv(path, depth_column=depth_column, **kwargs)
    return read_excel(path, sheet=sheet, depth_column=depth_column, **kwargs)


def read_wells(path, *, sheet: str | None = None, stated_units: Mapping[str, str] | None = None, **kwargs) -> list:
    """The wells of one file: one for LAS and CSV, one per sheet of a workbook (or the ``sheet`` named;
    ``sheet`` applies to workbooks only, so that a list of files may mix workbooks and other files).

    Keyword arguments as :func:`read_well`; the wells of a workbook are named after their sheets.
    ``stated_units`` (``--unit CURVE=UNIT``) replace the file's units of the curves each well has,
    and its depth unit when one names the depth column (:func:`state_units`); a curve that no well
    has is for the caller to refuse.
    """
    if _suffix(path) == ".xlsx":
        logs = read_excel(path, sheet=sheet, all_sheets=True, **kwargs)
    else:
        logs = [read_well(path, **kwargs)]
    units = dict(stated_units or {})
    return [state_units(g, {k: v for k, v in units.items() if g.key_of(k) in g.curves or names_depth(g, k)})
            for g in logs]


def names_depth(log: WellLog, name: str) -> bool:
    """Whether ``name`` (as typed in ``--unit NAME=UNIT``) means the depth of ``log``: its depth column's
    name (``Depth``, ``DEPT``, also with its unit: ``Depth (ft)``) or the word DEPTH, unless the log has a
    curve of that name."""
    key = log.key_of(name)
    return key not in log.curves and (key == log.depth_mnemonic or curve_name(name) == "DEPTH")


def parse_units(specs) -> dict:
    """``["POR=percent", "PERM=md"]`` (``--unit``, repeatable) -> ``{"POR": "%", "PERM": "mD"}``.

    Each unit is written in its usual spelling (:func:`glassformer.data.units.stated_unit`).

    Raises
    ------
    InputError
        A value that is not ``CURVE=UNIT`` with both parts non-empty, or a unit glassformer does
        not know (the message lists those it accepts).
    """
    out = {}
    for spec in specs or ():
        curve, eq, unit = str(spec).partition("=")
        if not eq or not curve.strip() or not unit.strip():
            raise InputError(f"--unit {spec!r} must be CURVE=UNIT, e.g. --unit POR=% or --unit PHIF=v/v")
        out[curve_name(curve)] = stated_unit(unit, curve.strip())
    return out


def state_units(log: WellLog, units: Mapping[str, str] | None) -> WellLog:
    """``log`` with the units the user states (``--unit CURVE=UNIT``) in place of the file's.

    A unit stated for the depth (``--unit DEPTH=ft``, or the depth column's own name: ``--unit
    Depth=ft``, see :func:`names_depth`) becomes the log's depth unit: the depths are taken to be in
    it, not converted (a CSV column ``DEPTH`` cannot say it is in feet).

    Raises
    ------
    CurveNotFoundError
        A curve named is not in the well (the message lists its curves and its depth column).
    DepthError
        A depth unit other than m or ft.
    """
    if not units:
        return log
    stated, depth_unit = {}, log.depth_unit
    for curve, unit in units.items():
        key = log.key_of(curve)
        if key not in log.curves and names_depth(log, curve):
            depth_unit = _stated_depth_unit(curve, unit, log)
            continue
        if key not in log.curves:
            raise CurveNotFoundError(f"--unit {curve}={unit}: curve {curve!r} not found in {log.label}; available: "
                                     f"{', '.join(log.curves)} (depth: {log.depth_mnemonic})")
        stated[key] = str(unit).strip()
    return log._copy(units={**log.units, **stated}, depth_unit=depth_unit)


def _stated_depth_unit(curve: str, unit: str, log: WellLog) -> str:
    unit = str(unit).strip()
    if unit not in ("m", "ft"):
        raise DepthError(f"--unit {curve}={unit}: a depth unit must be m or ft (the depth of {log.label} is "
                         f"{log.depth_mnemonic})")
    return unit
