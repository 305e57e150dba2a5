"""A cross-validation run folder: the folds' tables, figures and report (``glassformer cv``).

The folder holds ``metrics.json`` (the table of mean ± sd across folds, one record per (fold,
held-out well, model), the per-well and pooled metrics, the folds), ``config.json`` (every
setting, the wells and the curves used), ``predictions.csv`` (every held-out depth, one column
per model), ``figures/per_well.png`` and one ``figures/prediction_vs_depth_<well>.png`` per well,
and ``report.html``.
"""

from __future__ import annotations

import time
from typing import Callable

import pandas as pd

from .. import plots
from ..errors import InputError
from ..models import run_config_defaults
from ..report import write_report
from ..runs import prepare_run_dir, write_csv, write_figures, write_json
from .checks import logs_target_unit
from .cv import cv_folds, cv_tasks, run_folds, summarise_folds
from .evaluation import COLUMN
from .experiment import DEPTH_FIGURE_MODELS, _slug, with_comparison_settings
from .splits import span_warnings, validation_span
from .tables import format_comparison_table, format_per_well_table, verdict

__all__ = ["cross_validate"]


def cross_validate(out, logs, wm, *, n_folds: int | None = None, seeds=(42,), engine=None, title: str | None = None,
                   echo: Callable = print, config: dict | None = None, attribution: str | None = None,
                   overwrite: bool = True, report: bool = True) -> dict:
    """Blind-well cross-validation of ``wm`` (unfitted) over ``logs`` (one per well, cut to its interval).

    Parameters
    ----------
    out : run folder to write
    logs : WellLog list, one per well (names must differ)
    wm : WellModel, its settings used in every fold (copied, never fitted itself)
    n_folds : None for leave-one-well-out, else the number of grouped folds
    seeds : each fold is run once per seed; records average over seeds
    engine : a :mod:`glassformer.parallel` engine mapping the (fold, seed) tasks (default serial)

    Returns
    -------
    dict, as written to ``metrics.json``.

    Raises
    ------
    InputError
        Fewer than two wells, two wells of one name, or a bad ``n_folds``.
    """
    names = [g.name for g in logs]
    if len(set(names)) < len(names):
        raise InputError(f"cross-validation needs distinct well names, got {', '.join(names)}")
    cv_folds(logs, n_folds)                         # bad fold counts fail before the folder exists
    out = prepare_run_dir(out, overwrite=overwrite)
    t0 = time.perf_counter()
    scheme = "leave one well out" if n_folds is None else f"{n_folds} grouped folds (whole wells)"
    title = title or f"Blind-well cross-validation ({scheme}) over {len(logs)} wells"
    echo(f"{title}: {', '.join(names)}")
    tasks = cv_tasks(logs, wm.spec(), seeds, n_folds)
    results = run_folds(tasks, engine, echo)
    unit_suffix = "log10_mD" if wm.log_target else "mD"
    summary = summarise_folds(results, target_col=f"{wm.target_name}_observed_{unit_suffix}",
                              unit_suffix=unit_suffix)
    metrics = _metrics(summary, wm, title, scheme, list(seeds), attribution,
                       logs_target_unit(logs, wm.target_name, log10=wm.log_target))
    metrics["validation_span"] = _spans(logs, wm, n_folds)
    metrics["seconds"] = time.perf_counter() - t0
    write_json(out / "metrics.json", metrics)
    write_json(out / "config.json", _config(wm, title, logs, seeds, n_folds, config, attribution))
    first = [r for r in results if r["seed"] == results[0]["seed"]]
    rows = pd.concat([pd.DataFrame(r["rows"]) for r in first], ignore_index=True)
    write_csv(out / "predictions.csv", rows)
    _figures(out, summary, rows, wm, logs, title)
    unit = logs_target_unit(logs, wm.target_name, log10=wm.log_target)      # as the files state it
    echo(format_comparison_table(metrics, unit))
    echo(format_per_well_table(summary["per_well"], unit, title=f"RMSE per held-out well ({unit})"))
    echo(metrics["verdict"])
    for fold, span in metrics["validation_span"].items():
        for line in span["warnings"]:
            echo(f"warning: {fold}: {line}")
    for result in first:                        # the validation blocks are the same for every seed
        for line in (result["validation"] or {}).get("small_data") or []:
            echo(f"warning: held out {', '.join(result['test_wells'])}: {line}")
    echo(f"Cross-validation took {metrics['seconds']:.0f} s")
    if report:
        write_report(out, run_config_defaults())
    return metrics


def _metrics(summary: dict, wm, title: str, scheme: str, seeds: list, attribution, unit: str) -> dict:
    n_folds = len(summary["folds"])
    where = f"held-out wells ({scheme})"
    metrics = {
        "title": title,
        "description": (f"Blind-well cross-validation ({scheme}): in each of {n_folds} folds every model -- the "
                        "transformer, the bidirectional LSTM, random forest and gradient boosting with and without "
                        "depth context, the porosity-permeability transform and the training mean -- was fitted on "
                        "the training wells only and scored on wells it never saw. Early stopping of the networks "
                        + (f"watched the deepest {100 * wm.validation_fraction:g} % of each training well."
                           if wm.validation == "deepest" else "watched the training loss.")),
        "units": {"rmse": unit, "mae": unit, "r2": "dimensionless", "rmse_sd": unit, "mae_sd": unit,
                  "train_s": "s", "train_s_sd": "s"},
        "comparison": {"split": where, "seeds": seeds, "folds": n_folds, "spread": "folds",
                       "table": summary["table"],
                       "note": (f"Mean over the {n_folds} folds, sample sd across folds beside it; each fold trains "
                                "every model on its training wells only and scores wells it never saw. n counts every "
                                "held-out depth; parameters are those of the first fold (tree ensembles: leaves).")},
        "verdict": verdict(summary["table"], unit, f"blind wells ({scheme})"),
        "per_well_rmse": summary["per_well_rmse"],
        "per_well": summary["per_well"],
        "pooled": summary["pooled"],
        "records": summary["records"],
        "folds": summary["folds"],
    }
    if attribution:
        metrics["attribution"] = attribution
    return metrics


def _config(wm, title, logs, seeds, n_folds, config, attribution) -> dict:
    cfg = {"title": title, "command": "cv", "scheme": "LeaveOneGroupOut" if n_folds is None else
           f"GroupKFold(n_splits={n_folds})", "seeds": list(seeds), "well_model": _settings(wm),
           "model": (wm.model.get_params() if wm.model is not None else {}),
           "wells": [{"name": g.name, "source": g.source, "top": float(g.depth[0]), "base": float(g.depth[-1]),
                      "depth_unit": g.depth_unit} for g in logs],
           "validation": f"the deepest {100 * wm.validation_fraction:g} % of each training well (contiguous depth "
                         "blocks)" if wm.validation == "deepest" else "none (early stopping on the training loss)"}
    return with_comparison_settings(cfg, wm, wm.lstm, config, attribution)


def _settings(wm) -> dict:
    """The well model's specification without its estimators (the config holds those as ``model`` and ``lstm``)."""
    return {k: v for k, v in wm.spec().items() if k not in ("model", "lstm")}


def _figures(out, summary, rows, wm, logs, title) -> None:
    unit = logs_target_unit(logs, wm.target_name, log10=wm.log_target)
    ucol = "log10_mD" if wm.log_target else "mD"
    table = dict(summary["per_well_rmse"])
    comp = summary["table"]
    label = f"mean over {len(summary['folds'])} folds"
    table[label] = {m: r["rmse"] for m, r in comp.items()}
    spread = {label: {m: r["rmse_sd"] for m, r in comp.items()}}
    extra = {"per_well": lambda: plots.plot_metric_per_well(table, unit=unit, spread=spread,
                                                            title=f"{title}: RMSE per held-out well")}
    names = [m for m in DEPTH_FIGURE_MODELS if f"{COLUMN[m]}_{ucol}" in rows.columns]

    def against_depth(g):
        part = rows[rows["well"] == g.name].sort_values("depth")
        preds = {("poro-perm transform" if n.startswith("porosity") else n): part[f"{COLUMN[n]}_{ucol}"].to_numpy()
                 for n in names}
        return lambda: plots.plot_comparison_zoomed(part["depth"].to_numpy(),
                                                    part[f"{wm.target_name}_observed_{ucol}"].to_numpy(), preds,
                                                    quantity=wm.target_name, unit=unit, depth_unit=g.depth_unit,
                                                    title=f"{g.name} (held out)")
    for g in logs:
        extra[f"blind_well_{_slug(g.name)}"] = against_depth(g)
    write_figures(out, extra=extra)


def _spans(logs, wm, n_folds) -> dict:
    """Per fold (``"held out <wells>"``), how well the validation blocks span the training wells
    (:func:`~glassformer.wells.splits.validation_span`), with the warnings it gives."""
    out = {}
    for train, test in cv_folds(logs, n_folds):
        span = validation_span([logs[i] for i in train], [], [*wm.input_names, wm.target_name],
                               validation=wm.validation, fraction=wm.validation_fraction, window=wm.window)
        if span is not None:
            out["held out " + ", ".join(logs[i].name for i in test)] = {**span, "warnings": span_warnings(span)}
    return out
