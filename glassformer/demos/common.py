"""What every run folder shares: the folder, JSON/CSV writing, figures, and the well-log pipeline.

A *run folder* (``glassformer demo`` / ``glassformer train``) holds::

    model/model.npz, model/model.json   the trained SequenceRegressor (+ pipeline metadata)
    config.json                         every setting used
    metrics.json                        RMSE, MAE, R² of the model and the baselines
    predictions.csv                     one row per depth sample
    figures/*.png                       loss curve, prediction vs depth, cross-plot, attention

All files are written atomically (glassformer.io).  Figures are drawn by :func:`write_figures`
with :mod:`glassformer.plots`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .. import io
from ..baselines import PorosityPermeabilityTransform, TrainingMean, regression_metrics
from ..data.scaling import Log10Transform, MinMaxScaler, scaler_from_dict
from ..data.wells import WellLog
from ..data.windows import contiguous_runs, make_windows, stitch_windows
from ..errors import DataFileError, InputError
from ..models import SequenceRegressor

VOLVE_ATTRIBUTION = (
    "Data: Volve field data set, courtesy of Equinor and the Volve licence partners, released under the "
    "Equinor Open Data Licence. https://www.equinor.com/energy/volve-data-sharing - files obtained via "
    "github.com/andymcdgeo/spwla_volve and github.com/andymcdgeo/Petrophysics-Python-Series (A. McDonald)."
)

#: Pipeline metadata format stored in ``model.json["extra"]`` by :class:`WellPipeline`.
PIPELINE_VERSION = 1


# ---------------------------------------------------------------------------------------------
# run folder helpers
# ---------------------------------------------------------------------------------------------
def prepare_run_dir(out, overwrite: bool = True) -> Path:
    """Create ``out`` (and ``out/figures``); refuse a non-empty folder unless ``overwrite``.

    Raises
    ------
    InputError
        If ``out`` exists, is not empty and ``overwrite`` is False, or is a file.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise InputError(f"--out {out}: folder exists and is not empty; pass --overwrite to replace its files")
    (out / "figures").mkdir(parents=True, exist_ok=True)
    return out


def write_json(path, obj) -> None:
    """Atomic JSON (NaN/inf become null so every reader accepts the file)."""
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
    """Atomic CSV of a pandas DataFrame (no index column)."""
    io.atomic_write_text(path, frame.to_csv(index=False, float_format="%.6g"))


def write_figures(run_dir, *, history=None, depth=None, observed=None, predictions=None, boundary=None,
                  quantity="log10 permeability", unit="log10 mD", log_scale=False, porosity=None,
                  permeability=None, log_perm=True, porosity_unit="fraction", crossplot_labels=None,
                  attention=None, attention_depths=None, depth_unit="m", title="", extra=None) -> list:
    """Write the standard figures of a run into ``run_dir/figures`` and return their paths.

    Every argument group is optional; a figure is drawn when its data are given:

    * ``loss.png`` -- ``history`` (a :class:`~glassformer.training.History`);
    * ``prediction_vs_depth.png`` -- ``depth``, ``observed`` and ``predictions`` (dict name -> array)
      with the train/forecast ``boundary`` depth;
    * ``crossplot.png`` -- ``porosity`` against ``permeability`` (mD, or log10 if ``log_perm`` is False);
    * ``attention.png`` -- one ``attention`` matrix (query x key) labelled with ``attention_depths``;
    * ``extra``: dict name -> callable(ax-less) returning a Figure/Axes, saved as ``<name>.png``.

    The single place where run figures are drawn, so the plotting back end can be swapped.
    """
    from .. import plots

    figdir = Path(run_dir) / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    written = []

    def save(fig, name):
        written.append(plots.save_figure(fig, figdir / name))
        _close(fig)

    if history is not None and len(history.train_loss):
        h = {"train": history.train_loss}
        if any(np.isfinite(history.val_loss)):
            h["val"] = history.val_loss
        save(plots.plot_loss(h, title=f"{title} loss per epoch".strip()), "loss.png")
    if depth is not None and observed is not None and predictions:
        ax = plots.plot_comparison(depth, observed, predictions, boundary=boundary, quantity=quantity, unit=unit,
                                   log_scale=log_scale, depth_unit=depth_unit,
                                   title=f"{title} observed and predicted".strip())
        save(ax, "prediction_vs_depth.png")
    if porosity is not None and permeability is not None:
        ax = plots.plot_crossplot(porosity, permeability, log_perm=log_perm, labels=crossplot_labels,
                                  porosity_unit=porosity_unit, depth_unit=depth_unit,
                                  title=f"{title} porosity-permeability".strip())
        save(ax, "crossplot.png")
    if attention is not None:
        ax = plots.plot_attention(attention, query_depths=attention_depths, vmax=None, depth_unit=depth_unit,
                                  title=f"{title} attention weights (layer 0, head 0)".strip())
        save(ax, "attention.png")
    for name, make in (extra or {}).items():
        save(make(), f"{name}.png")
    return written


def _close(fig) -> None:
    import matplotlib.pyplot as plt

    figure = fig if hasattr(fig, "savefig") else getattr(fig, "figure", None)
    if figure is None:
        figure = np.asarray(fig, dtype=object).flat[0].figure
    plt.close(figure)


# ---------------------------------------------------------------------------------------------
# the well-log pipeline (used by the synthetic-wells and real-wells demos and `glassformer train`)
# ---------------------------------------------------------------------------------------------
@dataclass
class WellSplit:
    """The logs of one split, already restricted to their depth intervals."""

    logs: list
    name: str = "train"


@dataclass
class WellPipeline:
    """Windows, scaling, a SequenceRegressor and the baselines for per-depth regression on wells.

    Parameters
    ----------
    inputs : list of str
        Input curve mnemonics; the first is taken as porosity for the baseline transform.
    target : str
        Target curve mnemonic (permeability, mD unless ``log_target`` is False).
    log_target : bool, default True
        Model ``log10(max(k, floor))`` (Log10Transform, floor ``floor_mD`` mD); metrics are then in
        log10 mD.
    window : int, default 32
        Samples per window (T).
    stride : int or None
        Step between training windows (default ``window // 2``).
    positions : {"index", "depth"}
        Position of each sample: its index inside the window (1..T) or its depth (file unit, m).
    model_params : dict
        Keyword arguments for :class:`SequenceRegressor` (n_features is set from ``inputs``).
    floor_mD : float, default 1e-3

    Notes
    -----
    Scalers are fitted on the training split only (no leakage): min-max for the inputs, standard
    scaling for the (log) target.  Windows never straddle gaps in the inputs (each gap-free run is
    windowed separately; a run shorter than T is predicted as one shorter window).  NaN targets are
    masked out of the loss.  Predictions of overlapping windows are averaged per depth.
    """

    inputs: Sequence[str]
    target: str
    log_target: bool = True
    window: int = 32
    stride: int | None = None
    positions: str = "index"
    model_params: dict = field(default_factory=dict)
    floor_mD: float = 1e-3

    def __post_init__(self):
        self.inputs = [str(m).upper() for m in self.inputs]
        self.target = str(self.target).upper()
        if not self.inputs:
            raise InputError("WellPipeline: at least one input curve is needed")
        if self.positions not in ("index", "depth"):
            raise InputError(f"WellPipeline: positions must be 'index' or 'depth', got {self.positions!r}")
        if int(self.window) < 2:
            raise InputError(f"WellPipeline: window must be >= 2 samples, got {self.window!r}")
        self.window = int(self.window)
        self.stride = int(self.stride) if self.stride else max(1, self.window // 2)
        self.log = Log10Transform(self.floor_mD) if self.log_target else None

    # --- arrays of one log --------------------------------------------------------------------
    def _arrays(self, log: WellLog, need_target: bool = True):
        X = log.matrix(self.inputs).astype(np.float64)
        y = None
        if need_target:
            y = np.asarray(log.curve(self.target), dtype=np.float64)
            if self.log is not None:
                y = self.log.transform(y)
        return X, y

    def target_values(self, log: WellLog) -> np.ndarray:
        """The target of ``log`` in model units (log10 mD when ``log_target``), NaN = missing."""
        return self._arrays(log)[1]

    def _fit_scalers(self, logs) -> None:
        Xs, ys = zip(*(self._arrays(g) for g in logs))
        X = np.concatenate(Xs)
        y = np.concatenate(ys)
        ok = np.isfinite(X).all(axis=1)
        if not ok.any():
            raise DataFileError(f"no training depth has all inputs {self.inputs} present")
        if not np.isfinite(y).any():
            raise DataFileError(f"no training depth has the target {self.target}")
        self.x_scaler = MinMaxScaler().fit(X[ok])
        # Standard scaling of the target puts the (log) permeability at unit scale for the model.
        from ..data.scaling import StandardScaler

        self.y_scaler = StandardScaler().fit(y[np.isfinite(y)][:, None])

    def _positions(self, log: WellLog, idx: np.ndarray) -> np.ndarray:
        if self.positions == "depth":
            return log.depth[idx]
        return np.broadcast_to(np.arange(1, idx.shape[-1] + 1, dtype=np.float64), idx.shape).copy()

    def _windows(self, log: WellLog, stride: int, with_target: bool, pad_last: bool):
        """Windows of every gap-free input run: list of (x, y, positions, sample index) arrays."""
        X, y = self._arrays(log, need_target=with_target)
        Xs = self.x_scaler.transform(X)
        ys = None if y is None else self.y_scaler.transform(y[:, None])
        ok = np.isfinite(X).all(axis=1)
        out = []
        for a, b in contiguous_runs(ok):
            n = b - a
            T = min(self.window, n)
            if n < self.window and with_target and not pad_last:
                continue                       # too short to train on
            w = make_windows(Xs[a:b], None if ys is None else ys[a:b], np.arange(a, b, dtype=np.float64),
                             window=T, stride=stride, pad_last=pad_last)
            idx = w.positions.astype(np.int64)
            out.append((w.x, w.y, self._positions(log, idx), idx))
        return out

    # --- training ----------------------------------------------------------------------------
    def fit(self, train_logs, *, callbacks=()) -> "WellPipeline":
        """Fit scalers and the model on the training logs (already cut to the training interval)."""
        train_logs = list(train_logs)
        self._fit_scalers(train_logs)
        parts = [w for g in train_logs for w in self._windows(g, self.stride, True, False)]
        if not parts:
            raise DataFileError(f"no gap-free run of {self.window} samples with inputs {self.inputs} in the "
                                "training interval; use a smaller --window")
        X = np.concatenate([p[0] for p in parts])
        Y = np.concatenate([p[1] for p in parts])
        P = np.concatenate([p[2] for p in parts])
        keep = np.isfinite(Y).any(axis=(1, 2))
        X, Y, P = X[keep], Y[keep], P[keep]
        params = dict(self.model_params)
        params["n_features"] = len(self.inputs)
        params.setdefault("n_targets", 1)
        self.model = SequenceRegressor(**params)
        shared = P[0] if self.positions == "index" else P
        self.model.fit(X, Y, shared, callbacks=callbacks)
        self.n_train_windows_ = int(len(X))
        self.baseline_ppt = PorosityPermeabilityTransform().fit_log10(*self._porosity_and_target(train_logs)) \
            if self.log_target else PorosityPermeabilityTransform(floor_mD=self.floor_mD).fit(
                *self._porosity_and_target(train_logs))
        self.baseline_mean = TrainingMean().fit(None, np.concatenate([self.target_values(g) for g in train_logs]))
        return self

    def _porosity_and_target(self, logs):
        phi = np.concatenate([np.asarray(g.curve(self.inputs[0]), dtype=np.float64) for g in logs])
        k = np.concatenate([self.target_values(g) for g in logs])
        return phi, k

    # --- prediction ----------------------------------------------------------------------------
    def predict_log(self, log: WellLog) -> np.ndarray:
        """Model prediction per sample of ``log`` in target units (log10 mD); NaN where inputs are missing."""
        n = len(log)
        out = np.full(n, np.nan)
        stride = max(1, self.window // 2)
        for x, _, pos, idx in self._windows(log, stride, False, True):
            shared = pos[0] if self.positions == "index" else pos
            pred = self.model.predict(x, shared)[..., 0]
            starts = idx[:, 0] - idx[0, 0]
            seg = stitch_windows(pred, starts, int(idx[-1, -1] - idx[0, 0] + 1))
            out[idx[0, 0]:idx[-1, -1] + 1] = self.y_scaler.inverse_transform(seg[:, None])[:, 0]
        return out

    def predict_baselines(self, log: WellLog) -> dict:
        phi = np.asarray(log.curve(self.inputs[0]), dtype=np.float64)
        ppt = self.baseline_ppt.predict_log10(phi) if self.log_target else self.baseline_ppt.predict(phi)
        return {"porosity-permeability transform": ppt,
                "training mean": np.full(len(log), self.baseline_mean.mean_)}

    def attention_window(self, log: WellLog, max_len: int | None = None):
        """``(A (T, T), depths (T,))``: layer-0 head-0 attention of the first full window of ``log``."""
        wins = self._windows(log, self.window, False, True)
        if not wins:
            return None, None
        x, _, pos, idx = wins[0]
        shared = pos[:1] if self.positions == "depth" else pos[0]
        tr = self.model.trace(x[:1], shared)
        A = tr["layers.0.A"][0, 0]
        return A, log.depth[idx[0]]

    # --- persistence ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"pipeline_version": PIPELINE_VERSION, "inputs": list(self.inputs), "target": self.target,
                "log_target": self.log_target, "floor_mD": self.floor_mD, "window": self.window,
                "stride": self.stride, "positions": self.positions,
                "x_scaler": self.x_scaler.to_dict(), "y_scaler": self.y_scaler.to_dict(),
                "baseline_ppt": {"slope": self.baseline_ppt.slope_, "intercept": self.baseline_ppt.intercept_},
                "baseline_mean": self.baseline_mean.mean_}

    def save(self, model_dir, overwrite: bool = True) -> None:
        self.model.save(model_dir, overwrite=overwrite, extra={"pipeline": self.to_dict()})

    @classmethod
    def load(cls, model_dir) -> "WellPipeline":
        """Rebuild a pipeline saved by :meth:`save` (a run folder or its ``model`` sub-folder).

        Raises
        ------
        ModelFileError
            No model there, or a model saved without pipeline metadata.
        """
        from ..errors import ModelFileError

        path = Path(model_dir)
        if (path / "model" / "model.json").exists():
            path = path / "model"
        model = SequenceRegressor.load(path)
        meta = (getattr(model, "extra_", None) or {}).get("pipeline")
        if not meta:
            raise ModelFileError(f"{model_dir}: the model has no well-pipeline metadata (inputs, scalers); "
                                 "it was not written by `glassformer train`")
        pipe = cls(meta["inputs"], meta["target"], meta["log_target"], meta["window"], meta["stride"],
                   meta["positions"], dict(model.get_params()), meta.get("floor_mD", 1e-3))
        pipe.model = model
        pipe.x_scaler = scaler_from_dict(meta["x_scaler"])
        pipe.y_scaler = scaler_from_dict(meta["y_scaler"])
        pipe.baseline_ppt = PorosityPermeabilityTransform()
        pipe.baseline_ppt.slope_ = meta["baseline_ppt"]["slope"]
        pipe.baseline_ppt.intercept_ = meta["baseline_ppt"]["intercept"]
        pipe.baseline_mean = TrainingMean()
        pipe.baseline_mean.mean_ = meta["baseline_mean"]
        return pipe


def evaluate_split(pipe: WellPipeline, logs, split: str):
    """Predict every log of a split; return (rows for predictions.csv, metrics per model)."""
    import pandas as pd

    frames, truth, preds = [], [], {"transformer": []}
    for g in logs:
        y = pipe.target_values(g)
        p = pipe.predict_log(g)
        base = pipe.predict_baselines(g)
        frame = {"well": g.name, "split": split, "depth": g.depth}
        for m in pipe.inputs:
            frame[m] = g.curve(m)
        unit = "log10_mD" if pipe.log_target else "mD"
        frame[f"{pipe.target}_observed_{unit}"] = y
        frame[f"transformer_{unit}"] = p
        frame[f"poro_perm_transform_{unit}"] = base["porosity-permeability transform"]
        frame[f"training_mean_{unit}"] = base["training mean"]
        frames.append(pd.DataFrame(frame))
        truth.append(y)
        preds["transformer"].append(p)
        for k, v in base.items():
            preds.setdefault(k, []).append(v)
    t = np.concatenate(truth)
    metrics = {}
    for name, parts in preds.items():
        q = np.concatenate(parts)
        ok = np.isfinite(t) & np.isfinite(q)
        metrics[name] = regression_metrics(t[ok], q[ok]) if ok.sum() >= 2 else {"rmse": None, "mae": None,
                                                                                 "r2": None, "n": int(ok.sum())}
    return pd.concat(frames, ignore_index=True), metrics


def run_well_experiment(out, train_logs, test_logs, pipe: WellPipeline, *, title: str, echo: Callable = print,
                        config: dict | None = None, attribution: str | None = None, boundary=None,
                        overwrite: bool = True) -> dict:
    """Fit ``pipe`` on ``train_logs``, evaluate on both splits and write a complete run folder.

    Returns the metrics dict written to ``metrics.json``.
    """
    import pandas as pd

    out = prepare_run_dir(out, overwrite=overwrite)
    pipe.fit(train_logs)
    hist = pipe.model.history_
    train_rows, train_metrics = evaluate_split(pipe, train_logs, "train")
    test_rows, test_metrics = evaluate_split(pipe, test_logs, "test")
    unit = "log10 mD" if pipe.log_target else "mD"
    metrics = {
        "title": title,
        "units": {"rmse": unit, "mae": unit, "r2": "dimensionless"},
        "test": test_metrics,
        "train": train_metrics,
        "model": test_metrics["transformer"],
        "baselines": {k: v for k, v in test_metrics.items() if k != "transformer"},
        "training": {"epochs_run": len(hist), "stop_reason": hist.stop_reason, "best_epoch": hist.best_epoch,
                     "final_train_loss": hist.train_loss[-1] if len(hist) else None,
                     "n_train_windows": pipe.n_train_windows_, "seconds": hist.seconds},
    }
    if attribution:
        metrics["attribution"] = attribution
    pipe.save(out / "model", overwrite=True)
    cfg = {"title": title, "pipeline": pipe.to_dict(), "model": pipe.model.get_params(),
           "train_wells": [{"name": g.name, "source": g.source, "top": float(g.depth[0]), "base": float(g.depth[-1])}
                           for g in train_logs],
           "test_wells": [{"name": g.name, "source": g.source, "top": float(g.depth[0]), "base": float(g.depth[-1])}
                          for g in test_logs]}
    cfg.update(config or {})
    if attribution:
        cfg["attribution"] = attribution
    write_json(out / "config.json", cfg)
    write_json(out / "metrics.json", metrics)
    rows = pd.concat([train_rows, test_rows], ignore_index=True)
    write_csv(out / "predictions.csv", rows)
    # Figures: the first test well against depth (with the training log above it when it is the same well).
    show = test_logs[0]
    same = rows[rows["well"] == show.name]
    ucol = "log10_mD" if pipe.log_target else "mD"
    A, A_depth = pipe.attention_window(show)
    phi_all = np.concatenate([np.asarray(g.curve(pipe.inputs[0])) for g in train_logs])
    k_all = np.concatenate([np.asarray(g.curve(pipe.target)) for g in train_logs])
    write_figures(out, history=hist, depth=same["depth"].to_numpy(),
                  observed=same[f"{pipe.target}_observed_{ucol}"].to_numpy(),
                  predictions={"transformer": same[f"transformer_{ucol}"].to_numpy(),
                               "poro-perm transform": same[f"poro_perm_transform_{ucol}"].to_numpy(),
                               "training mean": same[f"training_mean_{ucol}"].to_numpy()},
                  boundary=boundary, quantity=f"{pipe.target} (log10)" if pipe.log_target else pipe.target,
                  unit=unit, porosity=phi_all, permeability=np.where(k_all > 0, k_all, np.nan),
                  attention=A, attention_depths=None if A_depth is None else np.round(A_depth, 2), title=title)
    echo(format_metrics_table(metrics, unit))
    return metrics


def format_metrics_table(metrics: dict, unit: str) -> str:
    """Plain-text table of the test metrics (model first, then baselines)."""
    lines = [f"{metrics.get('title', '')} -- test split (RMSE, MAE in {unit})",
             f"  {'model':<34}{'RMSE':>9}{'MAE':>9}{'R2':>9}{'n':>8}"]
    for name, m in metrics["test"].items():
        def f(v):
            return f"{v:9.4f}" if isinstance(v, (int, float)) and v is not None and math.isfinite(v) else f"{'-':>9}"
        lines.append(f"  {name:<34}{f(m['rmse'])}{f(m['mae'])}{f(m['r2'])}{m['n']:>8}")
    return "\n".join(lines)
