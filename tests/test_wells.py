"""Well-log readers: issue 3 B18/B19 (also CRLF), the bad-file corpus of issue 9, the real Volve files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from glassformer.data import WellLog, common_depth_unit, read_csv, read_las, read_well
from glassformer.data.volve import VOLVE_WELLS, data_root, read_volve, volve_path
from glassformer.errors import CurveNotFoundError, DataFileError, DepthError, InputError, ShapeError

FIX = Path(__file__).resolve().parent / "fixtures" / "wells"
REAL = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "real"

B18_EXPECTED = np.array([[7999.0, 0.299, np.nan, 85.1, 12.3], [8000.0, 0.086, -42.361, 91.5, 8.75]])


def _as_matrix(log: WellLog) -> np.ndarray:
    return np.column_stack([log.depth, *log.curves.values()])


def _crlf_copy(name: str, tmp_path: Path) -> Path:
    out = tmp_path / name
    text = (FIX / name).read_bytes().replace(b"\r\n", b"\n")
    out.write_bytes(text.replace(b"\n", b"\r\n"))
    assert b"\r\n" in out.read_bytes()
    return out


# ---------------------------------------------------------------- B18, B19
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


def test_read_well_dispatches_on_suffix(tmp_path):
    upper = tmp_path / "B19.LAS"
    upper.write_bytes((FIX / "b19_bottom_up.las").read_bytes())
    np.testing.assert_array_equal(read_well(upper).curve("ild"), [10.5, 22.0, 105.6])
    np.testing.assert_array_equal(read_well(FIX / "good.csv").curve("KLOGH"), [15.0, 8.0, np.nan])
    other = tmp_path / "log.txt"
    other.write_text("DEPTH,PHIF\n1,0.1\n")
    with pytest.raises(DataFileError, match=r"log\.txt: unknown well file type '\.txt'"):
        read_well(other)


# ---------------------------------------------------------------- WellLog
def test_curve_lookup_and_not_found():
    log = read_las(FIX / "b18_wrapped.las")
    np.testing.assert_array_equal(log.curve("gr"), [85.1, 91.5])
    np.testing.assert_array_equal(log.curve("DEPT"), [7999.0, 8000.0])
    with pytest.raises(CurveNotFoundError, match=r"'PHIF' not found in well 'b18_wrapped'.*available: DEPT, DPHI, SP, GR, ILD"):
        log.curve("PHIF")
    np.testing.assert_array_equal(log.matrix(["GR", "ILD"]), [[85.1, 12.3], [91.5, 8.75]])
    np.testing.assert_array_equal(log.valid_mask(["DPHI", "SP"]), [False, True])


def test_interval_selects_and_rejects_outside():
    log = WellLog(name="w", depth=np.arange(10.0), curves={"phi": np.arange(10.0) / 10})
    sub = log.interval(2.0, 4.0)
    np.testing.assert_array_equal(sub.depth, [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(sub.curve("PHI"), [0.2, 0.3, 0.4])
    np.testing.assert_array_equal(log.interval(2.5, 3.4).depth, [3.0])
    with pytest.raises(DepthError, match=r"interval 5 to 12 m reaches outside the log's depth range 0 to 9 m"):
        log.interval(5, 12)
    with pytest.raises(DepthError, match=r"interval 2.2 to 2.8 m holds no sample"):
        log.interval(2.2, 2.8)
    with pytest.raises(InputError, match=r"top 4 is below its base 2"):
        log.interval(4, 2)


def test_interval_on_real_wells_in_file_unit():
    log = read_las(FIX / "b18_wrapped.las")
    with pytest.raises(DepthError, match=r"b18_wrapped\.las\): interval 100 to 200 ft lies outside .* 7999 to 8000 ft"):
        log.interval(100, 200)


def test_welllog_validates_construction():
    with pytest.raises(ShapeError, match=r"curve PHI has shape \(2,\), expected \(3,\)"):
        WellLog(name="w", depth=[1.0, 2.0, 3.0], curves={"PHI": [0.1, 0.2]})
    with pytest.raises(DepthError, match=r"strictly increasing; sample 2 \(2\) follows 3"):
        WellLog(name="w", depth=[1.0, 3.0, 2.0], curves={})
    with pytest.raises(InputError, match=r"curve 'phi' appears twice"):
        WellLog(name="w", depth=[1.0], curves={"PHI": [0.1], "phi": [0.2]})
    with pytest.raises(InputError, match=r"depth_unit must be 'm' or 'ft'"):
        WellLog(name="w", depth=[1.0], curves={}, depth_unit="km")
    with pytest.raises(InputError, match=r"curve A must hold numbers, got dtype <U1"):
        WellLog(name="w", depth=[1.0, 2.0], curves={"A": np.array(["a", "b"])})


def test_to_frame_and_repr():
    log = read_las(FIX / "b19_bottom_up.las")
    frame = log.to_frame()
    assert list(frame.columns) == ["NPHI", "ILD"] and frame.index.name == "DEPT"
    np.testing.assert_array_equal(frame.index.to_numpy(), [1669.75, 1669.875, 1670.0])
    assert frame.attrs["units"]["NPHI"] == "V/V" and frame.attrs["depth_unit"] == "m"
    text = repr(log)
    assert "3 samples" in text and "1669.75 to 1670 m" in text and "NPHI [V/V]" in text


def test_common_depth_unit():
    m = read_las(FIX / "b19_bottom_up.las")
    ft = read_las(FIX / "b18_wrapped.las")
    assert common_depth_unit([m, m]) == "m"
    with pytest.raises(DepthError, match=r"mix depth units.*b19_bottom_up\.las: m; .*b18_wrapped\.las: ft"):
        common_depth_unit([m, ft])


# ---------------------------------------------------------------- tolerated oddities (documented)
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


# ---------------------------------------------------------------- the bad-file corpus (issue 9 item 5)
BAD_FILES = [
    ("bad_missing_a_section.las", DataFileError, r"bad_missing_a_section\.las: no ~A \(ASCII data\) section"),
    ("bad_missing_curve_section.las", DataFileError, r"bad_missing_curve_section\.las: no ~Curve section"),
    ("bad_wrap_no_but_wrapped.las", DataFileError, r"line 16 of the ~A section has 1 values, expected 5.*WRAP is NO"),
    ("bad_wrap_invalid.las", DataFileError, r"WRAP must be YES or NO, got 'MAYBE'"),
    ("bad_text_in_numeric.las", DataFileError, r"curve NPHI holds non-numeric value 'abc' at depth step 2 \(line 15\)"),
    ("bad_empty_data.las", DataFileError, r"the ~A data section \(line 13\) is empty"),
    ("bad_non_utf8_data.las", DataFileError, r"curve NPHI holds non-numeric value '0\.4\xff6' at depth step 2 \(line 15\)"),
    ("bad_truncated_mid_row.las", DataFileError, r"line 16 of the ~A section has 2 values, expected 3.*truncated"),
    ("bad_truncated_wrapped.las", DataFileError, r"holds 9 values, not a multiple of the 5 curves.*truncated"),
    ("bad_duplicate_depth.las", DepthError, r"duplicate depth 1669\.75 m at depth step 1 \(line 14\) and depth step 2 \(line 15\)"),
    ("bad_non_monotonic_depth.las", DepthError, r"not monotonic.*1670 m at depth step 3 \(line 16\) follows 1670\.25 m"),
    ("bad_null_depth.las", DepthError, r"depth is missing \(null/NaN/inf\) at depth step 2 \(line 15\)"),
    ("bad_depth_unit.las", DepthError, r"depth unit 'S' is neither metres \(M\) nor feet \(FT\)"),
    ("bad_not_las.las", DataFileError, r"bad_not_las\.las: no ~ sections found; not a LAS file"),
    ("bad_missing_depth.csv", CurveNotFoundError, r"no depth column \(looked for DEPTH, DEPT, MD, TDEP\); columns: PHIF, KLOGH"),
    ("bad_duplicate_header.csv", DataFileError, r"duplicate column header 'phif' \(columns 2 and 4\)"),
    ("bad_duplicate_depth.csv", DepthError, r"duplicate depth 100\.5 m at data row 2 \(line 3\) and data row 3 \(line 4\)"),
    ("bad_non_monotonic_depth.csv", DepthError, r"not monotonic.*100\.2 m at data row 3 \(line 4\) follows 100\.5 m"),
    ("bad_text_in_numeric.csv", DataFileError, r"column PHIF holds non-numeric value 'abc' at line 4"),
    ("bad_truncated_row.csv", DataFileError, r"line 4 has 2 fields, the header has 3 \(row truncated\?\)"),
    ("bad_extra_field.csv", DataFileError, r"line 3 has 4 fields, the header has 3"),
    ("bad_empty.csv", DataFileError, r"bad_empty\.csv: the file is empty"),
    ("bad_header_only.csv", DataFileError, r"header but no data rows"),
    ("bad_non_utf8.csv", DataFileError, r"column PHIF holds non-numeric value '0\.1\xe95' at line 3"),
]


@pytest.mark.parametrize("name, error, message", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_file_raises_documented_error(name, error, message):
    with pytest.raises(error, match=message) as info:
        read_well(FIX / name)
    assert name in str(info.value)  # every message names the file


def test_corpus_is_complete():
    """Every bad_* fixture on disk is in the table above (none silently untested)."""
    on_disk = {p.name for p in FIX.glob("bad_*")}
    assert on_disk == {b[0] for b in BAD_FILES}


@pytest.mark.parametrize("name", ["bad_duplicate_depth.las", "bad_text_in_numeric.las", "bad_truncated_mid_row.las"])
def test_bad_las_with_crlf_gives_same_error(name, tmp_path):
    with pytest.raises(DataFileError) as lf:
        read_las(FIX / name)
    with pytest.raises(type(lf.value)) as crlf:
        read_las(_crlf_copy(name, tmp_path))
    assert str(crlf.value).replace(str(tmp_path), str(FIX)) == str(lf.value)


def test_missing_binary_and_directory_paths(tmp_path):
    with pytest.raises(DataFileError, match=r"nowhere\.las: file not found"):
        read_las(tmp_path / "nowhere.las")
    with pytest.raises(DataFileError, match=r"not a regular file"):
        read_csv(tmp_path)
    binary = tmp_path / "model.las"
    binary.write_bytes(b"PK\x03\x04\x00\x00binary")
    with pytest.raises(DataFileError, match=r"model\.las: contains NUL bytes; a binary file"):
        read_las(binary)


def test_inf_in_data_is_rejected(tmp_path):
    path = tmp_path / "inf.csv"
    path.write_text("DEPTH,PHIF\n1.0,0.1\n2.0,inf\n")
    with pytest.raises(DataFileError, match=r"inf\.csv: curve PHIF holds an infinite value at data row 2 \(line 3\)"):
        read_csv(path)


# ---------------------------------------------------------------- the real Volve files
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"real Volve data folder absent: {REAL}")


@pytest.fixture(scope="module")
def real_logs():
    return {key: read_volve(key, root=REAL.parent) for key in VOLVE_WELLS}


@needs_real
def test_every_real_file_is_listed():
    files = {p.name for p in REAL.iterdir() if p.suffix.lower() in (".las", ".csv")}
    assert files == {w.filename for w in VOLVE_WELLS.values()}


@needs_real
@pytest.mark.parametrize("key", list(VOLVE_WELLS))
def test_real_file_shapes_and_valid_range(key, real_logs):
    info = VOLVE_WELLS[key]
    log = real_logs[key]
    assert len(log) == info.n_samples
    assert log.depth_unit == "m" and np.all(np.diff(log.depth) > 0)
    if info.kind == "cpi":
        assert log.name == info.well
        assert {"PHIF", "KLOGH", "VSH", "SW"} <= set(log.mnemonics)
        assert log.units["KLOGH"].upper() == "MD"
        valid = log.valid_mask(["PHIF", "KLOGH"])
    else:
        assert log.mnemonics == ["ORIGDEPTH", "CORE_NO", "SAMPLE", "CKHG", "CKHL", "CKVG", "CKVL",
                                 "CPOR", "CPORV", "SO", "SW", "CGD", "CGDV"]
        assert log.units["CPOR"] == "%" and log.units["CKHL"] == "mD"
        valid = log.valid_mask(["CPOR", "CKHL"])
    assert int(valid.sum()) == info.n_valid
    np.testing.assert_allclose(log.depth[valid][[0, -1]], info.valid_m, atol=1e-6)


@needs_real
def test_real_f11b_details(real_logs):
    log = real_logs["F-11B"]
    assert log.mnemonics == ["BVW", "CARB_FLAG", "COAL_FLAG", "KLOGH", "PHIF", "SAND_FLAG", "SW", "VSH"]
    np.testing.assert_allclose(log.depth[[0, -1]], [3351.6, 4759.2])
    both = log.valid_mask(["PHIF", "KLOGH", "SW", "VSH"])
    assert int(both.sum()) == 13933
    np.testing.assert_allclose(np.nanmin(log.curve("PHIF")), 0.02)
    np.testing.assert_allclose(np.nanmin(log.curve("KLOGH")), 0.001)
    np.testing.assert_allclose(np.nanmax(log.curve("KLOGH")), 3224, rtol=1e-3)
    # issue 3's split intervals are inside the file's range
    assert len(log.interval(3351.6, 4300.0)) == 9485
    assert len(log.interval(4300.0, 4744.8)) == 4449


@needs_real
def test_real_19a_wrapped_values(real_logs):
    log = real_logs["19A"]
    np.testing.assert_allclose(log.depth[[0, -1]], [3666.5916, 4124.8584])
    np.testing.assert_allclose(np.diff(log.depth), 0.1524, atol=1e-6)
    k = log.curve("KLOGH")
    assert int(np.count_nonzero(k == 0)) == 597
    np.testing.assert_allclose(np.nanmax(k), 7900, rtol=1e-3)


@needs_real
def test_volve_paths_and_env_override(monkeypatch, tmp_path):
    assert volve_path("F-1A", REAL.parent).name == "15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS"
    monkeypatch.setenv("GLASSFORMER_DATA", str(tmp_path))
    assert data_root() == tmp_path
    with pytest.raises(DataFileError, match=r"15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1\.LAS not found under .*set GLASSFORMER_DATA"):
        volve_path("F-1A")
    monkeypatch.delenv("GLASSFORMER_DATA")
    assert data_root() == REAL.parent.resolve()
    with pytest.raises(InputError, match=r"unknown Volve well 'F-99'; known: F-1A"):
        volve_path("F-99")


# ---------------------------------------------------------------- fuzzing the readers
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_LAS_PIECES = [
    "~V\n", "~W\n", "~C\n", "~A\n", "VERS. 2.0 :\n", "WRAP. NO :\n", "WRAP. YES :\n", "NULL. -999.25 :\n",
    "DEPT.M :\n", "PHI.V/V :\n", "1.0 0.2\n", "2.0 -999.25\n", "1.5\n", "0.3 x\n", "\xb0\n", "3.0 0.1 9\n",
]
_CSV_PIECES = ["DEPTH,PHIF\n", "MD,K,K\n", "1.0,0.2\n", "2.0,\n", "1.5,abc\n", "3.0\n", "\n", "2.0,0.1,4\n", '"a,b",1\n']


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    las=st.lists(st.sampled_from(_LAS_PIECES), max_size=12),
    csv=st.lists(st.sampled_from(_CSV_PIECES), max_size=8),
    crlf=st.booleans(),
)
def test_readers_fuzz(las, csv, crlf, tmp_path):
    """Scrambled LAS/CSV files: a WellLog with increasing depth, or a DataFileError -- nothing else."""
    for name, pieces in (("f.las", las), ("f.csv", csv)):
        text = "".join(pieces)
        path = tmp_path / name
        path.write_bytes(text.replace("\n", "\r\n" if crlf else "\n").encode("latin-1"))
        try:
            log = read_well(path)
        except DataFileError as exc:
            assert str(path) in str(exc) or name in str(exc)
            continue
        assert np.all(np.diff(log.depth) > 0)
        for values in log.curves.values():
            assert values.shape == log.depth.shape and not np.isinf(values).any()
