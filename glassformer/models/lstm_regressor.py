"""Per-position regression with an LSTM: the model the chapter's transformer succeeds.

At every position ``t`` of a window of well-log samples the model predicts the target log(s)::

    H = LSTM(X)                         (batch, seq, D * hidden_size), D = 2 if bidirectional
    y_hat = W_y H + b_y                 linear head, (batch, seq, n_targets)

The network is :class:`~glassformer.models.networks.LSTMRegressorNet`: :class:`glassformer.nn.LSTM`
(hand-written backward through time, PyTorch's gate order and parameter names:
``lstm.weight_ih_l0``, ..., ``head.weight``, ``head.bias``) and a linear head.

**Bidirectional by default.**  A well log has no arrow of time: permeability at one depth is
related to the rock both above and below it (the chapter's demonstration 2: the next depth, even makes the
target depend on the deeper neighbour).  A one-directional LSTM would see only the shallower part of the
window at each depth, while the transformer it is compared with attends over the whole window;
``bidirectional=True`` gives both models the same context.  Pass ``bidirectional=False`` for a
causal model (e.g. while drilling, where deeper samples do not exist yet).

The estimator contract, training loop and file format are those of
:class:`~glassformer.models.SequenceRegressor`: the same :class:`~glassformer.train.Trainer`
(optimizer, mini-batches shuffled by ``default_rng(random_state)``, gradient clipping, early
stopping with best-weight restore, divergence guard), :class:`~glassformer.train.losses.MSELoss` with
NaN targets masked out of the loss, ``validation_fraction`` split, ``score`` (R²), and
``save``/``load`` with kind ``"lstm_regressor"``.
``positions`` are accepted wherever the transformer takes them, so both models plug into the
same pipeline, and ignored: the recurrence itself orders the samples.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
from threadpoolctl import threadpool_limits

from .._validation import check_dtype
from .estimator import WindowRegressor
from .networks import LSTMRegressorNet
from .sequence_regressor import _positive_int

__all__ = ["LSTMRegressor"]

MODEL_KIND = "lstm_regressor"


@contextmanager
def _one_blas_thread():
    """Limit BLAS to one thread while the recurrence runs.

    Backward through time is hundreds of tiny matmuls per batch; a multi-threaded BLAS spends
    more time waking its threads than multiplying (measured 3x slower on 2 busy cores).
    ``threadpoolctl`` comes with scikit-learn; the previous limits are restored on exit.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        yield


class LSTMRegressor(WindowRegressor):
    """(Bidirectional) LSTM that regresses target logs at every position of a window.

    Parameters
    ----------
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
    epochs : int, default 30
    grad_clip : float or None, default 1.0
        Global gradient-norm clipping (recurrent nets can have exploding gradients).
    warmup_steps : int, default 0
    schedule : {None, "constant", "cosine", "linear", "noam"}
    early_stopping_patience : int or None, default 5
        Epochs without validation improvement before stopping; the best weights are restored.
    validation_fraction : float or None, default 0.1
        Windows held out (seeded by ``random_state``; the same ones as a SequenceRegressor with
        the same ``random_state``) when ``fit`` gets no ``X_val``.
    random_state : int, default 42
        Initialisation (PyTorch's U(-1/sqrt(H), 1/sqrt(H)) for the LSTM, PyTorch's Linear init for the
        head, both from ``numpy.random.default_rng(random_state)``), shuffling, dropout and the
        validation split.
    dtype : {"float64", "float32"}, default "float64"
    progress : bool, default False
    warm_start : bool, default False
        ``fit`` continues from the current network when its widths fit the data.
    divergence_factor : float or None, default 1e4
        Stop with :class:`~glassformer.errors.DivergenceError` (keeping the last good weights) when
        an epoch's mean training loss exceeds this many times the first batch's; None: off.

    Attributes
    ----------
    network_ : LSTMRegressorNet
        ``lstm`` and ``head``.
    n_features_in_, n_targets_ : int
    history_ : History
    is_fitted_ : bool
    """

    _kind = MODEL_KIND
    _uses_positions = False

    def __init__(self, hidden_size: int = 16, num_layers: int = 1, bidirectional: bool = True, dropout: float = 0.0,
                 optimizer: str = "adam", lr: float = 3e-3, momentum: float = 0.0, weight_decay: float = 0.0,
                 batch_size: int | None = 32, epochs: int = 30, grad_clip: float | None = 1.0,
                 warmup_steps: int = 0, schedule: str | None = None, early_stopping_patience: int | None = 5,
                 validation_fraction: float | None = 0.1, random_state: int = 42, dtype: str = "float64",
                 progress: bool = False, warm_start: bool = False, divergence_factor: float | None = 1e4):
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bidirectional = bidirectional
        self.dropout = dropout
        self.optimizer = optimizer
        self.lr = lr
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.batch_size = batch_size
        self.epochs = epochs
        self.grad_clip = grad_clip
        self.warmup_steps = warmup_steps
        self.schedule = schedule
        self.early_stopping_patience = early_stopping_patience
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.dtype = dtype
        self.progress = progress
        self.warm_start = warm_start
        self.divergence_factor = divergence_factor

    def _check_hyperparameters(self, where: str) -> None:
        for name in ("hidden_size", "num_layers"):
            _positive_int(getattr(self, name), name, where)
        check_dtype(self.dtype)

    def _make_network(self, n_features: int, n_targets: int) -> LSTMRegressorNet:
        return LSTMRegressorNet(n_features, n_targets, hidden_size=self.hidden_size, num_layers=self.num_layers,
                                bidirectional=bool(self.bidirectional), dropout=self.dropout,
                                rng=np.random.default_rng(self.random_state), dtype=check_dtype(self.dtype))

    def _fit_context(self, positions):
        return _one_blas_thread()
