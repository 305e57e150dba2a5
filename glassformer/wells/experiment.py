"""A well-log experiment, start to finish: fit on training logs, score every model on the same
split beside the baselines (once per seed), and write a complete run folder (model, config,
metrics, predictions, figures, report).

:func:`run_well_experiment` is what ``glassformer train`` and the well demos run;
:func:`compare_wells` is ``glassformer compare`` (the transformer and a bidirectional LSTM on
identical windows, seeds and loop).  Every model sees the same windows, scaling, split and seed;
the settings are fixed before the test logs are looked at.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from sklearn.base import clone

from .. import plots
from ..errors import DivergenceError, InputError
from ..models import LSTMRegressor, SequenceRegressor, run_config_defaults
from ..report import write_report
from ..runs import prepare_run_dir, write_csv, write_figures, write_json
from .checks import target_unit
from .evaluation import COLUMN, evaluate_split, metrics_by_well, summarise_runs, training_summary
from .last_good import fit_or_keep_last_good
from .model import WellModel, with_seed
from .recommend import recommend_model
from .seeds import fit_seeds
from .splits import span_warnings, validation_span
from .tables import format_comparison_table, format_per_well_table, scored_on, the_split, verdict

__all__ = ["DEPTH_FIGURE_MODELS", "compare_wells", "run_well_experiment", "seed_list", "with_seed"]

#: The models drawn against depth (the tree ensembles without context are left out: eight lines hide each other).
DEPTH_FIGURE_MODELS = ("transformer", "LSTM", "random forest + context", "gradient boosting + context",
                       "porosity-permeability transform", "training mean")


def seed_list(n: int, first: int = 42) -> list:
    """``n`` seeds: ``first`` (the demos' published seed), then 0, 1, 2, ... (skipping ``first``).

    Raises
    ------
    InputError
        If ``n < 1``.
    """
    if int(n) < 1:
        raise InputError(f"--seeds must be >= 1, got {n}")
    rest = [s for s in range(int(n) + 1) if s != first]
    return [int(first)] + rest[:int(n) - 1]


def run_well_experiment(out, train_logs: Sequence, test_logs: Sequence, wm: WellModel, *, title: str,
                        echo: Callable = print, config: dict | None = None, attribution: str | None = None,
                        boundary=None, overwrite: bool = True, seeds=None, callbacks=(), report: bool = True,
                        val_logs: Sequence = (), engine=None) -> dict:
    """Fit ``wm`` on ``train_logs`` (once per seed), score both splits and write a complete run folder.

    Parameters
    ----------
    out : folder to write (created; refused when non-empty unless ``overwrite``).
    train_logs, test_logs : WellLog lists, already cut to their intervals.
    wm : WellModel (unfitted; it is copied per seed, never modified).
    title : what was run, in words users know (the report's title).
    seeds : list of int, optional
        One fit per seed (default: the transformer's ``random_state``); ``metrics["comparison"]``
        holds mean and sample sd; predictions, saved model and figures are the first seed's.
    callbacks : training-loop callbacks of the first seed's transformer (checkpoints, resume).
    boundary : depth drawn between training and forecast on the figures (same-well splits).
    val_logs : validation logs for the networks' early stopping (default: ``wm.validation`` decides).
    engine : glassformer.parallel.Engine, optional
        Fit the seeds as tasks on this engine (:func:`glassformer.wells.seeds.fit_seeds`; every
        seed's model is saved, the others' in ``out/seeds/seed_<seed>``); results equal a serial
        engine's.  Not with ``callbacks``, which live in this process.  Default: in this process.

    Returns
    -------
    dict, as written to ``metrics.json``; ``metrics["per_well"]`` scores every test well on its own.

    Raises
    ------
    DivergenceError
        The first seed's transformer diverged: its last good parameters are saved into ``out/model``
        and the message says so.
    """
    out = prepare_run_dir(out, overwrite=overwrite)
    seeds = [int(s) for s in (seeds if seeds is not None else
                              [(wm.model if wm.model is not None else SequenceRegressor()).random_state])]
    if not seeds:
        raise InputError("seeds: give at least one seed")
    runs, first = _fit_seeds(wm, seeds, train_logs, test_logs, val_logs, out, callbacks, echo, engine)
    fitted, train_rows, test_rows, train_metrics, test_metrics = first
    split = scored_on(train_logs, test_logs)            # no test well or interval: in-sample scores, said so
    metrics = _metrics(fitted, runs, title, seeds, train_metrics, test_metrics, attribution, split)
    metrics["per_well"] = metrics_by_well(test_rows, fitted, list(test_metrics))
    metrics["verdict"] = verdict(metrics["comparison"]["table"], _unit(fitted), the_split(split))
    metrics["recommendation"] = recommend_model(fitted, train_logs, val_logs, _unit(fitted))
    span = validation_span(train_logs, val_logs, [*fitted.input_names, fitted.target_name],
                           validation=fitted.validation, fraction=fitted.validation_fraction, window=fitted.window)
    if span is not None:
        metrics["validation_span"] = {**span, "warnings": span_warnings(span)}
    small = (getattr(fitted, "validation_", None) or {}).get("small_data") or []
    if small:                                   # under the report's headline, in the summary, and in config.json
        metrics["note"] = " ".join(f"{line[0].upper()}{line[1:]}." for line in small)
        for line in small:
            echo(f"warning: {line}")
    fitted.save(out / "model", overwrite=True)
    write_json(out / "config.json", _config(fitted, title, seeds, train_logs, test_logs, config, attribution,
                                            val_logs))
    write_json(out / "metrics.json", metrics)
    rows = pd.concat([train_rows, test_rows], ignore_index=True)
    write_csv(out / "predictions.csv", rows)
    _figures(out, fitted, rows, train_logs, test_logs, boundary, title)
    echo(format_comparison_table(metrics, _unit(fitted)))
    if len(metrics["per_well"]) > 1:
        echo(format_per_well_table(metrics["per_well"], _unit(fitted)))
    echo(metrics["verdict"])
    echo(metrics["recommendation"]["text"])
    for line in (metrics.get("validation_span") or {}).get("warnings", []):
        echo(f"warning: {line}")
    if report:
        write_report(out, run_config_defaults())
    return metrics


def _fit_seeds(wm, seeds, train_logs, test_logs, val_logs, out, callbacks, echo, engine=None) -> tuple:
    """Fit and score one copy of ``wm`` per seed (here, or as tasks on ``engine``):
    ``(runs, (first fitted, its rows and metrics))``."""
    runs, first = [], None
    if engine is not None:
        if callbacks:
            raise InputError("run_well_experiment: callbacks run in this process; give them without an engine")
        runs, first = fit_seeds(engine, wm, train_logs, test_logs, seeds, out, echo=echo, val_logs=val_logs)
    in_process = seeds if engine is None else ()          # an engine has fitted them above
    for i, seed in enumerate(in_process):
        fitted = with_seed(wm, seed)
        if i == 0:
            fit_or_keep_last_good(fitted, train_logs, out, callbacks, val_logs)
        else:
            fitted.fit(train_logs, val_logs=val_logs)
        train_rows, train_metrics = evaluate_split(fitted, train_logs, "train")
        test_rows, test_metrics = evaluate_split(fitted, test_logs, "test")
        runs.append({"seed": seed, "metrics": {"train": train_metrics, "test": test_metrics},
                     "parameters": fitted.parameter_counts(), "seconds": dict(fitted.fit_seconds_)})
        if i == 0:
            first = (fitted, train_rows, test_rows, train_metrics, test_metrics)
        if len(seeds) > 1:
            echo(f"  seed {seed}: " + ", ".join(f"{k} RMSE {v['rmse']:.4f}" for k, v in test_metrics.items()
                                                 if v["rmse"] is not None))
    return runs, first


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


def _figures(out: Path, wm: WellModel, rows, train_logs, test_logs, boundary, title) -> None:
    """Each test well against depth (the first as prediction_vs_depth.png, with its training part when it is the
    same well; the others as prediction_vs_depth_<well>.png), loss, cross-plot of the training logs and the first
    window's attention."""
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
                     **{f"prediction_vs_depth_{_slug(g.name)}": against_depth(g) for g in test_logs[1:]}}
    first = ((getattr(wm, "training_data_", None) or {}).get("inputs") or {}).get(wm.input_names[0], {})
    target = target_unit(getattr(wm, "training_data_", None))     # the y axis: the target as its files state it
    write_figures(out, history=wm.model_.history_, porosity=phi_all,
                  porosity_unit="%" if first.get("kind") == "percent" else "fraction",
                  permeability=np.where(k_all > 0, k_all, np.nan),
                  permeability_quantity="Permeability" if target == "mD" else wm.target_name, permeability_unit=target,
                  attention=A, attention_depths=None if A_depth is None else np.round(A_depth, 2),
                  attention_title=f"{title} attention weights (layer 0, head 0), first window of {show.name}",
                  depth_unit=show.depth_unit, title=title, extra=depth_figures)


def _slug(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_") or "well"


def compare_wells(out, train_logs, test_logs, *, inputs, target, log_target: bool = True, window: int = 32,
                  stride: int | None = None, epochs: int = 30, seeds=(42,), hidden_size: int = 16,
                  boundary=None, attribution: str | None = None, config: dict | None = None,
                  overwrite: bool = True, model: SequenceRegressor | None = None, progress: bool = False,
                  echo: Callable = print, val_logs: Sequence = (), validation: str = "deepest",
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
    return run_well_experiment(out, train_logs, test_logs, wm, title="glassformer compare", echo=echo,
                               boundary=boundary, attribution=attribution, overwrite=overwrite, seeds=seeds,
                               config=cfg, val_logs=val_logs, engine=engine)
