"""Baselines at core depths, and metrics scored only where a plug was measured.

Every model predicts the whole log; the metrics use only the plug samples of one role (train,
validation or test), and only those where every model has a prediction, so every row of a table
is scored on the same plugs.  The baselines, each fitted on the training plugs only:

* ``core poro-perm transform`` -- the field's transform ``log10 k = a + b phi`` fitted on the core
  porosity and permeability of the training plugs (the core crossplot), applied to the log
  porosity (the first input), as a petrophysicist would along the well;
* ``log poro-perm transform`` -- the same line fitted on the log porosity at the training plugs;
* ``<curve> (log-derived)`` -- the log-derived permeability the interpretation already gives
  (KLOGH), unfitted: how far the existing curve is from the core;
* ``training mean`` -- the mean of the training plugs;
* the tree ensembles of the well job's registry (``random forest`` and ``gradient boosting``, each
  with and without depth context; :mod:`.tree_baselines`), fitted with the well model on the
  training plugs.
"""

from __future__ import annotations

import time

import numpy as np

from ..data.units import volume_fraction_kind
from .baselines import PorosityPermeabilityTransform
from .evaluation import regression_metrics
from .model import BASELINE_NAMES

__all__ = ["PLUG_TRANSFORM", "LOG_TRANSFORM", "MEAN", "baseline_predictions", "log_perm_name", "score_roles"]

PLUG_TRANSFORM = "core poro-perm transform"
LOG_TRANSFORM = "log poro-perm transform"
MEAN = "training mean"


def log_perm_name(curve: str) -> str:
    return f"{str(curve).upper()} (log-derived)"


def _log_porosity(cw, name: str):
    """The log porosity as a fraction (v/v), and a note when its unit had to be assumed."""
    phi = np.asarray(cw.log.curve(name), dtype=np.float64)
    kind = volume_fraction_kind(cw.log.units.get(name.upper(), ""))
    if kind == "percent":
        return phi / 100.0, None
    note = None if kind == "fraction" else (f"the unit of {name} ({cw.log.units.get(name.upper())!r}) is not a "
                                            "porosity unit; it was taken as a fraction (v/v)")
    return phi, note


def _plug_transform(cw, train_mask, wm):
    """The transform fitted on the training plugs' core porosity and permeability, applied to log porosity."""
    if cw.porosity is None:
        return None, "the core table has no porosity: no core poro-perm transform"
    phi_core = np.where(train_mask, cw.log.curve(cw.porosity), np.nan)
    k = np.where(train_mask, cw.log.curve(cw.target), np.nan)
    phi_log, note = _log_porosity(cw, wm.input_names[0])
    if wm.log_target:
        ppt = PorosityPermeabilityTransform().fit_log10(phi_core, wm._log.transform(k))
        return ppt.predict_log10(phi_log), note
    ppt = PorosityPermeabilityTransform(floor_mD=wm.floor_mD).fit(phi_core, k)
    return ppt.predict(phi_log), note


def baseline_predictions(cw, split, wm, *, log_perm_curve: str | None = "KLOGH") -> tuple:
    """Every baseline's prediction per sample of ``cw.log``, in ``wm``'s units (log10 mD with ``log_target``).

    ``wm`` is a :class:`~glassformer.wells.WellModel` whose scalers and baselines were fitted on
    the training plugs (its tree ensembles among them when ``wm.tree_baselines``).  Returns
    ``(predictions, seconds, notes)``: dict name -> (n_samples,),
    dict name -> fit time in s, and list of notes (a baseline that could not be made, and why).
    """
    notes = []
    own = wm.predict_baselines(cw.log)
    preds = {name: p for name, p in own.items() if name not in BASELINE_NAMES}          # the tree ensembles
    seconds = {name: wm.fit_seconds_.get(name, 0.0) for name in preds}
    t0 = time.perf_counter()
    plug_fit, note = _plug_transform(cw, split.masks["train"], wm)
    seconds[PLUG_TRANSFORM] = time.perf_counter() - t0
    notes += [note] if note else []
    if plug_fit is not None:
        preds[PLUG_TRANSFORM] = plug_fit
    preds[LOG_TRANSFORM] = own[BASELINE_NAMES[0]]
    seconds[LOG_TRANSFORM] = wm.fit_seconds_.get(BASELINE_NAMES[0], 0.0)
    if log_perm_curve:
        if str(log_perm_curve).upper() in cw.log.curves:
            k = np.asarray(cw.log.curve(log_perm_curve), dtype=np.float64)
            preds[log_perm_name(log_perm_curve)] = wm._log.transform(k) if wm.log_target else k
            seconds[log_perm_name(log_perm_curve)] = 0.0
        else:
            notes.append(f"the log has no {log_perm_curve}: no log-derived permeability to compare with")
    preds[MEAN] = own[BASELINE_NAMES[1]]
    seconds[MEAN] = wm.fit_seconds_.get(BASELINE_NAMES[1], 0.0)
    return preds, seconds, notes


def score_roles(y: np.ndarray, preds: dict, masks: dict) -> dict:
    """``{role: {model: {"rmse", "mae", "r2", "n"}}}`` at the plugs of each role where every model predicts.

    Parameters
    ----------
    y : (n_samples,) observed target in model units, NaN where no plug.
    preds : dict model -> (n_samples,)
    masks : dict role -> bool (n_samples,)
    """
    every = np.isfinite(y)
    for p in preds.values():
        every &= np.isfinite(p)
    out = {}
    for role, mask in masks.items():
        use = mask & every
        out[role] = {name: (regression_metrics(y[use], p[use]) if use.sum() >= 2 else
                            {"rmse": None, "mae": None, "r2": None, "n": int(use.sum())})
                     for name, p in preds.items()}
    return out
