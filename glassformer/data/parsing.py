"""What the LAS and CSV readers share: text encodings, numbers, missing values, depth order.

Encodings
---------
A well file is text: UTF-8 (a byte-order mark allowed), UTF-16 (with a byte-order mark, or
without one when the NUL bytes of ASCII text give the byte order away), else Latin-1, which maps
every byte, so a vendor header with a stray degree sign stays readable (a non-UTF-8 byte inside a
number then shows up as text in a numeric column and is reported there).  Any other file holding
NUL bytes is binary and refused.  The LAS reader hands lasio this text rather than letting lasio
guess the encoding (see :mod:`glassformer.data.las`).

Missing values
--------------
A value is missing (NaN) when it is

* numerically equal to one of the null values: a LAS file's declared ``NULL`` and
  :data:`DEFAULT_NULL_VALUES` (exact equality of the parsed float, never a tolerance), or
* one of the :data:`MISSING_TOKENS` markers that exports write instead of a number: an empty
  field, NA, N/A, #N/A, NaN, NULL, (null), None, ERR, or a run of dashes (any case).

Any other text in a numeric column is an error naming the column, the value and where it is.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..errors import DataFileError, DepthError

__all__ = [
    "DEFAULT_NULL_VALUES",
    "DEPTH_NAMES",
    "MISSING_TOKENS",
    "check_depth_order",
    "check_no_inf",
    "decode_text",
    "mask_nulls",
    "parse_numbers",
    "read_text",
]

#: Sentinels mapped to NaN in addition to a LAS file's declared ``NULL`` (exact float equality).
DEFAULT_NULL_VALUES: tuple[float, ...] = (-999.25, -999.0, -9999.0)

#: Mnemonics (and CSV column names) taken for depth, in this order of preference, any case.
DEPTH_NAMES: tuple[str, ...] = ("DEPTH", "DEPT", "MD", "TDEP")

#: Text read as a missing value (after stripping blanks, any case), besides a run of dashes.
MISSING_TOKENS: frozenset[str] = frozenset(
    {"", "NA", "N/A", "#N/A", "NAN", "-NAN", "NULL", "(NULL)", "NONE", "ERR"}
)

_DASHES = re.compile(r"^-+$")


def decode_text(raw: bytes) -> str | None:
    """Decode a well file's bytes (see the module notes); None when they are binary."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw.decode("utf-8-sig", errors="replace")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16", errors="replace")
    if b"\x00" in raw:
        head = raw[:4096]
        head = head[: len(head) // 2 * 2]
        n = max(len(head) // 2, 1)
        even, odd = head[0::2].count(0) / n, head[1::2].count(0) / n
        # Latin text in UTF-16 has a NUL in (nearly) every other byte: the first of each pair in
        # big-endian, the second in little-endian; the other byte of the pair is (nearly) never NUL.
        if even > 0.75 and odd < 0.05:
            return raw.decode("utf-16-be", errors="replace")
        if odd > 0.75 and even < 0.05:
            return raw.decode("utf-16-le", errors="replace")
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def read_text(path) -> tuple[Path, str]:
    """Read a well file as text (see the module notes on encodings).

    Raises
    ------
    DataFileError
        If the file is missing, not a regular file, unreadable, or binary.
    """
    p = Path(path)
    if not p.exists():
        raise DataFileError(f"{p}: file not found")
    if not p.is_file():
        raise DataFileError(f"{p}: not a regular file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise DataFileError(f"{p}: cannot be read ({exc.strerror or exc})") from None
    text = decode_text(raw)
    if text is None:
        raise DataFileError(f"{p}: contains NUL bytes; a binary file, not a LAS/CSV text file")
    return p, text


def parse_numbers(tokens) -> tuple[np.ndarray, np.ndarray]:
    """Convert text values to float64.

    Parameters
    ----------
    tokens : sequence of str, shape (n,)
        The values as written.

    Returns
    -------
    values : ndarray of float64, shape (n,)
        NaN where a value is missing or not a number.
    not_numbers : ndarray of bool, shape (n,)
        True where a value is neither a number nor a missing-value marker.
    """
    cells = pd.Series(np.asarray(tokens, dtype=object), dtype=object).astype(str).str.strip()
    missing = (cells.str.upper().isin(MISSING_TOKENS) | cells.str.match(_DASHES)).to_numpy()
    values = pd.to_numeric(cells.where(~missing), errors="coerce").to_numpy(dtype=np.float64)
    return values, ~missing & np.isnan(values)


def mask_nulls(values: np.ndarray, null_values: Sequence[float]) -> np.ndarray:
    """``values`` with NaN wherever a value equals one of ``null_values`` exactly."""
    if len(null_values):
        values = np.where(np.isin(values, np.asarray(null_values, dtype=np.float64)), np.nan, values)
    return values


def check_no_inf(values: np.ndarray, mnem: str, source: Path, row_label: Callable[[int], str]) -> None:
    """Raise DataFileError naming the curve and row of the first infinite value."""
    inf = np.flatnonzero(np.isinf(values))
    if inf.size:
        raise DataFileError(f"{source}: curve {mnem} holds an infinite value at {row_label(int(inf[0]))}")


def check_depth_order(
    depth: np.ndarray, source: Path, unit: str, row_label: Callable[[int], str]
) -> np.ndarray | None:
    """Return None if depth increases, a reversing index if it strictly decreases.

    Raises
    ------
    DepthError
        For a missing, duplicate or non-monotonic depth (naming rows and lines through
        ``row_label``).
    """
    bad = np.flatnonzero(~np.isfinite(depth))
    if bad.size:
        raise DepthError(f"{source}: depth is missing (null/NaN/inf) at {row_label(int(bad[0]))}")
    if depth.size < 2:
        return None
    step = np.diff(depth)
    if (step > 0).all():
        return None
    if (step < 0).all():
        return np.arange(depth.size)[::-1]
    dup = np.flatnonzero(step == 0)
    if dup.size:
        i = int(dup[0])
        raise DepthError(
            f"{source}: duplicate depth {depth[i]:g} {unit} at {row_label(i)} and {row_label(i + 1)}"
        )
    direction = np.sign(step[0])
    i = int(np.flatnonzero(np.sign(step) != direction)[0])
    trend = "increases" if direction > 0 else "decreases"
    raise DepthError(
        f"{source}: depth is not monotonic: it {trend} at first, but {depth[i + 1]:g} {unit} at "
        f"{row_label(i + 1)} follows {depth[i]:g} {unit} at {row_label(i)}"
    )
