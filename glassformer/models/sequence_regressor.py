"""The transformer window regressor, with scikit-learn's estimator contract.

At every depth of a window of well-log samples the model predicts the target log(s) from the input
logs at *all* depths of the window (Pyrcz 2024, "Transformers", demonstration 1: seven depths).
The network is :class:`~glassformer.models.networks.TransformerRegressorNet` (E, P, Z, encoder
layers, linear head); this estimator builds it in ``fit`` from the data and trains it.

The defaults are a general model for well logs (d_model 16, 2 heads, sinusoidal positions,
PyTorch's initialisation, Adam with early stopping) -- the same model ``glassformer train``
fits.  The chapter's exact model is a named preset, :meth:`SequenceRegressor.chapter_model`.
"""

from __future__ import annotations

from contextlib import ExitStack

import numpy as np

from .._validation import as_float_array, check_dtype
from ..errors import InputError, NotReadyError, ShapeError
from ..nn.tiers import KERNELS, kernels
from ..trace import Trace
from .estimator import WindowRegressor
from .networks import TransformerRegressorNet, chapter_init

__all__ = ["SequenceRegressor"]

MODEL_KIND = "glassformer.SequenceRegressor"

#: The chapter's model (Pyrcz 2024): d_model 4, one head, d_ff 16, one post-norm layer, attention
#: without an output projection, the fixed encoding [sin t, cos t, sin t/100, cos t/100], the
#: chapter's initialisation and full-batch gradient descent with lr 0.01.
CHAPTER_MODEL = dict(d_model=4, num_heads=1, d_ff=16, num_layers=1, positional="chapter", attn_out_proj=False,
                     init="chapter", optimizer="sgd", lr=0.01, batch_size=None, epochs=1000, grad_clip=None,
                     early_stopping_patience=None, validation_fraction=None)


class SequenceRegressor(WindowRegressor):
    """Transformer encoder that regresses target logs at every position of a window.

    Parameters
    ----------
    d_model : int, default 16
    num_heads : int, default 2
        Must divide ``d_model``; head size ``d_k = d_model / num_heads``.
    d_ff : int or None, default None
        Hidden width of the feed-forward network; None means ``2 * d_model``.
    num_layers : int, default 1
    dropout : float, default 0.0
    activation : {"relu", "gelu", "gelu_tanh"}, default "relu"
    norm_first : bool, default False
        Post-norm (False, the chapter's and PyTorch's) or pre-norm.
    positional : str or callable, default "sinusoidal"
        Positional encoding by name (:func:`glassformer.nn.positional.positional_names`:
        "sinusoidal", "wavelengths", "chapter", "learned", "continuous", "fourier", "none", and
        "rotary", RoPE inside attention), or a plain function ``f(positions, d_model) -> (seq, d_model)``
        of your own (positions ``(seq,)``: sample indices or depths in m), a fixed additive encoding;
        a model with a function trains, predicts and traces, but ``save`` refuses it (a model file
        holds no code).
    positional_options : dict or None
        Keywords of the encoding (``wavelengths``, ``max_len``, ...; rotary: ``base``, ``interleaved``).
    input_embedding : {"linear", "mlp", "fourier"}, default "linear"
    input_embedding_options : dict or None
    attn_out_proj : bool, default True
        Attention output projection (the chapter's attention has none).
    mixer : {"attention", "fourier"}, default "attention"
    optimizer : {"sgd", "adam", "adamw"}, default "adam"
    lr : float, default 3e-3
    momentum, weight_decay : float, default 0.0
    batch_size : int or None, default 32
        Windows per update; None = full batch.
    epochs : int, default 30
        Maximum passes over the training windows.
    grad_clip : float or None, default 1.0
        Global gradient-norm clipping.
    warmup_steps : int, default 0
    schedule : {None, "constant", "cosine", "linear", "noam"}
    early_stopping_patience : int or None, default 5
        Epochs without validation improvement before stopping; the best weights are restored.
    validation_fraction : float or None, default 0.1
        Windows held out (a seeded random choice) for early stopping when ``fit`` gets no
        ``X_val``.  Windows that overlap training windows make an optimistic validation set;
        the well model (:class:`glassformer.wells.WellModel`) holds out depth blocks instead.
    init : {"torch", "chapter"}, default "torch"
        "torch": PyTorch's default initialisation, drawn from ``default_rng(random_state)``;
        "chapter": the chapter's ``randn * 0.1`` draws (:func:`~glassformer.models.networks.chapter_init`).
    random_state : int, default 42
        Initialisation, shuffling, dropout and the validation split.
    dtype : {"float64", "float32"}, default "float64"
    progress : bool, default False
        A progress bar during ``fit``.
    warm_start : bool, default False
        ``fit`` continues from the current network when its widths fit the data.
    divergence_factor : float or None, default 1e4
        Stop with :class:`~glassformer.errors.DivergenceError` (keeping the last good weights) when
        an epoch's mean training loss exceeds this many times the first batch's; None: off.
    kernels : {None, "fast", "reference"}, default None
        The tier of kernels ``fit``, ``predict``, ``score`` and ``trace`` run: ``"reference"`` the
        chapter's plain equations (:mod:`glassformer.nn.reference`), ``"fast"`` their optimised
        implementation; None follows :func:`glassformer.kernels` (fast unless a caller set it).
        Both give the same numbers up to rounding.

    Attributes
    ----------
    network_ : TransformerRegressorNet
        The fitted network (``embedding``, ``positional``, ``encoder``, ``head``; PyTorch names).
    n_features_in_, n_targets_ : int
    history_ : History
        Losses per epoch.
    is_fitted_ : bool

    Examples
    --------
    >>> model = SequenceRegressor(d_model=8).fit(X, y)          # X (n, seq, n_features)  # doctest: +SKIP
    >>> model.trace(X[:1])["layers.0.A"].shape                  # (1, num_heads, seq, seq)  # doctest: +SKIP
    """

    _kind = MODEL_KIND

    def __init__(self, d_model: int = 16, num_heads: int = 2, d_ff: int | None = None, num_layers: int = 1,
                 dropout: float = 0.0, activation: str = "relu", norm_first: bool = False,
                 positional="sinusoidal", positional_options: dict | None = None,
                 input_embedding: str = "linear", input_embedding_options: dict | None = None,
                 attn_out_proj: bool = True, mixer: str = "attention", optimizer: str = "adam", lr: float = 3e-3,
                 momentum: float = 0.0, weight_decay: float = 0.0, batch_size: int | None = 32, epochs: int = 30,
                 grad_clip: float | None = 1.0, warmup_steps: int = 0, schedule: str | None = None,
                 early_stopping_patience: int | None = 5, validation_fraction: float | None = 0.1,
                 init: str = "torch", random_state: int = 42, dtype: str = "float64", progress: bool = False,
                 warm_start: bool = False, divergence_factor: float | None = 1e4, kernels: str | None = None):
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_ff = d_ff
        self.num_layers = num_layers
        self.dropout = dropout
        self.activation = activation
        self.norm_first = norm_first
        self.positional = positional
        self.positional_options = positional_options
        self.input_embedding = input_embedding
        self.input_embedding_options = input_embedding_options
        self.attn_out_proj = attn_out_proj
        self.mixer = mixer
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
        self.init = init
        self.random_state = random_state
        self.dtype = dtype
        self.progress = progress
        self.warm_start = warm_start
        self.divergence_factor = divergence_factor
        self.kernels = kernels

    @classmethod
    def chapter_model(cls, **overrides) -> "SequenceRegressor":
        """The chapter's exact model (Pyrcz 2024, "Transformers"), with ``overrides`` applied.

        d_model 4, one head (d_k 4), d_ff 16, one post-norm layer, attention without an output
        projection, the encoding ``[sin t, cos t, sin t/100, cos t/100]``, the chapter's
        initialisation (``init="chapter"``, seed 42) and full-batch gradient descent with lr 0.01
        and no early stopping.  ``SequenceRegressor.chapter_model(epochs=30000)`` trains
        demonstration 1 as printed in the chapter.
        """
        return cls(**dict(CHAPTER_MODEL, **overrides))

    # ------------------------------------------------------------------ the network
    def _check_hyperparameters(self, where: str) -> None:
        for name in ("d_model", "num_heads", "num_layers"):
            _positive_int(getattr(self, name), name, where)
        if self.d_ff is not None:
            _positive_int(self.d_ff, "d_ff", where)
        if self.d_model % self.num_heads:
            raise InputError(f"{where}: d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})")
        if self.init not in ("torch", "chapter"):
            raise InputError(f"{where}: init must be 'torch' or 'chapter', got {self.init!r}")
        if self.kernels not in (None, *KERNELS):
            raise InputError(f"{where}: kernels must be None, 'fast' or 'reference', got {self.kernels!r}")
        check_dtype(self.dtype)

    def _make_network(self, n_features: int, n_targets: int) -> TransformerRegressorNet:
        net = TransformerRegressorNet(
            n_features, n_targets, d_model=self.d_model, num_heads=self.num_heads,
            d_ff=self.d_ff if self.d_ff is not None else 2 * self.d_model, num_layers=self.num_layers,
            dropout=self.dropout, activation=self.activation, norm_first=self.norm_first,
            positional=self.positional, positional_options=dict(self.positional_options or {}),
            input_embedding=self.input_embedding, input_embedding_options=dict(self.input_embedding_options or {}),
            attn_out_proj=self.attn_out_proj, mixer=self.mixer, rng=np.random.default_rng(self.random_state),
            dtype=check_dtype(self.dtype))
        if self.init == "chapter":
            chapter_init(net, self.random_state)
        return net

    def _fit_context(self, positions):
        """Training and prediction run inside: this model's kernels, a fixed encoding of shared positions."""
        stack = ExitStack()
        stack.enter_context(kernels(self.kernels))
        stack.enter_context(self.network_.fixed_positions(positions))
        return stack

    # ------------------------------------------------------------------ inspection
    def _built(self, where: str) -> TransformerRegressorNet:
        net = getattr(self, "network_", None)
        if net is None:
            raise NotReadyError(f"{where}: there is no network yet; call fit(X, y), or build_network(n_features) "
                                "to inspect the untrained model")
        return net

    def trace(self, X, positions=None, y=None, *, grads: bool = False) -> Trace:
        """Every named intermediate of one forward pass in evaluation mode (see :mod:`glassformer.trace`),
        and with ``grads=True`` the gradient of the loss with respect to each of them.

        Keys: X, E, P, Z, ``layers.<i>.{Q,K,V,S,A,U,T1,R,G,F,T2,H}``, y_hat.  Works on a fitted
        model and on an untrained one after :meth:`build_network`.

        Parameters
        ----------
        X : array (batch, seq, n_features)
        positions : array (seq,) or (batch, seq), optional
            Default 1..seq.
        y : array (batch, seq) or (batch, seq, n_targets), optional
            Targets (NaN: a gap), needed with ``grads=True``.
        grads : bool, default False
            Also run backward on the mean squared error ``L`` of ``y_hat`` against ``y`` (the
            training loss) and keep, beside the forward arrays, ``y``, ``L`` and ``dL/d(symbol)`` of
            every intermediate under ``"d" + symbol`` -- ``dy_hat``; per layer ``layers.<i>.dH``,
            ``dT2``, ``dF``, ``dG``, ``dR``, ``dT1``, ``dU``, ``dA``, ``dS``, ``dQ``, ``dK``, ``dV``;
            ``dZ``, ``dE``, ``dP``, ``dX`` -- each with its symbol's shape.  ``dA`` is dL/dA and
            ``dS`` dL/dS of the scaled scores (the chapter's, not multiplied by ``1/sqrt(d_k)``).
            The parameters' gradients are left unchanged.  :meth:`Trace.backward_steps
            <glassformer.trace.Trace.backward_steps>` walks them from ``y_hat`` down to ``S``.

        Raises
        ------
        NotReadyError
            No network yet (as ``predict`` before ``fit``).
        ShapeError
            ``X`` is not ``(batch, seq, n_features_in_)``, or a bad ``y``.
        InputError
            ``grads=True`` without ``y``.

        Examples
        --------
        >>> tr = model.trace(X, positions, y=y, grads=True)     # doctest: +SKIP
        >>> tr["layers.0.dA"].shape == tr["layers.0.A"].shape   # doctest: +SKIP
        True
        """
        net = self._built("SequenceRegressor.trace")
        with kernels(self.kernels):
            return net.trace(X, positions, y, grads=grads)

    def predict_with_attention(self, X, positions=None, A=None, layer: int = 0) -> np.ndarray:
        """Predict with layer ``layer``'s attention weights replaced by ``A`` (the chapter's ablation).

        ``U = A V`` per head, then the rest of the block and model as usual (evaluation mode, no
        caches).  Like :meth:`trace`, an inspection tool: it also runs on an untrained network.

        Parameters
        ----------
        A : array (seq, seq), (num_heads, seq, seq) or (batch, num_heads, seq, seq)
            Rows are each query's weights over the keys (normally summing to 1), e.g.
            ``np.full((seq, seq), 1/seq)`` (uniform) or ``np.eye(seq)`` (identity).

        Raises
        ------
        NotReadyError
            No network yet.
        InputError
            The model has no attention (``mixer="fourier"``), or ``layer`` is out of range.
        ShapeError
            A bad ``A`` or ``X``.
        """
        where = "SequenceRegressor.predict_with_attention"
        net = self._built(where)
        if self.mixer != "attention":
            raise InputError(f"{where}: the model has no attention (mixer='fourier')")
        X = self._check_X(X, where, self.n_features_in_)
        pos = self._check_positions(positions, X, where)
        if not 0 <= layer < self.num_layers:
            raise InputError(f"{where}: layer must be in [0, {self.num_layers}), got {layer}")
        with kernels(self.kernels):
            return net.predict_with_attention(X, pos, _attention_override(A, X.shape[:2], self.num_heads, net.dtype),
                                              layer)


def _attention_override(A, batch_seq: tuple, num_heads: int, dtype) -> np.ndarray:
    """``A`` as ``(1 or batch, 1 or num_heads, seq, seq)``; ShapeError otherwise."""
    B, L = batch_seq
    A = as_float_array(A, "A", "predict_with_attention", dtype=dtype)
    A = A[None, None] if A.ndim == 2 else (A[None] if A.ndim == 3 else A)
    if A.ndim != 4 or A.shape[-2:] != (L, L) or A.shape[1] not in (1, num_heads) or A.shape[0] not in (1, B):
        raise ShapeError(f"predict_with_attention: A must have shape (seq, seq), (num_heads, seq, seq) or "
                         f"(batch, num_heads, seq, seq) with seq={L}, num_heads={num_heads}, got {np.shape(A)}")
    return A


def _positive_int(value, name: str, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{where}: {name} must be a positive integer, got {value!r}")
