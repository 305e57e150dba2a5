"""What both readers share: decoding (UTF-8, UTF-16 with or without BOM, Latin-1), numbers, missing markers."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data.parsing import MISSING_TOKENS, decode_text, parse_numbers, read_text
from glassformer.errors import DataFileError

TEXT = "~V\nVERS. 2.0 :\n~A\n1.0 0.25\n"


@pytest.mark.parametrize("encoded", [
    TEXT.encode("utf-8"),
    b"\xef\xbb\xbf" + TEXT.encode("utf-8"),
    TEXT.encode("utf-16"),           # with a byte-order mark (little-endian here)
    b"\xfe\xff" + TEXT.encode("utf-16-be"),
    TEXT.encode("utf-16-le"),        # no byte-order mark: the NUL bytes tell the order
    TEXT.encode("utf-16-be"),
], ids=["utf8", "utf8-bom", "utf16-bom", "utf16be-bom", "utf16le", "utf16be"])
def test_every_encoding_gives_the_same_text(encoded):
    assert decode_text(encoded) == TEXT


def test_non_ascii_utf16_and_latin1():
    degree = "ILD.OHMM : at 20 \xb0C, \u0444\n"
    assert decode_text(degree.encode("utf-16-le")) == degree  # one non-Latin letter among ASCII
    assert decode_text("20 \xb0C".encode("latin-1")) == "20 \xb0C"  # not UTF-8: Latin-1 maps every byte


def test_binary_is_refused(tmp_path):
    assert decode_text(b"PK\x03\x04\x00\x00binary\x00\x01") is None
    path = tmp_path / "x.las"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(DataFileError, match=r"x\.las: contains NUL bytes; a binary file"):
        read_text(path)


def test_parse_numbers_markers_and_bad_values():
    tokens = ["1.5", " -2e3 ", "", "NA", "n/a", "#N/A", "NaN", "null", "(null)", "None", "ERR", "-", "---", "abc", "1,5"]
    values, bad = parse_numbers(tokens)
    np.testing.assert_array_equal(values[:2], [1.5, -2000.0])
    assert np.isnan(values[2:]).all()
    assert bad.tolist() == [False] * 13 + [True, True]   # "abc" and "1,5" (no comma decimals asked)
    assert {"", "NA", "(NULL)", "ERR"} <= MISSING_TOKENS

