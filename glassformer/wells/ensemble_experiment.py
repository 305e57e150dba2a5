"""A deep ensemble on a log target (e.g. KLOGH), calibrated on validation data, scored on held-out wells.

:func:`run_ensemble_experiment` is ``glassformer train --ensemble K`` without ``--core``: K
transformers from different seeds on the training logs, early-stopped on and calibrated with the
validation data (whole wells, or a depth interval of the training wells taken out of training),
then the P50 scored beside the baselines and the P10-P90 interval's coverage measured on the
test logs (a blind well, or a forecast interval), before and after calibration.

:class:`EnsembleExperiment` is the run as an experiment of :mod:`glassformer.runs.protocol`: its
tasks are the members (:func:`~glassformer.wells.ensemble.fit_member`), so any engine trains them.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from .. import plots
from ..errors import InputError
from ..reporting import say
from ..runs import RunResult, run_experiment
from .baselines import BLEND, blend
from .checks import short_run_warnings
from .ensemble import assemble_ensemble, fit_member, member_seeds, member_tasks
from .evaluation import COLUMN
from .model import WellModel
from .plugs_report import _coverage_figure, coverage_summary, summary_lines, verdict_lines
from .plugs_scoring import score_roles
from .plugs_split import masked_target
from .recommend import recommendation

__all__ = ["EnsembleExperiment", "run_ensemble_experiment"]

MEMBERS_FOLDER = ("ensembles", "log")


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


class EnsembleExperiment:
    """K transformers on a log target, calibrated on validation data and measured on test logs.

    Parameters
    ----------
    train_logs, test_logs : WellLog lists cut to their intervals.
    wm : WellModel (unfitted), its transformer's settings shared by every member.
    n_members : int, default 5
        K, at least 2.
    seeds : list of int, optional (default :func:`~glassformer.wells.ensemble.member_seeds`).
    validation_wells : WellLog list of whole validation wells, and/or
    validation_depth : (top, base) of the training wells, whose targets are then left out of training.
    whole_logs : the training wells uncut (the validation interval may lie outside the training one).
    title, config, attribution : written to config.json and metrics.json (the title on the figures too).
    """

    task = staticmethod(fit_member)

    def __init__(self, train_logs, test_logs, wm: WellModel, *, n_members: int = 5, seeds=None, validation_wells=(),
                 validation_depth=None, whole_logs=None, title: str = "glassformer train, deep ensemble",
                 config: dict | None = None, attribution: str | None = None):
        self.train_logs = train_logs
        self.test_logs = test_logs
        self.wm = wm
        self.n_members = n_members
        self.seeds = seeds
        self.validation_wells = validation_wells
        self.validation_depth = validation_depth
        self.whole_logs = whole_logs
        self.title = title
        self.config = config
        self.attribution = attribution

    def check(self) -> None:
        """Refuse bad settings, fewer than 2 members, or a validation interval without target values."""
        self.started_ = time.perf_counter()
        self.wm.check_params()
        self.seeds_ = member_seeds(self.n_members) if self.seeds is None else [int(s) for s in self.seeds]
        self.fit_logs_, self.val_logs_ = _validation(self.train_logs, self.whole_logs, self.validation_wells,
                                                     self.validation_depth, self.wm.target_name)

    def tasks(self, out) -> list:
        """One :func:`~glassformer.wells.ensemble.fit_member` task per seed (members in ``out/ensembles/log``)."""
        say(f"training {len(self.seeds_)} transformers ...")
        self.prepared_, tasks, _ = member_tasks(self.wm, self.fit_logs_, self.val_logs_,
                                                folder=out.joinpath(*MEMBERS_FOLDER), seeds=self.seeds_)
        return tasks

    def collect(self, results, out) -> RunResult:
        """The calibrated ensemble (saved as ``ensemble/`` and ``model/``) scored on the test logs."""
        ens = assemble_ensemble(self.prepared_, results, seeds=self.seeds_, folder=out.joinpath(*MEMBERS_FOLDER),
                                validation_logs=self.val_logs_)
        ens.save(out / "ensemble")
        first = ens.first
        first.save(out / "model", overwrite=True)
        val_logs, test_logs, wm = self.val_logs_, self.test_logs, self.wm
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
        metrics = _metrics(self.title, wm, ens, scores, coverage_summary(y, q, masks, ens), seconds, test_logs,
                           self.attribution)
        validated = score_roles(yv, pv, {"validation": np.isfinite(yv)})["validation"]
        # validation wells, or the deepest blocks of the training wells: each named with its depths
        where = " and ".join([*(["the validation data " + ", ".join(f"{g.name} {g.depth[0]:g}-{g.depth[-1]:g} "
                                                                   f"{g.depth_unit}" for g in self.validation_wells)]
                                if self.validation_wells else []),
                              *([f"the interval {self.validation_depth[0]:g}-{self.validation_depth[1]:g} of the "
                                 "training wells"] if self.validation_depth is not None else [])])
        metrics["recommendation"] = recommendation({n: m["rmse"] for n, m in validated.items()}, where,
                                                   "log10 mD" if wm.log_target else "mD", out)
        metrics["seconds_total"] = time.perf_counter() - self.started_
        # test wells scored with windows shorter than the model's, as predict warns of them
        short = [w for g in test_logs for w in short_run_warnings(g, first.input_names, first.window)]
        if short:
            metrics["note"] = " ".join(f"{line}." for line in short)
        config = {"title": self.title, "well_model": first.to_dict(), "model": first.model_.get_params(),
                  "baselines": first.baseline_settings(),
                  "ensemble": {"members": len(ens), "seeds": ens.info["seeds"]},
                  "train_wells": [g.name for g in self.train_logs], "validation_wells": [g.name for g in val_logs],
                  "test_wells": [g.name for g in test_logs], **(self.config or {})}
        show = test_logs[0]
        return RunResult(metrics=metrics, config=config, predictions=rows, warnings=short,
                         tables=[*summary_lines(metrics), metrics["recommendation"]["text"]],
                         figures={"history": first.model_.history_, "depth_unit": show.depth_unit,
                                  "title": self.title},
                         extra_figures=_figures(ens, show, rows, metrics, self.title))


def run_ensemble_experiment(out, train_logs, test_logs, wm: WellModel, *, n_members: int = 5, seeds=None,
                            validation_wells=(), validation_depth=None, whole_logs=None, engine=None,
                            title: str = "glassformer train, deep ensemble", config: dict | None = None,
                            attribution: str | None = None, overwrite: bool = True, report: bool = True) -> dict:
    """Train a calibrated deep ensemble on ``train_logs`` and measure it on ``test_logs``; write a run folder.

    Parameters
    ----------
    out : the run folder.
    train_logs, test_logs, wm, n_members, seeds, validation_wells, validation_depth, whole_logs : see
        :class:`EnsembleExperiment`.
    engine : a :mod:`glassformer.parallel` engine for the members (default serial; every engine gives
        the serial engine's numbers).

    Returns
    -------
    dict, as written to ``metrics.json``: ``comparison`` (P50 beside the transform, the mean and the
    tree ensembles on the test logs) and ``coverage`` (P10-P90 before and after calibration).

    Raises
    ------
    InputError
        Fewer than 2 members, or a validation interval without target values (before ``out`` is created).
    """
    experiment = EnsembleExperiment(train_logs, test_logs, wm, n_members=n_members, seeds=seeds,
                                    validation_wells=validation_wells, validation_depth=validation_depth,
                                    whole_logs=whole_logs, title=title, config=config,
                                    attribution=attribution)
    return run_experiment(experiment, out, engine=engine, overwrite=overwrite, report=report)


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


def _figures(ens, show, rows, metrics, title) -> dict:
    """The calibrated P10-P90 against depth on the first test log, and the coverage curves."""
    unit = "log10_mD" if ens.first.log_target else "mD"
    same = rows[rows["well"] == show.name]

    def band():
        return plots.plot_interval_vs_depth(
            same["depth"].to_numpy(), *(same[f"transformer_{k}_{unit}"].to_numpy() for k in ("P10", "P50", "P90")),
            observed=same[f"{ens.first.target_name}_observed_{unit}"].to_numpy(), quantity=ens.first.target_name,
            unit=unit.replace("_", " "), depth_unit=show.depth_unit, title=f"{title}: {show.name}, calibrated P10-P90")

    return {"interval_vs_depth": band,
            "coverage": lambda: _coverage_figure(metrics["coverage"], title, "test data")}
