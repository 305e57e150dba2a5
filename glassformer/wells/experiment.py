"""A well-log experiment, start to finish: fit on training logs once per seed, score every model on the
same split beside the baselines, and write a complete run folder (model, config, metrics,
predictions, figures, report).

:class:`WellExperiment` is the experiment (:mod:`glassformer.runs.protocol`): one
:func:`~glassformer.wells.seeds.fit_seed` task per seed, run on an engine (serially by default),
and a :meth:`~WellExperiment.collect` that turns the seeds' results into the run's
:class:`~glassformer.runs.RunResult`.  :func:`run_well_experiment` is what ``glassformer train``
and the well demos run; :func:`compare_wells` is ``glassformer compare`` (the transformer and a
bidirectional LSTM on identical windows, seeds and loop).  Every model sees the same windows,
scaling, split and seed; the settings are fixed before the test logs are looked at.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from sklearn.base import clone

from .. import plots
from ..errors import InputError
from ..models import LSTMRegressor, SequenceRegressor
from ..parallel import SerialEngine
from ..reporting import say
from ..runs import RunResult, file_slug, run_experiment
from .checks import short_run_warnings, target_unit
from .baselines import TRANSFORM
from .evaluation import COLUMN, metrics_by_well, summarise_runs, training_summary
from .model import WellModel, with_seed
from .recommend import recommend_model
from .seed_order import member_seed_blocks, seed_list
from .seeds import fit_seed, load_fitted, seed_tasks
from .splits import span_warnings, validation_span
from .tables import format_comparison_table, format_per_well_table, scored_on, the_split, verdict

__all__ = ["DEPTH_FIGURE_MODELS", "WellExperiment", "compare_wells", "member_seed_blocks", "run_well_experiment",
           "seed_list", "with_seed"]

#: The models drawn against depth (the tree ensembles without context are left out: eight lines hide each other).
DEPTH_FIGURE_MODELS = ("transformer", "LSTM", "random forest + context", "gradient boosting + context",
                       "porosity-permeability transform", "training mean")


class WellExperiment:
    """Fit a well model once per seed on the training logs and score it beside the baselines.

    Parameters
    ----------
    wm : WellModel
        Unfitted; each seed fits a copy (:func:`~glassformer.wells.with_seed`), never ``wm`` itself.
    train_logs, test_logs : list of WellLog
        Cut to their intervals.
    title : str
        What was run, in words users know (the report's title).
    seeds : list of int, optional
        One fit per seed (default: the transformer's ``random_state``).  ``metrics["comparison"]``
        holds mean and sample sd; predictions, figures and the run's ``model/`` are the first
        seed's, the others' models are in ``seeds/seed_<seed>/model``.
    val_logs : list of WellLog
        Validation logs for the networks' early stopping (default: ``wm.validation`` decides).
    callbacks : sequence
        Training-loop callbacks of the first seed's transformer (checkpoints, resume): objects of
        this process, so the experiment then runs on the serial engine only.
    boundary : float, optional
        Depth drawn between training and forecast on the figures (same-well splits).
    config : dict, optional
        Added to ``config.json``.
    attribution : str, optional
        The data's licence line (metrics, config and report).
    quiet : bool
        Switch the networks' progress bars off (tasks in worker processes).
    members : int, default 1
        Each seed's transformer is the mean of this many members trained from their own seeds
        (:func:`member_seed_blocks`: the first seed's are that seed, 0, 1, ...;
        :class:`~glassformer.wells.member_mean.MemberMean`); 1: one transformer per seed.

    The first seed keeps its last good parameters when its transformer diverges: they are saved
    into ``out/model`` and the :class:`~glassformer.errors.DivergenceError` says so.
    """

    task = staticmethod(fit_seed)

    def __init__(self, wm: WellModel, train_logs: Sequence, test_logs: Sequence, *, title: str, seeds=None,
                 val_logs: Sequence = (), callbacks: Sequence = (), boundary=None, config: dict | None = None,
                 attribution: str | None = None, quiet: bool = False, members: int = 1):
        self.wm = wm
        self.train_logs = train_logs
        self.test_logs = test_logs
        self.title = title
        self.seeds = seeds
        self.val_logs = val_logs
        self.callbacks = callbacks
        self.boundary = boundary
        self.config = config
        self.attribution = attribution
        self.quiet = quiet
        self.members = members

    def seed_values(self) -> list:
        """The seeds fitted: those given, or the transformer's ``random_state``."""
        if self.seeds is not None:
            return [int(s) for s in self.seeds]
        return [(self.wm.model if self.wm.model is not None else SequenceRegressor()).random_state]

    def check(self) -> None:
        """Refuse an empty list of seeds and a transformer that cannot be built, before any file is written.

        Raises
        ------
        InputError
            No seed, ``members`` not an integer >= 1; settings the transformer refuses (e.g. ``d_model``
            not divisible by the number of heads: :meth:`~glassformer.models.SequenceRegressor.check_params`).
        """
        if not self.seed_values():
            raise InputError("seeds: give at least one seed")
        if isinstance(self.members, bool) or not isinstance(self.members, (int, np.integer)) or self.members < 1:
            raise InputError(f"members: the transformer's members must be an integer >= 1, got {self.members!r}")
        if self.wm.model is not None:
            self.wm.model.check_params()

    def tasks(self, out: Path) -> list:
        """One :func:`~glassformer.wells.seeds.fit_seed` task per seed (the first carries the callbacks)."""
        seeds = self.seed_values()
        members = member_seed_blocks(seeds, self.members) if self.members > 1 else None
        return seed_tasks(self.wm, self.train_logs, self.test_logs, seeds, out, quiet=self.quiet,
                          val_logs=self.val_logs, callbacks=self.callbacks, members=members)

    def collect(self, results: list, out: Path) -> RunResult:
        """The run's metrics, config, predictions, figures and tables from the seeds' results (seed order)."""
        seeds = self.seed_values()
        runs = [{k: r[k] for k in ("seed", "metrics", "parameters", "seconds")} for r in results]
        if len(results) > 1:
            for r in results:
                say(_seed_line(r))
        head = results[0]
        fitted = _first_seed_model(head)
        train_rows, test_rows = head["rows"]
        train_metrics, test_metrics = head["metrics"]["train"], head["metrics"]["test"]
        unit = _unit(fitted)
        split = scored_on(self.train_logs, self.test_logs)     # no test well or interval: in-sample, said so
        metrics = _metrics(fitted, runs, self.title, seeds, train_metrics, test_metrics, self.attribution, split)
        if self.members > 1:                     # said in the table head and the comparison's note
            metrics["comparison"]["members"] = int(self.members)
            metrics["comparison"]["note"] += (f" The transformer is the mean of {self.members} members trained from "
                                              "their own seeds on the same windows; the training curve and the "
                                              "attention map are the first member's.")
            metrics["training"]["member"] = f"the first of {self.members} members (seed {fitted.model_.seeds[0]})"
            metrics["training_members"] = [{"seed": int(seed), **training_summary(m.history_, fitted.n_train_windows_)}
                                           for seed, m in zip(fitted.model_.seeds, fitted.model_.members)]
        metrics["per_well"] = metrics_by_well(test_rows, fitted, list(test_metrics))
        metrics["verdict"] = verdict(metrics["comparison"]["table"], unit, the_split(split))
        metrics["recommendation"] = recommend_model(fitted, self.train_logs, self.val_logs, unit, out)
        span = validation_span(self.train_logs, self.val_logs, [*fitted.input_names, fitted.target_name],
                               validation=fitted.validation, fraction=fitted.validation_fraction,
                               window=fitted.window)
        if span is not None:
            metrics["validation_span"] = {**span, "warnings": span_warnings(span)}
        small = (getattr(fitted, "validation_", None) or {}).get("small_data") or []
        # test wells scored with windows shorter than the model's, as predict warns of them (each line
        # begins with a file name, never capitalised)
        short = [w for g in self.test_logs for w in short_run_warnings(g, fitted.input_names, fitted.window)]
        if small or short:                      # under the report's headline, in the summary, and in config.json
            metrics["note"] = " ".join([*(f"{line[0].upper()}{line[1:]}." for line in small),
                                        *(f"{line}." for line in short)])
        small = [*small, *short, *_transform_warnings(fitted)]
        tables = [format_comparison_table(metrics, unit)]
        if len(metrics["per_well"]) > 1:
            tables.append(format_per_well_table(metrics["per_well"], unit))
        tables += [metrics["verdict"], metrics["recommendation"]["text"]]
        rows = pd.concat([train_rows, test_rows], ignore_index=True)
        figures, extra = _figures(fitted, rows, self.train_logs, self.test_logs, self.boundary, self.title)
        config = _config(fitted, self.title, seeds, self.train_logs, self.test_logs, self.config,
                         self.attribution, self.val_logs)
        if self.members > 1:
            config["transformer_members"] = {str(s): m for s, m in member_seed_blocks(seeds, self.members).items()}
        return RunResult(metrics=metrics, config=config, predictions=rows, tables=tables,
                         warnings=[*small, *(metrics.get("validation_span") or {}).get("warnings", [])],
                         figures=figures, extra_figures=extra)


def run_well_experiment(out, train_logs: Sequence, test_logs: Sequence, wm: WellModel, *, title: str,
                        config: dict | None = None, attribution: str | None = None, boundary=None,
                        overwrite: bool = True, seeds=None, callbacks=(), report: bool = True,
                        val_logs: Sequence = (), engine=None, members: int = 1) -> dict:
    """Fit ``wm`` on ``train_logs`` (once per seed), score both splits and write a complete run folder.

    A thin wrapper: :func:`~glassformer.runs.run_experiment` of a :class:`WellExperiment`.

    Parameters
    ----------
    out : folder to write (created; refused when non-empty unless ``overwrite``).
    train_logs, test_logs : WellLog lists, already cut to their intervals.
    wm : WellModel (unfitted; it is copied per seed, never modified).
    title : what was run, in words users know (the report's title).
    seeds : list of int, optional
        One fit per seed (default: the transformer's ``random_state``); ``metrics["comparison"]``
        holds mean and sample sd; predictions, the run's ``model/`` and figures are the first seed's,
        the other seeds' models are in ``out/seeds/seed_<seed>/model``.
    callbacks : training-loop callbacks of the first seed's transformer (checkpoints, resume).
    boundary : depth drawn between training and forecast on the figures (same-well splits).
    val_logs : validation logs for the networks' early stopping (default: ``wm.validation`` decides).
    engine : glassformer.parallel.Engine, optional
        Runs the seeds' tasks; results equal a serial engine's.  Default: one after another in this
        process (BLAS threads left as they are).  Only the serial engine takes ``callbacks``.
    members : int, default 1
        Each seed's transformer is the mean of this many members (see :class:`WellExperiment`); the
        checkpoints and ``callbacks`` are the first member's.

    Returns
    -------
    dict, as written to ``metrics.json``; ``metrics["per_well"]`` scores every test well on its own.

    Raises
    ------
    InputError
        ``callbacks`` with an engine that runs tasks in other processes; no seed.
    DivergenceError
        The first seed's transformer diverged: its last good parameters are saved into ``out/model``
        and the message says so.
    """
    if callbacks and engine is not None and not isinstance(engine, SerialEngine):
        raise InputError(f"run_well_experiment: training callbacks (checkpoints, resume) live in this process; "
                         f"run them on the serial engine, not {engine.describe()}")
    experiment = WellExperiment(wm, train_logs, test_logs, title=title, seeds=seeds, val_logs=val_logs,
                                callbacks=callbacks, boundary=boundary, config=config, attribution=attribution,
                                quiet=engine is not None and engine.n_workers > 1, members=members)
    # The default engine leaves the BLAS threads as the caller set them, as a plain fit does.
    return run_experiment(experiment, out, engine=engine if engine is not None else SerialEngine(blas_threads=None),
                          overwrite=overwrite, report=report)


def _transform_warnings(wm: WellModel) -> list:
    """A warning when the porosity-permeability transform falls with its input: permeability rises with
    porosity, so the first input (which the transform takes as porosity) is likely not porosity."""
    transform = (getattr(wm, "baselines_", None) or {}).get(TRANSFORM)
    if transform is None or not getattr(transform, "slope_", 0.0) < 0:
        return []
    first = wm.input_names[0]
    return [f"the porosity-permeability transform is fitted on {first}, the first of the inputs, and falls as it "
            f"rises (slope {transform.slope_:.3g}); permeability rises with porosity: if {first} is not porosity, "
            "list the porosity curve first in --inputs"]


def _seed_line(result: dict) -> str:
    """One seed's test RMSE per model, on one line."""
    return f"  seed {result['seed']}: " + ", ".join(f"{k} RMSE {v['rmse']:.4f}"
                                                  for k, v in result["metrics"]["test"].items()
                                                  if v["rmse"] is not None)


def _first_seed_model(head: dict) -> WellModel:
    """The first seed's fitted model, loaded from the folder its task saved it into (the same on every engine)."""
    fitted = load_fitted(head["model_dir"])
    fitted.n_train_windows_ = head["n_train_windows"]
    fitted.fit_seconds_ = dict(head["seconds"])
    return fitted


def _unit(wm: WellModel) -> str:
    """The target's unit as its files state it (mD for permeability), log10 of it for a log target."""
    return target_unit(getattr(wm, "training_data_", None), log10=wm.log_target)


def _metrics(wm: WellModel, runs, title, seeds, train_metrics, test_metrics, attribution, split="test") -> dict:
    unit = _unit(wm)
    test_summary, train_summary = summarise_runs(runs, "test"), summarise_runs(runs, "train")
    metrics = {
        "title": title,
        "units": {"rmse": unit, "mae": unit, "r2": "dimensionless", "rmse_sd": unit, "mae_sd": unit,
                  "train_s": "s", "train_s_sd": "s"},
        "test": test_metrics,
        "train": train_metrics,
        "model": test_metrics["transformer"],
        "baselines": {k: v for k, v in test_metrics.items() if k != "transformer"},
        "comparison": {"split": split, "seeds": seeds, "table": test_summary["table"],
                       "train_table": train_summary["table"], "per_seed": test_summary["per_seed"],
                       "note": (f"Mean over seeds (sample sd beside it, none for one seed) on {the_split(split)}; "
                                "every model sees the same wells and intervals, every network the same windows, scaling "
                                "and seed. train_s is the wall-clock "
                                "fit time in s on this machine; parameters counts trainable values "
                                "(2 for the transform: slope and intercept; 1 for the mean; the tree ensembles' "
                                "leaves). Early stopping of the networks: "
                                + (getattr(wm, "validation_", None) or {}).get("method", "not recorded") + ".")},
        "training": training_summary(wm.model_.history_, wm.n_train_windows_),
    }
    if wm.lstm_ is not None:
        metrics["training_lstm"] = training_summary(wm.lstm_.history_, wm.n_train_windows_)
    if attribution:
        metrics["attribution"] = attribution
    return metrics


def _config(wm: WellModel, title, seeds, train_logs, test_logs, config, attribution, val_logs=()) -> dict:
    def wells(logs):
        return [{"name": g.name, "source": g.source, "top": float(g.depth[0]), "base": float(g.depth[-1]),
                 "depth_unit": g.depth_unit} for g in logs]

    cfg = {"title": title, "well_model": wm.to_dict(), "model": wm.model_.get_params(), "seeds": seeds,
           "train_wells": wells(train_logs), "test_wells": wells(test_logs),
           "validation": getattr(wm, "validation_", None)}
    if val_logs:
        cfg["validation_wells"] = wells(val_logs)
    return with_comparison_settings(cfg, wm, wm.lstm_, config, attribution)


def with_comparison_settings(cfg: dict, wm: WellModel, lstm, config, attribution) -> dict:
    """``cfg`` completed with what a comparison run also records: the LSTM's parameters, every baseline's
    definition beside its name (the blend's weights among them), the caller's ``config`` and the data
    attribution."""
    if lstm is not None:
        cfg["lstm"] = lstm.get_params()
    cfg["baselines"] = wm.baseline_settings()
    cfg.update(config or {})
    if attribution:
        cfg["attribution"] = attribution
    return cfg


def _figures(wm: WellModel, rows, train_logs, test_logs, boundary, title) -> tuple[dict, dict]:
    """The run's figures as ``(write_figures keyword arguments, extra figures)``: each test well against depth
    (the first as prediction_vs_depth.png, with its training part when it is the same well; the others as
    prediction_vs_depth_<well>.png), loss, cross-plot of the training logs and the first window's attention."""
    show = test_logs[0]
    ucol = "log10_mD" if wm.log_target else "mD"
    A, A_depth = wm.attention_window(show)
    phi_all = np.concatenate([np.asarray(g.curve(wm.input_names[0])) for g in train_logs])
    k_all = np.concatenate([np.asarray(g.curve(wm.target_name)) for g in train_logs])
    names = [n for n in DEPTH_FIGURE_MODELS if f"{COLUMN[n]}_{'log10_mD' if wm.log_target else 'mD'}" in rows]

    def depth_track(g):
        same = rows[rows["well"] == g.name].drop_duplicates("depth", keep="last").sort_values("depth")
        return dict(depth=same["depth"].to_numpy(), observed=same[f"{wm.target_name}_observed_{ucol}"].to_numpy(),
                    predictions={("poro-perm transform" if n.startswith("porosity") else n):
                                 same[f"{COLUMN[n]}_{ucol}"].to_numpy() for n in names})

    common = dict(quantity=wm.target_name, unit=_unit(wm), depth_unit=show.depth_unit)

    def against_depth(g, line=None):
        track = depth_track(g)
        return lambda: plots.plot_comparison_zoomed(track["depth"], track["observed"], track["predictions"],
                                                    boundary=line, title=f"{title}: {g.name}", **common)

    depth_figures = {"prediction_vs_depth": against_depth(show, boundary),
                     **{f"prediction_vs_depth_{file_slug(g.name)}": against_depth(g) for g in test_logs[1:]}}
    first = ((getattr(wm, "training_data_", None) or {}).get("inputs") or {}).get(wm.input_names[0], {})
    target = target_unit(getattr(wm, "training_data_", None))     # the y axis: the target as its files state it
    kwargs = dict(history=wm.model_.history_, porosity=phi_all,
                  porosity_unit="%" if first.get("kind") == "percent" else "fraction",
                  permeability=np.where(k_all > 0, k_all, np.nan),
                  permeability_quantity="Permeability" if target == "mD" else wm.target_name, permeability_unit=target,
                  attention=A, attention_depths=None if A_depth is None else np.round(A_depth, 2),
                  attention_title=f"{title} attention weights (layer 0, head 0), first window of {show.name}",
                  depth_unit=show.depth_unit, title=title)
    return kwargs, depth_figures



def compare_wells(out, train_logs, test_logs, *, inputs, target, log_target: bool = True, window: int = 32,
                  stride: int | None = None, epochs: int = 30, seeds=(42,), hidden_size: int = 16,
                  boundary=None, attribution: str | None = None, config: dict | None = None,
                  overwrite: bool = True, model: SequenceRegressor | None = None, progress: bool = False,
                  val_logs: Sequence = (), validation: str = "deepest",
                  engine=None) -> dict:
    """Train the well transformer and a bidirectional LSTM on the same windows, once per seed, beside the
    tree ensembles, the porosity-permeability transform and the training mean.

    ``model``: the transformer (default ``SequenceRegressor()``, the well defaults); both networks
    get ``epochs`` (maximum; early stopping on ``val_logs``, else as ``validation`` says: the
    deepest 10 % of each training interval) and ``progress``.  The LSTM is
    ``LSTMRegressor(hidden_size=hidden_size)``.  ``engine``: run the seeds on it (see
    :func:`run_well_experiment`).  Returns the metrics written to ``out/metrics.json``.
    """
    transformer = clone(model if model is not None else SequenceRegressor()).set_params(epochs=epochs,
                                                                                        progress=progress)
    wm = WellModel(list(inputs), target, log_target=log_target, window=window, stride=stride, positions="index",
                   model=transformer, lstm=LSTMRegressor(hidden_size=hidden_size, epochs=epochs, progress=progress),
                   validation=validation)
    cfg = {"command": "compare", "epochs": epochs, "seeds": list(seeds)}
    cfg.update(config or {})
    return run_well_experiment(out, train_logs, test_logs, wm, title="glassformer compare",
                               boundary=boundary, attribution=attribution, overwrite=overwrite, seeds=seeds,
                               config=cfg, val_logs=val_logs, engine=engine)
