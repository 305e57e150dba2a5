"""A grid of model settings, each fitted on the training logs and scored on validation logs; the best
one is then scored once on the test logs, beside the baselines.

The grid spans ``d_model``, ``num_heads``, ``num_layers``, ``window`` (samples) and ``lr`` (Adam's
learning rate).  Each setting is one task, :func:`fit_setting` (plain arguments: the settings as a
dict, the logs, the folder to save the fitted model into), so the grid runs on any
:mod:`glassformer.parallel` engine with results identical to a serial run.

The choice uses the validation logs only -- a depth interval or a well held out of training -- and
the lowest validation RMSE of the transformer wins (the first in grid order on a tie).  The test
logs are not passed to :func:`run_sweep` at all: :func:`score_chosen` receives them afterwards and
scores the chosen setting once, so no test value can influence the choice.

Folders: ``settings/<setting>/model`` for each setting, ``model/`` for the chosen one (a copy, so
``glassformer predict --model OUT`` uses it), ``sweep.csv`` (one row per setting),
``figures/sweep.png``, ``metrics.json`` and ``predictions.csv`` (test) once scored.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from .. import io
from ..errors import InputError
from ..models import SequenceRegressor
from ..parallel import SerialEngine
from ..plots import save_figure
from ..plots.sweep import plot_sweep
from ..runs import close_figure, prepare_run_dir, write_csv, write_json
from .evaluation import evaluate_split
from .model import WellModel
from .seeds import load_fitted
from .tables import _num

__all__ = ["GRID_KEYS", "finish_sweep", "fit_setting", "format_sweep_table", "run_sweep", "score_chosen",
           "setting_grid", "setting_label"]

#: The swept settings, in grid order (the last one varies fastest).
GRID_KEYS = ("d_model", "num_heads", "num_layers", "window", "lr")

_SHORT = {"d_model": "d", "num_heads": "h", "num_layers": "l", "window": "w", "lr": "lr"}


def setting_grid(grid: dict) -> tuple[list, list]:
    """Every combination of ``grid`` (``{key: values}`` for the keys of :data:`GRID_KEYS`), checked.

    Returns
    -------
    (settings, skipped)
        ``settings``: dicts in grid order; ``skipped``: ``(setting, reason)`` for combinations that
        cannot be built (``d_model`` not divisible by ``num_heads``).

    Raises
    ------
    InputError
        A key outside :data:`GRID_KEYS`, an empty list of values, a value that is not a positive
        integer (``lr``: a positive finite number; ``window``: at least 2), or no buildable setting.
    """
    unknown = sorted(set(grid) - set(GRID_KEYS))
    if unknown:
        raise InputError(f"sweep: unknown grid setting(s) {unknown}; choose from {', '.join(GRID_KEYS)}")
    values = {}
    for key in GRID_KEYS:
        vals = list(grid[key])
        if not vals:
            raise InputError(f"sweep: give at least one value of {key}")
        for v in vals:
            _check_value(key, v)
        values[key] = list(dict.fromkeys(float(v) if key == "lr" else int(v) for v in vals))   # repeats once
    settings, skipped = [], []
    for combo in itertools.product(*(values[k] for k in GRID_KEYS)):
        s = dict(zip(GRID_KEYS, combo))
        if s["d_model"] % s["num_heads"]:
            skipped.append((s, f"d_model {s['d_model']} is not divisible by num_heads {s['num_heads']}"))
        else:
            settings.append(s)
    if not settings:
        raise InputError("sweep: no setting of the grid can be built (" + "; ".join(r for _, r in skipped) + ")")
    return settings, skipped


def _check_value(key: str, v) -> None:
    if key == "lr":
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
            raise InputError(f"sweep: lr values must be finite numbers > 0, got {v!r}")
        return
    least = 2 if key == "window" else 1
    if isinstance(v, bool) or not float(v).is_integer() or v < least:
        raise InputError(f"sweep: {key} values must be integers >= {least}, got {v!r}")


def setting_label(s: dict) -> str:
    """``"d_model 16, heads 2, layers 1, window 32, lr 0.003"``."""
    return (f"d_model {s['d_model']}, heads {s['num_heads']}, layers {s['num_layers']}, window {s['window']}, "
            f"lr {s['lr']:g}")


def setting_folder(s: dict) -> str:
    """``"d16_h2_l1_w32_lr0.003"``: the setting's folder name under ``settings/``."""
    return "_".join(f"{_SHORT[k]}{s[k]:g}" if k == "lr" else f"{_SHORT[k]}{s[k]}" for k in GRID_KEYS)


def _setting_model(spec: dict, s: dict):
    """The unfitted well model of ``spec`` (:meth:`WellModel.spec`) with the setting ``s`` set on it."""
    wm = WellModel.from_spec(spec)
    if wm.model is None:
        wm.set_params(model=SequenceRegressor())
    wm.set_params(window=s["window"], **{f"model__{k}": s[k] for k in ("d_model", "num_heads", "num_layers", "lr")})
    if wm.model.positional == "learned":           # one learned vector per position 1..window
        wm.set_params(model__positional_options={**(wm.model.positional_options or {}), "max_len": s["window"] + 1})
    return wm


def fit_setting(task: dict) -> dict:
    """Fit one setting on the training logs and score it on the validation logs (an engine task).

    Parameters
    ----------
    task : dict
        ``spec`` (:meth:`WellModel.spec` of the base model), ``setting`` (one
        dict of :func:`setting_grid`), ``train`` and ``val`` (lists of
        :class:`~glassformer.data.WellLog`, cut to their intervals) and ``model_dir``.

    Returns
    -------
    dict
        ``setting``, ``validation`` and ``train`` (metrics per model: rmse, mae, r2, n),
        ``parameters`` (transformer), ``epochs_run``, ``fit_s`` (transformer fit time, s) and
        ``model_dir``.
    """
    wm = _setting_model(task["spec"], task["setting"]).fit(task["train"])
    _, val_metrics = evaluate_split(wm, task["val"], "validation")
    _, train_metrics = evaluate_split(wm, task["train"], "train")
    wm.save(task["model_dir"], overwrite=True)
    return {"setting": dict(task["setting"]), "validation": val_metrics, "train": train_metrics,
            "parameters": wm.parameter_counts()["transformer"], "epochs_run": len(wm.model_.history_),
            "fit_s": wm.fit_seconds_["transformer"], "model_dir": str(task["model_dir"])}


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


def run_sweep(out, train_logs: Sequence, val_logs: Sequence, wm, grid: dict, *, engine=None,
              echo: Callable = print) -> dict:
    """Fit every setting of ``grid`` on ``train_logs``, score each on ``val_logs``, choose the best.

    Parameters
    ----------
    out : str or Path
        The sweep's folder (created; its files are replaced).
    train_logs, val_logs : lists of WellLog, cut to their intervals (no test log: see the module notes).
    wm : WellModel
        The base settings (inputs, target, log target, stride, positions, the transformer's other
        options); each setting of the grid replaces d_model, num_heads, num_layers, window and lr.
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
    settings, skipped = setting_grid(grid)
    out = prepare_run_dir(out, overwrite=True)
    engine = engine if engine is not None else SerialEngine()
    spec = wm.spec()
    tasks = [{"spec": spec, "setting": s, "train": list(train_logs), "val": list(val_logs),
              "model_dir": str(out / "settings" / setting_folder(s) / "model")} for s in settings]
    echo(f"Sweeping {len(settings)} setting(s) on {engine.describe()}")

    def say(outcome) -> None:
        s = settings[outcome.index]
        if outcome.ok:
            rmse = outcome.value["validation"]["transformer"]["rmse"]
            echo(f"  {setting_label(s)}: validation RMSE {_num(rmse).strip()} ({outcome.seconds:.1f} s)")
        else:
            echo(f"  {setting_label(s)}: failed: {outcome.error}")

    outcomes = engine.run(fit_setting, tasks, on_outcome=say)
    rows = [_row(s, o) for s, o in zip(settings, outcomes)]
    scores = [r["val_rmse"] if r["status"] == "ok" and r["val_rmse"] is not None else math.inf for r in rows]
    if not any(math.isfinite(v) for v in scores):
        raise InputError("sweep: no setting could be fitted and scored on the validation data: "
                         + "; ".join(f"{r['setting']}: {r['error'] or 'no validation prediction'}" for r in rows))
    chosen = min(range(len(rows)), key=lambda i: (scores[i], i))
    for i, r in enumerate(rows):
        r["chosen"] = i == chosen
    write_csv(out / "sweep.csv", pd.DataFrame(rows).drop(columns=["model_dir"], errors="ignore"))
    head = outcomes[chosen].value
    unit = "log10 mD" if wm.log_target else "mD"
    result = {"rows": rows, "chosen": chosen, "skipped": [{"setting": setting_label(s), "reason": why}
                                                            for s, why in skipped],
              "validation_baselines": {k: v for k, v in head["validation"].items() if k != "transformer"},
              "unit": unit}
    _figure(out, result, [k for k in GRID_KEYS if len({r[k] for r in rows}) > 1])
    return result


def _figure(out: Path, result: dict, varied: list) -> None:
    fig = plot_sweep(result["rows"], varied, result["chosen"],
                     {k: v["rmse"] for k, v in result["validation_baselines"].items()}, unit=result["unit"])
    save_figure(fig, out / "figures" / "sweep.png")
    close_figure(fig)


def score_chosen(out, result: dict, test_logs: Sequence) -> dict:
    """Score the chosen setting of :func:`run_sweep` once on ``test_logs``, beside the baselines.

    Copies the chosen model to ``out/model`` and writes ``predictions.csv`` (test depths).

    Returns
    -------
    dict
        ``{"test": metrics per model, "model": the transformer's, "baselines": the others'}``.
    """
    row = result["rows"][result["chosen"]]
    source = Path(row["model_dir"])
    for folder in (source, source.with_name(source.name + "_lstm")):
        for f in sorted([*folder.glob("model.*"), *folder.glob("*.skops")]) if folder.is_dir() else ():
            target = Path(out) / ("model" if folder == source else "model_lstm") / f.name
            target.parent.mkdir(parents=True, exist_ok=True)
            io.atomic_write_bytes(target, f.read_bytes())
    wm = load_fitted(source)
    rows, metrics = evaluate_split(wm, test_logs, "test")
    write_csv(Path(out) / "predictions.csv", rows)
    return {"test": metrics, "model": metrics["transformer"],
            "baselines": {k: v for k, v in metrics.items() if k != "transformer"}}


def finish_sweep(out, result: dict, test_logs: Sequence | None = None, *, config: dict | None = None,
                 attribution: str | None = None) -> dict:
    """Score the chosen setting on ``test_logs`` (when given) and write ``metrics.json`` and ``config.json``.

    Returns
    -------
    dict, as written to ``metrics.json``: ``selection`` (split "validation", metric, the chosen
    setting and its validation metrics), ``grid`` (every row of the sweep), ``skipped``, and with
    test logs ``test`` / ``model`` / ``baselines`` (the chosen setting's test metrics beside the
    baselines') and ``verdict`` (in words: does a baseline beat the transformer on test?).
    """
    unit, row = result["unit"], result["rows"][result["chosen"]]
    metrics = {"title": "glassformer sweep", "units": {"rmse": unit, "mae": unit, "r2": "dimensionless"},
               "selection": {"split": "validation", "metric": "rmse of the transformer (lowest wins)",
                             "chosen": row["setting"], "setting": {k: row[k] for k in GRID_KEYS},
                             "validation": {"transformer": {k: row[f"val_{k}"] for k in ("rmse", "mae", "r2", "n")},
                                            **result["validation_baselines"]}},
               "grid": [{k: v for k, v in r.items() if k != "model_dir"} for r in result["rows"]],
               "skipped": result["skipped"]}
    if test_logs:
        metrics.update(score_chosen(out, result, test_logs))
        metrics["verdict"] = _verdict(metrics["test"])
    else:
        metrics["verdict"] = "no test data given: the chosen setting was not scored on held-out data"
    if attribution:
        metrics["attribution"] = attribution
    write_json(Path(out) / "metrics.json", metrics)
    write_json(Path(out) / "config.json", {"title": "glassformer sweep", "grid_keys": list(GRID_KEYS),
                                           **(config or {})})
    return metrics


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
