"""The well-log job: input logs in, a permeability log out, beside the field's baselines.

:class:`WellModel` turns wells (:class:`~glassformer.data.WellLog`) into windows, scales them,
trains a window regressor (the transformer, and optionally the LSTM it is compared with), fits the
baselines on the same training data, predicts whole logs and saves all of it in one model folder.
It is what ``glassformer train`` / ``predict`` / ``compare`` and the well demos run, and what a
Python user calls::

    from glassformer.data import read_well
    from glassformer.wells import WellModel

    well = read_well("15_9-F11B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS")
    wm = WellModel(["PHIF", "VSH", "SW"], "KLOGH").fit([well.interval(3351.6, 4300)])
    log10_k = wm.predict_log(well)                         # (n_samples,), log10 mD, NaN where inputs are missing

Units: the target is permeability in mD, modelled as ``log10(max(k, floor_mD))`` when
``log_target`` (the default; predictions and metrics are then in log10 mD); inputs are used as
the file gives them (porosity v/v or %, the same at training and prediction time); positions are
the sample index inside the window or the depth in the file's unit.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Sequence

import numpy as np
from sklearn.base import clone

from ..data.scaling import Log10Transform, MinMaxScaler, StandardScaler, scaler_from_dict
from ..data import WellLog
from ..data.windows import contiguous_runs, make_windows, stitch_windows
from ..errors import DataFileError, InputError, ModelFileError
from ..models import LSTMRegressor, SequenceRegressor
from .baselines import PorosityPermeabilityTransform, TrainingMean
from .checks import training_record
from .splits import choose_validation, default_stride, small_data_warnings
from .tree_baselines import tree_baselines

__all__ = ["WellModel", "BASELINE_NAMES", "with_seed"]

#: Metadata format stored in ``model.json["extra"]["well_model"]``.
WELL_MODEL_VERSION = 3

#: The baselines every prediction is reported beside, in table order.
BASELINE_NAMES = ("porosity-permeability transform", "training mean")


class WellModel:
    """Windows, scaling, a window regressor and the baselines for per-depth regression on wells.

    Parameters
    ----------
    inputs : sequence of str
        Input curve mnemonics; the first is taken as porosity by the porosity-permeability transform.
    target : str
        Target curve mnemonic (permeability, mD).
    log_target : bool, default True
        Model ``log10(max(k, floor_mD))``; predictions and metrics are then in log10 mD.
    window : int, default 32
        Samples per window T (32 samples of 0.1 m = 3.2 m).
    stride : int or None, default None
        Step between training windows; None means ``window // 2``.  Prediction always uses
        ``window // 2`` and averages overlapping windows per depth.
    positions : {"index", "depth"}, default "index"
        Each sample's position: its index inside the window (1..T), or its depth (file unit).
    model : SequenceRegressor or None
        The (unfitted) transformer to train; None means ``SequenceRegressor()`` (the well defaults).
        It is cloned, never modified.
    lstm : LSTMRegressor or None
        When given, an LSTM trained beside the transformer on the same windows, scaling, targets
        and loop.
    floor_mD : float, default 1e-3
        Permeability floor before log10 (the Volve F-wells' lowest KLOGH).
    tree_baselines : bool, default True
        Also fit the random forest and gradient boosting baselines, each with and without depth
        context (:mod:`glassformer.wells.tree_baselines`), on the training logs.
    validation : {"deepest", "none"}, default "deepest"
        Early stopping of the networks without validation logs: on the deepest
        ``validation_fraction`` of each training log (a contiguous depth block the networks do
        not train on), or on nothing ("none": the training loss).  Random windows, which overlap
        training windows, are never used.
    validation_fraction : float, default 0.1
    random_state : int or None, default None
        Seed of the tree ensembles; None: the transformer's ``random_state``.

    Attributes
    ----------
    model_, lstm_ : the fitted regressors (``lstm_`` is None without ``lstm``)
    x_scaler_ : MinMaxScaler of the inputs; y_scaler_ : StandardScaler of the (log) target
    baselines_ : dict name -> fitted baseline (:data:`BASELINE_NAMES`, then the tree baselines)
    training_data_ : dict
        Depth unit, sample step, each input's unit and training range
        (:func:`glassformer.wells.checks.training_record`): what predictions are checked against.
    validation_ : dict
        How early stopping validated: ``{"method": text, "blocks": [{"well", "top", "base"}]}``.
    n_train_windows_ : int
    fit_seconds_ : dict name -> wall-clock fit time in s

    Notes
    -----
    Scalers and baselines are fitted on the whole training logs only (no leakage); the networks
    train on them less their validation blocks.  Windows never straddle gaps in the inputs (each
    gap-free run is windowed separately; a run shorter than T is predicted as one shorter
    window) nor wells.  NaN targets are masked out of the loss, never filled.
    """

    def __init__(self, inputs: Sequence[str], target: str, *, log_target: bool = True, window: int = 32,
                 stride: int | None = None, positions: str = "index", model: SequenceRegressor | None = None,
                 lstm: LSTMRegressor | None = None, floor_mD: float = 1e-3, tree_baselines: bool = True,
                 validation: str = "deepest", validation_fraction: float = 0.1, random_state: int | None = None):
        self.inputs = inputs
        self.target = target
        self.log_target = log_target
        self.window = window
        self.stride = stride
        self.positions = positions
        self.model = model
        self.lstm = lstm
        self.floor_mD = floor_mD
        self.tree_baselines = tree_baselines
        self.validation = validation
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def get_params(self) -> dict:
        """The constructor's arguments (as scikit-learn's ``get_params(deep=False)``)."""
        return {k: getattr(self, k) for k in inspect.signature(type(self).__init__).parameters if k != "self"}

    # --- settings, checked when used ------------------------------------------------------------
    @property
    def input_names(self) -> list:
        """The input mnemonics, upper-case."""
        names = [str(m).upper() for m in self.inputs]
        if not names:
            raise InputError("WellModel: at least one input curve is needed")
        return names

    @property
    def target_name(self) -> str:
        return str(self.target).upper()

    def _check_settings(self) -> None:
        if self.positions not in ("index", "depth"):
            raise InputError(f"WellModel: positions must be 'index' or 'depth', got {self.positions!r}")
        if isinstance(self.window, bool) or not isinstance(self.window, (int, np.integer)) or self.window < 2:
            raise InputError(f"WellModel: window must be an integer >= 2 samples, got {self.window!r}")
        if self.stride is not None and (not isinstance(self.stride, (int, np.integer)) or self.stride < 1):
            raise InputError(f"WellModel: stride must be a positive integer or None, got {self.stride!r}")
        if self.validation not in ("deepest", "none"):
            raise InputError(f"WellModel: validation must be 'deepest' or 'none', got {self.validation!r}")

    @property
    def _log(self):
        return Log10Transform(self.floor_mD) if self.log_target else None

    # --- arrays of one log --------------------------------------------------------------------
    def target_values(self, log: WellLog) -> np.ndarray:
        """The target of ``log`` in model units (log10 mD when ``log_target``), NaN = missing."""
        y = np.asarray(log.curve(self.target_name), dtype=np.float64)
        return self._log.transform(y) if self.log_target else y

    def porosity_and_target(self, logs) -> tuple[np.ndarray, np.ndarray]:
        """The first input (porosity) and the target in model units, concatenated over ``logs``."""
        phi = np.concatenate([np.asarray(g.curve(self.input_names[0]), dtype=np.float64) for g in logs])
        return phi, np.concatenate([self.target_values(g) for g in logs])

    def windows(self, log: WellLog, *, stride: int, with_target: bool, pad_last: bool) -> list:
        """Scaled windows of every gap-free input run of ``log``.

        Returns a list of ``(x (n, T, n_inputs), y (n, T, 1) or None, positions (n, T), sample
        index (n, T))``, one entry per run; runs shorter than ``window`` are skipped when
        training (``with_target`` and not ``pad_last``) and make one shorter window otherwise.
        """
        X = log.matrix(self.input_names).astype(np.float64)
        Xs = self.x_scaler_.transform(X)
        ys = self.y_scaler_.transform(self.target_values(log)[:, None]) if with_target else None
        out = []
        for a, b in contiguous_runs(np.isfinite(X).all(axis=1)):
            if b - a < self.window and with_target and not pad_last:
                continue                       # too short to train on
            w = make_windows(Xs[a:b], None if ys is None else ys[a:b], np.arange(a, b, dtype=np.float64),
                             window=min(self.window, b - a), stride=stride, pad_last=pad_last)
            idx = w.positions.astype(np.int64)
            out.append((w.x, w.y, self._positions(log, idx), idx))
        return out

    def _positions(self, log: WellLog, idx: np.ndarray) -> np.ndarray:
        if self.positions == "depth":
            return log.depth[idx]
        return np.broadcast_to(np.arange(1, idx.shape[-1] + 1, dtype=np.float64), idx.shape).copy()

    # --- training ----------------------------------------------------------------------------
    def fit(self, train_logs, *, val_logs=None, callbacks=()) -> "WellModel":
        """Fit the scalers, the regressor(s) and the baselines on ``train_logs`` (already cut to their intervals).

        ``val_logs``: validation logs (e.g. a held-out training well) for the networks' early
        stopping; without them, ``validation`` decides.  ``callbacks`` go to the transformer's
        training loop (e.g. checkpoints).

        Raises
        ------
        DataFileError
            No training depth with every input, no target value, no gap-free run as long as
            ``window``, or an input in different units in two training wells.
        DivergenceError
            Training diverged (the regressor keeps its last good parameters; call
            :meth:`fit_baselines` to save a usable model anyway).
        """
        self._check_settings()
        train_logs = list(train_logs)
        self._fit_scalers(train_logs)
        fit_logs, val_logs, self.validation_ = choose_validation(train_logs, val_logs, self.validation,
                                                                 self.validation_fraction, self.window)
        X, Y, P = self._training_windows(fit_logs)
        val = self._validation_windows(val_logs)
        self.n_train_windows_ = int(len(X))
        self.validation_["small_data"] = small_data_warnings(                 # said in the summary, config, report
            train_logs, self.validation_["blocks"], self.n_train_windows_, self.window,
            self.stride or default_stride(self.window, fit_logs), self.stride is not None)
        shared = P[0] if self.positions == "index" else P
        self.fit_seconds_ = {}
        # Validation is this class's choice (depth blocks), never the estimators' random windows.
        self.model_ = (clone(self.model) if self.model is not None else SequenceRegressor()).set_params(
            validation_fraction=None)
        self.lstm_ = clone(self.lstm).set_params(validation_fraction=None) if self.lstm is not None else None
        t0 = time.perf_counter()
        self.model_.fit(X, Y, shared, callbacks=callbacks, **val)
        self.fit_seconds_["transformer"] = time.perf_counter() - t0
        if self.lstm_ is not None:
            t0 = time.perf_counter()
            self.lstm_.fit(X, Y, **{k: v for k, v in val.items() if k != "positions_val"})   # LSTM: no positions
            self.fit_seconds_["LSTM"] = time.perf_counter() - t0
        self.fit_baselines(train_logs)
        return self

    def _validation_windows(self, logs) -> dict:
        """``{"X_val", "y_val", "positions_val"}`` of the validation logs' full windows ({} when there are none)."""
        stride = self.stride or max(1, self.window // 2)
        parts = [w for g in logs or () for w in self.windows(g, stride=stride, with_target=True, pad_last=False)]
        if not parts:
            if logs:
                self.validation_["method"] += f" (no gap-free run of {self.window} samples there: none used)"
            return {}
        X, Y, P = (np.concatenate([p[i] for p in parts]) for i in range(3))
        keep = np.isfinite(Y).any(axis=(1, 2))
        if not keep.any():
            return {}
        self.validation_["n_windows"] = int(keep.sum())
        out = {"X_val": X[keep], "y_val": Y[keep]}
        if self.positions == "depth":
            out["positions_val"] = P[keep]
        return out

    def _fit_scalers(self, logs) -> None:
        X = np.concatenate([g.matrix(self.input_names).astype(np.float64) for g in logs])
        y = np.concatenate([self.target_values(g) for g in logs])
        ok = np.isfinite(X).all(axis=1)
        if not ok.any():
            raise DataFileError(f"no training depth has all inputs {self.input_names} present")
        if not np.isfinite(y).any():
            raise DataFileError(f"no training depth has the target {self.target_name}")
        self.training_data_ = training_record(logs, self.input_names, self.target_name)   # predictions checked against it
        self.x_scaler_ = MinMaxScaler().fit(X[ok])
        # Standard scaling of the target puts the (log) permeability at unit scale for the model.
        self.y_scaler_ = StandardScaler().fit(y[np.isfinite(y)][:, None])

    def _training_windows(self, logs):
        stride = self.stride or default_stride(self.window, logs)          # shorter on short wells
        parts = [w for g in logs for w in self.windows(g, stride=stride, with_target=True, pad_last=False)]
        if not parts:
            raise DataFileError(f"no gap-free run of {self.window} samples with inputs {self.input_names} in the "
                                "training interval; use a smaller --window")
        X, Y, P = (np.concatenate([p[i] for p in parts]) for i in range(3))
        keep = np.isfinite(Y).any(axis=(1, 2))       # a window without any target teaches nothing
        return X[keep], Y[keep], P[keep]

    def fit_baselines(self, train_logs) -> "WellModel":
        """Fit the tree ensembles (when ``tree_baselines``), the porosity-permeability transform and the
        training mean on ``train_logs``."""
        seconds, fitted = {}, {}
        if self.tree_baselines:
            seed = self.random_state if self.random_state is not None else \
                (self.model if self.model is not None else SequenceRegressor()).random_state
            parts = [(g.matrix(self.input_names), self.target_values(g)) for g in train_logs]
            for name, tb in tree_baselines(self.window, random_state=seed).items():
                t0 = time.perf_counter()
                fitted[name] = tb.fit(parts)
                seconds[name] = time.perf_counter() - t0
        phi, k = self.porosity_and_target(train_logs)
        t0 = time.perf_counter()
        ppt = PorosityPermeabilityTransform()
        ppt = ppt.fit_log10(phi, k) if self.log_target else \
            PorosityPermeabilityTransform(floor_mD=self.floor_mD).fit(phi, k)
        seconds[BASELINE_NAMES[0]] = time.perf_counter() - t0
        t0 = time.perf_counter()
        mean = TrainingMean().fit(None, k)
        seconds[BASELINE_NAMES[1]] = time.perf_counter() - t0
        self.baselines_ = {**fitted, **dict(zip(BASELINE_NAMES, (ppt, mean)))}
        self.fit_seconds_ = {**getattr(self, "fit_seconds_", {}), **seconds}
        return self

    # --- prediction ----------------------------------------------------------------------------
    def models(self) -> dict:
        """The fitted window regressors by name: ``{"transformer": ..., "LSTM": ...}`` (LSTM when trained)."""
        out = {"transformer": self.model_}
        if getattr(self, "lstm_", None) is not None:
            out["LSTM"] = self.lstm_
        return out

    def parameter_counts(self) -> dict:
        """Trainable values per model: the networks' counts, the trees' leaves, 2 (slope, intercept), 1 (mean)."""
        out = {name: int(m.network_.num_parameters()) for name, m in self.models().items()}
        out.update({name: b.num_leaves() for name, b in self.baselines_.items() if hasattr(b, "num_leaves")})
        out.update({BASELINE_NAMES[0]: 2, BASELINE_NAMES[1]: 1})
        return out

    def predict_log(self, log: WellLog, model=None) -> np.ndarray:
        """Prediction per sample of ``log`` in model units (log10 mD); NaN where an input is missing.

        ``model``: the transformer (default) or another fitted regressor, e.g. ``self.lstm_``.
        """
        model = self.model_ if model is None else model
        out = np.full(len(log), np.nan)
        for x, _, pos, idx in self.windows(log, stride=max(1, self.window // 2), with_target=False, pad_last=True):
            pred = model.predict(x, pos[0] if self.positions == "index" else pos)[..., 0]
            first, last = idx[0, 0], idx[-1, -1]
            seg = stitch_windows(pred, idx[:, 0] - first, int(last - first + 1))
            out[first:last + 1] = self.y_scaler_.inverse_transform(seg[:, None])[:, 0]
        return out

    def predict_baselines(self, log: WellLog) -> dict:
        """Each baseline's prediction per sample of ``log``, in model units (tree baselines first, when fitted)."""
        phi = np.asarray(log.curve(self.input_names[0]), dtype=np.float64)
        ppt, mean = (self.baselines_[name] for name in BASELINE_NAMES)
        out = {name: b.predict(log.matrix(self.input_names)) for name, b in self.baselines_.items()
               if name not in BASELINE_NAMES}
        out.update({BASELINE_NAMES[0]: ppt.predict_log10(phi) if self.log_target else ppt.predict(phi),
                    BASELINE_NAMES[1]: np.full(len(log), mean.mean_)})
        return out

    def attention_window(self, log: WellLog):
        """``(A (T, T), depths (T,))``: layer-0 head-0 attention of the first window of ``log``, or (None, None)."""
        wins = self.windows(log, stride=self.window, with_target=False, pad_last=True)
        if not wins:
            return None, None
        x, _, pos, idx = wins[0]
        tr = self.model_.trace(x[:1], pos[:1] if self.positions == "depth" else pos[0])
        return tr["layers.0.A"][0, 0], log.depth[idx[0]]

    # --- persistence ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The well model's settings and fitted scalers and baselines (JSON-able)."""
        ppt, mean = (self.baselines_[name] for name in BASELINE_NAMES)
        return {"well_model_version": WELL_MODEL_VERSION, "inputs": self.input_names, "target": self.target_name,
                "log_target": bool(self.log_target), "floor_mD": float(self.floor_mD), "window": int(self.window),
                "stride": self.stride, "positions": self.positions,
                "x_scaler": self.x_scaler_.to_dict(), "y_scaler": self.y_scaler_.to_dict(),
                "baseline_ppt": {"slope": ppt.slope_, "intercept": ppt.intercept_}, "baseline_mean": mean.mean_,
                "training_data": getattr(self, "training_data_", None),
                "validation": getattr(self, "validation_", None)}

    def save(self, directory, overwrite: bool = True) -> Path:
        """Save the transformer with the well model's metadata into ``directory`` (and the LSTM beside it,
        in ``<directory>_lstm``, when one was trained)."""
        path = self.model_.save(directory, overwrite=overwrite, extra={"well_model": self.to_dict()})
        if self.lstm_ is not None:
            folder = Path(directory)
            self.lstm_.save(folder.with_name(folder.name + "_lstm"), overwrite=overwrite,
                            extra={"well_model": self.to_dict()})
        return path

    @classmethod
    def load(cls, directory) -> "WellModel":
        """Rebuild a well model saved by :meth:`save` (a run folder or its ``model/`` sub-folder).

        Raises
        ------
        ModelFileError
            No model there, or a model saved without the well model's metadata.
        """
        model = SequenceRegressor.load(directory)
        meta = (getattr(model, "extra_", None) or {})
        meta = meta.get("well_model") or meta.get("pipeline")       # "pipeline": glassformer 0.1's name
        if not meta:
            raise ModelFileError(f"{directory}: the model has no well-model metadata (inputs, scalers); "
                                 "it was not written by `glassformer train`")
        wm = cls(meta["inputs"], meta["target"], log_target=meta["log_target"], window=meta["window"],
                 stride=meta["stride"], positions=meta["positions"], model=clone(model),
                 floor_mD=meta.get("floor_mD", 1e-3))
        wm.model_ = model
        wm.lstm_ = None
        wm.x_scaler_, wm.y_scaler_ = scaler_from_dict(meta["x_scaler"]), scaler_from_dict(meta["y_scaler"])
        ppt = PorosityPermeabilityTransform()
        ppt.slope_, ppt.intercept_ = meta["baseline_ppt"]["slope"], meta["baseline_ppt"]["intercept"]
        mean = TrainingMean()
        mean.mean_ = meta["baseline_mean"]
        wm.baselines_ = dict(zip(BASELINE_NAMES, (ppt, mean)))
        wm.training_data_ = meta.get("training_data")       # None for models saved before it was recorded
        wm.validation_ = meta.get("validation")
        return wm


def with_seed(wm: WellModel, seed: int) -> WellModel:
    """An unfitted copy of ``wm`` whose transformer, LSTM and tree ensembles all draw from ``seed``."""
    model = clone(wm.model if wm.model is not None else SequenceRegressor()).set_params(random_state=seed)
    lstm = None if wm.lstm is None else clone(wm.lstm).set_params(random_state=seed)
    return WellModel(**{**wm.get_params(), "model": model, "lstm": lstm, "random_state": seed})
