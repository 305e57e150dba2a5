"""Blind-well cross-validation: every well predicted by models that never saw it.

Neighbouring depths of one well are alike, so a depth split inside a well flatters every model;
the accepted test of a log model is a well it has never seen (leave-one-well-out, as in the
FORCE 2020 machine-learning competition's blind wells).  Folds are scikit-learn's
``LeaveOneGroupOut`` (default) or ``GroupKFold`` (``n_folds``, for many wells), with one group per
well, so a well is never split between training and test.

Each fold trains every model on its training wells only -- scalers, networks (early stopping on
the deepest 10 % of each training well), tree ensembles, transform and mean -- and scores each
held-out well on its own.  A fold is a task of plain data (:func:`run_fold`: the logs as arrays,
the settings as a dict, the seed), so any :mod:`glassformer.parallel` engine can map the folds and
returns what a serial run returns.

Metrics (RMSE, MAE, R², n; log10 mD for a logged permeability) are given per held-out well, per
fold, pooled over every held-out depth, and as mean and sample standard deviation across folds.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.model_selection import GroupKFold, LeaveOneGroupOut

from ..data import WellLog
from ..errors import InputError
from ..parallel import SerialEngine
from ..reporting import say
from .evaluation import COLUMN, evaluate_split, metrics_by_well, regression_metrics
from .member_fit import fit_with_members
from .model import WellModel, with_seed
from .seed_order import member_seed_blocks, seed_list

__all__ = ["cv_folds", "cv_tasks", "fold_lines", "log_from_item", "log_to_item", "member_seed_blocks", "run_fold",
           "run_folds", "summarise_folds"]


def log_to_item(log) -> dict:
    """A WellLog as plain data (arrays, strings) for a task."""
    return {"name": log.name, "depth": np.asarray(log.depth), "curves": dict(log.curves), "units": dict(log.units),
            "depth_unit": log.depth_unit, "source": log.source}


def log_from_item(item: dict):
    """The WellLog of :func:`log_to_item`."""
    return WellLog(**item)


def cv_folds(logs, n_folds: int | None = None) -> list:
    """``[(train_indices, test_indices)]`` over ``logs``: leave one well out, or ``n_folds`` grouped folds.

    ``GroupKFold`` balances the folds by number of samples; no well is ever split.

    Raises
    ------
    InputError
        Fewer than two wells, or ``n_folds`` outside 2..number of wells.
    """
    n = len(logs)
    if n < 2:
        raise InputError(f"cross-validation needs at least 2 wells, got {n}")
    if n_folds is not None and not 2 <= int(n_folds) <= n:
        raise InputError(f"--folds must be between 2 and the number of wells ({n}), got {n_folds}")
    groups = np.concatenate([np.full(len(g), i) for i, g in enumerate(logs)])
    splitter = LeaveOneGroupOut() if n_folds is None else GroupKFold(n_splits=int(n_folds))
    folds = []
    for train_rows, test_rows in splitter.split(np.zeros((len(groups), 1)), groups=groups):
        folds.append((sorted(set(groups[train_rows].tolist())), sorted(set(groups[test_rows].tolist()))))
    return folds


def cv_tasks(logs, settings: dict, seeds, n_folds: int | None = None, members: int = 1) -> list:
    """One task per (fold, seed): ``{"fold", "seed", "members", "train": [log items], "test": [log items],
    "settings"}``, ``settings`` being the well model's specification (:meth:`WellModel.spec`) and
    ``members`` the seeds of the transformer's members (:func:`member_seed_blocks`)."""
    items = [log_to_item(g) for g in logs]
    blocks = member_seed_blocks(seeds, members)
    return [{"fold": k + 1, "seed": int(seed), "members": blocks[int(seed)], "settings": settings,
             "train": [items[i] for i in tr], "test": [items[i] for i in te]}
            for k, (tr, te) in enumerate(cv_folds(logs, n_folds)) for seed in seeds]


def _well_model(spec: dict, seed: int):
    """The unfitted WellModel of ``spec`` (:meth:`WellModel.spec`) with every draw from ``seed``."""
    return with_seed(WellModel.from_spec(spec), seed)


def run_fold(task: dict) -> dict:
    """Fit every model on the fold's training wells and score each held-out well (a top-level task).

    Returns
    -------
    dict
        ``{"fold", "seed", "train_wells", "test_wells", "per_well": {well: {model: metrics}},
        "fold_metrics": {model: metrics over the fold's held-out depths}, "rows": predictions per
        depth (columns as lists), "parameters", "seconds", "validation", "epochs"}``.
    """
    train = [log_from_item(d) for d in task["train"]]
    test = [log_from_item(d) for d in task["test"]]
    wm = _well_model(task["settings"], task["seed"])
    fit_with_members(wm, train, task.get("members"))       # the transformer: the mean of the members' seeds
    rows, metrics = evaluate_split(wm, test, "test")
    rows.insert(0, "fold", task["fold"])
    return {"fold": task["fold"], "seed": task["seed"], "train_wells": [g.name for g in train],
            "test_wells": [g.name for g in test], "per_well": metrics_by_well(rows, wm, list(metrics)),
            "fold_metrics": metrics, "rows": rows.to_dict("list"), "parameters": wm.parameter_counts(),
            "seconds": dict(wm.fit_seconds_), "validation": wm.validation_,
            "epochs": {name: len(m.history_) for name, m in wm.models().items()}}


def _mean_sd(values) -> tuple:
    v = np.asarray([np.nan if x is None else float(x) for x in values], dtype=np.float64)
    v = v[np.isfinite(v)]
    if not v.size:
        return None, None
    return float(v.mean()), (float(v.std(ddof=1)) if v.size > 1 else None)


def _records(results, models) -> list:
    """One record per (fold, held-out well, model): metrics averaged over seeds (per-seed RMSE beside them)."""
    records = []
    folds = sorted({r["fold"] for r in results})
    for k in folds:
        runs = [r for r in results if r["fold"] == k]
        for well in runs[0]["per_well"]:
            for m in models:
                per_seed = [r["per_well"][well][m] for r in runs]
                rec = {"fold": k, "well": well, "model": m, "n": per_seed[0]["n"]}
                for key in ("rmse", "mae", "r2"):
                    rec[key] = _mean_sd([p[key] for p in per_seed])[0]
                rec["seeds"] = [r["seed"] for r in runs]
                if len(runs) > 1:
                    rec["rmse_per_seed"] = [p["rmse"] for p in per_seed]
                records.append(rec)
    return records


def _pooled(results, models, target_col: str, unit: str) -> dict:
    """Metrics over every held-out depth of every fold (per seed, then the mean over seeds)."""
    out = {}
    seeds = sorted({r["seed"] for r in results})
    frames = {s: pd.concat([pd.DataFrame(r["rows"]) for r in results if r["seed"] == s]) for s in seeds}
    for m in models:
        per = [regression_metrics(f[target_col], f[f"{COLUMN.get(m, m)}_{unit}"]) for f in frames.values()]
        out[m] = {k: _mean_sd([p[k] for p in per])[0] for k in ("rmse", "mae", "r2")}
        out[m]["n"] = per[0]["n"]
    return out


def summarise_folds(results: list, *, target_col: str, unit_suffix: str) -> dict:
    """The cross-validation's tables from the fold results of :func:`run_fold`.

    Returns
    -------
    dict
        ``{"table": {model: {"rmse", "rmse_sd", "mae", "mae_sd", "r2", "r2_sd", "n", "parameters",
        "train_s", "train_s_sd"}}`` (mean and sample sd across folds; ``n`` pooled),
        ``"records"``, ``"per_well"`` ({well: {model: metrics}}), ``"per_well_rmse"`` ({well: {model:
        rmse}}), ``"pooled"`` ({model: metrics over every held-out depth}), ``"folds"``}``.
    """
    models = list(results[0]["fold_metrics"])
    records = _records(results, models)
    table = {}
    for m in models:
        row = {}
        for key in ("rmse", "mae", "r2"):
            by_fold = [_mean_sd([r["fold_metrics"][m][key] for r in results if r["fold"] == k])[0]
                       for k in sorted({r["fold"] for r in results})]
            row[key], row[f"{key}_sd"] = _mean_sd(by_fold)
        row["train_s"], row["train_s_sd"] = _mean_sd([r["seconds"].get(m) for r in results])
        row["parameters"] = results[0]["parameters"].get(m)
        row["n"] = sum(r["fold_metrics"][m]["n"] for r in results if r["seed"] == results[0]["seed"])
        table[m] = row
    per_well = {}
    for rec in records:
        per_well.setdefault(rec["well"], {})[rec["model"]] = {k: rec[k] for k in ("rmse", "mae", "r2", "n")}
    folds = [{"fold": r["fold"], "test_wells": r["test_wells"], "train_wells": r["train_wells"],
              "validation": r["validation"]["method"], "epochs": r["epochs"]}
             for r in results if r["seed"] == results[0]["seed"]]
    return {"table": table, "records": records, "per_well": per_well,
            "per_well_rmse": {w: {m: v["rmse"] for m, v in d.items()} for w, d in per_well.items()},
            "pooled": _pooled(results, models, target_col, unit_suffix), "folds": folds}


def fold_lines(tasks, results) -> list:
    """One progress line per fold task: the held-out wells and the transformer's RMSE on each."""
    return [f"  fold {task['fold']} (seed {task['seed']}): held out {', '.join(result['test_wells'])}: "
            + ", ".join(f"{w} transformer RMSE {d['transformer']['rmse']:.3f}" for w, d in result["per_well"].items())
            for task, result in zip(tasks, results)]


def run_folds(tasks, engine=None) -> list:
    """Run the fold tasks on ``engine`` (default: one after another here) and say each fold's line;
    a failing fold raises."""
    t0 = time.perf_counter()
    results = (engine if engine is not None else SerialEngine()).map(run_fold, tasks)
    for line in fold_lines(tasks, results):
        say(line)
    say(f"  {len(tasks)} fold task(s) in {time.perf_counter() - t0:.1f} s")
    return results
