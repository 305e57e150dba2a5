"""The scikit-learn-style surface shared by the per-position window regressors.

:class:`WindowRegressor` holds what :class:`~glassformer.models.SequenceRegressor` (transformer)
and :class:`~glassformer.models.LSTMRegressor` do the same way: hyperparameters kept as constructor
arguments (``get_params`` / ``set_params``, read as attributes), the checks on ``X (batch, seq,
n_features)`` and ``y (batch, seq, n_targets)``, the ``validation_fraction`` split (the same
windows held out for the same ``random_state``, whichever the model), training through
:class:`~glassformer.train.Trainer`, ``predict``/``score`` and ``save``/``load`` through
:func:`glassformer.io.save_model`.  A subclass supplies its layers (``_build``), ``forward`` /
``backward``, ``_train_step`` / ``_eval_step``, ``_predict_array`` and its ``__repr__``.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import numpy as np

from .._validation import as_float_array, check_ndim
from ..errors import InputError, ModelFileError, NotReadyError, ShapeError
from ..nn.module import Module
from ..train import History, Trainer, make_optimizer, make_schedule, standard_callbacks, total_updates

__all__ = ["WindowRegressor"]


class WindowRegressor(Module):
    """Base class of the window regressors: parameters, checks, fit/predict/score plumbing, files.

    A subclass stores its constructor arguments in ``self._params`` and calls ``self._build()``,
    and sets the class attributes below.

    Attributes
    ----------
    _kind : str
        The ``kind`` written into ``model.json`` (checked by :meth:`load`).
    _format_version : int
        Version of the saved layout.
    _arch_params : tuple of str
        Constructor arguments that change the module tree (changing them rebuilds the parameters).
    _option_params : tuple of str
        Dict-valued constructor arguments (copied on the way in and out).
    """

    _kind = ""
    _format_version = 1
    _arch_params: tuple = ()
    _option_params: tuple = ()

    # ------------------------------------------------------------------ sklearn-style params
    def get_params(self, deep: bool = True) -> dict:
        """Constructor arguments as a dict (copies of the option dicts)."""
        out = dict(self._params)
        for name in self._option_params:
            out[name] = dict(out[name])
        return out

    def set_params(self, **params):
        """Change constructor arguments; architecture changes rebuild (re-initialise) the model.

        Raises
        ------
        InputError
            For an unknown name (the message lists the valid ones).
        """
        unknown = sorted(set(params) - set(self._params))
        if unknown:
            raise InputError(f"{type(self).__name__}.set_params: unknown parameter(s) {unknown}; "
                             f"valid: {sorted(self._params)}")
        rebuild = any(k in self._arch_params and params[k] != self._params[k] for k in params)
        for k, v in params.items():
            if k in self._option_params:
                v = dict(v or {})
            if k == "dtype":
                v = str(np.dtype(v))
            self._params[k] = v
        if rebuild:
            for name in list(self._modules):
                delattr(self, name)
            self._build()
        return self

    def __getattr__(self, name):
        # Hyperparameters read as attributes (model.lr, model.d_model), like scikit-learn estimators.
        params = self.__dict__.get("_params")
        if params is not None and name in params:
            return params[name]
        raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")

    def reset_parameters(self) -> None:
        """Re-draw every parameter from ``random_state`` (the state right after construction)."""
        self._load_fresh()

    def _load_fresh(self) -> "WindowRegressor":
        """Load the parameters of a freshly constructed twin and return the twin."""
        fresh = type(self)(**dict(self._params, warm_start=False))
        self.load_state_dict(fresh.state_dict())
        return fresh

    # ------------------------------------------------------------------ input checks
    def _check_X(self, X, where: str) -> np.ndarray:
        X = as_float_array(X, "X", where, dtype=self._dtype_np)
        check_ndim(X, (3,), "X", where, layout="(batch, seq, n_features)")
        if X.shape[-1] != self._params["n_features"]:
            raise ShapeError(f"{where}: X has {X.shape[-1]} feature(s) on its last axis (shape {X.shape}), "
                             f"the model expects n_features={self._params['n_features']}")
        return X

    def _check_y(self, y, X: np.ndarray, where: str) -> np.ndarray:
        y = as_float_array(y, "y", where, dtype=self._dtype_np, allow_nan=True)
        if y.ndim == 2 and self._params["n_targets"] == 1:
            y = y[..., None]
        want = X.shape[:2] + (self._params["n_targets"],)
        if y.shape != want:
            raise ShapeError(f"{where}: y must have shape (batch, seq, n_targets) = {want}, got {y.shape}")
        return y

    @staticmethod
    def _check_positions(positions, X: np.ndarray, where: str):
        """Positions as the model uses them; the base class ignores them (returns None)."""
        return None

    # ------------------------------------------------------------------ training
    def _validation_split(self, n: int, where: str) -> tuple[np.ndarray, np.ndarray]:
        """``(val_idx, train_idx)``, sorted, holding out ``validation_fraction`` of ``n`` windows.

        The permutation is ``default_rng(random_state).permutation(n)``, so every model with the
        same ``random_state`` holds out the same windows.

        Raises
        ------
        InputError
            ``validation_fraction`` outside (0, 1), or too few windows to hold any out.
        """
        frac = float(self._params["validation_fraction"])
        if not 0.0 < frac < 1.0:
            raise InputError(f"{where}: validation_fraction must be in (0, 1), got {frac}")
        n_val = max(1, int(round(frac * n)))
        if n_val >= n:
            raise InputError(f"{where}: {n} window(s) are too few to hold out validation_fraction={frac}")
        order = np.random.default_rng(self._params["random_state"]).permutation(n)
        return np.sort(order[:n_val]), np.sort(order[n_val:])

    def _fit_context(self):
        """Context entered around the training loop (e.g. a BLAS thread limit)."""
        return nullcontext()

    def _run_trainer(self, train: tuple, val: tuple | None, callbacks=(), **checkpointing):
        """Train with :class:`~glassformer.train.Trainer` on the model's hyperparameters; returns self.

        ``checkpointing``: ``checkpoint_dir``, ``checkpoint_every``, ``checkpoint_config``,
        ``resume_from`` for :func:`~glassformer.train.standard_callbacks`.  ``history_`` is set even
        when training raises.
        """
        p = self._params
        optimizer = make_optimizer(p["optimizer"], self.parameters(), lr=p["lr"], momentum=p["momentum"],
                                   weight_decay=p["weight_decay"])
        updates = total_updates(len(next(a for a in train if a is not None)), p["batch_size"], p["epochs"])
        schedule = make_schedule(p["schedule"], lr=p["lr"], warmup_steps=p["warmup_steps"], total_steps=updates)
        standard = standard_callbacks(early_stopping_patience=p["early_stopping_patience"],
                                      divergence_factor=p.get("divergence_factor", 1e4), progress=p["progress"],
                                      **checkpointing)
        trainer = Trainer(list(self.named_parameters()), self._train_step, optimizer, epochs=p["epochs"],
                          batch_size=p["batch_size"], seed=p["random_state"], grad_clip=p["grad_clip"],
                          schedule=schedule, eval_step=self._eval_step, model=self,
                          callbacks=[*standard, *callbacks])
        self.trainer_ = trainer
        try:
            with self._fit_context():
                self.history_ = trainer.fit(train, val)
        finally:
            self.history_ = trainer.history
            self.clear_cache()
            self.train()
        self.is_fitted_ = True
        return self

    # ------------------------------------------------------------------ inference
    def _check_fitted(self, where: str) -> None:
        """Raise :class:`NotReadyError` unless the model was fitted or loaded from a fitted model."""
        if self.__dict__.get("is_fitted_"):
            return
        tools = "forward() in eval() mode inside no_cache()" + (", or trace()" if hasattr(self, "trace") else "")
        raise NotReadyError(f"{where}: the model is not fitted; call fit(X, y) or load() a fitted model first. "
                            f"To inspect the untrained model, use {tools}")

    def predict(self, X, positions=None) -> np.ndarray:
        """Predictions ``(batch, seq, n_targets)`` in evaluation mode, keeping no caches.

        Raises
        ------
        NotReadyError
            Before ``fit`` (or on a model loaded from an unfitted save): the outputs of the initial
            weights are not predictions.  ``forward`` (and ``trace`` where the model has it) still
            run on the untrained model, for inspection.
        ShapeError, InputError
            Bad ``X`` or ``positions``.
        """
        where = f"{type(self).__name__}.predict"
        self._check_fitted(where)
        X = self._check_X(X, where)
        return self._predict_array(X, self._check_positions(positions, X, where))

    def score(self, X, y, positions=None) -> float:
        """Coefficient of determination R² over all non-NaN target entries.

        Raises
        ------
        NotReadyError
            Before ``fit`` (see :meth:`predict`).
        InputError
            Fewer than two observed targets; bad shapes (ShapeError).
        """
        where = f"{type(self).__name__}.score"
        self._check_fitted(where)
        X = self._check_X(X, where)
        Y = self._check_y(y, X, where)
        pred = self._predict_array(X, self._check_positions(positions, X, where))
        ok = np.isfinite(Y)
        if ok.sum() < 2:
            raise InputError(f"{where}: fewer than two observed targets")
        t, q = Y[ok], pred[ok]
        ss_tot = float(np.sum((t - t.mean()) ** 2))
        ss_res = float(np.sum((t - q) ** 2))
        return 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")

    # ------------------------------------------------------------------ persistence
    def save(self, directory, *, overwrite: bool = False, extra: dict | None = None) -> Path:
        """Write ``model.npz`` (parameters) and ``model.json`` (config, format version) into ``directory``.

        ``extra``: JSON-able metadata stored beside the config (e.g. scalers of a pipeline).
        Files are written atomically via :func:`glassformer.io.save_model`.

        Raises
        ------
        ModelFileError
            ``directory`` is an existing file (not a folder), or the model files exist and
            ``overwrite`` is False.
        """
        from .. import io

        target = Path(directory)
        folder = target.parent if target.suffix in (".npz", ".json") else target
        blocking = next((f for f in (folder, *folder.parents) if f.exists()), None)
        if blocking is not None and not blocking.is_dir():
            what = "" if blocking == folder else f" ({blocking} is a file)"
            raise ModelFileError(f"{type(self).__name__}.save: {folder} is an existing file, not a folder{what}; "
                                 "give a folder path (created if missing)")

        config = {"format_version": self._format_version, "params": self.get_params(),
                  "is_fitted": bool(self.is_fitted_),
                  "history": self.history_.to_dict() if self.history_ is not None else None}
        if extra:
            config["extra"] = extra
        return io.save_model(directory, dict(self.state_dict()), config, kind=self._kind, overwrite=overwrite)

    @classmethod
    def load(cls, directory):
        """Rebuild a model written by :meth:`save`.

        ``directory``: the folder given to :meth:`save` (or either file of the pair), or a run folder
        written by ``glassformer train``, whose model is in its ``model/`` sub-folder.

        Raises
        ------
        ModelFileError
            A path that does not exist, missing/corrupt files, another kind of model, or an
            unsupported format version.
        """
        from .. import io

        state, config, kind = io.load_model(_model_location(directory, f"{cls.__name__}.load"))
        if kind != cls._kind:
            raise ModelFileError(f"{directory}: holds a {kind!r}, not a {cls._kind!r}")
        version = config.get("format_version")
        if version != cls._format_version:
            raise ModelFileError(f"{directory}: format_version {version!r} is not supported "
                                 f"(this glassformer reads version {cls._format_version})")
        try:
            model = cls(**config["params"])
            model.load_state_dict(state)
        except (TypeError, KeyError, ValueError) as exc:
            raise ModelFileError(f"{directory}: cannot rebuild the model from its config ({exc})") from None
        model.is_fitted_ = bool(config.get("is_fitted", True))
        if config.get("history"):
            model.history_ = History.from_dict(config["history"])
        model.extra_ = config.get("extra", {})
        model.source_ = str(directory)        # where it was loaded from (named in prediction files)
        return model


def _model_location(directory, where: str) -> Path:
    """The folder or file to read a saved model from: ``directory``, or its ``model/`` sub-folder (a run folder).

    Raises
    ------
    ModelFileError
        ``directory`` does not exist (for a ``.npz``/``.json`` file name: neither file exists).
    """
    path = Path(directory)
    if path.suffix in (".npz", ".json"):
        if not path.with_suffix(".npz").exists() and not path.with_suffix(".json").exists():
            raise ModelFileError(f"{where}: {directory} does not exist")
        return path
    if not path.exists():
        raise ModelFileError(f"{where}: {directory} does not exist")
    if path.is_dir() and not (path / "model.json").exists() and (path / "model" / "model.json").exists():
        return path / "model"       # a run folder of `glassformer train`
    return path


def masked_mse(pred: np.ndarray, target: np.ndarray) -> float:
    """Mean squared error over the entries where ``target`` is not NaN (NaN when there are none)."""
    ok = ~np.isnan(target)
    n = int(ok.sum())
    if n == 0:
        return float("nan")
    d = np.where(ok, pred - target, 0.0)
    return float(np.sum(d * d) / n)
