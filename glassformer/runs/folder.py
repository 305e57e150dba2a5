"""The run folder: created once its inputs are valid, never silently replaced, written atomically.

A *run folder* (``glassformer demo``, ``train``, ``compare``) holds::

    model/model.npz, model/model.json   the trained model (+ the well model's metadata)
    model_lstm/                         the LSTM of a comparison (when one was trained)
    config.json                         every setting used
    metrics.json                        RMSE, MAE, R² of the model and the baselines
    predictions.csv                     one row per depth sample, one column per model
    figures/*.png                       loss curve, models against depth, cross-plot, attention
    report.html                         everything above in one self-contained page

Every file is written atomically (:mod:`glassformer.io`): an interrupted run leaves each file
either complete or absent.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from .. import io
from ..errors import InputError

__all__ = ["check_out_folder", "file_slug", "prepare_run_dir", "write_csv", "write_json"]


def check_out_folder(out, *, overwrite: bool, label: str = "--out") -> Path:
    """Refuse an ``out`` that is a file, or an existing non-empty folder unless ``overwrite``; create nothing.

    Checking before any work starts means a run that fails on its inputs leaves no folder behind
    that would block the corrected rerun.

    Raises
    ------
    InputError
        ``out`` is a file, or a non-empty folder and ``overwrite`` is False (``label`` names the option).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{label} {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise InputError(f"{label} {out}: folder exists and is not empty; pass --overwrite to replace its files")
    return out


def prepare_run_dir(out, overwrite: bool = True) -> Path:
    """Create ``out`` and ``out/figures`` after :func:`check_out_folder`; returns the folder."""
    out = check_out_folder(out, overwrite=overwrite)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    return out


def write_json(path, obj) -> None:
    """Atomic JSON; NaN and inf become null, so every JSON reader accepts the file."""
    io.atomic_write_json(path, _clean(obj))


def _clean(obj):
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _clean(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def write_csv(path, frame) -> None:
    """Atomic CSV of a pandas DataFrame (no index column, 6 significant digits)."""
    io.atomic_write_text(path, frame.to_csv(index=False, float_format="%.6g"))


def file_slug(name: str) -> str:
    """``name`` (a well name such as ``15/9-F-11 B``) as part of a file name: runs of other characters than
    letters and digits become one ``_`` (``15_9_F_11_B``); ``"well"`` when nothing is left."""
    return re.sub(r"[^0-9A-Za-z]+", "_", str(name)).strip("_") or "well"
