"""Text: word- and character-level tokenizers, and the real corpora they are used on.

* :mod:`glassformer.text.tokenizers`: :class:`WordTokenizer`, :class:`CharTokenizer`
  (special ids PAD=0, BOS=1, EOS=2, UNK=3), JSON save/load.
* :mod:`glassformer.text.corpus`: Tatoeba English-French pairs (CC BY 2.0, see
  :data:`TATOEBA_ATTRIBUTION`), tiny Shakespeare, deterministic splits.
"""

from .corpus import (
    DATA_ENV_VAR, PairSplit, SHAKESPEARE_ATTRIBUTION, TATOEBA_ATTRIBUTION, data_root, load_pairs,
    load_shakespeare, split_pairs, split_text,
)
from .tokenizers import (
    BOS, BOS_ID, EOS, EOS_ID, PAD, PAD_ID, SPECIAL_TOKENS, UNK, UNK_ID, CharTokenizer, WordTokenizer,
)

__all__ = [
    "BOS", "BOS_ID", "CharTokenizer", "DATA_ENV_VAR", "EOS", "EOS_ID", "PAD", "PAD_ID", "PairSplit",
    "SHAKESPEARE_ATTRIBUTION", "SPECIAL_TOKENS", "TATOEBA_ATTRIBUTION", "UNK", "UNK_ID", "WordTokenizer",
    "data_root", "load_pairs", "load_shakespeare", "split_pairs", "split_text",
]
