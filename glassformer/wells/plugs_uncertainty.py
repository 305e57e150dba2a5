"""The intervals of a run on core plugs: the sharper calibration chosen on validation, the quantile baseline,
the tables.

Used by :func:`~glassformer.wells.run_plugs_experiment` once its ensembles are trained:

* :func:`recalibrate` compares the calibrations of :data:`~glassformer.wells.uncertainty.CALIBRATIONS`
  on the validation plugs (cross-conformal interval score, contiguous folds in depth order) and
  calibrates the ensemble with the best one;
* :func:`interval_tables` scores every interval -- each ensemble under each calibration (the
  chosen one marked), and quantile gradient boosting conformalized by CQR on the same
  validation plugs -- by coverage, mean width and interval score on the validation and test
  plugs, and the chosen ones per core run and per depth zone (:data:`ZONE`-thick depth bins,
  counted from a multiple of :data:`ZONE`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from .intervals import NOMINAL, ConformalScale
from .tree_baselines import context_features
from .uncertainty import CALIBRATIONS, QUANTILE_BASELINE, choose_calibration, interval_summary, quantile_baseline, \
    summaries_by_group

__all__ = ["ZONE", "interval_tables", "recalibrate"]

#: Thickness of the depth zones the coverage is broken down by (log depth unit).
ZONE = 10.0


def _mean_sd(members: np.ndarray) -> tuple:
    return members.mean(axis=0), members.std(axis=0, ddof=1)          # (n_samples,) each


def recalibrate(ens, members: np.ndarray, y: np.ndarray, masks: dict) -> dict:
    """Calibrate ``ens`` with the score of lowest cross-conformal interval score on the validation plugs.

    Parameters
    ----------
    ens : DeepEnsemble (its calibration is replaced, and its ``ensemble.json`` rewritten).
    members : (n_members, n_samples) the members' predictions over the log.
    y : (n_samples,) the core target in model units (NaN between plugs).
    masks : role -> bool (n_samples,).

    Returns
    -------
    dict ``{"chosen", "floor", "cv_interval_score": {score: value}, "folds"}``.
    """
    mean, sd = _mean_sd(members)
    floor = float(np.nanmedian(sd[masks["train"]]))                  # the spread where it was trained
    val = masks["validation"] & np.isfinite(y) & np.isfinite(mean)
    try:
        chosen, scores = choose_calibration(y[val], mean[val], sd[val], floor=floor)
    except InputError:                                               # too few plugs for five folds
        chosen, scores = "normalised", {}
    ens.calibration = ConformalScale(NOMINAL, chosen, floor).fit(y[val], mean[val], sd[val])
    if ens.folders:
        ens.save(Path(ens.folders[0]).parent)
    return {"chosen": chosen, "floor": floor, "cv_interval_score": scores, "folds": 5,
            "by": ("lowest mean interval score, cross-conformal over 5 contiguous folds of the validation plugs"
                   if scores else "too few validation plugs to compare calibrations: the normalised score")}


def _intervals(ensembles, members, y, masks) -> dict:
    """name -> (lower, upper) for every ensemble under every calibration, fitted on the validation plugs."""
    out = {}
    for name, ens in ensembles.items():
        mean, sd = _mean_sd(members[name])
        val = masks["validation"] & np.isfinite(y) & np.isfinite(mean)
        floor = ens.calibration.floor if ens.calibration is not None else 0.0
        for score in CALIBRATIONS:
            cal = ConformalScale(NOMINAL, score, floor).fit(y[val], mean[val], sd[val])
            out[(name, score)] = cal.interval(mean, sd)
    return out


def interval_tables(cw, split, wm, ensembles: dict, members: dict, y: np.ndarray, seed: int) -> tuple:
    """Scores of every interval, and the chosen ones by core run and depth zone.

    Returns
    -------
    (tables, baseline)
        ``tables``: ``{"interval_scores": {role: {row: summary}}, "coverage_by_core": {row: {run: summary}},
        "coverage_by_zone": {row: {zone: summary}}}``, every row scored at the same plugs (those
        where every interval has both bounds), where a summary is
        :func:`~glassformer.wells.uncertainty.interval_summary`'s; ``baseline``: the quantile
        baseline's P10/P50/P90 over the log (see :func:`~glassformer.wells.uncertainty.quantile_baseline`).
    """
    masks = split.masks
    feats = context_features(cw.log, wm.input_names)                  # (n, n_inputs * 9)
    base = quantile_baseline(feats, y, masks["train"], masks["validation"], seed=seed)
    rows = {}
    for (name, score), bounds in _intervals(ensembles, members, y, masks).items():
        chosen = ensembles[name].calibration is not None and ensembles[name].calibration.score == score
        rows[f"{name}, {score}{' (chosen)' if chosen else ''}"] = bounds
    rows[QUANTILE_BASELINE] = (base["P10"], base["P90"])
    rows["quantile gradient boosting, uncalibrated"] = (base["P10_raw"], base["P90_raw"])
    every = np.all([np.isfinite(lo) & np.isfinite(hi) for lo, hi in rows.values()], axis=0)   # (n,) same plugs
    table = {role: {row: interval_summary(np.where(masks[role] & every, y, np.nan), lo, hi)
                    for row, (lo, hi) in rows.items()} for role in ("validation", "test")}
    held = (masks["validation"] | masks["test"]) & every
    runs = np.array(["" if r is None else f"core {r}" for r in cw.run_of_sample], dtype=object)
    zone_top = np.floor(cw.log.depth / ZONE) * ZONE
    zones = np.array([f"{t:g}-{t + ZONE:g} {cw.log.depth_unit}" for t in zone_top], dtype=object)
    roles = np.full(len(y), "", dtype=object)
    for role in ("validation", "test"):
        roles[masks[role]] = role
    shown = [r for r in rows if r.endswith("(chosen)")] + [QUANTILE_BASELINE]
    yy = np.where(held, y, np.nan)
    by_core = {row: {f"{k} ({_role_of(roles, runs, k)})": v
                     for k, v in summaries_by_group(yy, *rows[row], np.where(held, runs, "")).items()} for row in shown}
    by_zone = {row: summaries_by_group(yy, *rows[row], np.where(held, zones, "")) for row in shown}
    return {"interval_scores": table, "coverage_by_core": by_core, "coverage_by_zone": by_zone}, base


def _role_of(roles, runs, run) -> str:
    return "/".join(sorted({str(r) for r in roles[(runs == run) & (roles != "")]}))
