"""The estimators a run folder's config.json holds, by key, and their constructor defaults.

The report of a run lists the settings that differ from the defaults; it sits below the
estimators, so whoever writes the report gives it :func:`run_config_defaults`.
"""

from __future__ import annotations

from .introspection import constructor_defaults
from .lstm_regressor import LSTMRegressor
from .sequence_regressor import SequenceRegressor

__all__ = ["RUN_CONFIG_ESTIMATORS", "run_config_defaults"]

#: The key under which a run's config.json holds each estimator's ``get_params()``.
RUN_CONFIG_ESTIMATORS = {"model": SequenceRegressor, "lstm": LSTMRegressor}


def run_config_defaults() -> dict:
    """``{config key: {parameter: default}}`` of the estimators a run's config.json may hold."""
    return {key: constructor_defaults(cls) for key, cls in RUN_CONFIG_ESTIMATORS.items()}
