"""The model a blind-well cross-validation recommends, and the held-out score of that choice (nested CV).

Choosing the model with the lowest RMSE in the cross-validation table and quoting that RMSE flatters
the choice: the held-out wells chose it.  The honest score of the *procedure* "pick the model of
lowest blind-well RMSE" is nested cross-validation (Varma and Simon 2006; Hastie, Tibshirani and
Friedman 2009, section 7.10.2): inside each outer fold the same choice is made on inner folds of the
outer fold's training wells alone -- every model, the transformer and the LSTM included, fitted again
on each inner fold's training wells and scored on its held-out well -- and the model chosen there is
scored on the outer fold's held-out wells, which took no part in the choice.

The recommended model is the procedure applied to every well (the lowest mean RMSE of the outer
table); its expected error on a new well is the nested score.

Cost: each outer fold also runs its inner folds, each a full fit of every model.  With ``W`` wells
left out one at a time that is ``W + W (W - 1) = W²`` fold fits instead of ``W`` (9 instead of 3 for
three wells); with ``K`` grouped folds up to ``K + K²``.  The inner tasks are ordinary fold tasks
(:func:`~glassformer.wells.cv.run_fold`), so they run on the same engine as the outer folds.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .cv import cv_folds, cv_tasks, summarise_folds

__all__ = ["inner_tasks", "nested_choice"]


def inner_tasks(logs, spec: dict, seeds, n_folds: int | None = None, members: int = 1) -> list:
    """The inner fold tasks of every outer fold: :func:`~glassformer.wells.cv.cv_tasks` over the outer
    fold's training wells (leave one well out, or ``min(n_folds, wells)`` grouped folds), each task
    marked with its outer fold (``"outer"``, 1-based).

    Raises
    ------
    InputError
        An outer fold with fewer than two training wells (nothing to choose on: three wells at least).
    """
    tasks = []
    for k, (train, _) in enumerate(cv_folds(logs, n_folds)):
        if len(train) < 2:
            raise InputError(f"choosing a model on inner folds needs at least 2 training wells in every fold; fold "
                             f"{k + 1} has {len(train)} (give 3 wells or more)")
        inner = None if n_folds is None else min(int(n_folds), len(train))
        tasks += [{**t, "outer": k + 1} for t in cv_tasks([logs[i] for i in train], spec, seeds, inner, members)]
    return tasks


def _mean_sd(values) -> tuple:
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), (float(v.std(ddof=1)) if v.size > 1 else None)


def nested_choice(outer: list, tasks: list, results: list, table: dict, *, target_col: str, unit_suffix: str,
                  unit: str) -> dict:
    """The recommendation of a cross-validation from its outer and inner fold results.

    Parameters
    ----------
    outer : the outer folds' results (:func:`~glassformer.wells.cv.run_fold`).
    tasks, results : the inner tasks (:func:`inner_tasks`) and their results, in the same order.
    table : the outer comparison table (``{model: {"rmse", ...}}``): the choice on every well.
    target_col, unit_suffix : as :func:`~glassformer.wells.cv.summarise_folds`; ``unit``: for the text.

    Returns
    -------
    dict
        ``{"model": the recommended model, "rmse": its mean blind-well RMSE in the table,
        "held_out_rmse", "held_out_rmse_sd": the nested score (mean and sample sd over outer folds),
        "per_fold": [{"fold", "test_wells", "chosen", "inner_rmse": {model: rmse}, "held_out_rmse"}],
        "method", "text"}``.
    """
    per_fold = []
    for k in sorted({r["fold"] for r in outer}):
        inner = [r for t, r in zip(tasks, results) if t["outer"] == k]
        scores = summarise_folds(inner, target_col=target_col, unit_suffix=unit_suffix)["table"]
        inner_rmse = {m: row["rmse"] for m, row in scores.items() if row["rmse"] is not None}
        chosen = min(inner_rmse, key=inner_rmse.get)            # the first in table order on a tie
        runs = [r for r in outer if r["fold"] == k]
        held_out = float(np.mean([r["fold_metrics"][chosen]["rmse"] for r in runs]))   # mean over seeds
        per_fold.append({"fold": k, "test_wells": runs[0]["test_wells"], "chosen": chosen,
                         "inner_rmse": inner_rmse, "held_out_rmse": held_out})
    mean, sd = _mean_sd([f["held_out_rmse"] for f in per_fold])
    rmse = {m: row["rmse"] for m, row in table.items() if row.get("rmse") is not None}
    best = min(rmse, key=rmse.get)
    spread = f" ± {sd:.3f}" if sd is not None else ""
    chosen = {f["chosen"] for f in per_fold}
    folds = "; ".join(f"held out {', '.join(f['test_wells'])}: "
                      + (f"the {f['chosen']}, " if len(chosen) > 1 else "") + f"{f['held_out_rmse']:.3f}"
                      for f in per_fold)
    if len(chosen) == 1:
        folds = f"every fold chose the {next(iter(chosen))}; {folds}"
    text = (f"Recommended model: the {best}, the lowest mean blind-well RMSE over the {len(per_fold)} folds "
            f"({rmse[best]:.3f} {unit}). That minimum was picked on the held-out wells themselves; made the same way "
            f"inside each fold -- on inner folds of its training wells only, every model refitted -- the choice "
            f"scored {mean:.3f}{spread} {unit} on wells it never saw ({folds}). Expect about {mean:.3f} {unit} "
            "on a new well.")
    return {"model": best, "rmse": rmse[best], "held_out_rmse": mean, "held_out_rmse_sd": sd, "per_fold": per_fold,
            "method": "nested cross-validation: the model of lowest mean RMSE over inner folds of each outer fold's "
                      "training wells, scored on the outer fold's held-out wells",
            "text": text}
