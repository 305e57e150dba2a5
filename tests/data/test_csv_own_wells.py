"""A practitioner's own CSV wells: text columns, a units row, semicolon files with a decimal comma."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from glassformer.data import read_csv
from glassformer.data.excel import read_excel
from glassformer.errors import CurveNotFoundError, DataFileError

DEPTHS = [3000.0 + 0.5 * i for i in range(20)]
PHIF = [round(0.10 + 0.01 * i, 2) for i in range(20)]


def _write(path, header: str, rows: list) -> object:
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def test_text_only_columns_are_left_out_with_a_note(tmp_path, caplog):
    rows = [f"{d},Hugin,15/9-F-11,{p}" for d, p in zip(DEPTHS, PHIF)]
    path = _write(tmp_path / "w.csv", "DEPTH,ZONE,WELL,PHIF", rows)
    with caplog.at_level(logging.INFO, logger="glassformer"):
        log = read_csv(path)
    assert log.mnemonics == ["PHIF"]
    np.testing.assert_array_equal(log.curve("PHIF"), PHIF)
    assert log.skipped == {"ZONE": "it holds text such as 'Hugin', not numbers",
                           "WELL": "it holds text such as '15/9-F-11', not numbers"}
    assert "columns ZONE, WELL hold text in every cell" in caplog.text
    with pytest.raises(CurveNotFoundError, match=r"ZONE but it was not read: it holds text such as 'Hugin'"):
        log.curve("ZONE")


def test_a_text_column_with_gaps_and_dashes_is_still_text(tmp_path):
    zones = ["Hugin" if i < 10 else ("-" if i % 2 else "") for i in range(20)]
    rows = [f"{d},{z},{p}" for d, z, p in zip(DEPTHS, zones, PHIF)]
    log = read_csv(_write(tmp_path / "w.csv", "DEPTH,ZONE,PHIF", rows))
    assert log.mnemonics == ["PHIF"] and "ZONE" in log.skipped


def test_a_lone_dash_is_a_missing_value(tmp_path):
    path = _write(tmp_path / "w.csv", "DEPTH,PHIF,KLOGH", ["100,0.2,-", "100.5,-,12", "101,0.1, - "])
    log = read_csv(path)
    np.testing.assert_array_equal(log.curve("PHIF"), [0.2, np.nan, 0.1])
    np.testing.assert_array_equal(log.curve("KLOGH"), [np.nan, 12.0, np.nan])


def test_every_column_with_text_among_numbers_is_named_in_one_message(tmp_path):
    rows = ["100,0.2,0.3,15", "100.5,0.2,bad,8", "101,0.1,0.4,<0.01", "101.5,0.1,0.4,2"]
    path = _write(tmp_path / "w.csv", "DEPTH,PHIF,VSH,KLOGH", rows)
    with pytest.raises(DataFileError, match=r"w\.csv: column VSH holds non-numeric value 'bad' at line 3; column "
                                            r"KLOGH holds non-numeric value '<0\.01' at line 4; correct those cells"):
        read_csv(path)


def test_a_units_row_under_the_header_gives_the_units(tmp_path):
    path = _write(tmp_path / "w.csv", "DEPTH,POR,PHIF,VSH,KLOGH,ZONE",
                  ["m,%,v/v,v/v,mD,", "3000,20,0.2,0.3,15,Hugin", "3000.5,,0.25,0.1,8,Hugin",
                   "3001,10,0.1,0.2,1,Sleipner"])
    log = read_csv(path)
    assert log.units == {"POR": "%", "PHIF": "v/v", "VSH": "v/v", "KLOGH": "mD"} and log.depth_unit == "m"
    np.testing.assert_array_equal(log.depth, [3000.0, 3000.5, 3001.0])
    np.testing.assert_array_equal(log.curve("POR"), [20.0, np.nan, 10.0])
    assert "ZONE" in log.skipped
    feet = read_csv(_write(tmp_path / "f.csv", "DEPTH,PHIF", ["ft,frac", "9800,0.2", "9801,0.3"]))
    assert feet.depth_unit == "ft" and feet.units == {"PHIF": "v/v"}
    bad = _write(tmp_path / "b.csv", "DEPTH,PHIF", ["m,v/v", "3000,0.2", "3000.5,abc"])
    with pytest.raises(DataFileError, match=r"b\.csv: column PHIF holds non-numeric value 'abc' at line 4"):
        read_csv(bad)


def test_a_units_row_agreeing_with_header_units_is_taken(tmp_path):
    log = read_csv(_write(tmp_path / "w.csv", "Depth (m),Por (%),PERM", ["m,pct,md", "3000,20,15", "3001,10,8"]))
    assert log.units == {"POR": "%", "PERM": "mD"}
    np.testing.assert_array_equal(log.curve("PERM"), [15.0, 8.0])


def test_a_units_row_against_a_header_unit_is_refused(tmp_path):
    path = _write(tmp_path / "w.csv", "DEPTH,Por (%),PERM", ["m,v/v,mD", "3000,20,15", "3001,10,8"])
    with pytest.raises(DataFileError, match=r"w\.csv: column Por \(%\) names the unit '%' in its header but 'v/v' in "
                                            r"the units row \(line 2\); make them agree$"):
        read_csv(path)


def test_a_units_row_in_an_excel_sheet(tmp_path):
    frame = pd.DataFrame({"DEPTH": ["m", 3000.0, 3000.5], "PHIF": ["v/v", 0.2, 0.25], "ZONE": [None, "Hugin", "Hugin"]})
    path = tmp_path / "w.xlsx"
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        frame.to_excel(writer, sheet_name="W", index=False)
    log = read_excel(path)
    assert log.units == {"PHIF": "v/v"} and log.mnemonics == ["PHIF"] and "ZONE" in log.skipped
    np.testing.assert_array_equal(log.curve("PHIF"), [0.2, 0.25])


def test_a_semicolon_file_with_decimal_commas(tmp_path):
    path = _write(tmp_path / "w.csv", "DEPTH;PHIF;KLOGH;ZONE;VSH;SW",
                  ["3000;0,2;15;Hugin;0,31;1", "3000,5;0,25;-1,5E-1;Hugin;;0,5", "3001;;8;Hugin;0,1;-"])
    log = read_csv(path)
    np.testing.assert_array_equal(log.depth, [3000.0, 3000.5, 3001.0])
    np.testing.assert_array_equal(log.curve("PHIF"), [0.2, 0.25, np.nan])
    np.testing.assert_array_equal(log.curve("KLOGH"), [15.0, -0.15, 8.0])
    np.testing.assert_array_equal(log.curve("VSH"), [0.31, np.nan, 0.1])
    assert log.mnemonics == ["PHIF", "KLOGH", "VSH", "SW"] and "ZONE" in log.skipped


def test_a_tab_separated_file(tmp_path):
    log = read_csv(_write(tmp_path / "w.csv", "DEPTH\tPHIF", ["3000\t0.2", "3000.5\t0.25"]))
    np.testing.assert_array_equal(log.curve("PHIF"), [0.2, 0.25])


def test_a_shape_error_names_the_delimiter_and_the_fields_per_line(tmp_path):
    path = _write(tmp_path / "w.csv", "DEPTH,PHIF;KLOGH", ["3000;0,2;15", "3000,5;0,25;8"])
    with pytest.raises(DataFileError, match=r"w\.csv: line 3 has 3 fields, the header has 2; fields split at ',' "
                                            r"\(comma\) \(fields per line: line 1: 2, line 2: 2, line 3: 3\)$"):
        read_csv(path)
