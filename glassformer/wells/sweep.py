"""A grid of model settings, each fitted on the training logs and scored on validation logs; the best
one is then scored once on the test logs, beside the baselines.

:class:`SettingsSweep` is the experiment (:mod:`glassformer.runs.protocol`): one task per setting of
the grid (:func:`~glassformer.wells.sweep_settings.fit_setting`, on any engine; a setting that fails
becomes a row that says why, the others go on), and the choice, the test score and the tables as its
result, written by the one run-folder writer.

The choice uses the validation logs only -- a depth interval or a well held out of training -- and
the lowest validation RMSE of the transformer wins (the first in grid order on a tie).  The test
logs are read only once the choice is made (``test_logs`` may be a function that reads them), and
the chosen setting is scored on them once, so no test value can influence the choice.

Folders: ``settings/<setting>/model`` for each setting, ``model/`` for the chosen one (a copy, so
``glassformer predict --model OUT`` uses it), ``sweep.csv`` (one row per setting),
``figures/sweep.png``, ``config.json``, ``metrics.json`` and ``predictions.csv`` (test) once scored.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Sequence

import pandas as pd

from .. import io
from ..errors import InputError
from ..parallel.engine import call_guarded
from ..plots.sweep import plot_sweep
from ..reporting import say
from ..runs import RunResult, run_experiment, write_run_folder
from .evaluation import evaluate_split
from .seeds import load_fitted
from .sweep_settings import GRID_KEYS, fit_setting, setting_folder, setting_grid, setting_label
from .tables import _num

__all__ = ["GRID_KEYS", "SettingsSweep", "finish_sweep", "fit_setting", "format_sweep_table", "run_sweep",
           "score_chosen", "setting_folder", "setting_grid", "setting_label"]


class SettingsSweep:
    """Every setting of a grid fitted on training logs and scored on validation logs (an experiment).

    Parameters
    ----------
    train_logs, val_logs : lists of WellLog, cut to their intervals.
    wm : WellModel
        The base settings (inputs, target, log target, stride, positions, the transformer's other
        options); each setting of the grid replaces d_model, num_heads, num_layers, window and lr.
    grid : dict
        ``{key: values}`` for every key of :data:`GRID_KEYS`.
    test_logs : list of WellLog, or a function returning them, optional
        Read (when a function) and scored only after the choice.  None: the choice is not scored.
    config : dict, optional
        Further settings for ``config.json`` (the command line's options).
    attribution : str, optional
        The data's credit, written beside the metrics.
    """

    # engine.map with each setting's failure kept as its row (the engine's own guard: error in one line, time)
    task = functools.partial(call_guarded, fit_setting, None)

    def __init__(self, train_logs: Sequence, val_logs: Sequence, wm, grid: dict, *, test_logs=None,
                 config: dict | None = None, attribution: str | None = None):
        self.train_logs = train_logs
        self.val_logs = val_logs
        self.wm = wm
        self.grid = grid
        self.test_logs = test_logs
        self.config = config
        self.attribution = attribution

    def check(self) -> None:
        """Refuse a bad grid (see :func:`~glassformer.wells.sweep_settings.setting_grid`)."""
        self.settings_, self.skipped_ = setting_grid(self.grid)

    def tasks(self, out: Path) -> list:
        """``(index, task)`` per setting: the base specification, the setting, the logs, its model folder."""
        say(f"Sweeping {len(self.settings_)} setting(s)")
        spec = self.wm.spec()
        return list(enumerate({"spec": spec, "setting": s, "train": list(self.train_logs), "val": list(self.val_logs),
                               "model_dir": str(Path(out) / "settings" / setting_folder(s) / "model")}
                              for s in self.settings_))

    def collect(self, results: list, out: Path) -> RunResult:
        """Choose on validation, then read and score the test logs (when any), into the sweep's result.

        Raises
        ------
        InputError
            No setting could be fitted and scored on the validation logs (the errors are listed).
        """
        for s, outcome in zip(self.settings_, results):
            if outcome.ok:
                rmse = outcome.value["validation"]["transformer"]["rmse"]
                say(f"  {setting_label(s)}: validation RMSE {_num(rmse).strip()} ({outcome.seconds:.1f} s)")
            else:
                say(f"  {setting_label(s)}: failed: {outcome.error}")
        self.choice_ = _choose(self.settings_, self.skipped_, results, "log10 mD" if self.wm.log_target else "mD")
        test_logs = self.test_logs() if callable(self.test_logs) else self.test_logs
        return _result(out, self.choice_, test_logs, self.config, self.attribution)


def _row(setting: dict, outcome) -> dict:
    row = {"setting": setting_label(setting), **setting, "status": "ok" if outcome.ok else "error",
           "error": outcome.error}
    if outcome.ok:
        r = outcome.value
        val, train = r["validation"]["transformer"], r["train"]["transformer"]
        row.update({f"val_{k}": val[k] for k in ("rmse", "mae", "r2", "n")})
        row.update(train_rmse=train["rmse"], parameters=r["parameters"], epochs_run=r["epochs_run"],
                   fit_s=round(r["fit_s"], 3), model_dir=r["model_dir"])
    return row


def _choose(settings: list, skipped: list, outcomes: list, unit: str) -> dict:
    """The sweep's rows and the chosen one (lowest validation RMSE of the transformer, first on a tie)."""
    rows = [_row(s, o) for s, o in zip(settings, outcomes)]
    scores = [r["val_rmse"] if r["status"] == "ok" and r["val_rmse"] is not None else math.inf for r in rows]
    if not any(math.isfinite(v) for v in scores):
        raise InputError("sweep: no setting could be fitted and scored on the validation data: "
                         + "; ".join(f"{r['setting']}: {r['error'] or 'no validation prediction'}" for r in rows))
    chosen = min(range(len(rows)), key=lambda i: (scores[i], i))
    for i, r in enumerate(rows):
        r["chosen"] = i == chosen
    head = outcomes[chosen].value
    return {"rows": rows, "chosen": chosen,
            "skipped": [{"setting": setting_label(s), "reason": why} for s, why in skipped],
            "validation_baselines": {k: v for k, v in head["validation"].items() if k != "transformer"},
            "unit": unit}


def run_sweep(out, train_logs: Sequence, val_logs: Sequence, wm, grid: dict, *, engine=None) -> dict:
    """Fit every setting of ``grid`` on ``train_logs``, score each on ``val_logs``, choose the best.

    Writes the sweep's folder (``sweep.csv``, ``figures/sweep.png``, ``metrics.json`` and
    ``config.json`` without a test score); :func:`finish_sweep` adds the test score.

    Parameters
    ----------
    out : str or Path
        The sweep's folder (created; its files are replaced).
    train_logs, val_logs : lists of WellLog, cut to their intervals (no test log: see the module notes).
    wm : WellModel
        The base settings; each setting of the grid replaces d_model, num_heads, num_layers, window and lr.
    grid : dict
        ``{key: values}`` for every key of :data:`GRID_KEYS`.
    engine : glassformer.parallel.Engine, optional
        Where the settings run (default: one after another in this process).

    Returns
    -------
    dict
        ``rows`` (one per setting, in grid order: the setting, validation RMSE/MAE/R²/n, training
        RMSE, parameters, epochs run, fit time, status), ``chosen`` (index into ``rows``),
        ``skipped``, ``validation_baselines`` (the baselines' validation metrics) and ``unit``.

    Raises
    ------
    InputError
        A bad grid (see :func:`setting_grid`), or no setting could be fitted (the errors are listed).
    """
    sweep = SettingsSweep(train_logs, val_logs, wm, grid)
    run_experiment(sweep, out, engine=engine, overwrite=True, report=False)
    return sweep.choice_


def score_chosen(out, result: dict, test_logs: Sequence) -> dict:
    """Score the chosen setting of :func:`run_sweep` once on ``test_logs``, beside the baselines.

    Copies the chosen model to ``out/model`` (and its LSTM, when any, to ``out/model_lstm``).

    Returns
    -------
    dict
        ``{"test": metrics per model, "model": the transformer's, "baselines": the others'}``.
    """
    return _scored(out, result, test_logs)[0]


def _scored(out, result: dict, test_logs: Sequence) -> tuple:
    """``(score_chosen's dict, the test predictions per depth)``."""
    source = Path(result["rows"][result["chosen"]]["model_dir"])
    for folder in (source, source.with_name(source.name + "_lstm")):
        for f in sorted([*folder.glob("model.*"), *folder.glob("*.skops")]) if folder.is_dir() else ():
            target = Path(out) / ("model" if folder == source else "model_lstm") / f.name
            target.parent.mkdir(parents=True, exist_ok=True)
            io.atomic_write_bytes(target, f.read_bytes())
    rows, metrics = evaluate_split(load_fitted(source), test_logs, "test")
    return {"test": metrics, "model": metrics["transformer"],
            "baselines": {k: v for k, v in metrics.items() if k != "transformer"}}, rows


def finish_sweep(out, result: dict, test_logs: Sequence | None = None, *, config: dict | None = None,
                 attribution: str | None = None) -> dict:
    """Score the chosen setting on ``test_logs`` (when given) and write the sweep's folder again with it.

    Returns
    -------
    dict, as written to ``metrics.json``: ``selection`` (split "validation", metric, the chosen
    setting and its validation metrics), ``grid`` (every row of the sweep), ``skipped``, and with
    test logs ``test`` / ``model`` / ``baselines`` (the chosen setting's test metrics beside the
    baselines') and ``verdict`` (in words: does a baseline beat the transformer on test?).
    """
    run = _result(out, result, test_logs, config, attribution)
    write_run_folder(out, run, report=False)
    return run.metrics


def _result(out, result: dict, test_logs, config, attribution) -> RunResult:
    """The sweep's run result: the choice's metrics (with the test score when there are test logs),
    ``sweep.csv``, the figure and the table."""
    unit, row = result["unit"], result["rows"][result["chosen"]]
    metrics = {"title": "glassformer sweep", "units": {"rmse": unit, "mae": unit, "r2": "dimensionless"},
               "selection": {"split": "validation", "metric": "rmse of the transformer (lowest wins)",
                             "chosen": row["setting"], "setting": {k: row[k] for k in GRID_KEYS},
                             "validation": {"transformer": {k: row[f"val_{k}"] for k in ("rmse", "mae", "r2", "n")},
                                            **result["validation_baselines"]}},
               "grid": [{k: v for k, v in r.items() if k != "model_dir"} for r in result["rows"]],
               "skipped": result["skipped"]}
    predictions = None
    if test_logs:
        scores, predictions = _scored(out, result, test_logs)
        metrics.update(scores)
        metrics["verdict"] = _verdict(metrics["test"])
    else:
        metrics["verdict"] = "no test data given: the chosen setting was not scored on held-out data"
    if attribution:
        metrics["attribution"] = attribution
    varied = [k for k in GRID_KEYS if len({r[k] for r in result["rows"]}) > 1]
    return RunResult(
        metrics=metrics, config={"title": "glassformer sweep", "grid_keys": list(GRID_KEYS), **(config or {})},
        predictions=predictions, tables=[format_sweep_table(metrics)],
        csv={"sweep.csv": pd.DataFrame(result["rows"]).drop(columns=["model_dir"], errors="ignore")},
        extra_figures={"sweep": lambda: plot_sweep(result["rows"], varied, result["chosen"],
                                                   {k: v["rmse"] for k, v in result["validation_baselines"].items()},
                                                   unit=unit)})


def _verdict(test: dict) -> str:
    mine = test["transformer"]["rmse"]
    better = {k: v["rmse"] for k, v in test.items() if k != "transformer" and v["rmse"] is not None
              and (mine is None or v["rmse"] < mine)}
    if not better:
        return "the chosen transformer has the lowest test RMSE of all models"
    best = min(better, key=better.get)
    return f"the {best} beats the chosen transformer on test (RMSE {better[best]:.4g} against {mine:.4g})"


def format_sweep_table(metrics: dict) -> str:
    """Plain-text table of every setting's validation RMSE (chosen marked), then the test scores."""
    unit = metrics["units"]["rmse"]
    lines = [f"glassformer sweep -- validation RMSE in {unit} (the choice; test data not used)",
             f"  {'setting':<52}{'val RMSE':>12}{'val R2':>12}{'params':>9}{'fit s':>9}"]
    for r in metrics["grid"]:
        mark = "*" if r.get("chosen") else " "
        if r["status"] == "ok":
            lines.append(f"{mark} {r['setting']:<52}{_num(r['val_rmse'])}{_num(r['val_r2'])}{r['parameters']:>9}"
                         f"{_num(r['fit_s'], 9, 2, 'f')}")
        else:
            lines.append(f"{mark} {r['setting']:<52} failed: {r['error']}")
    lines.append(f"chosen (*): {metrics['selection']['chosen']}")
    if "test" in metrics:
        lines.append(f"test split, scored once (RMSE, MAE in {unit})")
        for name, m in metrics["test"].items():
            lines.append(f"  {name:<34}{_num(m['rmse'])}{_num(m['mae'])}{_num(m['r2'])}{m['n']:>8}")
    lines.append(metrics["verdict"])
    return "\n".join(lines)
