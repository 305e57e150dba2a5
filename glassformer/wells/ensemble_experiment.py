"""A deep ensemble on a log target (e.g. KLOGH), calibrated on validation data, scored on held-out wells.

:func:`run_ensemble_experiment` is ``glassformer train --ensemble K`` without ``--core``: K
transformers from different seeds on the training logs, early-stopped on and calibrated with the
validation data (whole wells, or a depth interval of the training wells taken out of training),
then the P50 scored beside the baselines and the P10-P90 interval's coverage measured on the
test logs (a blind well, or a forecast interval), before and after calibration.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from .. import plots
from ..errors import InputError
from ..models import run_config_defaults
from ..report import write_report
from ..runs import prepare_run_dir, write_csv, write_figures, write_json
from .plugs_experiment import summary_lines
from .plugs_report import _coverage_figure, coverage_summary, verdict_lines
from .plugs_scoring import score_roles
from .plugs_split import masked_target
from .ensemble import fit_ensemble
from .baselines import BLEND, blend
from .evaluation import COLUMN
from .model import WellModel
from .recommend import recommendation

__all__ = ["run_ensemble_experiment"]


def _validation(train_logs, whole_logs, validation_wells, validation_depth, target):
    """Training logs with the validation interval's targets blanked, and the validation logs."""
    if validation_depth is None:
        return list(train_logs), list(validation_wells)
    top, base = validation_depth
    fit, val = [], list(validation_wells)
    for g, whole in zip(train_logs, whole_logs or train_logs):
        inside = (g.depth >= top) & (g.depth <= base)
        fit.append(masked_target(g, target, ~inside))
        part = whole.interval(top, base) if (whole.depth >= top).any() and (whole.depth <= base).any() else None
        if part is not None and np.isfinite(part.curve(target)).any():
            val.append(part)
    if not val:
        raise InputError(f"--validation-depth {top:g}:{base:g} holds no {target} value in the training wells")
    return fit, val


def _predict(ens, wm, logs, role):
    """Concatenated arrays over ``logs``: y, member quantiles (calibrated/uncalibrated), baselines, rows."""
    parts = []
    for g in logs:
        members = ens.predict_members(g)                                            # (K, n)
        q = {"calibrated": ens.predict_quantiles(g, members=members),
             "uncalibrated": ens.predict_quantiles(g, members=members, calibrated=False)}
        base = wm.predict_baselines(g)
        mixed = blend({"transformer": q["calibrated"]["P50"], **base})      # the ensemble's P50 and the trees
        if mixed is not None:
            base[BLEND] = mixed
        parts.append((g, wm.target_values(g), q, base))
    y = np.concatenate([p[1] for p in parts])
    q = {k: {key: np.concatenate([p[2][k][key] for p in parts]) for key in parts[0][2][k]}
         for k in ("calibrated", "uncalibrated")}
    preds = {"transformer": q["calibrated"]["P50"],
             **{name: np.concatenate([p[3][name] for p in parts]) for name in parts[0][3]}}
    unit = "log10_mD" if wm.log_target else "mD"
    rows = pd.concat([pd.DataFrame({"well": g.name, "split": role, "depth": g.depth,
                                    **{m: g.curve(m) for m in wm.input_names},
                                    f"{wm.target_name}_observed_{unit}": yy,
                                    **{f"transformer_{k}_{unit}": qq["calibrated"][k] for k in ("P10", "P50", "P90")},
                                    **{f"{COLUMN.get(n, n.replace(' ', '_'))}_{unit}": v for n, v in b.items()}})
                      for g, yy, qq, b in parts], ignore_index=True)
    return y, q, preds, rows


def run_ensemble_experiment(out, train_logs, test_logs, wm: WellModel, *, n_members: int = 5, seeds=None,
                            validation_wells=(), validation_depth=None, whole_logs=None, boundary=None, engine=None,
                            title: str = "glassformer train, deep ensemble", echo=print, config: dict | None = None,
                            attribution: str | None = None, overwrite: bool = True, report: bool = True) -> dict:
    """Train a calibrated deep ensemble on ``train_logs`` and measure it on ``test_logs``; write a run folder.

    Parameters
    ----------
    train_logs, test_logs : WellLog lists cut to their intervals.
    wm : WellModel (unfitted), its transformer's settings shared by every member.
    validation_wells : WellLog list of whole validation wells, and/or
    validation_depth : (top, base) of the training wells, whose targets are then left out of training.
    whole_logs : the training wells uncut (the validation interval may lie outside the training one).

    Returns
    -------
    dict, as written to ``metrics.json``: ``comparison`` (P50 beside the transform, the mean and the
    tree ensembles on the test logs) and ``coverage`` (P10-P90 before and after calibration).

    Raises
    ------
    InputError
        No validation data, or a validation interval without target values.
    """
    t_start = time.perf_counter()
    fit_logs, val_logs = _validation(train_logs, whole_logs, validation_wells, validation_depth, wm.target_name)
    out = prepare_run_dir(out, overwrite=overwrite)         # once the validation data are known to be usable
    echo(f"training {n_members} transformers ...")
    ens = fit_ensemble(wm, fit_logs, val_logs, folder=out / "ensembles" / "log", n_members=n_members, seeds=seeds,
                       engine=engine)
    ens.save(out / "ensemble")
    first = ens.first
    first.save(out / "model", overwrite=True)
    yv, qv, pv, _ = _predict(ens, first, val_logs, "validation")
    yt, qt, pt, rows = _predict(ens, first, test_logs, "test")
    y = np.concatenate([yv, yt])
    masks = {"validation": np.r_[np.isfinite(yv), np.zeros(yt.size, bool)],
             "test": np.r_[np.zeros(yv.size, bool), np.isfinite(yt)]}
    q = {k: {key: np.r_[qv[k][key], qt[k][key]] for key in qt[k]} for k in qt}
    scores = score_roles(yt, pt, {"test": np.isfinite(yt)})
    seconds = {**{k: v for k, v in first.fit_seconds_.items() if k != "transformer"},
               "transformer": float(sum(m["seconds"] for m in ens.info["members"]))}
    if "gradient boosting" in seconds:
        seconds[BLEND] = seconds["transformer"] + seconds["gradient boosting"]
    metrics = _metrics(title, wm, ens, scores, coverage_summary(y, q, masks, ens), seconds, test_logs, attribution)
    validated = score_roles(yv, pv, {"validation": np.isfinite(yv)})["validation"]
    where = " and ".join([*(["the validation wells " + ", ".join(g.name for g in validation_wells)]
                            if validation_wells else []),
                          *([f"the interval {validation_depth[0]:g}-{validation_depth[1]:g} of the training wells"]
                            if validation_depth is not None else [])])
    metrics["recommendation"] = recommendation({n: m["rmse"] for n, m in validated.items()}, where,
                                               "log10 mD" if wm.log_target else "mD")
    metrics["seconds_total"] = time.perf_counter() - t_start
    write_json(out / "metrics.json", metrics)
    write_json(out / "config.json", {"title": title, "well_model": first.to_dict(), "model": first.model_.get_params(),
                                     "baselines": first.baseline_settings(),
                                     "ensemble": {"members": len(ens), "seeds": ens.info["seeds"]},
                                     "train_wells": [g.name for g in train_logs],
                                     "validation_wells": [g.name for g in val_logs],
                                     "test_wells": [g.name for g in test_logs], **(config or {})})
    write_csv(out / "predictions.csv", rows)
    _figures(out, ens, test_logs[0], rows, metrics, boundary, title)
    for line in summary_lines(metrics):
        echo(line)
    echo(metrics["recommendation"]["text"])
    if report:
        write_report(out, run_config_defaults())
    return metrics


def _metrics(title, wm, ens, scores, coverage, seconds, test_logs, attribution) -> dict:
    unit = "log10 mD" if wm.log_target else "mD"
    n = scores["test"]["transformer"]["n"]
    where = f"test wells {', '.join(g.name for g in test_logs)} ({n} depths)"
    table = {name: {**m, "train_s": seconds.get(name)} for name, m in scores["test"].items()}
    metrics = {"title": title, "units": {"rmse": unit, "mae": unit, "r2": "dimensionless", "train_s": "s"},
               "comparison": {"split": where, "models": ["transformer"], "table": table,
                              "note": f"The transformer's values are its ensemble's P50 (mean of {len(ens)} members); "
                                      "every model is scored on the same depths."},
               "coverage": {"transformer": coverage}, "seconds": seconds,
               "members": {"seeds": ens.info["seeds"], "training": [m["training"] for m in ens.info["members"]]}}
    metrics["verdict"] = verdict_lines(metrics)
    if attribution:
        metrics["attribution"] = attribution
    return metrics


def _figures(out, ens, show, rows, metrics, boundary, title) -> None:
    unit = "log10_mD" if ens.first.log_target else "mD"
    same = rows[rows["well"] == show.name]

    def band():
        return plots.plot_interval_vs_depth(
            same["depth"].to_numpy(), *(same[f"transformer_{k}_{unit}"].to_numpy() for k in ("P10", "P50", "P90")),
            observed=same[f"{ens.first.target_name}_observed_{unit}"].to_numpy(), quantity=ens.first.target_name,
            unit=unit.replace("_", " "), depth_unit=show.depth_unit, title=f"{title}: {show.name}, calibrated P10-P90")

    write_figures(out, history=ens.first.model_.history_, depth_unit=show.depth_unit, title=title,
                  extra={"interval_vs_depth": band,
                         "coverage": lambda: _coverage_figure(metrics["coverage"], title, "test data")})
