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

import time
from pathlib import Path
from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator, clone

from ..data.scaling import Log10Transform, MinMaxScaler, StandardScaler, scaler_from_dict
from ..data import WellLog
from ..data.windows import contiguous_runs, make_windows, stitch_windows
from ..errors import DataFileError, InputError, ModelFileError
from ..models import LSTMRegressor, SequenceRegressor
from .baselines import BLEND, BLEND_WEIGHTS, MEAN, TRANSFORM, blend, blend_description, make_baselines
from .checks import training_record
from .member_mean import prune_members
from .model_folder import plain_spec, read_baselines, read_lstm_beside, read_model, spec_arguments
from .splits import choose_validation, default_stride, small_data_warnings

__all__ = ["WellModel", "BASELINE_NAMES", "BLEND", "with_seed"]

#: Metadata format stored in ``model.json["extra"]["well_model"]`` (4: the whole specification and every
#: baseline, the tree ensembles beside it as skops files).
WELL_MODEL_VERSION = 4

#: The baselines every prediction is reported beside, in table order.
BASELINE_NAMES = (TRANSFORM, MEAN)

class WellModel(BaseEstimator):
    """Windows, scaling, a window regressor and the baselines for per-depth regression on wells.

    A scikit-learn estimator: ``__init__`` only stores its arguments, ``get_params`` /
    ``set_params`` (nested, e.g. ``model__d_model``) and ``sklearn.base.clone`` work, and
    :meth:`fit` checks the settings.  Its specification is ``get_params()``; :meth:`spec` writes
    it as plain data (what a model folder, a fold, a seed and a sweep task carry) and
    :meth:`from_spec` reads it back whole.

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
    model_, lstm_ : the fitted regressors (``lstm_`` is None without ``lstm``; ``model_`` is a
        :class:`~glassformer.wells.member_mean.MemberMean` when several transformers' mean replaced it)
    x_scaler_ : MinMaxScaler of the inputs; y_scaler_ : StandardScaler of the (log) target
    baselines_ : dict name -> fitted baseline of the registry (:func:`glassformer.wells.baselines.make_baselines`:
        the tree ensembles when ``tree_baselines``, then :data:`BASELINE_NAMES`)
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

    # --- the specification: get_params(), as plain data ------------------------------------------
    def spec(self) -> dict:
        """The specification as plain data: ``get_params(deep=False)`` with each estimator as
        ``{"class": name, "params": its get_params(deep=False)}`` (None stays None).

        This is what a model folder, a cross-validation fold, a seed and a sweep task carry;
        :meth:`from_spec` rebuilds the same unfitted model from it (``get_params`` equal).
        """
        return plain_spec(self.get_params(deep=False))

    @classmethod
    def from_spec(cls, spec: dict) -> "WellModel":
        """The unfitted well model of :meth:`spec` (the inverse: ``from_spec(wm.spec()).spec() == wm.spec()``).

        Raises
        ------
        ModelFileError
            An estimator of a class this package does not define, or parameters that do not fit.
        """
        try:
            return cls(**spec_arguments(spec))
        except TypeError as exc:
            raise ModelFileError(f"WellModel specification does not rebuild: {exc}") from None

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

    def check_params(self) -> "WellModel":
        """Check every setting -- this model's and its estimators' (each by the estimator itself) -- without
        fitting, so that a run refuses them before it writes a file; returns ``self``.

        Raises
        ------
        InputError
            The first bad setting, named.
        """
        self._check_settings()
        for estimator in (self.model, self.lstm):
            if estimator is not None:
                estimator.check_params()
        return self

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
            No training depth with every input, no target value, a target constant over the training
            wells (also when all of it lies at or below ``floor_mD`` with ``log_target``), no gap-free run
            as long as ``window``, or an input in different units in two training wells.
        DivergenceError
            Training diverged (the regressor keeps its last good parameters; call
            :meth:`fit_baselines` to save a usable model anyway).
        """
        self._check_settings()
        train_logs = list(train_logs)
        X, Y, shared, val = self.fit_data(train_logs, val_logs)
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

    def fit_data(self, train_logs, val_logs=None):
        """The networks' data, prepared once for every way of training them (alone by :meth:`fit`, or as the
        members of a deep ensemble, one by one or side by side).

        Fits the scalers on the whole ``train_logs`` (validation blocks included, as the baselines are),
        chooses the validation data (``val_logs`` when given, else ``validation``'s deepest blocks), and
        cuts the training windows of the rest and the validation windows (half a window apart).  Sets
        ``x_scaler_``, ``y_scaler_``, ``training_data_``, ``validation_`` and ``n_train_windows_``.

        Returns
        -------
        (X, Y, positions, val)
            ``X (n, window, n_inputs)``, ``Y (n, window, 1)`` (NaN: no target), ``positions`` (``(window,)``
            shared when by index, else ``(n, window)`` depths), and ``val`` the estimator's validation
            keywords ``{"X_val", "y_val"[, "positions_val"]}`` (``{}`` when there are none).

        Raises
        ------
        DataFileError
            As :meth:`fit`.
        """
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
        shared = P[0] if self.positions == "index" else P                    # (window,) or (n, window)
        return X, Y, shared, val

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
        self._refuse_constant_target(logs, y)
        self.training_data_ = training_record(logs, self.input_names, self.target_name)   # predictions checked against it
        self.x_scaler_ = MinMaxScaler().fit(X[ok])
        # Standard scaling of the target puts the (log) permeability at unit scale for the model.
        self.y_scaler_ = StandardScaler().fit(y[np.isfinite(y)][:, None])

    def _refuse_constant_target(self, logs, y) -> None:
        """Raise DataFileError when the target (in model units) takes one value at every training depth.

        A constant target teaches nothing, and every score on it reads perfect (a validation RMSE of 0):
        refused before anything is trained, naming the curve, the wells and the value (with
        ``log_target``, also when every value lies at or below ``floor_mD``).
        """
        values = y[np.isfinite(y)]
        if values.size == 0 or np.any(values != values[0]):
            return
        raw = np.concatenate([np.asarray(g.curve(self.target_name), dtype=np.float64) for g in logs])
        raw = raw[np.isfinite(raw)]
        wells = ", ".join(dict.fromkeys(g.source or g.name for g in logs))
        if self.log_target and np.any(raw != raw[0]):
            value = (f"every value lies at or below the {self.floor_mD:g} mD floor of --log-target (range "
                     f"{raw.min():.4g} to {raw.max():.4g}), so log10 {self.target_name} is {values[0]:.4g} everywhere")
        else:
            value = f"it is {raw[0]:.6g} at all {raw.size} training samples with a value"
        raise DataFileError(f"target curve {self.target_name} is constant over the training wells ({wells}): {value}; "
                            "nothing can be learned from it and every score would read perfect; train on wells "
                            "where it varies")

    def _training_windows(self, logs):
        stride = self.stride or default_stride(self.window, logs)          # shorter on short wells
        parts = [w for g in logs for w in self.windows(g, stride=stride, with_target=True, pad_last=False)]
        if not parts:
            raise DataFileError(f"no gap-free run of {self.window} samples with inputs {self.input_names} in the "
                                "training interval; use a smaller --window")
        X, Y, P = (np.concatenate([p[i] for p in parts]) for i in range(3))
        keep = np.isfinite(Y).any(axis=(1, 2))       # a window without any target teaches nothing
        return X[keep], Y[keep], P[keep]

    def _tree_seed(self) -> int:
        if self.random_state is not None:
            return int(self.random_state)
        return int((self.model if self.model is not None else SequenceRegressor()).random_state)

    def unfitted_baselines(self) -> dict:
        """The registry's baselines with this model's settings, unfitted: name -> baseline, in table order."""
        return make_baselines(self.window, log_target=bool(self.log_target), floor_mD=float(self.floor_mD),
                              random_state=self._tree_seed(), trees=bool(self.tree_baselines))

    def fit_baselines(self, train_logs) -> "WellModel":
        """Fit every baseline of the registry (the tree ensembles when ``tree_baselines``, the
        porosity-permeability transform, the training mean) on ``train_logs``, whole."""
        parts = [(g.matrix(self.input_names), self.target_values(g)) for g in train_logs]
        seconds, fitted = {}, {}
        for name, baseline in self.unfitted_baselines().items():
            t0 = time.perf_counter()
            fitted[name] = baseline.fit(parts)
            seconds[name] = time.perf_counter() - t0
        self.baselines_ = fitted
        self.fit_seconds_ = {**getattr(self, "fit_seconds_", {}), **seconds}
        if all(n in self.fit_seconds_ for n in BLEND_WEIGHTS):   # the blend costs its members' fits
            self.fit_seconds_[BLEND] = sum(self.fit_seconds_[n] for n in BLEND_WEIGHTS)
        return self

    # --- prediction ----------------------------------------------------------------------------
    def models(self) -> dict:
        """The fitted window regressors by name: ``{"transformer": ..., "LSTM": ...}`` (LSTM when trained)."""
        out = {"transformer": self.model_} if getattr(self, "model_", None) is not None else {}
        if getattr(self, "lstm_", None) is not None:
            out["LSTM"] = self.lstm_
        return out

    def model_names(self) -> list:
        """Every model this fitted well model predicts with, in table order (networks, baselines, the blend)."""
        names = [*self.models(), *self.baselines_]
        return names + ([BLEND] if all(n in names for n in BLEND_WEIGHTS) else [])

    def baseline_settings(self) -> dict:
        """name -> the definition behind it, for every baseline and the blend: what a config and a report
        write beside the name (fitted or not)."""
        fitted = getattr(self, "baselines_", None)
        out = {name: b.describe() for name, b in (fitted if fitted is not None else self.unfitted_baselines()).items()}
        if all(n in out for n in BLEND_WEIGHTS if n != "transformer"):
            out[BLEND] = blend_description()
        return out

    def parameter_counts(self) -> dict:
        """Trainable values per model: the networks' counts, the trees' leaves, 2 (slope, intercept), 1 (mean);
        the blend: its members' together."""
        out = {name: _num_parameters(m) for name, m in self.models().items()}
        out.update({name: b.num_leaves() for name, b in self.baselines_.items() if hasattr(b, "num_leaves")})
        out.update({TRANSFORM: 2, MEAN: 1})
        if all(n in out for n in BLEND_WEIGHTS):
            out[BLEND] = int(sum(out[n] for n in BLEND_WEIGHTS))
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
        X = log.matrix(self.input_names)
        return {name: b.predict(X) for name, b in self.baselines_.items()}

    def predict_all(self, log: WellLog, names=None) -> dict:
        """name -> prediction per sample of ``log`` (model units) for ``names`` (default :meth:`model_names`).

        Raises
        ------
        InputError
            A name this model does not have (the message lists those it has).
        """
        known = self.model_names()
        names = known if names is None else list(names)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise InputError(f"no model named {', '.join(map(repr, unknown))} here; this run has: {', '.join(known)}")
        need = set(names) | (set(BLEND_WEIGHTS) if BLEND in names else set())
        out = {name: self.predict_log(log, m) for name, m in self.models().items() if name in need}
        if need & set(self.baselines_):
            X = log.matrix(self.input_names)
            out.update({name: b.predict(X) for name, b in self.baselines_.items() if name in need})
        if BLEND in need:
            out[BLEND] = blend(out)
        return {name: out[name] for name in names}

    def attention_window(self, log: WellLog):
        """``(A (T, T), depths (T,))``: layer-0 head-0 attention of the first window of ``log``, or (None, None)."""
        wins = self.windows(log, stride=self.window, with_target=False, pad_last=True)
        if not wins:
            return None, None
        x, _, pos, idx = wins[0]
        tr = self.model_.trace(x[:1], pos[:1] if self.positions == "depth" else pos[0])
        return tr["layers.0.A"][0, 0], log.depth[idx[0]]

    # --- persistence ---------------------------------------------------------------------------
    def to_dict(self, baselines: dict | None = None) -> dict:
        """The specification (:meth:`spec`, whole), the fitted scalers, the training record and the
        baselines' records (JSON-able).  ``baselines``: the records :meth:`save` wrote (default: the
        transform and the mean only, which need no file)."""
        if baselines is None:
            baselines = {name: b.save(None) for name, b in self.baselines_.items() if name in BASELINE_NAMES}
        return {"well_model_version": WELL_MODEL_VERSION, "spec": self.spec(),
                "inputs": self.input_names, "target": self.target_name,
                "log_target": bool(self.log_target), "floor_mD": float(self.floor_mD), "window": int(self.window),
                "stride": self.stride, "positions": self.positions,
                "x_scaler": self.x_scaler_.to_dict(), "y_scaler": self.y_scaler_.to_dict(),
                "baselines": baselines, "baseline_settings": self.baseline_settings(),
                "training_data": getattr(self, "training_data_", None),
                "validation": getattr(self, "validation_", None),
                "transformer_members": [int(s) for s in getattr(getattr(self, "model_", None), "seeds", [])] or None}

    def save(self, directory, overwrite: bool = True) -> Path:
        """Save the transformer (a mean of transformers: member 0 there, the others in ``members/``) with the
        well model's metadata into ``directory``, every baseline with it
        (the tree ensembles as skops files named by their content, the others in the metadata), and
        the LSTM beside it, in ``<directory>_lstm``, when one was trained.  Nothing is pickled.

        The tree files are written first under new names and ``model.json`` last, so a save that dies
        halfway leaves the previous model as it was (the new files are removed again); files of an
        earlier save that the new ``model.json`` no longer names are removed after it is written.
        """
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        before = set(folder.glob("*.skops"))
        try:
            records = {name: b.save(folder) for name, b in self.baselines_.items()}
            meta = {"well_model": self.to_dict(records)}
            path = self.model_.save(directory, overwrite=overwrite, extra=meta)
        except BaseException:
            for f in set(folder.glob("*.skops")) - before:
                f.unlink(missing_ok=True)
            raise
        named = {r["file"] for r in records.values() if "file" in r}
        for f in before:
            if f.name not in named:
                f.unlink(missing_ok=True)
        prune_members(folder)
        if self.lstm_ is not None:
            self.lstm_.save(folder.with_name(folder.name + "_lstm"), overwrite=overwrite, extra=meta)
        return path

    @classmethod
    def load(cls, directory) -> "WellModel":
        """Rebuild a well model saved by :meth:`save` (a run folder or its ``model/`` sub-folder): its
        whole specification, the transformer, every baseline saved with it and the LSTM beside it.

        Raises
        ------
        ModelFileError
            No model there, a model saved without the well model's metadata, or a baseline file that
            is missing, damaged or holds a type that is not trusted (nothing is unpickled).
        """
        model, meta = read_model(directory)
        if "spec" in meta:
            wm = cls.from_spec(meta["spec"])
        else:                                         # saved before the specification was recorded whole
            wm = cls(meta["inputs"], meta["target"], log_target=meta["log_target"], window=meta["window"],
                     stride=meta["stride"], positions=meta["positions"], model=clone(model),
                     floor_mD=meta.get("floor_mD", 1e-3))
        wm.model_ = model
        wm.x_scaler_, wm.y_scaler_ = scaler_from_dict(meta["x_scaler"]), scaler_from_dict(meta["y_scaler"])
        wm.baselines_ = read_baselines(meta, directory)
        wm.training_data_ = meta.get("training_data")       # None for models saved before it was recorded
        wm.validation_ = meta.get("validation")
        wm.lstm_ = read_lstm_beside(directory)
        return wm


def _num_parameters(model) -> int:
    """Trainable values of a fitted network, or of all members of a mean of networks (``num_parameters()``)."""
    counter = getattr(model, "num_parameters", None) or model.network_.num_parameters
    return int(counter())


def with_seed(wm: WellModel, seed: int) -> WellModel:
    """An unfitted copy of ``wm`` (``sklearn.base.clone``) whose transformer, LSTM and tree ensembles all draw
    from ``seed``."""
    out = clone(wm)
    if out.model is None:
        out.set_params(model=SequenceRegressor())
    out.set_params(random_state=seed, model__random_state=seed)
    return out.set_params(lstm__random_state=seed) if out.lstm is not None else out
