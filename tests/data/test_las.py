"""LAS reading: wrapped files (also CRLF), bottom-up logs, nulls, encodings, LAS 3.0, delimiters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from glassformer.data import WellLog, read_las, write_las
from glassformer.errors import CurveNotFoundError, DataFileError, DepthError, InputError, ShapeError

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


# ---------------------------------------------------------------- real-world LAS (hand-written files)
def _las(tmp_path, body: str, *, version="2.0", name="w.las", encoding="utf-8", extra_version="") -> Path:
    path = tmp_path / name
    head = f"~Version\nVERS. {version} :\nWRAP. NO :\n{extra_version}~Well\nNULL. -999.25 :\nWELL. W-1 :\n"
    path.write_bytes((head + body).encode(encoding))
    return path


CURVES = "~Curve\nDEPT.M : depth\nPHIF.V/V : porosity\nKLOGH.mD : permeability\n"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_utf16_and_bom_files_read_like_utf8(tmp_path, encoding):
    body = CURVES + "~A\n100.0 0.25 12.5\n100.5 0.30 -999.25\n"
    plain = read_las(_las(tmp_path, body))
    other = read_las(_las(tmp_path, body, name=f"{encoding}.las", encoding=encoding))
    np.testing.assert_array_equal(_as_matrix(other), _as_matrix(plain))
    np.testing.assert_array_equal(_as_matrix(plain), [[100.0, 0.25, 12.5], [100.5, 0.30, np.nan]])
    assert other.name == "W-1" and other.units == {"PHIF": "V/V", "KLOGH": "mD"}


def test_comma_decimal_marks_in_space_delimited_rows(tmp_path):
    log = read_las(_las(tmp_path, CURVES + "~A\n100,0 0,25 12,5\n100.5 0.30 7\n"))
    np.testing.assert_array_equal(_as_matrix(log), [[100.0, 0.25, 12.5], [100.5, 0.30, 7.0]])
    log = read_las(_las(tmp_path, CURVES + "~A\n100 123,42 -0,5\n101 1,5E-3 1\n", name="more.las"))
    np.testing.assert_array_equal(_as_matrix(log), [[100.0, 123.42, -0.5], [101.0, 1.5e-3, 1.0]])
    for i, value in enumerate(["1,234,5", "1.234,5", ",25"]):   # a thousands separator is never guessed
        bad = _las(tmp_path, CURVES + f"~A\n100 0.1 1\n101 {value} 2\n", name=f"bad{i}.las")
        with pytest.raises(DataFileError, match=rf"bad{i}\.las: curve PHIF holds non-numeric value '\S+' at depth step 2"):
            read_las(bad)


def test_missing_value_markers_are_nan_and_other_text_is_refused(tmp_path):
    rows = "100.0 (null) 1\n100.5 - 2\n101.0 ERR NA\n101.5 -- 3\n102.0 0.2 #N/A\n"
    log = read_las(_las(tmp_path, CURVES + "~A\n" + rows))
    np.testing.assert_array_equal(log.curve("PHIF"), [np.nan, np.nan, np.nan, np.nan, 0.2])
    np.testing.assert_array_equal(log.curve("KLOGH"), [1.0, 2.0, np.nan, 3.0, np.nan])
    bad = _las(tmp_path, CURVES + "~A\n100.0 0.1 1\n100.5 0.2x 2\n", name="bad.las")
    with pytest.raises(DataFileError, match=r"bad\.las: curve PHIF holds non-numeric value '0\.2x' at depth step 2 \(line 13\)"):
        read_las(bad)


def test_text_curves_are_skipped_and_said_so(tmp_path):
    curves = "~Curve\nTIME.HHMMSS : clock\nDEPT.M : depth\nZONE. : zone\nGR.GAPI : gamma ray\n"
    rows = '00:00:00 100.0 "Upper Hugin" 50\n00:00:01 100.5 Lower 60\n'
    log = read_las(_las(tmp_path, curves + "~A\n" + rows))
    assert log.depth_mnemonic == "DEPT" and log.mnemonics == ["GR"]
    np.testing.assert_array_equal(_as_matrix(log), [[100.0, 50.0], [100.5, 60.0]])
    assert log.skipped == {"TIME": "it holds text such as '00:00:00'", "ZONE": "it holds text such as 'Upper Hugin'"}
    with pytest.raises(CurveNotFoundError, match=r"'zone' not found .*the file has ZONE but it was not read: it holds text such as 'Upper Hugin'\); available: DEPT, GR"):
        log.curve("zone")


def test_a_time_index_is_not_a_depth(tmp_path):
    curves = "~Curve\nETIM.S : elapsed time\nGR.GAPI : gamma ray\n"
    with pytest.raises(DepthError, match=r"depth unit 'S' is neither metres \(M\) nor feet \(FT\) \(index curve ETIM; glassformer reads logs indexed by depth\)"):
        read_las(_las(tmp_path, curves + "~A\n0 50\n1 60\n"))
    curves = "~Curve\nTIME.S : elapsed time\nDEPTH.FT : bit depth\nGR.GAPI : gamma ray\n"
    log = read_las(_las(tmp_path, curves + "~A\n0 1000 50\n1 1001 60\n", name="t.las"))
    assert (log.depth_mnemonic, log.depth_unit, log.mnemonics) == ("DEPTH", "ft", ["TIME", "GR"])
    with pytest.raises(DepthError, match=r"duplicate depth 1000 ft .*\(depth from curve DEPTH; the file is indexed by TIME\)"):
        read_las(_las(tmp_path, curves + "~A\n0 1000 50\n1 1000 60\n", name="t2.las"))


LAS3_LOG = """~Log_Parameter
BS.MM 200 : bit size
~Log_Definition
DEPT.M : depth
PHIF.V/V : porosity
LITH. : lithology
~Core_Definition
CDEPTH.M : core depth
CPOR.% : core porosity
~Core_Data | Core_Definition
100.2, 21.5
~Log_Data | Log_Definition
100.0, 0.25, sandstone
100.5, ,  shale
"""


def test_las3_reads_the_log_data_set_beside_other_data_sets(tmp_path):
    log = read_las(_las(tmp_path, LAS3_LOG, version="3.0", extra_version="DLM. COMMA :\n"))
    np.testing.assert_array_equal(_as_matrix(log), [[100.0, 0.25], [100.5, np.nan]])  # an empty field is missing
    assert log.mnemonics == ["PHIF"] and "LITH" in log.skipped and log.units["PHIF"] == "V/V"


def test_las3_tab_delimited_fields_may_hold_blanks(tmp_path):
    body = ("~Drilling_Definition\nDEPTH.FT : depth\nDATE. : recording date\nROP.FT/H : rate of penetration\n"
            "~Drilling_Data | Drilling_Definition\n"
            "18400.0\t03/29/2021 13:00:31\t 55.5\n18401.0\t03/29/2021 13:01:20\t\n")
    log = read_las(_las(tmp_path, body, version="3.0", extra_version="DLM. TAB :\n"))
    np.testing.assert_array_equal(_as_matrix(log), [[18400.0, 55.5], [18401.0, np.nan]])
    assert log.depth_unit == "ft" and list(log.skipped) == ["DATE"]


def test_las3_files_with_several_data_sets_are_refused_with_their_names(tmp_path):
    two = ("~A_Definition\nDEPT.M :\nX. :\n~A_Data | A_Definition\n1 2\n"
           "~B_Definition\nDEPT.M :\nY. :\n~B_Data | B_Definition\n1 3\n")
    with pytest.raises(DataFileError, match=r"LAS 3\.0 file with 2 data sections and no log data section \(~Log_Data or ~A\): ~A_Data \(line 10\), ~B_Data \(line 15\)"):
        read_las(_las(tmp_path, two, version="3.0"))
    runs = CURVES + "~A\n100 0.1 1\n" + CURVES + "~A\n200 0.2 2\n"
    with pytest.raises(DataFileError, match=r"2 log data sections \(~A \(line 11\), ~A \(line 17\)\): several logs"):
        read_las(_las(tmp_path, runs, name="runs.las"))


@pytest.mark.parametrize("rows, message", [
    ("100 0.1\n100.5 0.2\n", r"the ~Curve section names 3 curves but every line of the ~A section holds 2 values"),
    ("100 0.1 1\n100.5 0.2-999.25\n101 0.3 3\n", r"line 13 .* has 2 values, expected 3, .*\(values run together in '0\.2-999\.25'\)"),
    ("100 0.1 1\n100.5 *******\n101 0.3 3\n", r"line 13 .* \('\*\*\*\*\*\*\*' is a number too wide for its column, written as asterisks\)"),
    ("100 0.1 1\n100.5 0.2\n", r"line 13 .* has 2 values, expected 3, .*\(the row is truncated\)"),
])
def test_rows_of_the_wrong_width_say_why(tmp_path, rows, message):
    with pytest.raises(DataFileError, match=message):
        read_las(_las(tmp_path, CURVES + "~A\n" + rows))


def test_a_curve_line_that_is_no_definition_is_refused(tmp_path):
    curves = "~Curve\nDEPT.M : depth\n----------------\nPHIF.V/V : porosity\n"
    with pytest.raises(DataFileError, match=r"line 9 of the ~Curve section is not a curve definition .*'----------------'"):
        read_las(_las(tmp_path, curves + "~A\n100 0.1\n"))


def test_a_malformed_parameter_section_is_not_needed(tmp_path):
    body = CURVES + "~Parameter\n  DEPT  PHIF  KLOGH\n~A\n100 0.1 1\n"
    np.testing.assert_array_equal(_as_matrix(read_las(_las(tmp_path, body))), [[100.0, 0.1, 1.0]])


# ---------------------------------------------------------------- writing
def test_write_las_from_a_csv_log_round_trips(tmp_path):
    import lasio

    log = WellLog(name="T1", depth=[100.0, 100.5, 101.0], curves={"PHIF": [0.25, np.nan, 0.125]},
                  units={"PHIF": "V/V"}, source=str(tmp_path / "T1.csv"))
    out = write_las(tmp_path / "out.las", log, {"K_PRED": [1.5, np.nan, 0.001953125]},
                    units={"K_PRED": "log10 mD"}, descriptions={"K_PRED": "prediction: model a"})
    assert out == tmp_path / "out.las" and [p.name for p in tmp_path.iterdir()] == ["out.las"]
    las = lasio.read(out)
    assert las.well["WELL"].value == "T1" and las.well["NULL"].value == -999.25
    assert [(c.mnemonic, c.unit) for c in las.curves] == [("DEPT", "M"), ("PHIF", "V/V"), ("K_PRED", "log10(mD)")]
    assert las.curves["K_PRED"].descr == "prediction model a"
    assert out.read_text().count("-999.25") >= 3  # NULL in the header, and each NaN
    back = read_las(out)
    np.testing.assert_array_equal(_as_matrix(back), [[100.0, 0.25, 1.5], [100.5, np.nan, np.nan],
                                                     [101.0, 0.125, 0.001953125]])


def test_write_las_carries_the_source_header_over(tmp_path):
    import lasio

    log = read_las(FIX / "b19_bottom_up.las")
    out = write_las(tmp_path / "p.las", log, {"PRED": [1.0, 2.0, 3.0]}, include=["nphi"])
    las = lasio.read(out)
    assert [(c.mnemonic, c.unit, c.descr) for c in las.curves] == [
        ("DEPT", "M", "Depth"), ("NPHI", "V/V", "Neutron porosity"), ("PRED", "", "")]
    np.testing.assert_array_equal(las["NPHI"], [np.nan, 0.406, 0.45])   # increasing depth, values kept
    las3 = read_las(_las(tmp_path, LAS3_LOG, version="3.0", extra_version="DLM. COMMA :\n"))
    header = lasio.read(write_las(tmp_path / "p3.las", las3))
    assert header.params["BS"].value == 200 and header.well["WELL"].value == "W-1"
    assert [c.mnemonic for c in header.curves] == ["DEPT", "PHIF"]


def test_write_las_refuses_bad_curves_and_leaves_the_old_file(tmp_path):
    log = read_las(FIX / "b19_bottom_up.las")
    out = tmp_path / "p.las"
    out.write_text("old")
    with pytest.raises(CurveNotFoundError, match=r"'GR' not found"):
        write_las(out, log, include=["GR"])
    with pytest.raises(ShapeError, match=r"curve PRED has shape \(2,\), expected \(3,\)"):
        write_las(out, log, {"PRED": [1.0, 2.0]})
    with pytest.raises(InputError, match=r"curve nphi is already a curve of the file"):
        write_las(out, log, {"nphi": [1.0, 2.0, 3.0]})
    assert out.read_text() == "old"
