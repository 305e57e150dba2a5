"""LAS reading: wrapped files (also CRLF), bottom-up logs, nulls, encodings, LAS 3.0, delimiters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from glassformer.data import WellLog, read_las
from glassformer.errors import DataFileError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "wells"

B18_EXPECTED = np.array([[7999.0, 0.299, np.nan, 85.1, 12.3], [8000.0, 0.086, -42.361, 91.5, 8.75]])


def _as_matrix(log: WellLog) -> np.ndarray:
    return np.column_stack([log.depth, *log.curves.values()])


def _crlf_copy(name: str, tmp_path: Path) -> Path:
    out = tmp_path / name
    text = (FIX / name).read_bytes().replace(b"\r\n", b"\n")
    out.write_bytes(text.replace(b"\n", b"\r\n"))
    assert b"\r\n" in out.read_bytes()
    return out


@pytest.mark.parametrize("crlf", [False, True])
def test_b18_wrapped(crlf, tmp_path):
    path = _crlf_copy("b18_wrapped.las", tmp_path) if crlf else FIX / "b18_wrapped.las"
    log = read_las(path)
    np.testing.assert_array_equal(_as_matrix(log), B18_EXPECTED)
    assert log.mnemonics == ["DPHI", "SP", "GR", "ILD"]
    assert log.depth_unit == "ft"  # the file says FT: kept, not converted
    assert log.depth_mnemonic == "DEPT"
    assert log.units["DPHI"] == "V/V" and log.units["ILD"] == "OHMM"
    assert log.name == "b18_wrapped"  # no WELL field -> file stem


@pytest.mark.parametrize("crlf", [False, True])
def test_b19_bottom_up_is_sorted_with_values_kept(crlf, tmp_path):
    path = _crlf_copy("b19_bottom_up.las", tmp_path) if crlf else FIX / "b19_bottom_up.las"
    log = read_las(path)
    np.testing.assert_array_equal(log.depth, [1669.75, 1669.875, 1670.0])
    np.testing.assert_array_equal(log.curve("NPHI"), [np.nan, 0.406, 0.45])
    np.testing.assert_array_equal(log.curve("ILD"), [10.5, 22.0, 105.6])
    assert log.depth_unit == "m"


def test_undeclared_null_is_nan_by_default_and_kept_on_request():
    # NULL declares -999.25, the data use -9999: a common sentinel, mapped to NaN by default.
    log = read_las(FIX / "undeclared_null.las")
    np.testing.assert_array_equal(log.curve("NPHI"), [0.35, np.nan, 0.45])
    kept = read_las(FIX / "undeclared_null.las", null_values=())
    np.testing.assert_array_equal(kept.curve("NPHI"), [0.35, -9999.0, 0.45])


def test_wrap_yes_with_unwrapped_rows_reads_correctly():
    log = read_las(FIX / "wrap_yes_unwrapped.las")
    np.testing.assert_array_equal(log.curve("NPHI"), [0.35, 0.406, 0.45])
    np.testing.assert_array_equal(log.curve("ILD"), [10.5, 22.0, 105.6])


def test_latin1_header_is_readable():
    log = read_las(FIX / "non_utf8_header.las")
    assert log.descriptions["ILD"] == "Deep resistivity at 20 \xb0C"
    np.testing.assert_array_equal(log.curve("NPHI"), [0.35, 0.406, 0.45])


@pytest.mark.parametrize("name", ["bad_duplicate_depth.las", "bad_text_in_numeric.las", "bad_truncated_mid_row.las"])
def test_bad_las_with_crlf_gives_same_error(name, tmp_path):
    with pytest.raises(DataFileError) as lf:
        read_las(FIX / name)
    with pytest.raises(type(lf.value)) as crlf:
        read_las(_crlf_copy(name, tmp_path))
    assert str(crlf.value).replace(str(tmp_path), str(FIX)) == str(lf.value)
