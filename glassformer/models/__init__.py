"""Complete models built from the layers in :mod:`glassformer.nn`.

- :class:`SequenceRegressor`: encoder-only per-position regressor (the well-log model).
- :class:`LSTMRegressor`: the LSTM baseline with the same surface.
- :class:`Seq2SeqTransformer`: encoder-decoder (translation).
- :class:`DecoderOnlyLM`: GPT-style decoder-only language model with a KV cache.
"""

from .lm import DecoderOnlyLM
from .lstm_regressor import LSTMRegressor
from .regressor import SequenceRegressor
from .seq2seq import Seq2SeqTransformer

__all__ = ["DecoderOnlyLM", "LSTMRegressor", "Seq2SeqTransformer", "SequenceRegressor"]
