"""Complete models built from the layers in :mod:`glassformer.nn`.

- :class:`SequenceRegressor`: encoder-only per-position regressor (the well-log model), a
  scikit-learn estimator whose ``network_`` is a :class:`TransformerRegressorNet`.
- :class:`LSTMRegressor`: the LSTM it is compared with, the same estimator surface
  (``network_``: :class:`LSTMRegressorNet`).
- :class:`Seq2SeqTransformer`: encoder-decoder (translation).
- :class:`DecoderOnlyLM`: GPT-style decoder-only language model with a KV cache.
- :func:`run_config_defaults`: the estimators' defaults, for a run report's "differs from the defaults".
"""

from .introspection import constructor_defaults
from .lm import DecoderOnlyLM
from .lstm_regressor import LSTMRegressor
from .networks import LSTMRegressorNet, TransformerRegressorNet
from .run_config import run_config_defaults
from .sequence_regressor import SequenceRegressor
from .seq2seq import Seq2SeqTransformer

__all__ = ["DecoderOnlyLM", "LSTMRegressor", "LSTMRegressorNet", "Seq2SeqTransformer", "SequenceRegressor",
           "TransformerRegressorNet", "constructor_defaults", "run_config_defaults"]
