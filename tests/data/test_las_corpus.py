"""lasio's own test corpus (131 LAS files): each file is read as lasio reads it, or refused clearly.

The corpus (``shared/data/outside/lasio-examples``, lasio's ``tests/examples``) holds ordinary
LAS 1.2/2.0/3.0 logs and deliberately odd or broken files.  For every file:

* no exception other than :class:`~glassformer.errors.DataFileError` and its subclasses;
* a refused file is one of :data:`REFUSED`, and its one-line message names the file and says
  what is wrong (each reason below was checked by reading the file);
* wherever lasio also reads the file, the depth and every curve agree with lasio's values
  exactly (NaN where lasio has the declared NULL or a missing-value marker), and lasio's curves
  are exactly the depth, our curves and the text curves we list in ``skipped``.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest

from glassformer.data import read_well
from glassformer.errors import DataFileError, DepthError

_ROOT = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "outside" / "lasio-examples"
FILES = sorted(str(p.relative_to(_ROOT)) for p in _ROOT.rglob("*") if p.suffix.lower() == ".las") \
    if _ROOT.is_dir() else []

_MS = r"log data sections .*several logs \(runs or passes\) in one file are not supported"
_PHASES = r"LAS 3\.0 file with 2 data sections and no log data section .*~Phase_A_data .*~Phase_B_data"
_TIME = r"duplicate depth .* at depth step 1 \(line \d+\) and depth step 2 .*\(depth from curve DEPTH; the file is indexed by TIME\)"
_ETIM = r"depth unit '[Ss]' is neither metres \(M\) nor feet \(FT\) \(index curve ETIM; glassformer reads logs indexed by depth\)"

#: Every file refused, with the reason (what the file really holds).
REFUSED: dict[str, tuple[type, str]] = {
    # the same depths logged twice: 1670 down to 1669.75, then again (lines 4468-4469)
    "1.2/sample_big.las": (DepthError, r"duplicate depth 1669\.75 m at depth step 4425 \(line 4468\) and depth step 4426 \(line 4469\)"),
    # a time-indexed log (ETIM in seconds) without any depth curve
    "2.0/sample_2.0_based.las": (DepthError, _ETIM),
    # several ~Curve/~Ascii pairs: one log per run
    "3.0/0-d Array #1 (MS).las": (DataFileError, r"6 " + _MS),
    "3.0/0-d Array #2 (MS).las": (DataFileError, r"7 " + _MS),
    "3.0/0-d Array #3 (MS).las": (DataFileError, r"7 " + _MS),
    # two data sets (Phase A, Phase B) and no log data set
    **{f"3.0/Curve-Param Error #{i} (MS).LAS": (DataFileError, _PHASES) for i in (1, 2, 3, 4, 5)},
    # time-indexed recordings (TIME in seconds) of a stationary tool: the depth repeats
    **{f"3.0/Curve-Param Error #{i} (SS).LAS": (DepthError, _TIME) for i in (6, 7, 9, 10, 12, 13, 14, 15, 16)},
    # drilling data indexed by elapsed time (ETIM in seconds); no curve is a depth
    "3.0/Curve-Param Unknown #1(SS).las": (DepthError, _ETIM),
    "3.0/Curve-Param Unknown #2 (SS).LAS": (DepthError, _ETIM),
    # every depth is 0
    "alog.las": (DepthError, r"duplicate depth 0 m at depth step 1 \(line 48\) and depth step 2 \(line 49\)"),
    # the index is in tenths of an inch
    "autodepthindex_point_one_inch.las": (DepthError, r"depth unit '\.1IN' \(tenths of an inch\) is neither metres \(M\) nor feet \(FT\)"),
    # no ~Version, ~Well or ~Curve section: nothing names the columns
    "barebones2.las": (DataFileError, r"no ~Curve section \(or it lists no curve\); cannot name the data columns"),
    # ~A sections without a single data line
    "blank_line.las": (DataFileError, r"the ~A data section \(line 21\) is empty"),
    "missing_a_section.las": (DataFileError, r"the ~A data section \(line 20\) is empty"),
    # six curves defined, four values per row
    "excess_curves.las": (DataFileError, r"the ~Curve section names 6 curves but every line of the ~A section holds 4 values"),
    "issue83.las": (DataFileError, r"the ~Curve section names 6 curves but every line of the ~A section holds 4 values"),
    # four curves defined, eight values per row
    "sample_write_sect_widths_12.las": (DataFileError, r"the ~CURVE section names 4 curves but every line of the ~A section holds 8 values"),
    # header only
    "header_only.las": (DataFileError, r"no ~A \(ASCII data\) section; sections found: ~VERSION INFORMATION \(line 1\)"),
    # the data section's title is "~   DEPTH ..." (no A), so the file has no data section
    "issue79.las": (DataFileError, r"no ~A \(ASCII data\) or ~Log_Data section; sections found: .*~DEPTH +TENSION \(line 34\)"),
    # a ruler line of dashes inside the ~Curve section
    "issue92.las": (DataFileError, r"line 38 of the ~CURVE section is not a curve definition \(MNEM\.UNIT  VALUE : DESCRIPTION\): '-{20,}"),
    "not_a_las_file.las": (DataFileError, r"no ~ sections found; not a LAS file"),
    # "7.020101130.188": two values written without a blank between them
    "null_policy_runon.las": (DataFileError, r"line 33 of the ~A section has 6 values, expected 7, .*\(values run together in '7\.020101130\.188'\)"),
    # two overflowed values written as one run of asterisks
    "sample_lastcolblanked.las": (DataFileError, r"line 45 of the ~A section has 7 values, expected 8, .*'\*{16}' is a number too wide for its column"),
}

#: What lasio needs told to decode these files (it does not detect UTF-16, and takes these UTF-8
#: files for another encoding).
LASIO_ENCODING = {
    "encodings_utf8.las": "utf-8",
    "sample_cyrillic_depth_unit.las": "utf-8",
    "encodings_utf16be.las": "utf-16-be",
    "encodings_utf16le.las": "utf-16-le",
    "encodings_utf16bebom.las": "utf-16",
    "encodings_utf16lebom.las": "utf-16",
}


@pytest.fixture(scope="module")
def corpus(shared_data) -> Path:
    return shared_data / "outside" / "lasio-examples"


def test_corpus_has_the_131_files(corpus):
    files = sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*") if p.suffix.lower() == ".las")
    assert len(files) == 131 and files == FILES
    assert set(REFUSED) <= set(files)


def _lasio(path: Path):
    """lasio's reading of the file with its default settings; None if it fails or finds no curve."""
    import lasio

    logging.getLogger("lasio").setLevel(logging.CRITICAL)
    try:
        las = lasio.read(str(path), encoding=LASIO_ENCODING.get(path.name))
    except Exception:
        return None
    return las if len(las.curves) and np.asarray(las.data).size else None


def _lasio_values(item, null) -> np.ndarray | None:
    """lasio's values as numbers: text that is not a number is NaN; None for a curve of text only."""
    data = np.asarray(item.data)
    if data.dtype.kind in "fiu":
        values = data.astype(float)
    else:
        tokens = [str(t).strip() for t in data]
        # a comma decimal mark (lasio's default policy reads these too, in numeric curves)
        tokens = [t.replace(",", ".") if re.fullmatch(r"-?\d*,\d+", t) else t for t in tokens]
        values = np.array([float(t) if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", t) else np.nan
                           for t in tokens])
        if np.isnan(values).all() and not all(t.upper() in ("", "NAN") for t in tokens):
            return None
    return np.where(values == null, np.nan, values) if null is not None else values


@pytest.mark.parametrize("rel", FILES)
def test_every_file_is_read_as_lasio_reads_it_or_refused_clearly(corpus, rel):
    path = corpus / rel
    if rel in REFUSED:
        error, message = REFUSED[rel]
        with pytest.raises(error, match=message) as info:
            read_well(path)
        assert str(path) in str(info.value) and "\n" not in str(info.value)
        return
    log = read_well(path, null_values=())  # only the declared NULL, as lasio's default policy
    assert np.all(np.diff(log.depth) > 0)
    las = _lasio(path)
    if las is None:
        return  # lasio cannot read it (LAS 3.0 data sets it does not know): checked by hand below
    lasio_names = [c.mnemonic for c in las.curves]
    assert sorted(lasio_names) == sorted([log.depth_mnemonic, *log.curves, *log.skipped])
    null = las.well["NULL"].value if "NULL" in las.well else None
    null = float(null) if isinstance(null, (int, float)) else None
    depth = _lasio_values(las.curves[log.depth_mnemonic], None)  # lasio keeps NULL in the index
    order = np.argsort(depth, kind="stable")
    np.testing.assert_array_equal(log.depth, depth[order])
    for item in las.curves:
        expected = _lasio_values(item, null)
        if item.mnemonic in log.skipped:
            assert expected is None, f"{item.mnemonic} has numbers but was skipped"
        elif item.mnemonic != log.depth_mnemonic:
            assert expected is not None, f"{item.mnemonic} is text only but was read"
            np.testing.assert_array_equal(log.curve(item.mnemonic), expected[order], err_msg=item.mnemonic)
            assert log.units[item.mnemonic] == item.unit


#: Files lasio cannot read (LAS 3.0 data sets it does not recognise; TAB-delimited rows whose
#: date-and-time fields hold a blank), with their delimiter and the first line of data.
BY_HAND = {
    "3.0/Curve-Param Error #8 (SS).las": (None, 37),
    "3.0/Curve-Param Error #11 (SS).las": (None, 58),
    "3.0/Reshape Error #1 (SS).las": ("\t", 66),
    "3.0/Reshape Error #2 (SS).las": ("\t", 83),
    "3.0/Reshape Error #3 (SS).las": ("\t", 72),
}


def _definitions(lines: list[str], data_line: int) -> list[str]:
    """The mnemonics of the ~..._Definition section that precedes the data section."""
    start = max(i for i in range(data_line - 1) if lines[i].lstrip().upper().startswith("~") and
                "_DEFINITION" in lines[i].upper() and "|" not in lines[i])
    body = [ln for ln in lines[start + 1:data_line - 1] if ln.strip() and not ln.lstrip().startswith(("#", "~"))]
    return [ln.split(".", 1)[0].strip().upper() for ln in body]


@pytest.mark.parametrize("rel", sorted(BY_HAND))
def test_files_lasio_cannot_read_hold_the_values_of_their_first_and_last_rows(corpus, rel):
    delimiter, first = BY_HAND[rel]
    lines = (corpus / rel).read_text(encoding="latin-1").splitlines()
    assert "_DATA" in lines[first - 2].upper()  # the line before the first row is the data section's title
    names = _definitions(lines, first)
    rows = [ln for ln in lines[first - 1:] if ln.strip() and not ln.lstrip().startswith("#")]
    log = read_well(corpus / rel)
    assert log.depth_mnemonic == names[0] and len(log) == len(rows)
    for row, at in ((rows[0], 0), (rows[-1], -1)):
        fields = [f.strip() for f in (row.split(delimiter) if delimiter else row.split())]
        for name, field_ in zip(names, fields):
            if name in log.skipped:
                assert not re.fullmatch(r"[-+.\d]+", field_)  # a date and time, text
                continue
            value = float(field_) if field_ else np.nan
            got = log.depth[at] if name == names[0] else log.curve(name)[at]
            assert got == value or (np.isnan(got) and value == -999.25), (name, field_)


def test_a_malformed_parameter_line_does_not_stop_the_log(corpus):
    """dodgy_param_sect.las has a column-title line in ~Parameter; lasio reads the file only when
    told to ignore header errors, and then agrees with us."""
    import lasio

    log = read_well(corpus / "dodgy_param_sect.las")
    las = lasio.read(str(corpus / "dodgy_param_sect.las"), ignore_header_errors=True)
    order = np.argsort(las.index)
    np.testing.assert_array_equal(log.depth, las.index[order])
    for item in las.curves[1:]:
        np.testing.assert_array_equal(log.curve(item.mnemonic), np.asarray(item.data, dtype=float)[order])
