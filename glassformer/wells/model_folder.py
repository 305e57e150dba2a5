"""What a well model's folder holds, and its specification as plain data.

A fitted :class:`~glassformer.wells.WellModel` is saved as one folder: the transformer's
``model.npz`` + ``model.json`` (a mean of transformers: member 0 there, the others in ``members/``;
the well model's metadata in ``model.json["extra"]["well_model"]``:
the specification, the scalers, the training record and one record per baseline), the tree
ensembles as skops files beside them, ``<name>.<digest>.skops`` (:mod:`glassformer.wells.tree_baselines`;
their checksums and types checked against the record and a trusted list, nothing unpickled) and the LSTM beside it in
``<folder>_lstm``.  The specification is the estimator's ``get_params(deep=False)``, each
window regressor written as ``{"class", "params"}``.
"""

from __future__ import annotations

from pathlib import Path

from sklearn.base import BaseEstimator

from ..errors import ModelFileError
from ..models import LSTMRegressor, SequenceRegressor
from ..models.persistence import model_location
from .baselines import MEAN, TRANSFORM, load_baseline
from .member_mean import MemberMean

__all__ = ["plain_spec", "read_baselines", "read_lstm_beside", "read_model", "spec_arguments"]

#: The window regressors a specification may hold, by class name.
ESTIMATORS = {"SequenceRegressor": SequenceRegressor, "LSTMRegressor": LSTMRegressor}


def plain_spec(params: dict) -> dict:
    """``get_params(deep=False)`` as plain data: estimators as ``{"class", "params"}``, sequences as lists."""
    out = {}
    for key, value in params.items():
        if isinstance(value, BaseEstimator):
            value = {"class": type(value).__name__, "params": value.get_params(deep=False)}
        elif isinstance(value, (list, tuple)):
            value = list(value)
        out[key] = value
    return out


def spec_arguments(spec: dict) -> dict:
    """The constructor arguments of :func:`plain_spec`'s output (each estimator built again, unfitted).

    Raises
    ------
    ModelFileError
        An estimator of a class this package does not define.
    """
    kw = dict(spec)
    for key, value in spec.items():
        if isinstance(value, dict) and "class" in value:
            est = ESTIMATORS.get(value["class"])
            if est is None:
                raise ModelFileError(f"WellModel specification: {key} is a {value['class']!r}, not one of "
                                     f"{', '.join(ESTIMATORS)}")
            kw[key] = est(**value["params"])
    return kw


def read_model(directory) -> tuple:
    """``(transformer, well-model metadata)`` of a model folder (or a run folder holding ``model/``); the
    transformer is a :class:`~glassformer.wells.member_mean.MemberMean` when the folder holds its members.

    Raises
    ------
    ModelFileError
        No model there, a model saved without the well model's metadata, or a member missing or changed.
    """
    model = SequenceRegressor.load(directory)
    meta = (getattr(model, "extra_", None) or {})
    meta = meta.get("well_model") or meta.get("pipeline")       # "pipeline": glassformer 0.1's name
    if not meta:
        raise ModelFileError(f"{directory}: the model has no well-model metadata (inputs, scalers); "
                             "it was not written by `glassformer train`")
    return MemberMean.load(model, _folder(directory)), meta


def _folder(directory) -> Path:
    location = model_location(directory, "WellModel.load")
    return location if location.is_dir() else location.parent


def read_baselines(meta: dict, directory) -> dict:
    """The fitted baselines of a model's metadata, or the transform and mean of a model saved before
    every baseline was (format 3 and older).

    Raises
    ------
    ModelFileError
        A baseline file missing, damaged, changed since it was saved, or holding an untrusted type.
    """
    folder = _folder(directory)
    if "baselines" in meta:
        return {name: load_baseline(record, folder) for name, record in meta["baselines"].items()}
    older = {TRANSFORM: {"kind": "transform", "log_target": meta["log_target"], "floor_mD": meta.get("floor_mD", 1e-3),
                         "slope": meta["baseline_ppt"]["slope"], "intercept": meta["baseline_ppt"]["intercept"]},
             MEAN: {"kind": "mean", "mean": meta["baseline_mean"]}}
    return {name: load_baseline(record, folder) for name, record in older.items()}


def read_lstm_beside(directory):
    """The LSTM saved beside a model folder (``<folder>_lstm``), or None."""
    folder = _folder(directory)
    lstm_dir = folder.with_name(folder.name + "_lstm")
    return LSTMRegressor.load(lstm_dir) if (lstm_dir / "model.npz").is_file() else None
