"""CSV reading: values, nulls, units, column choice, bottom-up files, infinity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from glassformer.data import read_csv
from glassformer.errors import CurveNotFoundError, DataFileError, DepthError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "wells"


def test_csv_reader_values_nulls_and_units():
    log = read_csv(FIX / "good.csv", units={"klogh": "mD"})
    np.testing.assert_array_equal(log.depth, [100.0, 100.5, 101.0])
    np.testing.assert_array_equal(log.curve("PHIF"), [0.20, np.nan, 0.10])  # empty cell
    np.testing.assert_array_equal(log.curve("KLOGH"), [15.0, 8.0, np.nan])  # -999.25
    assert log.units == {"PHIF": "", "KLOGH": "mD"} and log.depth_unit == "m"
    assert log.depth_mnemonic == "DEPTH" and log.name == "good"
    only = read_csv(FIX / "good.csv", columns=["klogh"])
    assert only.mnemonics == ["KLOGH"]
    with pytest.raises(CurveNotFoundError, match=r"column 'SW' not found; columns: Depth, PHIF, KLOGH"):
        read_csv(FIX / "good.csv", columns=["SW"])


def test_csv_bottom_up_and_md_column():
    log = read_csv(FIX / "bottom_up.csv")
    np.testing.assert_array_equal(log.depth, [100.0, 100.5, 101.0])
    np.testing.assert_array_equal(log.curve("KLOGH"), [15.0, 8.0, 1.5])
    assert log.depth_mnemonic == "MD"
    explicit = read_csv(FIX / "bad_missing_depth.csv", depth_column="phif")
    np.testing.assert_array_equal(explicit.depth, [0.15, 0.20])


def test_inf_in_data_is_rejected(tmp_path):
    path = tmp_path / "inf.csv"
    path.write_text("DEPTH,PHIF\n1.0,0.1\n2.0,inf\n")
    with pytest.raises(DataFileError, match=r"inf\.csv: curve PHIF holds an infinite value at data row 2 \(line 3\)"):
        read_csv(path)


def test_csv_in_utf16_with_missing_markers(tmp_path):
    path = tmp_path / "w.csv"
    path.write_bytes("DEPTH,PHIF,KLOGH\n100,0.2,ERR\n100.5,-,12\n101,NULL,(null)\n".encode("utf-16"))
    log = read_csv(path)
    np.testing.assert_array_equal(log.depth, [100.0, 100.5, 101.0])
    np.testing.assert_array_equal(log.curve("PHIF"), [0.2, np.nan, np.nan])
    np.testing.assert_array_equal(log.curve("KLOGH"), [np.nan, 12.0, np.nan])


@pytest.mark.parametrize("header, unit", [("DEPTH_FT", "ft"), ("Depth (ft)", "ft"), ("DEPT [M]", "m"),
                                          ("MD_m", "m"), ("DEPTH", "m")])
def test_the_depth_header_names_its_unit(tmp_path, header, unit):
    path = tmp_path / "w.csv"
    path.write_text(f"{header},PHIF\n1000,0.2\n1000.5,0.25\n")
    log = read_csv(path)
    assert log.depth_unit == unit
    np.testing.assert_array_equal(log.depth, [1000.0, 1000.5])
    np.testing.assert_array_equal(log.curve("PHIF"), [0.2, 0.25])


def test_a_depth_unit_given_against_the_header_is_refused(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("DEPTH_FT,PHIF\n1000,0.2\n1000.5,0.25\n")
    assert read_csv(path, depth_unit="ft").depth_unit == "ft"
    with pytest.raises(DepthError, match=r"depth column DEPTH_FT is in ft, but depth_unit='m' was given"):
        read_csv(path, depth_unit="m")
    plain = tmp_path / "p.csv"                              # a plain DEPTH column takes the unit given
    plain.write_text("DEPTH,PHIF\n1,0.2\n2,0.3\n")
    assert read_csv(plain, depth_unit="ft").depth_unit == "ft"


def test_text_in_a_numeric_column_says_how_to_fix_the_cell(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("DEPTH,PHIF\n1000,0.2\n1000.5,abc\n")
    with pytest.raises(DataFileError, match=r"column PHIF holds non-numeric value 'abc' at line 3; correct that cell "
                                            r"or leave it empty"):
        read_csv(path)


def test_every_text_cell_of_a_column_is_reported_in_one_message(tmp_path):
    path = tmp_path / "w.csv"
    rows = [f"{1000 + 0.5 * i},{'tight' if i in (1, 4, 5, 8, 9) else 0.2}" for i in range(12)]
    path.write_text("DEPTH,PHIF\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataFileError, match=r"w\.csv: column PHIF holds non-numeric values in 5 cells: 'tight' at "
                                            r"line 3, 'tight' at line 6, 'tight' at line 7 and 2 more; correct those "
                                            r"cells or leave them empty"):
        read_csv(path)
