"""Complete models built from the layers in :mod:`glassformer.nn`, each with fit/predict."""

from .regressor import SequenceRegressor

__all__ = ["SequenceRegressor"]
