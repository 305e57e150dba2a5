"""Per-position regression with an LSTM: the baseline seed 000's transformer succeeds (issue 6).

At every position ``t`` of a window of well-log samples the model predicts the target log(s)::

    H = LSTM(X)                         (batch, seq, D * hidden_size), D = 2 if bidirectional
    y_hat = W_y H + b_y                 linear head, (batch, seq, n_targets)

The LSTM is :class:`glassformer.nn.LSTM` (hand-written backward through time, PyTorch's gate
order and parameter names: ``lstm.weight_ih_l0``, ..., ``head.weight``, ``head.bias``).

**Bidirectional by default.**  A well log has no arrow of time: permeability at one depth is
related to the rock both above and below it (seed 000's demonstration 2 even makes the target
depend on the *next* depth).  A one-directional LSTM would see only the shallower part of the
window at each depth, while the transformer it is compared with attends over the whole window;
``bidirectional=True`` gives both models the same context.  Pass ``bidirectional=False`` for a
causal model (e.g. while drilling, where deeper samples do not exist yet).

The data pipeline, training loop and file format are those of
:class:`~glassformer.models.SequenceRegressor`: the same :class:`~glassformer.training.Trainer`
(optimizer, mini-batches shuffled by ``default_rng(random_state)``, gradient clipping, early
stopping with best-weight restore, divergence guard), :class:`~glassformer.losses.MSELoss` with
NaN targets masked out of the loss, ``validation_fraction`` split, ``score`` (R²), and
``save``/``load`` through :func:`glassformer.io.save_model` with kind ``"lstm_regressor"``.
``positions`` are accepted wherever the transformer takes them, so both models plug into the
same pipeline, and ignored: the recurrence itself orders the samples.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_dtype, check_positive_int
from ..losses import MSELoss
from ..nn.linear import Linear
from ..nn.recurrent import LSTM
from .estimator import WindowRegressor, masked_mse

__all__ = ["LSTMRegressor"]

#: Version of the saved-model layout written by :meth:`LSTMRegressor.save`.
FORMAT_VERSION = 1
MODEL_KIND = "lstm_regressor"

# Constructor arguments that change the module tree (changing them rebuilds the parameters).
_ARCH_PARAMS = ("n_features", "n_targets", "hidden_size", "num_layers", "bidirectional", "dropout",
                "random_state", "dtype")


def _one_blas_thread():
    """Limit BLAS to one thread while the recurrence runs.

    Backward through time is hundreds of tiny matmuls per batch; a multi-threaded BLAS spends
    more time waking its threads than multiplying (measured 3x slower on 2 busy cores).
    ``threadpoolctl`` comes with scikit-learn; the previous limits are restored on exit.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn depends on it
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


class LSTMRegressor(WindowRegressor):
    """(Bidirectional) LSTM that regresses target logs at every position of a window.

    Parameters
    ----------
    n_features : int, default 1
        Input logs per depth sample (1 = porosity only; 3 for PHIF, VSH, SW).
    n_targets : int, default 1
        Target logs per depth sample.
    hidden_size : int, default 16
        Width of each direction's hidden and cell state.
    num_layers : int, default 1
        Stacked LSTM layers.
    bidirectional : bool, default True
        Read the window top-down and bottom-up and concatenate (see the module docstring).
    dropout : float, default 0.0
        Dropout between stacked LSTM layers (training only, as ``torch.nn.LSTM``).
    optimizer : {"sgd", "adam", "adamw"}, default "adam"
    lr : float, default 3e-3
    momentum, weight_decay : float, default 0.0
    batch_size : int or None, default 32
        Windows per update; None = full batch.
    epochs : int, default 100
    grad_clip : float or None, default 1.0
        Global gradient-norm clipping (recurrent nets can have exploding gradients).
    warmup_steps : int, default 0
    schedule : {None, "constant", "cosine", "linear", "noam"}
    early_stopping_patience : int or None
        Epochs without validation improvement before stopping; the best weights are restored.
    validation_fraction : float or None
        Hold out this fraction of the training windows (seeded by ``random_state``) for
        validation when no explicit ``X_val`` is given.
    random_state : int, default 42
        Initialisation (PyTorch's U(-1/sqrt(H), 1/sqrt(H)) for the LSTM, PyTorch's Linear init for the
        head, both from ``numpy.random.default_rng(random_state)``), shuffling, dropout and the
        validation split.
    dtype : {"float64", "float32"}, default "float64"
    progress : bool, default False
    warm_start : bool, default False
        ``fit`` continues from the current weights instead of re-initialising.
    divergence_factor : float or None, default 1e4
        ``fit`` stops with :class:`~glassformer.errors.DivergenceError` (keeping the last good
        weights) when an epoch's mean training loss exceeds this many times the first batch's
        loss; None switches this runaway-loss guard off (non-finite losses always stop).

    Attributes
    ----------
    lstm : glassformer.nn.LSTM
    head : glassformer.nn.Linear
    history_ : History
    is_fitted_ : bool
    """

    _kind = MODEL_KIND
    _format_version = FORMAT_VERSION
    _arch_params = _ARCH_PARAMS

    def __init__(self, n_features: int = 1, n_targets: int = 1, hidden_size: int = 16, num_layers: int = 1,
                 bidirectional: bool = True, dropout: float = 0.0, optimizer: str = "adam", lr: float = 3e-3,
                 momentum: float = 0.0, weight_decay: float = 0.0, batch_size: int | None = 32,
                 epochs: int = 100, grad_clip: float | None = 1.0, warmup_steps: int = 0,
                 schedule: str | None = None, early_stopping_patience: int | None = None,
                 validation_fraction: float | None = None, random_state: int = 42, dtype: str = "float64",
                 progress: bool = False, warm_start: bool = False, divergence_factor: float | None = 1e4):
        super().__init__()
        self._params = dict(
            n_features=n_features, n_targets=n_targets, hidden_size=hidden_size, num_layers=num_layers,
            bidirectional=bool(bidirectional), dropout=dropout, optimizer=optimizer, lr=lr, momentum=momentum,
            weight_decay=weight_decay, batch_size=batch_size, epochs=epochs, grad_clip=grad_clip,
            warmup_steps=warmup_steps, schedule=schedule, early_stopping_patience=early_stopping_patience,
            validation_fraction=validation_fraction, random_state=random_state, dtype=str(np.dtype(dtype)),
            progress=progress, warm_start=warm_start,
            divergence_factor=divergence_factor)
        self._build()

    def _build(self) -> None:
        p = self._params
        for name in ("n_features", "n_targets", "hidden_size", "num_layers"):
            check_positive_int(p[name], name, "LSTMRegressor")
        dt = check_dtype(p["dtype"])
        self._dtype_np = dt
        gen = np.random.default_rng(p["random_state"])
        self.lstm = LSTM(p["n_features"], p["hidden_size"], p["num_layers"], dropout=p["dropout"],
                         bidirectional=p["bidirectional"], rng=gen, dtype=dt)
        width = p["hidden_size"] * (2 if p["bidirectional"] else 1)
        self.head = Linear(width, p["n_targets"], rng=gen, dtype=dt)
        self._loss = MSELoss()
        self.history_ = None
        self.is_fitted_ = False

    def reset_parameters(self) -> None:
        """Re-draw every parameter from ``random_state`` (the state right after construction)."""
        fresh = self._load_fresh()
        self.lstm._dropout_rng = fresh.lstm._dropout_rng     # the same dropout masks on every fit

    # ------------------------------------------------------------------ forward / backward
    def forward(self, X, positions=None) -> np.ndarray:
        """``y_hat (batch, seq, n_targets)`` from ``X (batch, seq, n_features)``; ``positions`` is ignored."""
        X = self._check_X(X, "LSTMRegressor.forward")
        H, _ = self.lstm(X)
        return self.head(H)

    def backward(self, grad_output) -> np.ndarray:
        """Back-propagate ``dL/dy_hat``; adds every parameter gradient and returns ``dL/dX``."""
        dX, _ = self.lstm.backward(self.head.backward(grad_output))
        return dX

    # ------------------------------------------------------------------ training
    def _train_step(self, batch) -> float:
        X, Y = batch
        if not np.isfinite(Y).any():       # a window with no observed target teaches nothing
            return 0.0
        loss = self._loss.forward(self.forward(X), Y)
        self.backward(self._loss.backward())
        return loss

    def _eval_step(self, batch) -> float:
        X, Y = batch
        return masked_mse(self._predict_array(X), Y)

    def fit(self, X, y, positions=None, *, X_val=None, y_val=None, positions_val=None,
            callbacks=()) -> "LSTMRegressor":
        """Train on windows ``X (n, seq, n_features)`` with targets ``y (n, seq, n_targets)``.

        NaN targets are masked out of the loss.  Validation: ``X_val``/``y_val``, or
        ``validation_fraction`` of the windows.  ``positions``/``positions_val`` are accepted for
        the regressor's signature and ignored.

        Returns
        -------
        self, with ``history_``.

        Raises
        ------
        ShapeError, InputError
            Bad shapes, NaN/inf inputs, inf targets, a bad ``validation_fraction``.
        DivergenceError
            Non-finite loss or gradient (parameters restored to the start of the failing epoch).
        """
        p = self._params
        where = "LSTMRegressor.fit"
        X = self._check_X(X, where)
        Y = self._check_y(y, X, where)
        val = None
        if X_val is not None:
            Xv = self._check_X(X_val, f"{where} (X_val)")
            val = (Xv, self._check_y(y_val, Xv, f"{where} (y_val)"))
        elif p["validation_fraction"]:
            # The same split as SequenceRegressor with the same random_state: identical windows held out.
            vi, ti = self._validation_split(len(X), where)
            val = (X[vi], Y[vi])
            X, Y = X[ti], Y[ti]
        if not p["warm_start"]:
            self.reset_parameters()
        return self._run_trainer((X, Y), val, callbacks)

    def _fit_context(self):
        return _one_blas_thread()

    # ------------------------------------------------------------------ inference
    def _predict_array(self, X, positions=None, chunk: int = 2048) -> np.ndarray:
        """Predictions in evaluation mode, in chunks of ``chunk`` windows; ``positions`` is ignored."""
        was_training = self.training
        self.eval()
        try:
            with self.no_cache(), _one_blas_thread():
                return np.concatenate([self.forward(X[s:s + chunk]) for s in range(0, len(X), chunk)], axis=0)
        finally:
            self.train(was_training)

    def __repr__(self) -> str:
        p = self._params
        fitted = "fitted" if self.is_fitted_ else "not fitted"
        return (f"LSTMRegressor(n_features={p['n_features']}, hidden_size={p['hidden_size']}, "
                f"num_layers={p['num_layers']}, bidirectional={p['bidirectional']})  "
                f"# {self.num_parameters()} parameters, {fitted}")

    def _repr_html_(self) -> str:
        """Jupyter's view: non-default hyperparameters, parameter count, fitted or not."""
        from ..display import estimator_html

        return estimator_html(self)

