"""Word- and character-level tokenizers with fixed special ids and JSON files.

Both tokenizers share one vocabulary layout: ids 0-3 are always the special tokens
``<pad>`` (0), ``<bos>`` (1), ``<eos>`` (2) and ``<unk>`` (3), so a model, a loss
(``ignore_index=PAD_ID``) and a decoder can rely on them without asking the tokenizer.
Ordinary tokens follow from id 4.

:class:`WordTokenizer` is built for the Tatoeba English-French pairs
(``../shared/data/text/README.md``): French typography puts no-break (U+00A0), narrow
no-break (U+202F) and thin (U+2009) spaces before ``! ? : ;`` and inside ``« »``, and some
lines use the curly apostrophe U+2019.  Its normalisation (see
:meth:`WordTokenizer.normalize`) makes ``decode(encode(x)) == normalize(x)`` hold exactly
whenever every token of ``x`` is in the vocabulary.

:class:`CharTokenizer` keeps text as it is (no normalisation), one token per character,
for the character-level language model on tiny Shakespeare.

Files are JSON (never pickle), written atomically with :func:`glassformer.io.atomic_write_json`
(temp file in the same folder, then ``os.replace``; ../shared/DESIGN.md, fixed decision 10).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from .._validation import check_positive_int
from ..errors import InputError, ModelFileError, NotReadyError
from ..io import atomic_write_json

__all__ = [
    "BOS", "BOS_ID", "CharTokenizer", "EOS", "EOS_ID", "PAD", "PAD_ID", "SPECIAL_TOKENS", "UNK", "UNK_ID",
    "WordTokenizer", "load_tokenizer",
]

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3

_FILE_FORMAT = "glassformer-tokenizer"
_FILE_VERSION = 1

# ---------------------------------------------------------------------------------------------
# Word-level normalisation, splitting and joining (module functions: pure, no state)
# ---------------------------------------------------------------------------------------------

# Curly and modifier apostrophes all mean the ASCII apostrophe in this data.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
# Invisible characters: a zero-width space marks a word break; a soft hyphen, word joiner or
# BOM carries nothing (fra.txt has "sink\xad." and "sur \u200b\u200bla").
_INVISIBLE = str.maketrans({"\u200b": " ", "\u00ad": None, "\u2060": None, "\ufeff": None})

# Word characters: Python's Unicode \w plus combining marks, so a letter that has no
# precomposed NFC form (or "İ".lower() == "i\u0307") stays one word.
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_W = rf"[\w{_MARKS}]"
_NUM = r"\d+(?:[.,:]\d+)+"  # 3.5  1,000  9:30  10.00 stay whole
_TOKEN_RE = re.compile(
    rf"{_W}+'(?={_W})"                                # elided/contracted left part: l' qu' aujourd' don'
    rf"|{_NUM}"
    rf"|(?<={_W})-(?:{_NUM}|{_W}+)(?:'(?={_W}))?"     # hyphenated continuation: -moi -ce -t -t'
    rf"|(?<!{_W})'{_W}+"                              # leading apostrophe: 'em
    rf"|{_W}+"
    rf"|\S"                                           # any other character is a token of its own
)

_NO_SPACE_BEFORE = frozenset(list(".,!?;:)]}»…%") + ["'"])
_NO_SPACE_AFTER = frozenset("([{«$¿¡")
_FRENCH_SPACE_BEFORE = frozenset("!?;:»")
_FRENCH_SPACE_AFTER = frozenset("«")


def _clean(text: str, lowercase: bool) -> str:
    """NFC, ASCII apostrophes, invisible characters handled, optional lowercasing."""
    text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES).translate(_INVISIBLE)
    if lowercase:
        # lower() can decompose (e.g. U+0130), so compose again.
        text = unicodedata.normalize("NFC", text.lower())
    return text


def _split(text: str) -> list[str]:
    """Split cleaned text into tokens; every Unicode whitespace (str.split) separates."""
    return _TOKEN_RE.findall(" ".join(text.split()))


def _join(tokens: Sequence[str], french_spacing: bool) -> str:
    """Join tokens into text, the inverse of :func:`_split` on its own output."""
    out: list[str] = []
    glue = True  # no space before the first token
    quote_open = False
    for tok in tokens:
        if tok == '"':
            # Straight quotes alternate: the odd ones open, the even ones close.
            before, after = quote_open is False, quote_open is True
            quote_open = not quote_open
        else:
            before = not (tok in _NO_SPACE_BEFORE or (len(tok) > 1 and tok[0] == "-"))
            after = not (tok in _NO_SPACE_AFTER or (len(tok) > 1 and tok[-1] == "'"))
            if french_spacing:
                before = before or tok in _FRENCH_SPACE_BEFORE
                after = after or tok in _FRENCH_SPACE_AFTER
        if out and before and not glue:
            out.append(" ")
        out.append(tok)
        glue = not after
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Shared vocabulary machinery
# ---------------------------------------------------------------------------------------------


def _check_text(text, where: str, name: str = "text") -> str:
    if not isinstance(text, str):
        raise InputError(f"{where}: {name} must be a str, got {type(text).__name__}")
    return text


def _check_texts(texts, where: str) -> list[str]:
    """Return ``texts`` as a list of str, rejecting a bare str (a common slip)."""
    if isinstance(texts, str):
        raise InputError(f"{where}: texts must be a list of str, got a single str; wrap it in a list")
    try:
        texts = list(texts)
    except TypeError:
        raise InputError(f"{where}: texts must be an iterable of str, got {type(texts).__name__}") from None
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InputError(f"{where}: texts[{i}] must be a str, got {type(t).__name__}")
    return texts


class _Vocabulary:
    """Token <-> id tables with the fixed special ids, encode/decode in batches, and JSON files.

    Subclasses define ``_KIND``, ``_tokenize(text)``, ``_detokenize(tokens)`` and ``_config()``.
    """

    PAD, BOS, EOS, UNK = PAD, BOS, EOS, UNK
    PAD_ID, BOS_ID, EOS_ID, UNK_ID = PAD_ID, BOS_ID, EOS_ID, UNK_ID
    SPECIAL_TOKENS = SPECIAL_TOKENS
    _KIND = ""

    def __init__(self) -> None:
        self._tokens: tuple[str, ...] | None = None
        self._ids: dict[str, int] | None = None

    # ----- tables -----------------------------------------------------------------------------

    def _set_tokens(self, ordinary: Iterable[str]) -> None:
        self._tokens = SPECIAL_TOKENS + tuple(ordinary)
        self._ids = {tok: i for i, tok in enumerate(self._tokens)}

    def _require_fitted(self, where: str) -> None:
        if self._tokens is None:
            name = type(self).__name__
            raise NotReadyError(f"{name}.{where}: the tokenizer has no vocabulary yet; call fit(...) or {name}.load(path) first")

    @property
    def is_fitted(self) -> bool:
        """True once :meth:`fit` or :meth:`load` has built the vocabulary."""
        return self._tokens is not None

    @property
    def vocab_size(self) -> int:
        """Number of ids, the four special tokens included."""
        self._require_fitted("vocab_size")
        return len(self._tokens)

    def __len__(self) -> int:
        return self.vocab_size

    @property
    def tokens(self) -> tuple[str, ...]:
        """All tokens in id order (``tokens[i]`` is the token of id ``i``)."""
        self._require_fitted("tokens")
        return self._tokens

    def token_to_id(self, token: str) -> int:
        """Id of ``token``; a token outside the vocabulary gives ``UNK_ID``, as in :meth:`encode`."""
        self._require_fitted("token_to_id")
        _check_text(token, f"{type(self).__name__}.token_to_id", "token")
        return self._ids.get(token, UNK_ID)

    def id_to_token(self, token_id: int) -> str:
        """Token string of ``token_id``.

        Raises
        ------
        InputError
            If ``token_id`` is not an integer in ``[0, vocab_size)``.
        """
        self._require_fitted("id_to_token")
        where = f"{type(self).__name__}.id_to_token"
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
            raise InputError(f"{where}: token_id must be an int, got {type(token_id).__name__}")
        if not 0 <= token_id < len(self._tokens):
            raise InputError(f"{where}: token_id {token_id} is outside [0, {len(self._tokens)})")
        return self._tokens[int(token_id)]

    # ----- encoding ---------------------------------------------------------------------------

    def _tokenize(self, text: str) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _detokenize(self, tokens: Sequence[str]) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Token ids of one text; tokens outside the vocabulary become ``UNK_ID`` (3).

        Parameters
        ----------
        text : str
        add_bos, add_eos : bool
            Prepend ``BOS_ID`` (1) / append ``EOS_ID`` (2).

        Returns
        -------
        list of int

        Raises
        ------
        InputError if ``text`` is not a str; NotReadyError before :meth:`fit`.
        """
        where = f"{type(self).__name__}.encode"
        self._require_fitted("encode")
        _check_text(text, where)
        ids = self._ids
        out = [ids.get(tok, UNK_ID) for tok in self._tokenize(text)]
        if add_bos:
            out.insert(0, BOS_ID)
        if add_eos:
            out.append(EOS_ID)
        return out

    def encode_batch(self, texts: Sequence[str], add_bos: bool = False, add_eos: bool = False,
                     max_len: int | None = None, pad: bool = True):
        """Encode several texts, padded with ``PAD_ID`` (0) into one array.

        Parameters
        ----------
        texts : sequence of str
            B texts (a bare str is rejected).
        add_bos, add_eos : bool
            As :meth:`encode`.
        max_len : int, optional
            Longest row allowed, BOS/EOS included.  Longer texts lose their last content
            tokens; BOS and EOS are kept (so a truncated row still ends with EOS when
            ``add_eos``).  Must be at least ``add_bos + add_eos``.
        pad : bool
            True: return one int64 array.  False: return a list of B int64 arrays (ragged).

        Returns
        -------
        ids : ndarray of int64, shape (batch, seq), or a list of 1-D arrays if ``pad=False``
            ``seq`` is the longest row after truncation (not ``max_len``).
        lengths : ndarray of int64, shape (batch,)
            Number of non-padding ids in each row.

        Raises
        ------
        InputError for a bare str, an empty batch, a non-str element or a bad ``max_len``;
        NotReadyError before :meth:`fit`.
        """
        where = f"{type(self).__name__}.encode_batch"
        self._require_fitted("encode_batch")
        texts = _check_texts(texts, where)
        if not texts:
            raise InputError(f"{where}: texts is empty; need at least one text")
        n_special = int(bool(add_bos)) + int(bool(add_eos))
        if max_len is not None:
            max_len = check_positive_int(max_len, "max_len", where, minimum=max(n_special, 1))
        rows = []
        for text in texts:
            ids = self.encode(text)
            if max_len is not None:
                ids = ids[: max_len - n_special]
            rows.append(([BOS_ID] if add_bos else []) + ids + ([EOS_ID] if add_eos else []))
        lengths = np.array([len(r) for r in rows], dtype=np.int64)
        if not pad:
            return [np.array(r, dtype=np.int64) for r in rows], lengths
        out = np.full((len(rows), int(lengths.max())), PAD_ID, dtype=np.int64)
        for i, r in enumerate(rows):  # row copy only; the maths downstream is vectorised
            out[i, : len(r)] = r
        return out, lengths

    # ----- decoding ---------------------------------------------------------------------------

    def _check_ids(self, ids, where: str) -> np.ndarray:
        arr = np.asarray(ids)
        if arr.size == 0:
            return np.zeros(0, dtype=np.int64)
        if arr.dtype.kind not in "iu":
            raise InputError(f"{where}: ids must be integers, got dtype {arr.dtype}")
        if arr.ndim != 1:
            raise InputError(f"{where}: ids must be 1-D (one sequence), got shape {arr.shape}")
        bad = np.flatnonzero((arr < 0) | (arr >= len(self._tokens)))
        if bad.size:
            raise InputError(f"{where}: id {int(arr[bad[0]])} at position {int(bad[0])} is outside "
                             f"[0, {len(self._tokens)})")
        return arr

    def decode(self, ids, skip_special: bool = True) -> str:
        """Text of one id sequence.

        Parameters
        ----------
        ids : sequence of int or 1-D integer array
        skip_special : bool
            True: stop at the first ``EOS_ID`` and drop ``PAD_ID`` and ``BOS_ID``; ``UNK_ID``
            is kept and shown as ``"<unk>"``.  False: show every id, specials included.

        Raises
        ------
        InputError for non-integer, non-1-D or out-of-range ids; NotReadyError before :meth:`fit`.
        """
        where = f"{type(self).__name__}.decode"
        self._require_fitted("decode")
        arr = self._check_ids(ids, where)
        toks = self._tokens
        if not skip_special:
            return self._detokenize([toks[i] for i in arr.tolist()])
        out = []
        for i in arr.tolist():
            if i == EOS_ID:
                break
            if i != PAD_ID and i != BOS_ID:
                out.append(toks[i])
        return self._detokenize(out)

    def decode_batch(self, ids, skip_special: bool = True) -> list[str]:
        """:meth:`decode` for each row of a (batch, seq) array or a list of sequences."""
        where = f"{type(self).__name__}.decode_batch"
        self._require_fitted("decode_batch")
        if isinstance(ids, np.ndarray):
            if ids.ndim != 2:
                raise InputError(f"{where}: ids must be 2-D (batch, seq), got shape {ids.shape}")
            rows = list(ids)
        else:
            try:
                rows = list(ids)
            except TypeError:
                raise InputError(f"{where}: ids must be a 2-D array or a list of sequences, got "
                                 f"{type(ids).__name__}") from None
        return [self.decode(r, skip_special=skip_special) for r in rows]

    # ----- files ------------------------------------------------------------------------------

    def _config(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def save(self, path) -> Path:
        """Write the tokenizer as JSON (atomically) and return the path.

        The file holds ``format``, ``format_version``, ``kind`` ("word" or "char"), ``config``
        (constructor arguments) and ``tokens`` (all tokens in id order).  Missing parent
        folders are created.
        """
        self._require_fitted("save")
        path = Path(path)
        doc = {"format": _FILE_FORMAT, "format_version": _FILE_VERSION, "kind": self._KIND,
               "config": self._config(), "tokens": list(self._tokens)}
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, doc, indent=1)
        return path

    @classmethod
    def load(cls, path):
        """Read a file written by :meth:`save`.

        Raises
        ------
        ModelFileError
            If the file is missing, not JSON, not a glassformer tokenizer, of another kind or
            version, or its token list is damaged (the message names the file and the problem).
        """
        path = Path(path)
        doc = _read_doc(path)
        if doc.get("kind") != cls._KIND:
            other = {"word": "WordTokenizer", "char": "CharTokenizer"}.get(doc.get("kind"), "?")
            raise ModelFileError(f"{path}: holds a {doc.get('kind')!r} tokenizer, not {cls._KIND!r}; "
                                 f"use {other}.load or load_tokenizer")
        tokens = doc.get("tokens")
        if (not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens)
                or tuple(tokens[:4]) != SPECIAL_TOKENS or len(set(tokens)) != len(tokens)):
            raise ModelFileError(f"{path}: 'tokens' must be a list of distinct str starting with {list(SPECIAL_TOKENS)}")
        config = doc.get("config")
        if not isinstance(config, dict):
            raise ModelFileError(f"{path}: 'config' must be a JSON object, got {type(config).__name__}")
        try:
            obj = cls(**config)
        except (TypeError, InputError) as exc:
            raise ModelFileError(f"{path}: bad 'config' {config!r} ({exc})") from None
        obj._set_tokens(tokens[4:])
        return obj


def _read_doc(path: Path) -> dict:
    if not path.is_file():
        raise ModelFileError(f"tokenizer file not found: {path}")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{path}: not a JSON tokenizer file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != _FILE_FORMAT:
        raise ModelFileError(f"{path}: not a glassformer tokenizer file (missing 'format': {_FILE_FORMAT!r})")
    if doc.get("format_version") != _FILE_VERSION:
        raise ModelFileError(f"{path}: format_version {doc.get('format_version')!r} is not supported "
                             f"(this glassformer reads version {_FILE_VERSION})")
    return doc


def load_tokenizer(path):
    """Load a :class:`WordTokenizer` or :class:`CharTokenizer` file, whichever it holds.

    Raises
    ------
    ModelFileError as :meth:`WordTokenizer.load`.
    """
    kind = _read_doc(Path(path)).get("kind")
    classes = {WordTokenizer._KIND: WordTokenizer, CharTokenizer._KIND: CharTokenizer}
    if kind not in classes:
        raise ModelFileError(f"{path}: unknown tokenizer kind {kind!r} (expected 'word' or 'char')")
    return classes[kind].load(path)


# ---------------------------------------------------------------------------------------------
# Public tokenizers
# ---------------------------------------------------------------------------------------------


class WordTokenizer(_Vocabulary):
    """Word-level tokenizer: Unicode-aware normalisation, punctuation split, frequency vocabulary.

    Normalisation (:meth:`normalize`, applied by :meth:`tokenize` and :meth:`encode`):

    1. Unicode NFC, so a decomposed ``e`` + U+0301 and a precomposed ``é`` are the same word.
    2. U+2019 and U+2018 (curly quotes) and U+02BC become the ASCII apostrophe ``'``.
    3. Every Unicode whitespace separates words (``str.split``: space, tab, U+00A0, U+202F,
       U+2009, ...); U+200B (zero-width space) separates too; the soft hyphen U+00AD, the
       word joiner U+2060 and U+FEFF are dropped.
    4. Lowercasing (``str.lower``) when ``lowercase`` (default).

    Splitting: a word is a run of Unicode word characters (letters, digits, ``_``, combining
    marks); numbers keep inner ``. , :`` (``3.5``, ``1,000``, ``9:30``); every other
    non-space character is a token of its own (``. , ! ? « » " ( ) $ %`` ...).  Two clitic
    rules keep French compact and let :meth:`decode` re-join words:

    * an apostrophe between word characters stays with the left part: ``l'homme`` ->
      ``l'`` ``homme``, ``qu'il`` -> ``qu'`` ``il``, ``don't`` -> ``don'`` ``t``;
    * a hyphen between word characters stays with the right part: ``est-ce`` -> ``est``
      ``-ce``, ``a-t-il`` -> ``a`` ``-t`` ``-il``, ``va-t'en`` -> ``va`` ``-t'`` ``en``.

    Joining (:meth:`detokenize`): tokens are separated by one space, except none before
    ``. , ! ? ; : ) ] } » … % '`` and ``-xxx`` continuations, none after ``( [ { « $ ¿ ¡`` and
    ``xxx'`` elisions; straight double quotes alternate opening/closing.  With
    ``french_spacing=True`` a space is also put before ``! ? ; : »`` and after ``«``
    (French typography, with an ordinary space).  So ``"Cours\\u202f!"`` normalises to
    ``"cours!"`` (``"cours !"`` with french_spacing) and ``"J’espère"`` to ``"j'espère"``.

    Vocabulary: ids 0-3 are ``<pad> <bos> <eos> <unk>``; then every token seen at least
    ``min_freq`` times, most frequent first, ties in code-point (alphabetical) order, cut so
    that ``vocab_size <= max_vocab`` (``max_vocab`` counts the four special tokens).

    Parameters
    ----------
    max_vocab : int, optional
        Largest vocabulary size, specials included (>= 4).  None: no limit.
    min_freq : int
        Smallest count a token needs in the fitting texts (>= 1).
    lowercase : bool
        Lowercase during normalisation.
    french_spacing : bool
        Join with French typographic spaces (see above); changes :meth:`normalize` too.

    Examples
    --------
    >>> tok = WordTokenizer().fit(["Qu'est-ce que c'est\\u202f?"])
    >>> tok.tokenize("Qu’est-ce que c’est ?")
    ["qu'", 'est', '-ce', 'que', "c'", 'est', '?']
    >>> tok.decode(tok.encode("Qu’est-ce que c’est ?", add_bos=True, add_eos=True))
    "qu'est-ce que c'est?"
    """

    _KIND = "word"

    def __init__(self, max_vocab: int | None = None, min_freq: int = 1, lowercase: bool = True,
                 french_spacing: bool = False):
        super().__init__()
        if max_vocab is not None:
            max_vocab = check_positive_int(max_vocab, "max_vocab", "WordTokenizer", minimum=len(SPECIAL_TOKENS))
        self.max_vocab = max_vocab
        self.min_freq = check_positive_int(min_freq, "min_freq", "WordTokenizer")
        self.lowercase = bool(lowercase)
        self.french_spacing = bool(french_spacing)

    def __repr__(self) -> str:
        size = len(self._tokens) if self._tokens is not None else "unfitted"
        return (f"WordTokenizer(vocab_size={size}, max_vocab={self.max_vocab}, min_freq={self.min_freq}, "
                f"lowercase={self.lowercase}, french_spacing={self.french_spacing})")

    def _config(self) -> dict:
        return {"max_vocab": self.max_vocab, "min_freq": self.min_freq, "lowercase": self.lowercase,
                "french_spacing": self.french_spacing}

    def _tokenize(self, text: str) -> list[str]:
        return _split(_clean(text, self.lowercase))

    def _detokenize(self, tokens: Sequence[str]) -> str:
        return _join(tokens, self.french_spacing)

    def fit(self, texts: Iterable[str]) -> "WordTokenizer":
        """Build the vocabulary from ``texts`` (replacing any previous one) and return self.

        Raises
        ------
        InputError if ``texts`` is a bare str, empty, or holds a non-str.
        """
        texts = _check_texts(texts, "WordTokenizer.fit")
        if not texts:
            raise InputError("WordTokenizer.fit: texts is empty; need at least one text")
        counts = Counter()
        for text in texts:
            counts.update(self._tokenize(text))
        kept = sorted((t for t, c in counts.items() if c >= self.min_freq), key=lambda t: (-counts[t], t))
        if self.max_vocab is not None:
            kept = kept[: self.max_vocab - len(SPECIAL_TOKENS)]
        self._set_tokens(kept)
        return self

    def tokenize(self, text: str) -> list[str]:
        """Normalised token strings of ``text`` (no vocabulary needed; unknown words kept)."""
        return self._tokenize(_check_text(text, "WordTokenizer.tokenize"))

    def detokenize(self, tokens: Sequence[str]) -> str:
        """Join token strings into text with the spacing rules above."""
        tokens = _check_texts(tokens, "WordTokenizer.detokenize")
        return self._detokenize(tokens)

    def normalize(self, text: str) -> str:
        """The canonical form of ``text``: ``detokenize(tokenize(text))``.

        ``decode(encode(text)) == normalize(text)`` exactly when every token of ``text`` is
        in the vocabulary, and ``normalize`` is idempotent on natural text.  Use it on the
        references when scoring decoded output (e.g. BLEU).
        """
        return self._detokenize(self.tokenize(text))


class CharTokenizer(_Vocabulary):
    """Character-level tokenizer: ids 0-3 are the special tokens, then characters in code-point order.

    The text is used exactly as given (no normalisation), so ``decode(encode(x)) == x`` for
    any ``x`` made of fitted characters; an unseen character becomes ``UNK_ID`` and decodes
    as ``"<unk>"``.  Fitted on tiny Shakespeare it has 4 + 65 = 69 ids.

    Examples
    --------
    >>> tok = CharTokenizer().fit("hello")
    >>> tok.tokens[4:], tok.encode("hole")
    (('e', 'h', 'l', 'o'), [5, 7, 6, 4])
    """

    _KIND = "char"

    def __repr__(self) -> str:
        size = len(self._tokens) if self._tokens is not None else "unfitted"
        return f"CharTokenizer(vocab_size={size})"

    def _config(self) -> dict:
        return {}

    def _tokenize(self, text: str) -> list[str]:
        return list(text)

    def _detokenize(self, tokens: Sequence[str]) -> str:
        return "".join(tokens)

    def fit(self, text) -> "CharTokenizer":
        """Build the vocabulary from the characters of ``text`` (a str or an iterable of str); return self.

        Raises
        ------
        InputError if ``text`` holds a non-str or no character at all.
        """
        texts = [text] if isinstance(text, str) else _check_texts(text, "CharTokenizer.fit")
        chars = set().union(*map(set, texts)) if texts else set()
        if not chars:
            raise InputError("CharTokenizer.fit: the text is empty; need at least one character")
        self._set_tokens(sorted(chars))
        return self
