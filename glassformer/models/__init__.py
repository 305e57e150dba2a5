"""Complete models built from the layers in :mod:`glassformer.nn`, each with fit/predict."""

from .lstm_regressor import LSTMRegressor
from .regressor import SequenceRegressor

__all__ = ["LSTMRegressor", "SequenceRegressor"]
