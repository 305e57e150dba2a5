"""Word- and character-level tokenizers with fixed special ids and JSON files.

Both tokenizers share one vocabulary layout: ids 0-3 are always the special tokens
``<pad>`` (0), ``<bos>`` (1), ``<eos>`` (2) and ``<unk>`` (3), so a model, a loss
(``ignore_index=PAD_ID``) and a decoder can rely on them without asking the tokenizer.
Ordinary tokens follow from id 4.

:class:`WordTokenizer` is built for the Tatoeba English-French pairs
(the corpus's README): French typography puts no-break (U+00A0), narrow
no-break (U+202F) and thin (U+2009) spaces before ``! ? : ;`` and inside ``« »``, and some
lines use the curly apostrophe U+2019.  Its normalisation (see
:meth:`WordTokenizer.normalize`) makes ``decode(encode(x)) == normalize(x)`` hold exactly
whenever every token of ``x`` is in the vocabulary.

:class:`CharTokenizer` keeps text as it is (no normalisation), one token per character,
for the character-level language model on tiny Shakespeare.

Files are JSON (never pickle), written atomically with :func:`glassformer.io.atomic_write_json`
(temp file in the same folder, then ``os.replace``), so an interrupted save never leaves half a file
(:mod:`glassformer.text.vocabulary`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Iterable, Sequence

from .._validation import check_positive_int
from ..errors import InputError
from .vocabulary import (BOS, BOS_ID, EOS, EOS_ID, PAD, PAD_ID, SPECIAL_TOKENS, UNK, UNK_ID, Vocabulary,
                         check_text, check_texts)

__all__ = [
    "BOS", "BOS_ID", "CharTokenizer", "EOS", "EOS_ID", "PAD", "PAD_ID", "SPECIAL_TOKENS", "UNK", "UNK_ID",
    "WordTokenizer",
]

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
# Public tokenizers
# ---------------------------------------------------------------------------------------------


class WordTokenizer(Vocabulary):
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
        texts = check_texts(texts, "WordTokenizer.fit")
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
        return self._tokenize(check_text(text, "WordTokenizer.tokenize"))

    def detokenize(self, tokens: Sequence[str]) -> str:
        """Join token strings into text with the spacing rules above."""
        tokens = check_texts(tokens, "WordTokenizer.detokenize")
        return self._detokenize(tokens)

    def normalize(self, text: str) -> str:
        """The canonical form of ``text``: ``detokenize(tokenize(text))``.

        ``decode(encode(text)) == normalize(text)`` exactly when every token of ``text`` is
        in the vocabulary, and ``normalize`` is idempotent on natural text.  Use it on the
        references when scoring decoded output (e.g. BLEU).
        """
        return self._detokenize(self.tokenize(text))


class CharTokenizer(Vocabulary):
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
        texts = [text] if isinstance(text, str) else check_texts(text, "CharTokenizer.fit")
        chars = set().union(*map(set, texts)) if texts else set()
        if not chars:
            raise InputError("CharTokenizer.fit: the text is empty; need at least one character")
        self._set_tokens(sorted(chars))
        return self
