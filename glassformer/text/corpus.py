"""The real text corpora: Tatoeba English-French pairs and tiny Shakespeare.

The files are never copied into the repository.  They are looked up under the *data root*,
the folder that holds ``real/`` and ``text/``:

* ``$GLASSFORMER_DATA`` when that environment variable is set, otherwise
* a folder ``shared/data`` beside the repository checkout (:func:`glassformer.data.volve.data_root`).

Every loader also takes an explicit ``path``.  Facts about the files (sizes, counts,
quirks) are from the corpus's own README (``text/README.md`` in the data folder).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from .._validation import check_positive_int
from ..data.volve import DATA_ENV_VAR, data_root
from ..errors import DataFileError, InputError

__all__ = [
    "DATA_ENV_VAR", "PairSplit", "SHAKESPEARE_ATTRIBUTION", "TATOEBA_ATTRIBUTION", "data_root", "load_pairs",
    "load_shakespeare", "split_pairs", "split_text",
]

FRA_ENG_FILE = Path("text") / "fra-eng" / "fra.txt"
SHAKESPEARE_FILE = Path("text") / "tinyshakespeare" / "input.txt"

TATOEBA_ATTRIBUTION = (
    "English-French sentence pairs: Tatoeba Project (tatoeba.org) sentences, packaged by "
    "ManyThings.org (www.manythings.org/anki, fra-eng.zip of 2019-04-07). Licence: Creative Commons "
    "Attribution 2.0 (CC BY 2.0, https://creativecommons.org/licenses/by/2.0/). "
    "Credit: www.manythings.org/anki and tatoeba.org."
)
SHAKESPEARE_ATTRIBUTION = (
    "tiny Shakespeare, from karpathy/char-rnn (data/tinyshakespeare/input.txt): a selection of "
    "William Shakespeare's plays (public domain); the char-rnn repository is MIT-licensed."
)


class PairSplit(NamedTuple):
    """Train, validation and test lists of ``(english, french)`` pairs."""

    train: list
    valid: list
    test: list


def _resolve(path, default: Path, what: str) -> Path:
    """Return the file to read, or raise DataFileError saying where it was looked for and what to do."""
    if path is None:
        root = data_root()
        p = root / default
        env = os.environ.get(DATA_ENV_VAR)
        how = f"default location under the data root {root}; ${DATA_ENV_VAR} is " + (repr(env) if env else "not set")
    else:
        if not isinstance(path, (str, os.PathLike)):
            raise InputError(f"{what}: path must be a str or os.PathLike, got {type(path).__name__}")
        p = Path(path).expanduser()
        how = "given as path="
    if not p.is_file():
        raise DataFileError(
            f"{what}: file not found: {p} ({how}). Pass path= pointing to the file, or set "
            f"{DATA_ENV_VAR} to the folder that contains text/ (it must hold {default.as_posix()})."
        )
    return p


def _read_text(p: Path) -> str:
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(f"{p}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None


def load_pairs(path=None, *, max_words: int | None = 8, max_pairs: int | None = None) -> list[tuple[str, str]]:
    """Read English-French pairs from a Tatoeba/ManyThings ``fra.txt``.

    Each line is ``English<TAB>French``; newer ManyThings files add a third attribution
    column, which is ignored.  Empty lines are skipped.  Text is returned as in the file
    (no normalisation: that is the tokenizer's job).  The file is sorted roughly by English
    length, so the pairs come out short first; use :func:`split_pairs` for a random split.

    Parameters
    ----------
    path : str or os.PathLike, optional
        Default ``<data root>/text/fra-eng/fra.txt`` (see :func:`data_root`).
    max_words : int or None
        Keep a pair only if both sides have at most this many whitespace-separated words
        (``str.split``, so U+00A0/U+202F count as separators).  On the shipped file:
        8 -> 127,422 pairs, 5 -> 52,041, None -> all 167,130.
    max_pairs : int, optional
        Stop after this many kept pairs (file order).

    Returns
    -------
    list of (str, str)

    Raises
    ------
    DataFileError
        Missing file (message: path, and to pass ``path=`` or set ``GLASSFORMER_DATA``), not
        UTF-8, a line without a TAB or with an empty side (message: file and line number), or
        no pairs at all.
    InputError
        Bad ``max_words`` / ``max_pairs``.
    """
    where = "load_pairs"
    if max_words is not None:
        max_words = check_positive_int(max_words, "max_words", where)
    if max_pairs is not None:
        max_pairs = check_positive_int(max_pairs, "max_pairs", where)
    p = _resolve(path, FRA_ENG_FILE, where)
    pairs: list[tuple[str, str]] = []
    for lineno, line in enumerate(_read_text(p).splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 2:
            raise DataFileError(f"{p}, line {lineno}: expected 'English<TAB>French', found no TAB: {line[:60]!r}")
        en, fr = fields[0].strip(), fields[1].strip()
        if not en or not fr:
            raise DataFileError(f"{p}, line {lineno}: empty {'English' if not en else 'French'} side: {line[:60]!r}")
        if max_words is not None and (len(en.split()) > max_words or len(fr.split()) > max_words):
            continue
        pairs.append((en, fr))
        if max_pairs is not None and len(pairs) >= max_pairs:
            break
    if not pairs:
        raise DataFileError(f"{p}: no sentence pairs found (max_words={max_words})")
    return pairs


def _source_key(english: str) -> str:
    """Group key of an English sentence: case, spacing and apostrophe style ignored."""
    return " ".join(english.replace("\u2019", "'").split()).casefold()


def split_pairs(pairs: Sequence[tuple[str, str]], n_test: int = 1000, n_valid: int = 1000, seed: int = 0,
                *, group_by_source: bool = True) -> PairSplit:
    """Deterministic train/validation/test split of sentence pairs.

    The order comes from ``numpy.random.default_rng(seed).permutation``.  With
    ``group_by_source`` (default) the permutation is over the distinct English sentences
    (case, spacing and curly/straight apostrophes ignored; first-appearance order), and all
    the pairs of one English sentence go to the same split.  Tatoeba often gives one English
    sentence several French translations (116,830 distinct English sentences for 167,130
    pairs), so a pair-level split would put a test sentence's twin in training.  Groups are
    taken in permuted order: a group goes to test if it still fits in ``n_test``, else to
    validation if it fits in ``n_valid``, else to train, which fills test and validation to
    exactly ``n_test`` and ``n_valid`` pairs.  With ``group_by_source=False`` the pairs
    themselves are permuted: test = the first ``n_test``, valid = the next ``n_valid``.

    Parameters
    ----------
    pairs : sequence of (str, str)
    n_test, n_valid : int
        Sizes (>= 0) of the test and validation sets, in pairs.
    seed : int
        Seed of the permutation (>= 0).

    Returns
    -------
    PairSplit
        ``(train, valid, test)`` lists, each in permuted order; together they hold every pair once.

    Raises
    ------
    InputError
        Bad sizes or seed, too few pairs (train would be empty), or groups that cannot
        fill the requested sizes exactly.
    """
    where = "split_pairs"
    n_test = check_positive_int(n_test, "n_test", where, minimum=0)
    n_valid = check_positive_int(n_valid, "n_valid", where, minimum=0)
    seed = check_positive_int(seed, "seed", where, minimum=0)
    pairs = list(pairs)
    for i, pair in enumerate(pairs[:1] + pairs[-1:]):  # cheap shape check of the ends
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
            raise InputError(f"{where}: pairs must be (english, french) str tuples, got {pair!r}")
    if len(pairs) <= n_test + n_valid:
        raise InputError(f"{where}: {len(pairs)} pairs cannot give n_test={n_test} + n_valid={n_valid} "
                         f"and a non-empty train set")
    rng = np.random.default_rng(seed)
    if not group_by_source:
        order = rng.permutation(len(pairs))
        picked = [pairs[i] for i in order]
        return PairSplit(picked[n_test + n_valid:], picked[n_test:n_test + n_valid], picked[:n_test])
    groups: dict[str, list[int]] = {}
    for i, (en, _) in enumerate(pairs):
        groups.setdefault(_source_key(en), []).append(i)
    members = list(groups.values())
    train, valid, test = [], [], []
    for g in rng.permutation(len(members)):
        group = [pairs[i] for i in members[g]]
        if len(test) + len(group) <= n_test:
            test.extend(group)
        elif len(valid) + len(group) <= n_valid:
            valid.extend(group)
        else:
            train.extend(group)
    if len(test) != n_test or len(valid) != n_valid or not train:
        raise InputError(f"{where}: the source groups could not fill n_test={n_test}, n_valid={n_valid} "
                         f"exactly (got {len(test)}, {len(valid)}, train {len(train)}); "
                         f"use smaller sizes or group_by_source=False")
    return PairSplit(train, valid, test)


def load_shakespeare(path=None) -> str:
    """Read tiny Shakespeare (1,115,394 ASCII characters, 65 distinct) as one str.

    Parameters
    ----------
    path : str or os.PathLike, optional
        Default ``<data root>/text/tinyshakespeare/input.txt`` (see :func:`data_root`).

    Raises
    ------
    DataFileError
        Missing file (message: path, and to pass ``path=`` or set ``GLASSFORMER_DATA``),
        not UTF-8, or empty.
    """
    p = _resolve(path, SHAKESPEARE_FILE, "load_shakespeare")
    text = _read_text(p)
    if not text:
        raise DataFileError(f"{p}: the file is empty")
    return text


def split_text(text: str, valid_fraction: float = 0.1) -> tuple[str, str]:
    """Split a character stream into its first ``1 - valid_fraction`` and the rest.

    The usual tiny-Shakespeare split (first 90% train, last 10% validation): contiguous,
    so no validation text leaks into training through overlapping windows.

    Raises
    ------
    InputError if ``text`` is not a non-empty str or ``valid_fraction`` is not in (0, 1).
    """
    if not isinstance(text, str) or not text:
        raise InputError(f"split_text: text must be a non-empty str, got {type(text).__name__} of length "
                         f"{len(text) if isinstance(text, str) else '?'}")
    try:
        f = float(valid_fraction)
    except (TypeError, ValueError):
        raise InputError(f"split_text: valid_fraction must be a number in (0, 1), got {valid_fraction!r}") from None
    if not 0.0 < f < 1.0:
        raise InputError(f"split_text: valid_fraction must be in (0, 1), got {valid_fraction!r}")
    cut = int(round(len(text) * (1.0 - f)))
    return text[:cut], text[cut:]
