"""scikit-learn's estimator contract for the per-position window regressors.

:class:`WindowRegressor` is what :class:`~glassformer.models.SequenceRegressor` (transformer) and
:class:`~glassformer.models.LSTMRegressor` share.  It follows scikit-learn's contract
(https://scikit-learn.org/stable/developers/develop.html):

* ``__init__`` stores its arguments unchanged, so ``get_params``, ``set_params`` and
  ``sklearn.base.clone`` round-trip;
* ``fit(X, y)`` checks the data, builds the network from ``X`` (``n_features_in_``) and ``y``
  (``n_targets_``) and trains it; everything learned ends in ``_`` (``network_``, ``history_``,
  ``is_fitted_``);
* ``predict`` and ``score`` (R²) refuse an unfitted model.

The data are windows: ``X (n_windows, seq, n_features)`` and ``y (n_windows, seq, n_targets)``
(or ``(n_windows, seq)`` for one target), NaN targets being gaps masked out of the loss.  A
subclass supplies ``_check_hyperparameters`` and ``_make_network``.  Models are saved as
``model.npz`` + ``model.json`` (never pickled) by :meth:`WindowRegressor.save`.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from .._validation import as_float_array, check_dtype, check_ndim
from ..errors import InputError, NotReadyError, ShapeError
from ..report.display import estimator_html
from ..train import Trainer, make_optimizer, make_schedule, standard_callbacks, total_updates
from ..train.losses import MSELoss
from .introspection import constructor_defaults
from .networks import window_positions
from .persistence import load_estimator, save_estimator

__all__ = ["WindowRegressor", "masked_mse"]


class WindowRegressor(RegressorMixin, BaseEstimator):
    """Base class of the window regressors: checks, fit/predict/score, training, files.

    Class attributes a subclass sets: ``_kind`` (written into ``model.json`` and checked by
    :meth:`load`) and ``_format_version`` (the saved layout).
    """

    _kind = ""
    _format_version = 2
    _uses_positions = True

    # ------------------------------------------------------------------ the network
    def _check_hyperparameters(self, where: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _make_network(self, n_features: int, n_targets: int):  # pragma: no cover - abstract
        raise NotImplementedError

    def check_params(self) -> "WindowRegressor":
        """Check the hyperparameters (as :meth:`build_network` and ``fit`` do first) without building
        anything, so that a run refuses them before it writes a file; returns ``self``.

        Raises
        ------
        InputError
            Invalid hyperparameters (the message names the first).
        """
        self._check_hyperparameters(type(self).__name__)
        return self

    def build_network(self, n_features: int, n_targets: int = 1):
        """Build and initialise ``network_`` for ``n_features`` inputs without training it.

        ``fit`` calls this; call it yourself to inspect the untrained model (``trace``,
        ``network_.forward``).  The draws depend only on the hyperparameters and ``random_state``.

        Raises
        ------
        InputError
            Invalid hyperparameters (the message names the first).
        """
        where = f"{type(self).__name__}.build_network"
        self._check_hyperparameters(where)
        for name, v in (("n_features", n_features), ("n_targets", n_targets)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InputError(f"{where}: {name} must be a positive integer, got {v!r}")
        # One flat array for the parameters: the optimizer updates them in a few calls (glassformer.nn.flat).
        self.network_ = self._make_network(int(n_features), int(n_targets)).flatten_parameters()
        self.n_features_in_, self.n_targets_ = int(n_features), int(n_targets)
        self.is_fitted_ = False
        self.history_ = None
        return self.network_

    @property
    def _dtype(self) -> np.dtype:
        return check_dtype(self.dtype)

    # ------------------------------------------------------------------ input checks
    def _check_X(self, X, where: str, n_features: int | None = None) -> np.ndarray:
        X = as_float_array(X, "X", where, dtype=self._dtype)
        check_ndim(X, (3,), "X", where, layout="(n_windows, seq, n_features)")
        if n_features is not None and X.shape[-1] != n_features:
            raise ShapeError(f"{where}: X has {X.shape[-1]} feature(s) on its last axis (shape {X.shape}), "
                             f"the model was fitted with n_features_in_={n_features}")
        return X

    def _check_y(self, y, X: np.ndarray, where: str, n_targets: int | None = None) -> np.ndarray:
        y = as_float_array(y, "y", where, dtype=self._dtype, allow_nan=True)
        if y.ndim == 2:
            y = y[..., None]
        if y.ndim != 3 or y.shape[:2] != X.shape[:2] or (n_targets is not None and y.shape[-1] != n_targets):
            k = "n_targets" if n_targets is None else n_targets
            raise ShapeError(f"{where}: y must have shape (n_windows, seq) or (n_windows, seq, {k}) with "
                             f"(n_windows, seq) = {X.shape[:2]} as X, got {y.shape}")
        return y

    def _check_positions(self, positions, X: np.ndarray, where: str):
        """Positions as the network uses them; None for models that ignore them (the LSTM)."""
        return window_positions(positions, X, where) if self._uses_positions else None

    # ------------------------------------------------------------------ training
    def fit(self, X, y, positions=None, *, X_val=None, y_val=None, positions_val=None, callbacks=(),
            checkpoint_dir=None, checkpoint_every: int = 1, resume_from=None, checkpoint_config=None):
        """Build the network from ``X`` and ``y`` and train it.

        Parameters
        ----------
        X : array (n_windows, seq, n_features)
            Input logs; finite.
        y : array (n_windows, seq) or (n_windows, seq, n_targets)
            Targets; NaN entries are gaps, masked out of the loss (never filled).
        positions : array (seq,) or (n_windows, seq), optional
            Position of every sample (sample index, or depth in m); default 1..seq.  The LSTM
            ignores positions (its recurrence orders the samples).
        X_val, y_val, positions_val : optional
            Validation windows for early stopping; without them ``validation_fraction`` of the
            windows (a seeded random choice) is held out when it is set.
        callbacks : iterable
            Extra :class:`~glassformer.train.Trainer` callbacks.
        checkpoint_dir, checkpoint_every, checkpoint_config, resume_from :
            Periodic checkpoints (also written when SIGINT/SIGTERM stops training) and resuming
            from one, to bit-identically the result of an uninterrupted run.

        Returns
        -------
        self, with ``network_``, ``n_features_in_``, ``n_targets_``, ``history_``, ``is_fitted_``.

        Raises
        ------
        ShapeError, InputError
            Bad shapes, NaN/inf inputs, inf targets, no observed target, invalid hyperparameters.
        DivergenceError
            Non-finite or runaway loss (the message names the first layer; the last good
            parameters are kept).
        TrainingInterrupted
            SIGINT/SIGTERM during training (checkpoint saved if configured).
        """
        train, val = self._prepare_fit(X, y, positions, X_val, y_val, positions_val, f"{type(self).__name__}.fit")
        return self._run_trainer(train, val, callbacks, checkpoint_dir=checkpoint_dir,
                                 checkpoint_every=checkpoint_every, checkpoint_config=checkpoint_config,
                                 resume_from=resume_from)

    def _prepare_fit(self, X, y, positions, X_val, y_val, positions_val, where: str):
        """What ``fit`` trains on: checked data, the validation split and ``network_`` (built unless
        ``warm_start``); returns ``(train, val)`` as :meth:`_split_validation`."""
        X = self._check_X(X, where)
        Y = self._check_y(y, X, where)
        if not np.isfinite(Y).any():
            raise InputError(f"{where}: y {Y.shape} holds no observed (non-NaN) target; nothing to train on")
        pos = self._check_positions(positions, X, where)
        train, val = self._split_validation(X, Y, pos, X_val, y_val, positions_val, where)
        warm = self.warm_start and getattr(self, "network_", None) is not None \
            and (self.n_features_in_, self.n_targets_) == (X.shape[-1], Y.shape[-1])
        if not warm:
            self.build_network(X.shape[-1], Y.shape[-1])
        return train, val

    def _split_validation(self, X, Y, pos, X_val, y_val, positions_val, where: str):
        """``(train, val)`` tuples ``(X, Y, positions)``; ``val`` is None without validation data."""
        if (X_val is None) != (y_val is None):
            raise InputError(f"{where}: X_val and y_val must be given together")
        if X_val is not None:
            Xv = self._check_X(X_val, f"{where} (X_val)", X.shape[-1])
            Yv = self._check_y(y_val, Xv, f"{where} (y_val)", Y.shape[-1])
            if positions_val is None and pos is not None and pos.ndim == 2:
                raise InputError(f"{where}: positions are given per window (n_windows, seq), so X_val needs "
                                 "positions_val of shape (n_val, seq) too")
            pv = positions_val if positions_val is not None else (pos if pos is not None and pos.ndim == 1 and
                                                                  pos.shape[0] == Xv.shape[1] else None)
            return (X, Y, pos), (Xv, Yv, self._check_positions(pv, Xv, f"{where} (positions_val)"))
        if not self.validation_fraction:
            return (X, Y, pos), None
        vi, ti = self._validation_split(len(X), where)
        per_window = pos is not None and pos.ndim == 2
        return ((X[ti], Y[ti], pos[ti] if per_window else pos),
                (X[vi], Y[vi], pos[vi] if per_window else pos))

    def _validation_split(self, n: int, where: str) -> tuple[np.ndarray, np.ndarray]:
        """``(val_idx, train_idx)``, sorted: ``validation_fraction`` of ``n`` windows held out.

        The permutation is ``default_rng(random_state).permutation(n)``, so every model with the
        same ``random_state`` holds out the same windows.

        Raises
        ------
        InputError
            ``validation_fraction`` outside (0, 1), or too few windows to hold any out.
        """
        frac = float(self.validation_fraction)
        if not 0.0 < frac < 1.0:
            raise InputError(f"{where}: validation_fraction must be in (0, 1), got {frac}")
        n_val = max(1, int(round(frac * n)))
        if n_val >= n:
            raise InputError(f"{where}: {n} window(s) are too few to hold out validation_fraction={frac}")
        order = np.random.default_rng(self.random_state).permutation(n)
        return np.sort(order[:n_val]), np.sort(order[n_val:])

    def _fit_context(self, positions):
        """Context entered around the training loop (the transformer fixes shared positions' P)."""
        return nullcontext()

    def _train_step(self, batch) -> float:
        """Forward, masked MSE and backward on one batch ``(X, Y, P)``; returns the batch loss.

        ``P`` is None for the training windows' shared positions (kept in ``_positions``, so that
        a fixed encoding of them is computed once per fit).
        """
        X, Y, P = batch
        if not self._each_window_observed and not np.isfinite(Y).any():   # no observed target: nothing to learn
            return 0.0
        net = self.network_
        value = self._loss.forward(net(X, self._positions if P is None else P), Y)
        net.backward(self._loss.backward())
        return value

    def _eval_step(self, batch) -> float:
        """Masked MSE of the predictions on one batch, without backward (validation)."""
        X, Y, P = batch
        pred = self._predict_array(X, self._positions if P is None else P)
        if not np.isfinite(pred).all():
            # Inner layers do not scan their inputs (Module.check_inputs): the divergence guard
            # learns of a blown-up update here and locates the first non-finite layer.
            raise FloatingPointError("non-finite predictions")
        return masked_mse(pred, Y)

    def _batches(self, data: tuple) -> tuple:
        """``(X, Y, P)`` with the shared training positions replaced by None (see :meth:`_train_step`)."""
        X, Y, P = data
        shared = self._positions
        if P is None or P is shared or (P.ndim == 1 and shared is not None and np.array_equal(P, shared)):
            return (X, Y, None)
        return (X, Y, np.broadcast_to(P, X.shape[:2]) if P.ndim == 1 else P)

    def _run_trainer(self, train: tuple, val: tuple | None, callbacks=(), **checkpointing):
        """Train ``network_`` with :class:`~glassformer.train.Trainer`; ``history_`` is set even on errors."""
        trainer = self._trainer(train, val, callbacks, **checkpointing)
        net = self.network_
        checked = net.check_inputs
        net.check_inputs = False        # fit checked the windows once; its steps need not scan them again
        try:
            with self._fit_context(self._positions):
                trainer.fit(self._batches(train), None if val is None else self._batches(val))
        finally:
            net.check_inputs = checked
            self._finish_fit()
        self.is_fitted_ = True
        return self

    def _finish_fit(self) -> None:
        """After training, also after an error: the history, no caches, training mode."""
        self.history_ = self.trainer_.history
        self.network_.clear_cache()
        self.network_.train()

    def _trainer(self, train: tuple, val: tuple | None, callbacks=(), **standard_options):
        """The :class:`~glassformer.train.Trainer` of ``network_`` on ``train`` (kept as ``trainer_``);
        ``standard_options`` go to :func:`~glassformer.train.standard_callbacks`."""
        net = self.network_
        self._loss = MSELoss()
        self._positions = train[2] if train[2] is not None and train[2].ndim == 1 else None
        self._each_window_observed = bool(np.isfinite(train[1]).any(axis=tuple(range(1, train[1].ndim))).all())
        optimizer = make_optimizer(self.optimizer, net.parameters(), lr=self.lr, momentum=self.momentum,
                                   weight_decay=self.weight_decay)
        schedule = make_schedule(self.schedule, lr=self.lr, warmup_steps=self.warmup_steps,
                                 total_steps=total_updates(len(train[0]), self.batch_size, self.epochs))
        standard = standard_callbacks(early_stopping_patience=self.early_stopping_patience,
                                      divergence_factor=self.divergence_factor, progress=self.progress,
                                      **standard_options)
        self.trainer_ = Trainer(list(net.named_parameters()), self._train_step, optimizer, epochs=self.epochs,
                                batch_size=self.batch_size, seed=self.random_state, grad_clip=self.grad_clip,
                                schedule=schedule, eval_step=self._eval_step, model=net,
                                callbacks=[*standard, *callbacks])
        return self.trainer_

    # ------------------------------------------------------------------ inference
    def __sklearn_is_fitted__(self) -> bool:
        """scikit-learn's fitted test (``check_is_fitted``): a built but untrained network does not count."""
        return bool(getattr(self, "is_fitted_", False))

    def _check_fitted(self, where: str) -> None:
        """Raise :class:`NotReadyError` unless the model was fitted (or loaded from a fitted model)."""
        if getattr(self, "is_fitted_", False):
            return
        tools = "build_network(n_features) then trace()" if hasattr(self, "trace") else \
            "build_network(n_features) then network_.forward() in eval() mode"
        raise NotReadyError(f"{where}: the model is not fitted; call fit(X, y) or load() a fitted model first. "
                            f"To inspect the untrained model, use {tools}")

    def _predict_array(self, X, positions, chunk: int = 256) -> np.ndarray:
        """Forward in evaluation mode, no caches, ``chunk`` windows at a time (inputs already checked).

        Small chunks keep each layer's arrays (the attention scores above all) in the CPU cache
        between the passes over them: 256 windows of 32 samples run ~30% faster than 2,048.
        """
        net = self.network_
        was_training = net.training
        net.eval()
        shared = positions is None or np.ndim(positions) == 1
        try:
            with net.no_cache(), self._fit_context(positions if shared else None):
                parts = [net(X[s:s + chunk], positions if shared else positions[s:s + chunk])
                         for s in range(0, len(X), chunk)]
                return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)
        finally:
            net.train(was_training)

    def predict(self, X, positions=None) -> np.ndarray:
        """Predictions ``(n_windows, seq, n_targets)`` in evaluation mode, keeping no caches.

        Raises
        ------
        NotReadyError
            Before ``fit`` (the initial weights' outputs are not predictions).
        ShapeError, InputError
            Bad ``X`` or ``positions``.
        """
        where = f"{type(self).__name__}.predict"
        self._check_fitted(where)
        X = self._check_X(X, where, self.n_features_in_)
        return self._predict_array(X, self._check_positions(positions, X, where))

    def score(self, X, y, positions=None) -> float:
        """Coefficient of determination R² over all observed (non-NaN) target entries.

        Raises
        ------
        NotReadyError
            Before ``fit``.
        InputError, ShapeError
            Fewer than two observed targets; bad shapes.
        """
        where = f"{type(self).__name__}.score"
        self._check_fitted(where)
        X = self._check_X(X, where, self.n_features_in_)
        Y = self._check_y(y, X, where, self.n_targets_)
        pred = self._predict_array(X, self._check_positions(positions, X, where))
        ok = np.isfinite(Y)
        if ok.sum() < 2:
            raise InputError(f"{where}: fewer than two observed targets")
        t, q = Y[ok], pred[ok]
        ss_tot = float(np.sum((t - t.mean()) ** 2))
        return 1.0 - float(np.sum((t - q) ** 2)) / ss_tot if ss_tot > 0 else float("nan")

    # ------------------------------------------------------------------ persistence
    def save(self, directory, *, overwrite: bool = False, extra: dict | None = None) -> Path:
        """Write ``model.npz`` (the network's ``state_dict``) and ``model.json`` into ``directory``.

        ``model.json`` holds the format version, ``get_params()``, ``n_features_in_``,
        ``n_targets_``, whether the model is fitted, its history and ``extra`` (JSON-able
        metadata, e.g. a well model's scalers).  Written atomically (:func:`glassformer.io.save_model`).

        Raises
        ------
        NotReadyError
            No network yet (call ``fit`` or ``build_network`` first).
        ModelFileError
            ``directory`` is an existing file, or the model files exist and ``overwrite`` is False.
        """
        if getattr(self, "network_", None) is None:
            raise NotReadyError(f"{type(self).__name__}.save: nothing to save yet; call fit(X, y) first")
        return save_estimator(self, directory, overwrite=overwrite, extra=extra)

    @classmethod
    def load(cls, directory):
        """Rebuild a model written by :meth:`save` (the folder, either file of the pair, or a run folder).

        Raises
        ------
        ModelFileError
            A path that does not exist, missing or corrupt files, another kind of model, or an
            unsupported format version.
        """
        return load_estimator(cls, directory)

    def _repr_html_(self) -> str:
        """Jupyter's view: the hyperparameters that differ from the defaults, parameter count, fitted or not."""
        return estimator_html(self, constructor_defaults(type(self)))

    def __repr__(self, N_CHAR_MAX: int = 700) -> str:
        text = super().__repr__(N_CHAR_MAX)
        net = getattr(self, "network_", None)
        if net is None:
            return text
        return f"{text}  # {net.num_parameters()} parameters, {'fitted' if self.is_fitted_ else 'not fitted'}"


def masked_mse(pred: np.ndarray, target: np.ndarray) -> float:
    """Mean squared error over the entries where ``target`` is not NaN (NaN when there are none)."""
    ok = ~np.isnan(target)
    n = int(ok.sum())
    if n == 0:
        return float("nan")
    d = np.where(ok, pred - target, 0.0)
    return float(np.sum(d * d) / n)
