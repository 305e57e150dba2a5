"""How well-log predictions are scored: metrics per split, and their spread over seeds.

Every model is scored on the same depths: those where the observed target and the model's
prediction both exist.  Units are the target's (log10 mD for a logged permeability).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from .._validation import as_float_array
from ..errors import InputError, ShapeError
from .baselines import BLEND

__all__ = ["COLUMN", "evaluate_split", "metrics_by_well", "regression_metrics", "summarise_runs", "training_summary"]


def regression_metrics(y_true, y_pred) -> dict:
    """RMSE, MAE and R^2 over the pairs where neither value is NaN.

    Parameters
    ----------
    y_true, y_pred : arrays of the same shape
        Targets and predictions, in the same units (report which: mD or log10 mD).

    Returns
    -------
    dict
        ``{"rmse": float, "mae": float, "r2": float, "n": int}``; ``r2`` is NaN when fewer than
        two pairs remain, and follows scikit-learn's ``r2_score`` otherwise (1 - SS_res / SS_tot;
        for a constant ``y_true`` it is 1.0 for a perfect prediction, else 0.0).

    Raises
    ------
    ShapeError
        If the shapes differ.
    InputError
        If either holds inf (a diverged model should not be averaged away), or no pair is left.
    """
    where = "regression_metrics"
    t = as_float_array(y_true, "y_true", where, dtype=np.float64, allow_nan=True)
    p = as_float_array(y_pred, "y_pred", where, dtype=np.float64, allow_nan=True)
    if t.shape != p.shape:
        raise ShapeError(f"{where}: y_true has shape {t.shape} but y_pred has shape {p.shape}")
    use = ~(np.isnan(t) | np.isnan(p))
    n = int(use.sum())
    if n == 0:
        raise InputError(f"{where}: no position has both y_true and y_pred (all {t.size} pairs contain NaN)")
    t, p = t[use], p[use]
    return {
        "rmse": float(np.sqrt(mean_squared_error(t, p))),
        "mae": float(mean_absolute_error(t, p)),
        "r2": float(r2_score(t, p)) if n >= 2 else float("nan"),
        "n": n,
    }


#: Column stem of each model in predictions.csv.
COLUMN = {"transformer": "transformer", "LSTM": "lstm", "random forest": "random_forest",
          "random forest + context": "random_forest_context", "gradient boosting": "gradient_boosting",
          "gradient boosting + context": "gradient_boosting_context",
          "porosity-permeability transform": "poro_perm_transform", "training mean": "training_mean",
          BLEND: "transformer_boosting_blend"}


def evaluate_split(wm, logs, split: str):
    """Predict every log of a split with every model; return (rows for predictions.csv, metrics per model).

    ``wm`` is a fitted :class:`~glassformer.wells.WellModel`.  Models, in this order: the
    transformer, the LSTM (when ``wm`` has one), the baselines (the tree ensembles when fitted, the
    porosity-permeability transform, the training mean) and the blend of the transformer and the
    gradient boosting (when both exist).  Metrics pool every depth of every log of the split.
    """
    frames, truth, preds = [], [], {}
    unit = "log10_mD" if wm.log_target else "mD"
    for g in logs:
        y = wm.target_values(g)
        frame = {"well": g.name, "split": split, "depth": g.depth}
        for m in wm.input_names:
            frame[m] = g.curve(m)
        frame[f"{wm.target_name}_observed_{unit}"] = y
        outputs = wm.predict_all(g)
        for name, p in outputs.items():
            frame[f"{COLUMN.get(name, name)}_{unit}"] = p
            preds.setdefault(name, []).append(p)
        frames.append(pd.DataFrame(frame))
        truth.append(y)
    t = np.concatenate(truth)
    metrics = {name: _scores(t, np.concatenate(parts)) for name, parts in preds.items()}
    return pd.concat(frames, ignore_index=True), metrics


def _scores(t: np.ndarray, q: np.ndarray) -> dict:
    ok = np.isfinite(t) & np.isfinite(q)
    return regression_metrics(t[ok], q[ok]) if ok.sum() >= 2 else {"rmse": None, "mae": None, "r2": None,
                                                                    "n": int(ok.sum())}


def metrics_by_well(rows, wm, models) -> dict:
    """``{well: {model: {"rmse", "mae", "r2", "n"}}}`` from the rows :func:`evaluate_split` returned.

    Each well is scored on its own depths only (units as :func:`regression_metrics`); the pooled
    metrics of the split weight every depth of every well alike, so a long well dominates them.
    """
    unit = "log10_mD" if wm.log_target else "mD"
    truth = f"{wm.target_name}_observed_{unit}"
    out = {}
    for well, part in rows.groupby("well", sort=False):
        t = part[truth].to_numpy(dtype=np.float64)
        out[str(well)] = {name: _scores(t, part[f"{COLUMN.get(name, name)}_{unit}"].to_numpy(dtype=np.float64))
                          for name in models}
    return out


def summarise_runs(runs: list, split: str = "test") -> dict:
    """Mean and sample standard deviation over seeds of each model's metrics on ``split``.

    Parameters
    ----------
    runs : list of dict
        One per seed: ``{"seed", "metrics": {split: {model: {"rmse", "mae", "r2", "n"}}},
        "parameters": {model: int}, "seconds": {model: float}}``.

    Returns
    -------
    dict
        ``{"table": {model: {"rmse", "rmse_sd", "mae", "mae_sd", "r2", "r2_sd", "parameters",
        "train_s", "train_s_sd", "n"}}, "per_seed": {model: {"rmse": [...], ...}}}``; the ``_sd``
        entries are None for a single seed (no spread to report).
    """
    table, per_seed = {}, {}
    for name in runs[0]["metrics"][split]:
        cols = {"rmse": [], "mae": [], "r2": [], "train_s": []}
        for r in runs:
            m = r["metrics"][split][name]
            for k in ("rmse", "mae", "r2"):
                cols[k].append(np.nan if m[k] is None else float(m[k]))
            cols["train_s"].append(float(r["seconds"].get(name, np.nan)))
        row = {}
        for k, vals in cols.items():
            v = np.asarray(vals)
            row[k] = float(np.mean(v))
            row[f"{k}_sd"] = float(np.std(v, ddof=1)) if len(v) > 1 else None
        row["parameters"] = runs[0]["parameters"].get(name)
        row["n"] = runs[0]["metrics"][split][name]["n"]
        table[name] = {k: row[k] for k in ("rmse", "rmse_sd", "mae", "mae_sd", "r2", "r2_sd", "parameters",
                                           "train_s", "train_s_sd", "n")}
        per_seed[name] = {k: list(v) for k, v in cols.items()}
    return {"table": table, "per_seed": per_seed}


def training_summary(hist, n_windows: int) -> dict:
    """Epochs run, why training stopped, the best epoch, the last loss, windows and seconds of a history."""
    return {"epochs_run": len(hist), "stop_reason": hist.stop_reason, "best_epoch": hist.best_epoch,
            "final_train_loss": hist.train_loss[-1] if len(hist) else None, "n_train_windows": n_windows,
            "seconds": hist.seconds}
