"""The settings a sweep tries: the grid of transformer settings, and one setting's fit as an engine task.

The grid spans ``d_model``, ``num_heads``, ``num_layers``, ``window`` (samples) and ``lr`` (Adam's
learning rate).  Each setting is one task, :func:`fit_setting` (plain arguments: the base model's
specification, the setting as a dict, the logs, the folder to save the fitted model into), so the
grid runs on any :mod:`glassformer.parallel` engine with results identical to a serial run.
"""

from __future__ import annotations

import itertools
import math

from ..errors import InputError
from ..models import SequenceRegressor
from .evaluation import evaluate_split
from .model import WellModel

__all__ = ["GRID_KEYS", "fit_setting", "setting_folder", "setting_grid", "setting_label"]

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
