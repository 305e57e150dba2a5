"""The vocabulary both tokenizers share: fixed special ids, token <-> id tables, batches, JSON files.

Ids 0-3 are always the special tokens ``<pad>`` (0), ``<bos>`` (1), ``<eos>`` (2) and ``<unk>``
(3), so a model, a loss (``ignore_index=PAD_ID``) and a decoder can rely on them without asking the
tokenizer.  Ordinary tokens follow from id 4.  Files are JSON (never pickle), written atomically
with :func:`glassformer.io.atomic_write_json`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from .._validation import check_positive_int
from ..errors import InputError, ModelFileError, NotReadyError
from ..io import atomic_write_json

__all__ = ["BOS", "BOS_ID", "EOS", "EOS_ID", "PAD", "PAD_ID", "SPECIAL_TOKENS", "UNK", "UNK_ID", "Vocabulary",
           "check_text", "check_texts", "read_tokenizer_file"]

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3

_FILE_FORMAT = "glassformer-tokenizer"
_FILE_VERSION = 1

# ---------------------------------------------------------------------------------------------
# Shared vocabulary machinery
# ---------------------------------------------------------------------------------------------


def check_text(text, where: str, name: str = "text") -> str:
    if not isinstance(text, str):
        raise InputError(f"{where}: {name} must be a str, got {type(text).__name__}")
    return text


def check_texts(texts, where: str) -> list[str]:
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


class Vocabulary:
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
        check_text(token, f"{type(self).__name__}.token_to_id", "token")
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
        check_text(text, where)
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
        texts = check_texts(texts, where)
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
        doc = read_tokenizer_file(path)
        if doc.get("kind") != cls._KIND:
            other = {"word": "WordTokenizer", "char": "CharTokenizer"}.get(doc.get("kind"), "?")
            raise ModelFileError(f"{path}: holds a {doc.get('kind')!r} tokenizer, not {cls._KIND!r}; "
                                 f"use {other}.load")
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


def read_tokenizer_file(path: Path) -> dict:
    """The JSON document of a tokenizer file, after checking its format and version (ModelFileError)."""
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
