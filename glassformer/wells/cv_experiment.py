"""A cross-validation run folder: the folds' tables, figures and report (``glassformer cv``).

:class:`CrossValidation` is the experiment (:mod:`glassformer.runs.protocol`): its tasks are the
(fold, seed) pairs of :func:`~glassformer.wells.cv.cv_tasks`, each run by
:func:`~glassformer.wells.cv.run_fold` on any engine, and its result is written by the one run-folder
writer.  :class:`CvRequest` is what the command line asks for; :func:`run_cv` validates it, reads the
wells and runs the experiment.

The folder holds ``metrics.json`` (the table of mean ± sd across folds, one record per (fold,
held-out well, model), the per-well and pooled metrics, the folds), ``config.json`` (every
setting, the wells and the curves used), ``predictions.csv`` (every held-out depth, one column
per model), ``figures/per_well.png`` and one ``figures/blind_well_<well>.png`` per well, and
``report.html``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from .. import plots
from ..data.volve import ATTRIBUTION, is_volve
from ..errors import InputError
from ..models import LSTMRegressor, SequenceRegressor
from ..parallel import make_engine
from ..reporting import say, warn
from ..runs import RunResult, check_out_folder, file_slug, run_experiment
from .blind_well_figures import blind_well_figures
from .checks import logs_target_unit
from .cv import cv_folds, cv_tasks, fold_lines, run_fold, summarise_folds
from .cv_recommend import inner_tasks, nested_choice
from .member_mean import DEFAULT_MEMBERS
from .evaluation import COLUMN
from .experiment import DEPTH_FIGURE_MODELS, seed_list, with_comparison_settings
from .model import WellModel
from .requests import EngineRequest, ReadingRequest, TransformerRequest, WellsRequest
from .splits import span_warnings, validation_span
from .tables import format_comparison_table, format_per_well_table, verdict
from .train_job import read_dataset

__all__ = ["CrossValidation", "CvRequest", "cross_validate", "run_cv"]


class CrossValidation:
    """Blind-well cross-validation of an unfitted :class:`WellModel` over one log per well (an experiment).

    Parameters
    ----------
    logs : list of WellLog
        One per well, cut to its interval (names must differ).
    wm : WellModel
        Its settings are used in every fold (copied, never fitted itself).
    n_folds : int or None
        None for leave-one-well-out, else the number of grouped folds (whole wells).
    seeds : sequence of int
        Each fold is run once per seed; records average over seeds.
    members : int, default 5
        The transformer of each fold and seed is the mean of this many members trained side by side from
        their own seeds (:func:`~glassformer.wells.experiment.member_seed_blocks`); 1: a single fit.
    recommend : bool, default False
        Also choose a model by nested cross-validation and score that choice on the held-out wells
        (:mod:`glassformer.wells.cv_recommend`; with ``W`` wells, ``W²`` fold fits instead of ``W``).
    title, config, attribution : the run's title, further settings for ``config.json``, the data's credit.
    """

    task = staticmethod(run_fold)

    def __init__(self, logs, wm, *, n_folds: int | None = None, seeds=(42,), members: int = DEFAULT_MEMBERS,
                 title: str | None = None, config: dict | None = None, attribution: str | None = None,
                 recommend: bool = False):
        self.logs = logs
        self.wm = wm
        self.n_folds = n_folds
        self.seeds = seeds
        self.members = members
        self.title = title
        self.config = config
        self.attribution = attribution
        self.recommend = recommend

    @property
    def scheme(self) -> str:
        return "leave one well out" if self.n_folds is None else f"{self.n_folds} grouped folds (whole wells)"

    @property
    def title_text(self) -> str:
        return self.title or f"Blind-well cross-validation ({self.scheme}) over {len(self.logs)} wells"

    def check(self) -> None:
        """Refuse two wells of one name, fewer than two wells and a bad ``n_folds`` before any file is written."""
        names = [g.name for g in self.logs]
        if len(set(names)) < len(names):
            raise InputError(f"cross-validation holds out whole wells: list each well once, under distinct names "
                             f"(got {', '.join(names)})")
        cv_folds(self.logs, self.n_folds)
        if self.recommend:
            inner_tasks(self.logs, {}, (), self.n_folds)        # three wells at least

    def tasks(self, out: Path) -> list:
        """One task per (fold, seed), as plain data (:func:`~glassformer.wells.cv.cv_tasks`), then, to
        recommend a model, every outer fold's inner fold tasks."""
        self.started_ = time.perf_counter()
        say(f"{self.title_text}: {', '.join(g.name for g in self.logs)}")
        self.tasks_ = cv_tasks(self.logs, self.wm.spec(), self.seeds, self.n_folds, self.members)
        self.inner_ = (inner_tasks(self.logs, self.wm.spec(), self.seeds, self.n_folds, self.members)
                       if self.recommend else [])
        if self.inner_:
            say(f"  and {len(self.inner_)} inner fold task(s) to choose a model inside each fold")
        return [*self.tasks_, *self.inner_]

    def collect(self, results: list, out: Path) -> RunResult:
        """The tables, predictions, figures and warnings of the folds' results."""
        wm = self.wm
        results, inner = results[:len(self.tasks_)], results[len(self.tasks_):]
        for line in fold_lines(self.tasks_, results):
            say(line)
        say(f"  {len(results) + len(inner)} fold task(s) in {time.perf_counter() - self.started_:.1f} s")
        unit_suffix = "log10_mD" if wm.log_target else "mD"
        summary = summarise_folds(results, target_col=f"{wm.target_name}_observed_{unit_suffix}",
                                  unit_suffix=unit_suffix)
        unit = logs_target_unit(self.logs, wm.target_name, log10=wm.log_target)     # as the files state it
        metrics = _metrics(summary, wm, self.title_text, self.scheme, list(self.seeds), self.attribution, unit,
                           self.tasks_[0]["members"])
        metrics["validation_span"] = _spans(self.logs, wm, self.n_folds)
        if self.recommend:
            metrics["recommendation"] = nested_choice(results, self.inner_, inner, summary["table"],
                                                      target_col=f"{wm.target_name}_observed_{unit_suffix}",
                                                      unit_suffix=unit_suffix, unit=unit)
        metrics["seconds"] = time.perf_counter() - self.started_
        first = [r for r in results if r["seed"] == results[0]["seed"]]
        rows = pd.concat([pd.DataFrame(r["rows"]) for r in first], ignore_index=True)
        say(f"Cross-validation took {metrics['seconds']:.0f} s")
        warnings = [f"{fold}: {line}" for fold, span in metrics["validation_span"].items() for line in span["warnings"]]
        warnings += [f"held out {', '.join(r['test_wells'])}: {line}"     # the blocks are the same for every seed
                     for r in first for line in (r["validation"] or {}).get("small_data") or []]
        config = _config(wm, self.title_text, self.logs, self.seeds, self.n_folds, self.config, self.attribution)
        config["transformer_members"] = {str(t["seed"]): t["members"] for t in self.tasks_ if t["fold"] == 1}
        if self.recommend:
            config["recommend"] = metrics["recommendation"]["method"]
        return RunResult(
            metrics=metrics, predictions=rows, warnings=warnings, config=config,
            tables=[format_comparison_table(metrics, unit),
                    format_per_well_table(summary["per_well"], unit, title=f"RMSE per held-out well ({unit})"),
                    metrics["verdict"], *([metrics["recommendation"]["text"]] if self.recommend else [])],
            extra_figures=_figures(summary, rows, wm, self.logs, self.title_text))


def cross_validate(out, logs, wm, *, n_folds: int | None = None, seeds=(42,), members: int = DEFAULT_MEMBERS,
                   engine=None, title: str | None = None, config: dict | None = None, attribution: str | None = None,
                   overwrite: bool = True, report: bool = True, recommend: bool = False) -> dict:
    """Blind-well cross-validation of ``wm`` (unfitted) over ``logs`` (one per well, cut to its interval).

    Parameters
    ----------
    out : run folder to write
    logs : WellLog list, one per well (names must differ)
    wm : WellModel, its settings used in every fold (copied, never fitted itself)
    n_folds : None for leave-one-well-out, else the number of grouped folds
    seeds : each fold is run once per seed; records average over seeds
    members : the transformer is the mean of this many members per fold and seed (default 5; 1: a single fit)
    engine : a :mod:`glassformer.parallel` engine mapping the (fold, seed) tasks (default serial)
    recommend : also recommend a model chosen by nested cross-validation, with the held-out score of that
        choice (``metrics["recommendation"]``; with ``W`` wells ``W²`` fold fits instead of ``W``)

    Returns
    -------
    dict, as written to ``metrics.json``.

    Raises
    ------
    InputError
        Fewer than two wells, two wells of one name, or a bad ``n_folds``; fewer than three wells
        with ``recommend``.
    """
    experiment = CrossValidation(logs, wm, n_folds=n_folds, seeds=seeds, members=members, title=title, config=config,
                                 attribution=attribution, recommend=recommend)
    return run_experiment(experiment, out, engine=engine, overwrite=overwrite, report=report)


# --------------------------------------------------------------------------- the command's request
@dataclass(frozen=True)
class CvRequest:
    """``glassformer cv``: blind-well cross-validation of the transformer beside every baseline.

    Attributes
    ----------
    inputs : tuple of str
        Input curve names (the first is taken as porosity by the porosity-permeability transform).
    target : str
        Target curve name.
    out : str
        The run folder.
    log_target : bool
        Model log10 of the target (permeability in mD).
    n_folds : int or None
        Grouped folds over whole wells; None: leave one well out.
    n_seeds : int
        Seeds per fold (42, 0, 1, ...).
    members : int
        Transformer members per fold and seed, their predictions averaged (1: a single fit).
    hidden_size : int
        LSTM hidden size per direction; ``lstm``: train the LSTM too.
    recommend : bool
        Also recommend a model chosen on inner folds, with its held-out score (nested CV, ``W²`` fold fits).
    wells : WellsRequest
        ``data`` / ``manifest`` name the wells (every one is held out once), ``train_depth`` their
        intervals, ``validation_split`` the networks' early stopping.
    """

    inputs: tuple
    target: str
    out: str
    log_target: bool = False
    n_folds: int | None = None
    n_seeds: int = 1
    members: int = DEFAULT_MEMBERS
    hidden_size: int = 16
    lstm: bool = True
    recommend: bool = False
    wells: WellsRequest = field(default_factory=WellsRequest)
    reading: ReadingRequest = field(default_factory=ReadingRequest)
    transformer: TransformerRequest = field(default_factory=lambda: TransformerRequest(progress=False))
    engine: EngineRequest = field(default_factory=EngineRequest)
    overwrite: bool = False

    @classmethod
    def from_options(cls, params: Mapping[str, Any]) -> "CvRequest":
        """The request of ``glassformer cv``'s option values (click's ``ctx.params``)."""
        own = ("log_target", "n_folds", "n_seeds", "members", "hidden_size", "lstm", "recommend", "overwrite")
        plain = {k: params[k] for k in own if k in params}
        return cls(inputs=tuple(params["inputs"]), target=params["target"], out=str(params["out"]), **plain,
                   wells=WellsRequest.pick(params), reading=ReadingRequest.pick(params),
                   transformer=TransformerRequest.pick(params), engine=EngineRequest.pick(params))

    def well_model(self) -> WellModel:
        """The unfitted well model every fold copies; its settings checked by the estimators themselves."""
        t = self.transformer
        model = SequenceRegressor(d_model=t.d_model, num_heads=t.heads, num_layers=t.layers, lr=t.lr, epochs=t.epochs,
                                  progress=t.progress)
        lstm = LSTMRegressor(hidden_size=self.hidden_size, lr=t.lr, epochs=t.epochs, progress=t.progress)
        return WellModel(list(self.inputs), self.target, log_target=self.log_target, window=t.window,
                         stride=t.stride, validation=self.wells.validation_split, model=model,
                         lstm=lstm if self.lstm else None).check_params()


def run_cv(request: CvRequest) -> dict:
    """Validate ``request``, read its wells and cross-validate (``glassformer cv``); returns the metrics.

    Raises
    ------
    InputError
        A non-empty ``out`` without ``overwrite``, no wells, a well shorter than the window, bad model
        settings (named by the estimator), fewer than two wells, a bad fold count -- all before the
        folder is created.
    DataFileError, CurveNotFoundError, DepthError
        A well that cannot be read or lacks a curve (see :func:`~glassformer.wells.build_dataset`).
    """
    check_out_folder(request.out, overwrite=request.overwrite)
    wells, window = request.wells, request.transformer.window
    if not wells.data and not wells.manifest:
        raise InputError("cv needs the wells: --data FILE (repeat it) or --manifest FILE")
    wm = request.well_model()
    ds = read_dataset(wells, request.reading, inputs=list(request.inputs), target=request.target, window=None)
    logs = [*ds.train, *ds.val, *ds.test]
    too_short = [g.name for g in logs if len(g) < window]
    if too_short:
        raise InputError(f"--window {window}: longer than the interval of {', '.join(too_short)}")
    t = request.transformer
    config = {"data": [str(p) for p in wells.data], "manifest": wells.manifest, "depth": list(wells.train_depth),
              "aliases": list(wells.aliases), "curves_used": ds.curves_used, "epochs": t.epochs,
              "transformer": {"d_model": t.d_model, "num_heads": t.heads, "num_layers": t.layers, "lr": t.lr}}
    with make_engine(jobs=request.engine.jobs, scheduler=request.engine.scheduler) as engine:
        return cross_validate(request.out, logs, wm, n_folds=request.n_folds, seeds=seed_list(request.n_seeds),
                              members=request.members, engine=engine, config=config, overwrite=True, recommend=request.recommend,
                              attribution=ATTRIBUTION if any(map(is_volve, logs)) else None)


# --------------------------------------------------------------------------- the result's parts
def _metrics(summary: dict, wm, title: str, scheme: str, seeds: list, attribution, unit: str, members: list) -> dict:
    n_folds = len(summary["folds"])
    where = f"held-out wells ({scheme})"
    metrics = {
        "title": title,
        "description": (f"Blind-well cross-validation ({scheme}): in each of {n_folds} folds every model -- the "
                        "transformer, the bidirectional LSTM, random forest and gradient boosting with and without "
                        "depth context, the porosity-permeability transform and the training mean -- was fitted on "
                        "the training wells only and scored on wells it never saw. "
                        + (f"The transformer is the mean of {len(members)} members trained from their own seeds. "
                           if len(members) > 1 else "")
                        + "Early stopping of the networks "
                        + (f"watched the deepest {100 * wm.validation_fraction:g} % of each training well."
                           if wm.validation == "deepest" else "watched the training loss.")),
        "units": {"rmse": unit, "mae": unit, "r2": "dimensionless", "rmse_sd": unit, "mae_sd": unit,
                  "train_s": "s", "train_s_sd": "s"},
        "comparison": {"split": where, "seeds": seeds, "members": len(members), "folds": n_folds, "spread": "folds",
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


def _figures(summary, rows, wm, logs, title) -> dict:
    """Figure name -> drawing function: RMSE per held-out well, each blind well against depth, and its tracks
    (inputs, one per model, residuals), zooms where the observed target varies most and cross-plots."""
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
        extra[f"blind_well_{file_slug(g.name)}"] = against_depth(g)
        extra.update(blind_well_figures(rows, g.name, input_names=wm.input_names, target_name=wm.target_name,
                                        unit=ucol.replace("_", " "), depth_unit=g.depth_unit,   # names columns
                                        input_units={m: g.units.get(m) for m in wm.input_names}))
    return extra


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
