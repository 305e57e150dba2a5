"""read_well: dispatch on the suffix, the documented error of every bad fixture, fuzzed files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassformer.data import read_csv, read_las, read_well
from glassformer.errors import CurveNotFoundError, DataFileError, DepthError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "wells"


def test_read_well_dispatches_on_suffix(tmp_path):
    upper = tmp_path / "B19.LAS"
    upper.write_bytes((FIX / "b19_bottom_up.las").read_bytes())
    np.testing.assert_array_equal(read_well(upper).curve("ild"), [10.5, 22.0, 105.6])
    np.testing.assert_array_equal(read_well(FIX / "good.csv").curve("KLOGH"), [15.0, 8.0, np.nan])
    other = tmp_path / "log.txt"
    other.write_text("DEPTH,PHIF\n1,0.1\n")
    with pytest.raises(DataFileError, match=r"log\.txt: unknown well file type '\.txt'"):
        read_well(other)


# ---------------------------------------------------------------- the bad-file fixtures
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
    ("bad_missing_depth.csv", CurveNotFoundError, r"no depth column \(looked for DEPTH, DEPT, MD, TDEP, also as DEPTH_FT or DEPTH \(m\)\); columns: PHIF, KLOGH"),
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


def test_missing_binary_and_directory_paths(tmp_path):
    with pytest.raises(DataFileError, match=r"nowhere\.las: file not found"):
        read_las(tmp_path / "nowhere.las")
    with pytest.raises(DataFileError, match=r"not a regular file"):
        read_csv(tmp_path)
    binary = tmp_path / "model.las"
    binary.write_bytes(b"PK\x03\x04\x00\x00binary")
    with pytest.raises(DataFileError, match=r"model\.las: contains NUL bytes; a binary file"):
        read_las(binary)


# ---------------------------------------------------------------- fuzzing the readers
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
