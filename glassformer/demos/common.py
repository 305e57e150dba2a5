"""What every run folder shares: the folder, JSON/CSV writing, figures, and the well-log pipeline.

A *run folder* (``glassformer demo`` / ``glassformer train``) holds::

    model/model.npz, model/model.json   the trained SequenceRegressor (+ pipeline metadata)
    model_lstm/                         the LSTMRegressor of the comparison (when one was trained)
    config.json                         every setting used
    metrics.json                        RMSE, MAE, R² of the model and the baselines; "comparison":
                                        mean ± sd over seeds, parameter counts, fit times
    predictions.csv                     one row per depth sample, one column per model
    figures/*.png                       loss curve, every model against depth, cross-plot, attention
    report.html                         everything above in one self-contained page

All files are written atomically (glassformer.io).  Figures are drawn by :func:`write_figures`
with :mod:`glassformer.plots`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .. import io
from ..baselines import PorosityPermeabilityTransform, TrainingMean, regression_metrics
from ..data.scaling import Log10Transform, MinMaxScaler, scaler_from_dict
from ..data import WellLog
from ..data.windows import contiguous_runs, make_windows, stitch_windows
from ..errors import DataFileError, InputError
from ..models import LSTMRegressor, SequenceRegressor

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


def demo_settings(where: str, quick: bool, quick_cfg: dict, full_cfg: dict, overrides: dict) -> dict:
    """The quick or full settings of a demo with ``overrides`` applied.

    Raises
    ------
    InputError
        If an override names a setting the demo does not have (the message lists the known ones).
    """
    cfg = dict(quick_cfg if quick else full_cfg)
    unknown = set(overrides) - set(cfg)
    if unknown:
        raise InputError(f"{where}: unknown setting(s) {sorted(unknown)}; known: {sorted(cfg)}")
    cfg.update(overrides)
    return cfg


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
                  attention=None, attention_depths=None, depth_unit="m", title="", extra=None,
                  attention_title=None) -> list:
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
        save(_comparison_figure(plots, depth, observed, predictions, boundary=boundary, quantity=quantity, unit=unit,
                                log_scale=log_scale, depth_unit=depth_unit, title=title), "prediction_vs_depth.png")
    if porosity is not None and permeability is not None:
        ax = plots.plot_crossplot(porosity, permeability, log_perm=log_perm, labels=crossplot_labels,
                                  porosity_unit=porosity_unit, depth_unit=depth_unit,
                                  title=f"{title} porosity-permeability".strip())
        save(ax, "crossplot.png")
    if attention is not None:
        A = np.asarray(attention, dtype=float)
        # Near-uniform weights on a fixed 0-1 scale are one flat colour: stretch the scale to min-max
        # (and say so in the title) so the small contrasts the model did learn stay visible.
        flat = float(np.ptp(A)) < 0.25
        # Long depth labels (e.g. 2223.5) on 16 ticks run into each other: fewer ticks then.
        long_labels = attention_depths is not None and max(len(f"{v:g}") for v in np.ravel(attention_depths)) >= 4
        ax = plots.plot_attention(A, query_depths=attention_depths, vmin=None if flat else 0.0,
                                  vmax=None, depth_unit=depth_unit, max_ticks=8 if long_labels else 16,
                                  title=(attention_title or f"{title} attention weights (layer 0, head 0)"
                                         + ("\ncolour scale stretched to min-max: weights are near uniform"
                                            if flat else "")).strip())
        save(ax, "attention.png")
    for name, make in (extra or {}).items():
        save(make(), f"{name}.png")
    return written


#: Above this many samples the comparison figure adds a zoomed panel (lines of 4000 samples overlap).
ZOOM_SAMPLES = 200


def _comparison_figure(plots, depth, observed, predictions, *, boundary, quantity, unit, log_scale, depth_unit,
                       title):
    """Every model against depth; a long log gets a second panel zoomed on a stretch below the boundary
    (300 samples, or a fifth of the log if that is shorter, at least 60)."""
    depth = np.asarray(depth, dtype=float)
    kw = dict(quantity=quantity, unit=unit, log_scale=log_scale, depth_unit=depth_unit)
    if len(depth) <= ZOOM_SAMPLES:
        return plots.plot_comparison(depth, observed, predictions, boundary=boundary,
                                     title=f"{title} observed and predicted".strip(), **kw)
    fig = plots._new_figure((11.0, 7.5))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    plots.plot_comparison(depth, observed, predictions, boundary=boundary, ax=left,
                          title=f"{title} all depths".strip(), **kw)
    start = int(np.searchsorted(depth, boundary, side="right")) if boundary is not None else 0
    # Begin where there is something to compare (logs often start with missing inputs or target).
    seen = np.isfinite(np.asarray(observed, dtype=float))
    seen[:start] = False
    start = int(np.argmax(seen)) if seen.any() else start
    n_zoom = min(300, max(60, len(depth) // 5))
    start = min(start, max(0, len(depth) - n_zoom))
    sl = slice(start, start + n_zoom)
    plots.plot_comparison(depth[sl], np.asarray(observed)[sl], {k: np.asarray(v)[sl] for k, v in predictions.items()},
                          boundary=boundary if boundary is not None and depth[sl][0] <= boundary else None, ax=right,
                          title=f"zoom: {depth[sl][0]:g} to {depth[sl][-1]:g} {depth_unit}"
                                + (" (start of the forecast)" if boundary is not None else ""), **kw)
    left.get_legend().remove()
    return fig


def write_trace_figures(run_dir, trace, depth, *, intervals=None, sequences=(0,), sample=0, depth_unit="m") -> list:
    """Seed 000's look inside the model, from one ``model.trace(...)``, into ``run_dir/figures``.

    Writes ``positional_encoding.png`` (P against depth), ``embeddings.png`` (E, P, Z side by side),
    ``qkv.png`` (layer 0, batch element ``sample``), ``value_vs_output.png`` (V and U of
    ``sequences``) and ``stages.png`` (Z, T1, R, F, T2, H of ``sequences``).  ``intervals``
    (e.g. ``{"train": (0.5, 7.5), "forecast": (7.5, 14.5)}``) are shaded on the depth plots.
    Returns the written paths.
    """
    from .. import plots

    figdir = Path(run_dir) / "figures"
    written = []
    depth = np.asarray(depth, dtype=float)
    P = np.asarray(trace["P"])
    P = P[sample] if P.ndim == 3 else P
    makers = {
        "positional_encoding": lambda: plots.plot_positional_encoding(depth, P, intervals=intervals,
                                                                      depth_unit=depth_unit),
        "embeddings": lambda: plots.plot_trace_embeddings(trace, depth, sample=sample, intervals=intervals,
                                                          depth_unit=depth_unit),
        "qkv": lambda: plots.plot_trace_qkv(trace, depth, sample=sample, intervals=intervals, depth_unit=depth_unit),
        "value_vs_output": lambda: plots.plot_trace_value_vs_output(trace, depth, sequences=sequences,
                                                                    depth_unit=depth_unit),
        "stages": lambda: plots.plot_trace_stages(trace, depth, sequences=sequences, depth_unit=depth_unit),
    }
    for name, make in makers.items():
        fig = make()
        written.append(plots.save_figure(fig, figdir / f"{name}.png"))
        _close(fig)
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
    lstm_params : dict or None
        Keyword arguments for :class:`~glassformer.models.LSTMRegressor`; when given, an LSTM is
        trained beside the transformer on exactly the same windows, scaling and targets (the
        comparison of issue 6).  None (default): transformer only.
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
    lstm_params: dict | None = None

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
        seconds = {}
        t0 = time.perf_counter()
        self.model.fit(X, Y, shared, callbacks=callbacks)
        seconds["transformer"] = time.perf_counter() - t0
        self.lstm = None
        if self.lstm_params is not None:
            lp = dict(self.lstm_params)
            lp["n_features"] = len(self.inputs)
            lp.setdefault("n_targets", params["n_targets"])
            self.lstm = LSTMRegressor(**lp)
            t0 = time.perf_counter()
            self.lstm.fit(X, Y)          # the same windows; the LSTM ignores positions
            seconds["LSTM"] = time.perf_counter() - t0
        self.n_train_windows_ = int(len(X))
        t0 = time.perf_counter()
        self.baseline_ppt = PorosityPermeabilityTransform().fit_log10(*self._porosity_and_target(train_logs)) \
            if self.log_target else PorosityPermeabilityTransform(floor_mD=self.floor_mD).fit(
                *self._porosity_and_target(train_logs))
        seconds["porosity-permeability transform"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.baseline_mean = TrainingMean().fit(None, np.concatenate([self.target_values(g) for g in train_logs]))
        seconds["training mean"] = time.perf_counter() - t0
        self.fit_seconds_ = seconds
        return self

    def models(self) -> dict:
        """The trained sequence models by name: ``{"transformer": ..., "LSTM": ...}`` (LSTM when fitted)."""
        out = {"transformer": self.model}
        if getattr(self, "lstm", None) is not None:
            out["LSTM"] = self.lstm
        return out

    def parameter_counts(self) -> dict:
        """Trainable parameters per model: the networks' counts, 2 (slope, intercept) and 1 (mean)."""
        out = {name: int(m.num_parameters()) for name, m in self.models().items()}
        out.update({"porosity-permeability transform": 2, "training mean": 1})
        return out

    def _porosity_and_target(self, logs):
        phi = np.concatenate([np.asarray(g.curve(self.inputs[0]), dtype=np.float64) for g in logs])
        k = np.concatenate([self.target_values(g) for g in logs])
        return phi, k

    # --- prediction ----------------------------------------------------------------------------
    def predict_log(self, log: WellLog, model=None) -> np.ndarray:
        """Prediction per sample of ``log`` in target units (log10 mD); NaN where inputs are missing.

        ``model``: the transformer (default) or another fitted window model, e.g. ``pipe.lstm``.
        """
        model = self.model if model is None else model
        n = len(log)
        out = np.full(n, np.nan)
        stride = max(1, self.window // 2)
        for x, _, pos, idx in self._windows(log, stride, False, True):
            shared = pos[0] if self.positions == "index" else pos
            pred = model.predict(x, shared)[..., 0]
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


#: Column stem of each model in predictions.csv.
_COLUMN = {"transformer": "transformer", "LSTM": "lstm", "porosity-permeability transform": "poro_perm_transform",
           "training mean": "training_mean"}


def evaluate_split(pipe: WellPipeline, logs, split: str):
    """Predict every log of a split with every model; return (rows for predictions.csv, metrics per model).

    Models, in this order: the transformer, the LSTM (when the pipeline has one), the
    porosity-permeability transform and the training mean.
    """
    import pandas as pd

    frames, truth, preds = [], [], {}
    unit = "log10_mD" if pipe.log_target else "mD"
    for g in logs:
        y = pipe.target_values(g)
        frame = {"well": g.name, "split": split, "depth": g.depth}
        for m in pipe.inputs:
            frame[m] = g.curve(m)
        frame[f"{pipe.target}_observed_{unit}"] = y
        outputs = {name: pipe.predict_log(g, model) for name, model in pipe.models().items()}
        outputs.update(pipe.predict_baselines(g))
        for name, p in outputs.items():
            frame[f"{_COLUMN.get(name, name)}_{unit}"] = p
            preds.setdefault(name, []).append(p)
        frames.append(pd.DataFrame(frame))
        truth.append(y)
    t = np.concatenate(truth)
    metrics = {}
    for name, parts in preds.items():
        q = np.concatenate(parts)
        ok = np.isfinite(t) & np.isfinite(q)
        metrics[name] = regression_metrics(t[ok], q[ok]) if ok.sum() >= 2 else {"rmse": None, "mae": None,
                                                                                 "r2": None, "n": int(ok.sum())}
    return pd.concat(frames, ignore_index=True), metrics


def summarise_runs(runs: list, split: str = "test") -> dict:
    """Mean and sample standard deviation over seeds of each model's metrics on ``split``.

    Parameters
    ----------
    runs : list of dict
        One per seed: ``{"seed", "metrics": {split: {model: {"rmse", "mae", "r2", "n"}}},
        "parameters": {model: int}, "seconds": {model: float}}``.

    Returns
    -------
    dict
        ``{"table": {model: {"rmse", "rmse_sd", "mae", "mae_sd", "r2", "r2_sd", "parameters",
        "train_s", "train_s_sd", "n"}}, "per_seed": {model: {"rmse": [...], ...}}}``; the ``_sd``
        entries are None for a single seed (no spread to report).
    """
    table, per_seed = {}, {}
    for name in runs[0]["metrics"][split]:
        cols = {"rmse": [], "mae": [], "r2": [], "train_s": []}
        for r in runs:
            m = r["metrics"][split][name]
            for k in ("rmse", "mae", "r2"):
                cols[k].append(np.nan if m[k] is None else float(m[k]))
            cols["train_s"].append(float(r["seconds"].get(name, np.nan)))
        row = {}
        for k, vals in cols.items():
            v = np.asarray(vals)
            row[k] = float(np.mean(v))
            row[f"{k}_sd"] = float(np.std(v, ddof=1)) if len(v) > 1 else None
        row["parameters"] = runs[0]["parameters"].get(name)
        row["n"] = runs[0]["metrics"][split][name]["n"]
        table[name] = {k: row[k] for k in ("rmse", "rmse_sd", "mae", "mae_sd", "r2", "r2_sd", "parameters",
                                           "train_s", "train_s_sd", "n")}
        per_seed[name] = {k: list(v) for k, v in cols.items()}
    return {"table": table, "per_seed": per_seed}


def _seeds_for(pipe: WellPipeline, seeds) -> list:
    if seeds is None:
        return [int(pipe.model_params.get("random_state", 42))]
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise InputError("seeds: give at least one seed")
    return seeds


def _with_seed(pipe: WellPipeline, seed: int) -> WellPipeline:
    """A copy of ``pipe`` whose transformer and LSTM both draw from ``seed`` (init, shuffling, split)."""
    lstm = None if pipe.lstm_params is None else dict(pipe.lstm_params, random_state=seed)
    return replace(pipe, model_params=dict(pipe.model_params, random_state=seed), lstm_params=lstm)


def run_well_experiment(out, train_logs, test_logs, pipe: WellPipeline, *, title: str, echo: Callable = print,
                        config: dict | None = None, attribution: str | None = None, boundary=None,
                        overwrite: bool = True, seeds=None, report: bool = True) -> dict:
    """Fit ``pipe`` on ``train_logs`` (once per seed), evaluate on both splits and write a complete run folder.

    Every model -- transformer, LSTM (when ``pipe.lstm_params`` is set), porosity-permeability
    transform, training mean -- sees the same windows, scaling, split and seed.  With several
    ``seeds`` the networks are retrained per seed and ``metrics["comparison"]`` holds mean and
    standard deviation; predictions, saved models and figures are those of the first seed.
    Ends with ``report.html`` (:func:`glassformer.report.write_report`) unless ``report=False``.

    Returns the metrics dict written to ``metrics.json``.
    """
    import pandas as pd

    out = prepare_run_dir(out, overwrite=overwrite)
    seeds = _seeds_for(pipe, seeds)
    runs, first = [], None
    for i, seed in enumerate(seeds):
        p = _with_seed(pipe, seed)
        if i == 0:
            pipe.model_params, pipe.lstm_params = p.model_params, p.lstm_params
            p = pipe
        p.fit(train_logs)
        train_rows, train_metrics = evaluate_split(p, train_logs, "train")
        test_rows, test_metrics = evaluate_split(p, test_logs, "test")
        runs.append({"seed": seed, "metrics": {"train": train_metrics, "test": test_metrics},
                     "parameters": p.parameter_counts(), "seconds": dict(p.fit_seconds_)})
        if i == 0:
            first = (train_rows, test_rows, train_metrics, test_metrics)
        if len(seeds) > 1:
            echo(f"  seed {seed}: " + ", ".join(f"{k} RMSE {v['rmse']:.4f}" for k, v in test_metrics.items()
                                                 if v["rmse"] is not None))
    train_rows, test_rows, train_metrics, test_metrics = first
    hist = pipe.model.history_
    unit = "log10 mD" if pipe.log_target else "mD"
    test_summary, train_summary = summarise_runs(runs, "test"), summarise_runs(runs, "train")
    metrics = {
        "title": title,
        "units": {"rmse": unit, "mae": unit, "r2": "dimensionless", "rmse_sd": unit, "mae_sd": unit,
                  "train_s": "s", "train_s_sd": "s"},
        "test": test_metrics,
        "train": train_metrics,
        "model": test_metrics["transformer"],
        "baselines": {k: v for k, v in test_metrics.items() if k != "transformer"},
        "comparison": {"split": "test", "seeds": seeds, "table": test_summary["table"],
                       "train_table": train_summary["table"], "per_seed": test_summary["per_seed"],
                       "note": ("Mean over seeds (sample sd beside it, none for one seed) on the test split; "
                                "every model uses the same windows, scaling and seed. train_s is the wall-clock "
                                "fit time in s on this machine; parameters counts trainable values "
                                "(2 for the transform: slope and intercept; 1 for the mean).")},
        "training": _training_summary(hist, pipe.n_train_windows_),
    }
    if pipe.lstm is not None:
        metrics["training_lstm"] = _training_summary(pipe.lstm.history_, pipe.n_train_windows_)
    if attribution:
        metrics["attribution"] = attribution
    pipe.save(out / "model", overwrite=True)
    if pipe.lstm is not None:
        pipe.lstm.save(out / "model_lstm", overwrite=True, extra={"pipeline": pipe.to_dict()})
    cfg = {"title": title, "pipeline": pipe.to_dict(), "model": pipe.model.get_params(),
           "seeds": seeds,
           "train_wells": [{"name": g.name, "source": g.source, "top": float(g.depth[0]), "base": float(g.depth[-1])}
                           for g in train_logs],
           "test_wells": [{"name": g.name, "source": g.source, "top": float(g.depth[0]), "base": float(g.depth[-1])}
                          for g in test_logs]}
    if pipe.lstm is not None:
        cfg["lstm"] = pipe.lstm.get_params()
    cfg.update(config or {})
    if attribution:
        cfg["attribution"] = attribution
    write_json(out / "config.json", cfg)
    write_json(out / "metrics.json", metrics)
    rows = pd.concat([train_rows, test_rows], ignore_index=True)
    write_csv(out / "predictions.csv", rows)
    # Figures: the first test well against depth (with the training log above it when it is the same well).
    show = test_logs[0]
    same = rows[rows["well"] == show.name].drop_duplicates("depth", keep="last").sort_values("depth")
    ucol = "log10_mD" if pipe.log_target else "mD"
    A, A_depth = pipe.attention_window(show)
    phi_all = np.concatenate([np.asarray(g.curve(pipe.inputs[0])) for g in train_logs])
    k_all = np.concatenate([np.asarray(g.curve(pipe.target)) for g in train_logs])
    names = list(pipe.models()) + ["porosity-permeability transform", "training mean"]
    write_figures(out, history=hist, depth=same["depth"].to_numpy(),
                  observed=same[f"{pipe.target}_observed_{ucol}"].to_numpy(),
                  predictions={("poro-perm transform" if n.startswith("porosity") else n):
                               same[f"{_COLUMN[n]}_{ucol}"].to_numpy() for n in names},
                  boundary=boundary, quantity=pipe.target,
                  unit=unit, porosity=phi_all, permeability=np.where(k_all > 0, k_all, np.nan),
                  attention=A, attention_depths=None if A_depth is None else np.round(A_depth, 2), title=title)
    echo(format_comparison_table(metrics, unit))
    if report:
        from ..report import write_report

        write_report(out)
    return metrics


def _training_summary(hist, n_windows: int) -> dict:
    return {"epochs_run": len(hist), "stop_reason": hist.stop_reason, "best_epoch": hist.best_epoch,
            "final_train_loss": hist.train_loss[-1] if len(hist) else None, "n_train_windows": n_windows,
            "seconds": hist.seconds}


def format_metrics_table(metrics: dict, unit: str) -> str:
    """Plain-text table of the test metrics (model first, then baselines)."""
    lines = [f"{metrics.get('title', '')} -- test split (RMSE, MAE in {unit})",
             f"  {'model':<34}{'RMSE':>12}{'MAE':>12}{'R2':>12}{'n':>8}"]
    for name, m in metrics["test"].items():
        lines.append(f"  {name:<34}{_num(m['rmse'])}{_num(m['mae'])}{_num(m['r2'])}{m['n']:>8}")
    return "\n".join(lines)


def _num(v, width=12, digits=4, kind="g") -> str:
    """``v`` right-aligned in ``width`` characters, always led by a space so that columns stay apart.

    ``kind="g"`` (4 significant digits, exponent when needed) fits any magnitude -- a diverged
    run's 3.3e+24 as well as 0.1234; a value wider than the column widens it instead of touching
    its neighbour.  Missing or non-finite values print as ``-``.
    """
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return " " + (f"{v:>{width - 1}.{digits}{kind}}" if ok else f"{'-':>{width - 1}}")


def format_comparison_table(metrics: dict, unit: str, key: str = "table") -> str:
    """Plain-text comparison table: mean (± sd over seeds) of RMSE, MAE, R², parameters, fit time."""
    comp = metrics["comparison"]
    seeds = comp["seeds"]
    split = "training interval" if key == "train_table" else str(comp.get("split", "test"))
    split = split if " " in split else f"{split} split"
    spread = len(seeds) > 1
    width = 25 if spread else 12
    head = f"{metrics.get('title', '')} -- {split}, RMSE/MAE in {unit}"
    head += f", mean ± sd over seeds {seeds}" if spread else f", seed {seeds[0]}"
    lines = [head, f"  {'model':<32}{'RMSE':>{width}}{'MAE':>{width}}{'R2':>{width}}{'params':>9}{'train s':>10}"]
    for name, r in comp[key].items():
        def cell(k):
            return _num(r[k]) + (f" ± {_num(r[k + '_sd'], 10).strip():<10}" if spread else "")
        cells = "".join(f"{cell(k):>{width}}" for k in ("rmse", "mae", "r2"))
        lines.append(f"  {name:<32}{cells} {r['parameters']:>8}{_num(r['train_s'], 10, 2, 'f')}")
    return "\n".join(lines)
