"""Learning permeability from core plugs: a complete run folder, scored at held-out plugs.

:func:`run_plugs_experiment` is what ``glassformer train --core`` runs:

1. match the core depths to the log per core run and merge the plugs onto the log grid
   (:func:`~glassformer.wells.plugs_split.prepare_cored_well`);
2. split the plugs by whole cores (or depth intervals) into train, validation and test;
3. train a deep ensemble of transformers on the log inputs with the sparse core target (NaN
   between plugs, masked out of the loss), early-stopped on the validation plugs; optionally a
   second ensemble pretrained on a log-derived permeability (KLOGH) over several wells and
   fine-tuned on the core;
4. calibrate each ensemble's P10-P90 interval on the validation plugs (split-conformal, with the
   nonconformity score of lowest cross-conformal interval score there, :mod:`.plugs_uncertainty`);
5. score every model and baseline at the test plugs only, and the interval's coverage, mean width
   and interval score there, beside quantile gradient boosting conformalized on the same
   validation plugs, per core run and per depth zone too;
6. write the folder: the chosen ensemble (``ensemble/``, ``model/``), metrics, predictions,
   figures and the report.

:class:`PlugsExperiment` is this run as an experiment of :mod:`glassformer.runs.protocol`: steps 1-2
are its check, the members of both ensembles its tasks (on any engine, the serial engine's
numbers), steps 4-6 its collect; :func:`~glassformer.runs.write_run_folder` writes the folder.

The settings are fixed before the test plugs are looked at: the transformer's defaults, the
split rule (:data:`~glassformer.wells.plugs_split.DEFAULT_CYCLE` unless cores are named), the
baselines' settings (:func:`glassformer.wells.baselines.make_baselines`); the variant saved for
``glassformer predict`` is the one with the lower validation RMSE.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..reporting import say
from ..runs import RunResult, run_experiment
from .baselines import MEAN
from .ensemble import assemble_ensemble, fit_member, member_seeds, member_tasks
from .evaluation import regression_metrics
from .model import WellModel
from .plugs_report import coverage_summary, plugs_figures, summary_lines, verdict_lines
from .plugs_scoring import baseline_predictions, log_perm_name, score_roles
from .plugs_split import masked_target, prepare_cored_well, split_plugs
from .plugs_uncertainty import interval_tables, recalibrate
from .tree_baselines import TREE_BASELINE_NAMES
from .uncertainty import QUANTILE_BASELINE

__all__ = ["FINETUNED", "PlugsExperiment", "TRANSFORMER", "run_plugs_experiment"]

TRANSFORMER = "transformer"
FINETUNED = "transformer, pretrained + fine-tuned"
ROLES = ("train", "validation", "test")


class PlugsExperiment:
    """Learn permeability from the core plugs of one cored well; see :func:`run_plugs_experiment`.

    Parameters are those of :func:`run_plugs_experiment` (without ``out`` and ``engine``).  The tasks
    are the members of the core-only ensemble and, with ``pretrain_logs``, those of the pretrained
    + fine-tuned one (each pretrains then fine-tunes in one task), all
    :func:`~glassformer.wells.ensemble.fit_member`.
    """

    task = staticmethod(fit_member)

    def __init__(self, log, plugs, wm: WellModel, *, match_curve="PHIF", shifts="estimate", shift_window: float = 2.0,
                 min_plugs: int = 10, tolerance=None, test_cores=None, validation_cores=None, test_depth=None,
                 validation_depth=None, n_members: int = 5, seeds=None, pretrain_logs=(),
                 log_perm_curve: str | None = "KLOGH", pretrain_epochs: int = 10,
                 title: str = "glassformer train, core permeability", config: dict | None = None,
                 attribution: str | None = None, reference_shifts: dict | None = None):
        self.log = log
        self.plugs = plugs
        self.wm = wm
        self.match_curve = match_curve
        self.shifts = shifts
        self.shift_window = shift_window
        self.min_plugs = min_plugs
        self.tolerance = tolerance
        self.test_cores = test_cores
        self.validation_cores = validation_cores
        self.test_depth = test_depth
        self.validation_depth = validation_depth
        self.n_members = n_members
        self.seeds = seeds
        self.pretrain_logs = pretrain_logs
        self.log_perm_curve = log_perm_curve
        self.pretrain_epochs = pretrain_epochs
        self.title = title
        self.config = config
        self.attribution = attribution
        self.reference_shifts = reference_shifts

    def check(self) -> None:
        """Check the settings, match, merge and split the plugs: every error is raised here, before any file."""
        self.started_ = time.perf_counter()
        self.wm.check_params()
        self.seeds_ = member_seeds(self.n_members) if self.seeds is None else [int(s) for s in self.seeds]
        self.cw_ = prepare_cored_well(self.log, self.plugs, match_curve=self.match_curve, shifts=self.shifts,
                                      shift_window=self.shift_window, min_plugs=self.min_plugs,
                                      tolerance=self.tolerance)
        self.wm_ = _plugs_model(self.wm, self.cw_.target)
        self.split_ = split_plugs(self.cw_, self.wm_.input_names, test_cores=self.test_cores,
                                  validation_cores=self.validation_cores, test_depth=self.test_depth,
                                  validation_depth=self.validation_depth)

    def tasks(self, out) -> list:
        """The members' tasks: ``out/ensembles/core`` and, with pretraining logs, ``out/ensembles/pretrained``."""
        cw, split, curve, k = self.cw_, self.split_, self.log_perm_curve, len(self.seeds_)
        _say_data(cw, split)
        self.logs_ = {role: split.log_for(cw, role) for role in ROLES}
        fit, val = [self.logs_["train"]], [self.logs_["validation"]]
        say(f"training {k} transformers on the core plugs ...")
        wm, tasks, _ = member_tasks(self.wm_, fit, val, folder=out / "ensembles" / "core", seeds=self.seeds_)
        self.variants_ = {TRANSFORMER: (wm, out / "ensembles" / "core", None)}
        if self.pretrain_logs:
            pre = [*self.pretrain_logs, _without_held_out(cw, split, curve)]
            say(f"pretraining {k} transformers on {str(curve).upper()} over {len(pre)} well(s), "
                "then fine-tuning them on the core plugs ...")
            folder = out / "ensembles" / "pretrained"
            wm_pre, pre_tasks, described = member_tasks(self.wm_, fit, val, folder=folder, seeds=self.seeds_,
                                                        pretrain_logs=pre, pretrain_target=curve,
                                                        pretrain_epochs=self.pretrain_epochs)
            self.variants_[FINETUNED] = (wm_pre, folder, described)
            tasks += pre_tasks
        return tasks

    def collect(self, results, out) -> RunResult:
        """Both ensembles calibrated, every model scored at the test plugs; the chosen one saved for predict."""
        cw, split, k = self.cw_, self.split_, len(self.seeds_)
        ensembles, seconds = {}, {}
        for i, (name, (wm, folder, pretrained)) in enumerate(self.variants_.items()):
            mine = results[i * k:(i + 1) * k]
            ensembles[name] = assemble_ensemble(wm, mine, seeds=self.seeds_, folder=folder,
                                                validation_logs=[self.logs_["validation"]], pretrained=pretrained)
            seconds[name] = float(sum(r["seconds"] + (r["pretrained"]["seconds"] if "pretrained" in r else 0.0)
                                      for r in mine))
        first = ensembles[TRANSFORMER].first
        curve = self.log_perm_curve
        t0 = time.perf_counter()
        baselines, base_seconds, notes = baseline_predictions(cw, split, first, log_perm_curve=curve)
        seconds.update(base_seconds)
        seconds["baselines (all)"] = time.perf_counter() - t0
        members = {name: ens.predict_members(cw.log) for name, ens in ensembles.items()}      # (K, n) each
        y = first.target_values(cw.log)
        choice = {name: recalibrate(ens, members[name], y, split.masks) for name, ens in ensembles.items()}
        quantiles = {name: {"calibrated": ens.predict_quantiles(cw.log, members=members[name]),
                            "uncalibrated": ens.predict_quantiles(cw.log, members=members[name], calibrated=False)}
                     for name, ens in ensembles.items()}
        preds = {**{name: q["calibrated"]["P50"] for name, q in quantiles.items()}, **baselines}
        scores = score_roles(y, preds, split.masks)
        coverage = {name: coverage_summary(y, q, split.masks, ensembles[name]) for name, q in quantiles.items()}
        tables, qbase = interval_tables(cw, split, first, ensembles, members, y, seed=int(first.model_.random_state))
        selected = min(ensembles, key=lambda n: scores["validation"][n]["rmse"])
        ensembles[selected].save(out / "ensemble")
        ensembles[selected].first.save(out / "model", overwrite=True)
        metrics = _metrics(self.title, cw, split, self.wm_, scores, coverage, ensembles, members, y, preds, seconds,
                           selected, notes, self.attribution)
        metrics.update(tables, calibration_choice=choice)
        metrics["seconds_total"] = time.perf_counter() - self.started_
        figures, extra = plugs_figures(cw, split, first, quantiles, coverage, ensembles[selected], selected,
                                       baselines.get(log_perm_name(curve)) if curve else None,
                                       log_perm_name(curve) if curve else None, self.reference_shifts, self.title)
        frame = _frame(cw, split, first, preds, {**quantiles, QUANTILE_BASELINE: {
            "calibrated": qbase, "uncalibrated": {"P10": qbase["P10_raw"], "P90": qbase["P90_raw"]}}})
        return RunResult(metrics=metrics, config=_config(self.title, cw, split, ensembles, curve, self.config,
                                                         self.attribution),
                         predictions=frame, tables=summary_lines(metrics), figures=figures, extra_figures=extra)


def run_plugs_experiment(out, log, plugs, wm: WellModel, *, match_curve="PHIF", shifts="estimate",
                         shift_window: float = 2.0, min_plugs: int = 10, tolerance=None, test_cores=None,
                         validation_cores=None, test_depth=None, validation_depth=None, n_members: int = 5,
                         seeds=None, pretrain_logs=(), log_perm_curve: str | None = "KLOGH",
                         pretrain_epochs: int = 10, engine=None, title: str = "glassformer train, core permeability",
                         config: dict | None = None, attribution: str | None = None,
                         overwrite: bool = True, report: bool = True, reference_shifts: dict | None = None) -> dict:
    """Train on core plugs, score at held-out plugs beside the baselines, and write a run folder.

    Parameters
    ----------
    out : the run folder (created; refused when non-empty unless ``overwrite``).
    log : WellLog holding the inputs (and ``log_perm_curve``) of the cored well.
    plugs : PlugTable with the core permeability (mD) and, for depth matching, core porosity.
    wm : WellModel whose ``target`` is ignored (the core permeability column is the target);
        its inputs, window, ``log_target`` and transformer settings are used.
    match_curve, shifts, shift_window, min_plugs, tolerance : see :func:`prepare_cored_well`.
    test_cores, validation_cores, test_depth, validation_depth : see :func:`split_plugs`.
    n_members : ensemble size K (at least 2).
    pretrain_logs : WellLog list of other wells with ``log_perm_curve``; when given, a second
        ensemble is pretrained on that curve over them and the cored well (outside the held-out
        cores) and fine-tuned on the core.
    engine : a :mod:`glassformer.parallel` engine for the members (default serial; every engine
        gives the serial engine's numbers).
    reference_shifts : run -> published shift, drawn on the depth-matching figure.

    Returns
    -------
    dict, as written to ``metrics.json``.

    Raises
    ------
    DataFileError, DepthError, InputError, CurveNotFoundError
        From reading, matching, merging and splitting (see those functions), before ``out`` is created.
    """
    experiment = PlugsExperiment(log, plugs, wm, match_curve=match_curve, shifts=shifts, shift_window=shift_window,
                                 min_plugs=min_plugs, tolerance=tolerance, test_cores=test_cores,
                                 validation_cores=validation_cores, test_depth=test_depth,
                                 validation_depth=validation_depth, n_members=n_members, seeds=seeds,
                                 pretrain_logs=pretrain_logs, log_perm_curve=log_perm_curve,
                                 pretrain_epochs=pretrain_epochs, title=title, config=config, attribution=attribution,
                                 reference_shifts=reference_shifts)
    return run_experiment(experiment, out, engine=engine, overwrite=overwrite, report=report)


def _plugs_model(wm: WellModel, target: str) -> WellModel:
    """An unfitted copy of ``wm`` (same specification, no LSTM) that learns the core permeability curve ``target``."""
    return clone(wm).set_params(target=target, lstm=None)


def _say_data(cw, split) -> None:
    if cw.match is not None:
        say(str(cw.match))
    say(str(cw.on_log.report))
    for note in cw.notes:
        say(f"note: {note}")
    say(f"plugs ({split.rule}): " + "; ".join(f"{role} {split.describe(role)}" for role in ROLES))


def _without_held_out(cw, split, curve: str):
    """The cored log for pretraining: ``curve`` blanked over each validation and test core's depth span.

    The log-derived curve may have been calibrated on these very cores; blanking their spans keeps
    every trace of the held-out plugs out of training.
    """
    keep = np.ones(len(cw.log), dtype=bool)
    labels = cw.run_of_sample
    for role in ("validation", "test"):
        for run in split.cores[role]:
            d = cw.log.depth[split.masks[role] & np.array([lab == run for lab in labels])]
            keep &= ~((cw.log.depth >= d.min()) & (cw.log.depth <= d.max()))
    return masked_target(cw.log, str(curve).upper(), keep)


def _member_rmse(y, members, mask) -> list:
    return [regression_metrics(y[mask], m[mask])["rmse"] for m in members]


def _metrics(title, cw, split, wm, scores, coverage, ensembles, members, y, preds, seconds, selected, notes,
             attribution) -> dict:
    unit = "log10 mD" if wm.log_target else "mD"
    every = np.isfinite(y) & np.all([np.isfinite(p) for p in preds.values()], axis=0)
    params = {name: int(ens.first.model_.network_.num_parameters()) for name, ens in ensembles.items()}
    params.update({"core poro-perm transform": 2, "log poro-perm transform": 2, "training mean": 1})
    table = {name: {**m, "parameters": params.get(name), "train_s": seconds.get(name)}
             for name, m in scores["test"].items()}
    metrics = {
        "title": title,
        "units": {"rmse": unit, "mae": unit, "r2": "dimensionless", "train_s": "s"},
        "comparison": {"split": f"held-out {split.describe('test')}", "models": list(ensembles), "table": table,
                       "note": (f"Scored only at plug depths: the {split.counts()['test']} test plugs where every "
                                "model has a prediction. The transformers' values are their ensembles' P50 (mean of "
                                f"{len(next(iter(ensembles.values())))} members). train_s: wall-clock fit time on this "
                                "machine (ensembles: all members; pretrained: pretraining included). The settings "
                                "are fixed in code (the transformer's defaults, the seeds, the split rule, the tree "
                                "settings), not chosen on these plugs; the ensemble saved for predict is the one with "
                                "the lower validation RMSE.")},
        "validation_table": scores["validation"],
        "train_table": scores["train"],
        "coverage": coverage,
        "members": {name: {"seeds": ens.info.get("seeds"), "test_rmse": _member_rmse(
            y, members[name], split.masks["test"] & every)} for name, ens in ensembles.items()},
        "selected": {"model": selected, "by": "lowest validation RMSE"},
        "split": split.to_dict(),
        "depth_shifts": None if cw.match is None else cw.match.to_dict(),
        "merge": cw.on_log.report.to_dict(),
        "seconds": seconds,
    }
    metrics["verdict"] = verdict_lines(metrics)
    if notes or cw.notes:
        metrics["notes"] = [*cw.notes, *notes]
    if attribution:
        metrics["attribution"] = attribution
    return metrics


def _config(title, cw, split, ensembles, curve, config, attribution) -> dict:
    first = next(iter(ensembles.values()))
    cfg = {"title": title, "well_model": first.first.to_dict(), "model": first.first.model_.get_params(),
           "ensemble": {"members": len(first), "seeds": first.info.get("seeds")},
           "core": {"source": cw.table.source, "columns": cw.table.columns, "porosity_unit_read":
                    cw.table.porosity_unit_read, "depth_unit": cw.table.depth_unit},
           "train_wells": [{"name": cw.log.name, "source": cw.log.source}], "split": split.to_dict(),
           "log_permeability_curve": curve,
           "baselines": {name: text for name, text in first.first.baseline_settings().items()
                         if name in (*TREE_BASELINE_NAMES, MEAN)}}
    pre = ensembles.get(FINETUNED)
    if pre is not None:
        cfg["pretraining"] = {k: v for k, v in pre.info["pretrained"].items() if k != "members"}
    cfg.update(config or {})
    if attribution:
        cfg["attribution"] = attribution
    return cfg


def _frame(cw, split, wm, preds, quantiles):
    """predictions.csv: one row per log sample; the plug's core run and role; every model; P10/P50/P90."""
    unit = "log10_mD" if wm.log_target else "mD"
    role = np.full(len(cw.log), "", dtype=object)
    for r in ROLES:
        role[split.masks[r]] = r
    frame = {"well": cw.log.name, "depth": cw.log.depth, "core_run": [("" if v is None else str(v))
                                                                      for v in cw.run_of_sample], "role": role}
    for m in wm.input_names:
        frame[m] = cw.log.curve(m)
    frame[f"{cw.target}_observed_{unit}"] = wm.target_values(cw.log)
    for name, p in preds.items():
        frame[f"{_column(name)}_{unit}"] = p
    for name, q in quantiles.items():
        for key in ("P10", "P50", "P90"):
            frame[f"{_column(name)}_{key}_{unit}"] = q["calibrated"][key]
        for key in ("P10", "P90"):
            frame[f"{_column(name)}_{key}_uncalibrated_{unit}"] = q["uncalibrated"][key]
    return pd.DataFrame(frame)


def _column(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_").replace("__", "_")
