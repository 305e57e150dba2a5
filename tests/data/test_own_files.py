"""Tables as users write them: units in the headers (``Depth (m)``, ``Por [%]``, ``PERM_MD``), names with
blanks, a depth column of any name, stated units, and the same wells as Excel sheets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glassformer.data import parse_units, read_excel, read_well, read_wells, split_header, state_units
from glassformer.errors import CurveNotFoundError, DataFileError, InputError

DEPTH = 1500.0 + 0.25 * np.arange(6)
POR = np.array([12.0, 14.5, np.nan, 9.0, 21.0, 18.5])          # %
PERM = np.array([3.1, 15.0, 40.0, 0.7, 220.0, 95.0])           # mD


def _csv(path, depth_header, por_header, perm_header):
    rows = [f"{depth_header},{por_header},{perm_header}"]
    rows += [f"{d},{'' if np.isnan(p) else p},{k}" for d, p, k in zip(DEPTH, POR, PERM)]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("headers", [("Depth (m)", "Por (%)", "Perm (mD)"), ("Depth [m]", "Por [%]", "Perm [mD]"),
                                     ("DEPTH_M", "POR_%", "PERM_MD"), ("depth (m)", "Por(%)", "perm [md]")])
def test_units_in_headers_give_names_and_units(tmp_path, headers):
    log = read_well(_csv(tmp_path / "w.csv", *headers))
    assert log.mnemonics == ["POR", "PERM"] and log.depth_mnemonic == "DEPTH" and log.depth_unit == "m"
    assert log.units == {"POR": "%", "PERM": "mD"}
    np.testing.assert_array_equal(log.depth, DEPTH)
    np.testing.assert_array_equal(log.curve("POR"), POR)                     # the empty cell is a gap
    np.testing.assert_array_equal(log.curve(headers[1]), POR)                # the header as written names it too
    np.testing.assert_array_equal(log.curve("perm"), PERM)


def test_a_curve_that_is_not_there_lists_names_that_can_be_passed(tmp_path):
    log = read_well(_csv(tmp_path / "w.csv", "Depth (m)", "Por (%)", "Perm (mD)"))
    with pytest.raises(CurveNotFoundError, match=r"available: DEPTH, POR, PERM$"):
        log.curve("PHIF")


@pytest.mark.parametrize("header, expect", [("Por (%)", ("POR", "%")), ("Bulk density [g/cc]", ("BULK_DENSITY", "g/cc")),
                                            ("RHOB_G/CC", ("RHOB", "g/cc")), ("DT_US/FT", ("DT", "us/ft")),
                                            ("RT (ohm.m)", ("RT", "ohm.m")), ("GR_API", ("GR", "API")),
                                            ("PHIF_V/V", ("PHIF", "v/v")), ("SW_FRAC", ("SW", "frac")),
                                            ("DEPTH_FT", ("DEPTH", "ft")),
                                            ("RES_M", ("RES_M", None)), ("PHIF_CORR", ("PHIF_CORR", None)),
                                            ("KLOGH", ("KLOGH", None)), ("Perm (mD/cp)", ("PERM", "mD/cp"))])
def test_split_header(header, expect):
    assert split_header(header) == expect


def test_two_headers_naming_one_curve_are_refused(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("DEPTH,Por (%),POR [v/v]\n1,10,0.1\n2,11,0.11\n")
    with pytest.raises(DataFileError, match=r"columns 2 \(Por \(%\)\) and 3 \(POR \[v/v\]\) both name the curve POR"):
        read_well(path)


def test_a_depth_column_of_any_name_with_its_unit(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("Sample,Measured depth (ft),Por (%)\n1,5000,10\n2,5000.5,11\n")
    with pytest.raises(CurveNotFoundError, match=r"no depth column .* pass --depth-column NAME"):
        read_well(path)
    log = read_well(path, depth_column="Measured depth")
    assert log.depth_unit == "ft" and log.depth_mnemonic == "MEASURED_DEPTH" and log.mnemonics == ["SAMPLE", "POR"]
    np.testing.assert_array_equal(log.depth, [5000.0, 5000.5])
    assert read_well(path, depth_column="Measured depth (ft)").depth_unit == "ft"


def test_stated_units_replace_or_fill_the_files(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("DEPTH,PHIF,Perm (mD)\n1,0.1,3\n2,0.2,4\n")
    log = read_well(path)
    assert log.units == {"PHIF": "", "PERM": "mD"}
    units = parse_units(["PHIF=v/v", "Perm=mD/cp"])
    assert units == {"PHIF": "v/v", "PERM": "mD/cp"}
    assert state_units(log, units).units == {"PHIF": "v/v", "PERM": "mD/cp"}
    with pytest.raises(CurveNotFoundError, match=r"--unit SW=v/v: curve 'SW' not found .* available: PHIF, PERM"):
        state_units(log, {"SW": "v/v"})
    with pytest.raises(InputError, match=r"must be CURVE=UNIT"):
        parse_units(["PHIF"])


def _xlsx(path, sheets: dict):
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for name, frame in sheets.items():
            frame.to_excel(writer, sheet_name=name, index=False)
    return path


def _frame(por=POR, perm=PERM):
    return pd.DataFrame({"Depth (m)": DEPTH, "Por (%)": por, "Perm (mD)": perm})


def test_excel_sheets_read_as_csv_wells(tmp_path):
    path = _xlsx(tmp_path / "wells.xlsx", {"W-1": _frame(), "W-2": _frame(perm=PERM * 2)})
    csv = read_well(_csv(tmp_path / "w.csv", "Depth (m)", "Por (%)", "Perm (mD)"))
    one = read_well(path, sheet="W-2")
    assert one.name == "W-2" and one.units == csv.units and one.mnemonics == csv.mnemonics
    np.testing.assert_array_equal(one.depth, csv.depth)
    np.testing.assert_array_equal(one.curve("POR"), csv.curve("POR"))       # the empty cell is a gap here too
    np.testing.assert_array_equal(one.curve("PERM"), 2 * PERM)
    both = read_wells(path)
    assert [g.name for g in both] == ["W-1", "W-2"] and "sheet 'W-1'" in both[0].source
    with pytest.raises(DataFileError, match=r"the workbook has 2 sheets \(W-1, W-2\); name one with --sheet NAME"):
        read_well(path)
    with pytest.raises(DataFileError, match=r"no sheet 'W-3'; sheets: W-1, W-2"):
        read_excel(path, sheet="W-3")


def test_text_in_an_excel_number_column_names_the_cell(tmp_path):
    perm = pd.Series(PERM, dtype=object)
    perm[3] = "n.d."
    path = _xlsx(tmp_path / "bad.xlsx", {"W": _frame(perm=perm)})
    with pytest.raises(DataFileError, match=r"bad.xlsx \(sheet 'W'\): column Perm \(mD\) holds non-numeric value "
                                            r"'n.d.' at cell C5"):
        read_well(path)


def test_excel_without_openpyxl_says_how_to_install(tmp_path, monkeypatch):
    import builtins

    path = _xlsx(tmp_path / "w.xlsx", {"W": _frame()})
    real = builtins.__import__

    def no_openpyxl(name, *args, **kwargs):
        if name == "openpyxl":
            raise ImportError("No module named 'openpyxl'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_openpyxl)
    with pytest.raises(DataFileError, match=r"needs openpyxl: pip install \"glassformer\[excel\]\""):
        read_well(path)


def test_a_sheet_for_a_csv_is_refused(tmp_path):
    with pytest.raises(DataFileError, match=r"--sheet A names a sheet of an Excel workbook, but this is a .csv file"):
        read_well(_csv(tmp_path / "w.csv", "Depth (m)", "Por (%)", "Perm (mD)"), sheet="A")
