"""The networks inside the window regressors: modules with forward, backward and trace.

:class:`TransformerRegressorNet` is the chapter's encoder-only model (Pyrcz 2024, "Transformers",
demonstration 1: seven depths), generalised::

    E = W_e x + b_e                     input embedding          (batch, seq, d_model)
    P = PE(positions)                   positional encoding      (seq, d_model) or (batch, seq, d_model)
    Z = E + P                                                    (batch, seq, d_model)
    H = EncoderLayer_N(... EncoderLayer_1(Z))                    (batch, seq, d_model)
    y_hat = W_y H + b_y                 linear head              (batch, seq, n_targets)

:class:`LSTMRegressorNet` is the recurrent model it is compared with::

    H = LSTM(X)                         (batch, seq, D * hidden_size), D = 2 if bidirectional
    y_hat = W_y H + b_y                 (batch, seq, n_targets)

Both are :class:`glassformer.nn.Module` trees with PyTorch's parameter names
(``embedding.linear.weight``, ``encoder.layers.0.self_attn.in_proj_weight``, ``head.weight``;
``lstm.weight_ih_l0``), so ``state_dict`` round-trips with PyTorch modules of the same layout.
The scikit-learn-style estimators in :mod:`glassformer.models.sequence_regressor` and
:mod:`glassformer.models.lstm_regressor` build one of these in ``fit`` (as ``network_``) and train it.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .._validation import as_float_array, check_ndim
from ..errors import InputError, ShapeError
from ..nn.input_embedding import LinearInputEmbedding, get_input_embedding
from ..nn.linear import Linear
from ..nn.module import Module
from ..nn.positional import build_positional, get_spec
from ..nn.recurrent import LSTM
from ..nn.transformer import TransformerEncoder, TransformerEncoderLayer
from ..trace import GradientRecorder, Trace, backward_order
from ..train.losses import MSELoss

__all__ = ["LSTMRegressorNet", "TransformerRegressorNet", "chapter_init", "window_positions"]


def window_positions(positions, X: np.ndarray, where: str) -> np.ndarray:
    """Positions as ``(seq,)`` or ``(batch, seq)`` floats; None gives 1, 2, ..., seq (the chapter's).

    Raises
    ------
    ShapeError
        ``positions`` fits neither ``(seq,)`` nor ``(batch, seq)`` of ``X (batch, seq, n_features)``.
    InputError
        NaN or inf positions.
    """
    if positions is None:
        return np.arange(1, X.shape[1] + 1, dtype=np.float64)
    pos = as_float_array(positions, "positions", where)
    if (pos.ndim == 1 and pos.shape[0] == X.shape[1]) or (pos.ndim == 2 and pos.shape == X.shape[:2]):
        return pos
    raise ShapeError(f"{where}: positions must have shape (seq,) = ({X.shape[1]},) or (batch, seq) = "
                     f"{X.shape[:2]}, got {pos.shape}")


class TransformerRegressorNet(Module):
    """Encoder-only transformer mapping input logs to target logs at every position of a window.

    Parameters
    ----------
    n_features, n_targets : int
        Input and target logs per depth sample.
    d_model, num_heads, d_ff, num_layers : int
    dropout : float
    activation : {"relu", "gelu", "gelu_tanh"}
    norm_first : bool
        Post-norm (False, the chapter's) or pre-norm.
    positional : str or callable
        A name of the registry :func:`glassformer.nn.positional.positional_names`; a per-head kind
        (rotary: RoPE) acts inside attention and adds nothing to the embeddings.  Or a plain function
        ``f(positions (seq,), d_model) -> (seq, d_model)``, a fixed additive encoding.
    positional_options, input_embedding_options : dict
    input_embedding : {"linear", "mlp", "fourier"}
    attn_out_proj : bool
        Attention output projection (the chapter's attention has none).
    mixer : {"attention", "fourier"}
    rng : numpy.random.Generator or int
        PyTorch-style initialisation draws (see :func:`chapter_init` for the chapter's).
    dtype : float64 or float32

    Shapes
    ------
    ``forward(X (batch, seq, n_features), positions (seq,) or (batch, seq)) -> (batch, seq, n_targets)``;
    ``backward(dL/dy_hat) -> dL/dX``.
    """

    def __init__(self, n_features: int, n_targets: int, *, d_model: int, num_heads: int, d_ff: int,
                 num_layers: int, dropout: float, activation: str, norm_first: bool, positional: str,
                 positional_options: dict, input_embedding: str, input_embedding_options: dict,
                 attn_out_proj: bool, mixer: str, rng, dtype):
        super().__init__()
        self.n_features, self.n_targets = n_features, n_targets
        spec = get_spec(positional, "positional")
        if spec.kind == "per_head" and mixer != "attention":
            raise InputError(f"positional={spec.name!r} acts inside attention and needs mixer='attention'")
        self.embedding = get_input_embedding(input_embedding, n_features, d_model, rng=rng, dtype=dtype,
                                             **input_embedding_options)
        # An additive encoding P (a zero one for per-head kinds) and the per-head hook (RoPE) or None.
        self.positional, head_hook = build_positional(positional, d_model, num_heads, rng=rng, dtype=dtype,
                                                      **positional_options)
        layers = [TransformerEncoderLayer(d_model, num_heads, d_ff, dropout, activation, 1e-5, norm_first,
                                          mixer=mixer, attn_out_proj=attn_out_proj, head_hook=head_hook, rng=rng,
                                          dtype=dtype)
                  for _ in range(num_layers)]
        self.encoder = TransformerEncoder(layers[0], num_layers)
        for mine, fresh in zip(self.encoder.layers, layers):   # distinct draws per layer, unlike clones
            mine.load_state_dict(fresh.state_dict())
        self.head = Linear(d_model, n_targets, rng=rng, dtype=dtype)
        self._fixed_P = None                 # (positions, P) while positions are fixed (fit, predict)

    @property
    def trainable_positions(self) -> bool:
        """True when the positional encoding has parameters (its P depends on the weights)."""
        return bool(self.positional.parameters())

    @contextmanager
    def fixed_positions(self, positions):
        """Compute a fixed encoding of shared ``positions (seq,)`` once for the duration of the block.

        Training calls the network thousands of times with the same window positions; a fixed
        (parameter-free) encoding of them never changes, so ``P`` is computed once.  Trainable
        encodings and per-window positions ``(batch, seq)`` are recomputed as usual.
        """
        before = self._fixed_P
        if np.ndim(positions) == 1 and not self.trainable_positions:
            self._fixed_P = (positions, self.positional(positions))
        try:
            yield self
        finally:
            self._fixed_P = before

    # ------------------------------------------------------------------ forward / backward
    def forward(self, X, positions=None, src_key_padding_mask=None) -> np.ndarray:
        """``y_hat (batch, seq, n_targets)`` from ``X (batch, seq, n_features)`` at ``positions``.

        ``positions``: ``(seq,)`` shared by every window or ``(batch, seq)`` (e.g. depths in m);
        None gives 1..seq.  ``src_key_padding_mask (batch, seq)``: True = padding.  Inputs are
        checked here only when the network is used on its own (``check_inputs``).
        """
        if self.check_inputs:
            X = _checked_windows(X, self.n_features, self.dtype, "TransformerRegressorNet.forward")
            positions = window_positions(positions, X, "TransformerRegressorNet.forward")
        elif positions is None:
            positions = np.arange(1, X.shape[1] + 1, dtype=np.float64)
        E = self._tap("E", self.embedding(X))                            # (batch, seq, d_model)
        fixed = self._fixed_P
        P = fixed[1] if fixed is not None and fixed[0] is positions else self.positional(positions)
        P = self._tap("P", P)
        Z = self._tap("Z", E + P)                                        # (batch, seq, d_model)
        H = self.encoder(Z, src_key_padding_mask=src_key_padding_mask, positions=positions)  # (batch, seq, d_model)
        y_hat = self._tap("y_hat", self.head(H))                         # (batch, seq, n_targets)
        self._save(E=E, P=P, Z=Z, X=X, positions=positions)
        return y_hat

    def backward(self, grad_output) -> np.ndarray:
        """Back-propagate ``dL/dy_hat``; adds every parameter gradient and returns ``dL/dX``.

        A probe (:meth:`~glassformer.nn.Module.probing`) sees dL/dy_hat, dL/dZ, dL/dE, dL/dP and
        dL/dX here, and the gradients of every layer's intermediates in the layers.
        """
        c = self._saved()
        dy_hat = self._tap_grad("y_hat", grad_output)
        dZ = self._tap_grad("Z", self.encoder.backward(self.head.backward(dy_hat)))   # (batch, seq, d_model)
        trainable = self._fixed_P is None and self.trainable_positions    # a fixed P (fit, predict) has none
        if trainable or self._probe is not None:
            P = c["P"]
            dP = self._tap_grad("P", dZ if P.ndim == dZ.ndim else dZ.sum(axis=0))    # P shared by the batch
            if trainable:
                self.positional.backward(dP)
        dE = self._tap_grad("E", dZ)                                     # Z = E + P
        return self._tap_grad("X", self.embedding.backward(dE))          # (batch, seq, n_features)

    # ------------------------------------------------------------------ inspection
    def trace(self, X, positions=None, y=None, *, grads: bool = False) -> Trace:
        """Every named intermediate of one forward pass in evaluation mode (see :mod:`glassformer.trace`).

        Keys: X, E, P, Z, ``layers.<i>.{Q,K,V,S,A,U,T1,R,G,F,T2,H}``, y_hat.  With ``grads=True`` also
        y, the loss L (mean squared error over the observed targets, as in training) and the gradient
        of L with respect to every intermediate, ``"d" + symbol`` (dy_hat, ``layers.<i>.dH`` ... ``dV``,
        dZ, dE, dP, dX), recorded where backward computes them (:class:`~glassformer.trace.GradientRecorder`).
        The caches are dropped afterwards, the training mode restored and the parameters' ``.grad``
        left as they were.

        Raises
        ------
        InputError
            ``grads=True`` without ``y``.
        ShapeError
            ``y`` is not ``(batch, seq)`` or ``(batch, seq, n_targets)``.
        """
        X = _checked_windows(X, self.n_features, self.dtype, "trace")
        pos = window_positions(positions, X, "trace")
        Y = _checked_targets(y, X, self.n_targets, self.dtype) if grads else None
        was_training = self.training
        kept = [p.grad.copy() for p in self.parameters()] if grads else []
        self.eval()
        try:
            with self.tracing():                    # the attention kernels keep their scores S too
                y_hat = self.forward(X, pos)
            c = self._saved()
            arrays = {"X": X, "E": c["E"], "P": c["P"], "Z": c["Z"]}
            for i, inter in enumerate(self.encoder.intermediates()):
                arrays.update({f"layers.{i}.{sym}": arr for sym, arr in inter.items()})
            arrays["y_hat"] = y_hat
            if grads:
                arrays.update(self._backward_trace(y_hat, Y))
            return Trace(arrays, positions=pos)
        finally:
            for p, g in zip(self.parameters(), kept):
                p.grad[...] = g
            self.clear_cache()
            self.train(was_training)

    def trace_prefixes(self) -> dict:
        """``{module: trace key prefix}`` for a probe (:meth:`~glassformer.nn.Module.probing`): ``""`` for
        the model, ``"layers.<i>."`` for layer i, its attention and its feed-forward network, so that
        the symbol ``T1`` shown by layer 0 is the trace key ``layers.0.T1``."""
        prefixes = {self: ""}
        for i, layer in enumerate(self.encoder.layers):
            for m in (layer, getattr(layer, "self_attn", None), layer.ffn):
                if m is not None:
                    prefixes[m] = f"layers.{i}."
        return prefixes

    def _backward_trace(self, y_hat, Y) -> dict:
        """``{"y": Y, "L": loss, gradient keys...}`` from one backward pass after a cached forward."""
        loss = MSELoss()
        L = loss.forward(y_hat, Y)
        recorder = GradientRecorder(self.trace_prefixes())
        with self.probing(recorder):
            self.backward(loss.backward())
        order = backward_order(len(self.encoder.layers))
        return {"y": Y, "L": np.asarray(L, dtype=y_hat.dtype),
                **{k: recorder.grads[k] for k in order if k in recorder.grads}}

    def predict_with_attention(self, X, positions, A, layer: int = 0) -> np.ndarray:
        """``y_hat`` with layer ``layer``'s attention weights replaced by ``A (1|batch, 1|heads, seq, seq)``.

        Evaluation mode, no caches; inputs already checked by the estimator.  The same forward pass,
        through :meth:`~glassformer.nn.MultiheadAttention.override_weights`.
        """
        was_training = self.training
        self.eval()
        try:
            with self.no_cache(), self.encoder.layers[layer].self_attn.override_weights(A):
                return self.forward(X, positions)
        finally:
            self.train(was_training)


def _checked_windows(X, n_features: int, dtype, where: str) -> np.ndarray:
    """``X`` as a finite float array ``(batch, seq, n_features)`` of ``dtype``.

    Raises
    ------
    ShapeError
        Not 3-D, or the last axis is not ``n_features``.
    InputError
        NaN or inf inputs.
    """
    X = as_float_array(X, "X", where, dtype=dtype)
    check_ndim(X, (3,), "X", where, layout="(batch, seq, n_features)")
    if X.shape[-1] != n_features:
        raise ShapeError(f"{where}: X has {X.shape[-1]} feature(s) on its last axis (shape {X.shape}), "
                         f"the model was built for n_features={n_features}")
    return X


def _checked_targets(y, X: np.ndarray, n_targets: int, dtype) -> np.ndarray:
    """``y`` as ``(batch, seq, n_targets)`` of ``dtype``, NaN allowed (gaps: no loss there).

    Raises
    ------
    InputError
        ``y`` is None, or holds inf.
    ShapeError
        ``y`` fits neither ``(batch, seq)`` nor ``(batch, seq, n_targets)`` of ``X``.
    """
    if y is None:
        raise InputError("trace: grads=True needs the targets y (batch, seq) or (batch, seq, n_targets) "
                         "to form the loss")
    Y = as_float_array(y, "y", "trace", dtype=dtype, allow_nan=True)
    if Y.ndim == 2:
        Y = Y[..., None]
    if Y.shape != X.shape[:2] + (n_targets,):
        raise ShapeError(f"trace: y must have shape (batch, seq) or (batch, seq, n_targets) = "
                         f"{X.shape[:2] + (n_targets,)}, got {np.shape(y)}")
    return Y


def chapter_init(net: TransformerRegressorNet, random_state: int) -> None:
    """The chapter's initialisation (Pyrcz 2024), mapped into PyTorch layouts.

    ``numpy.random.RandomState(random_state).randn(rows, cols) * 0.1`` in the order W_e, then per
    layer W_Q, W_K, W_V (and W_O with an output projection), W_1, W_2, then W_y; biases zero,
    LayerNorm weight 1 and bias 0.  The chapter multiplies ``x @ W``; PyTorch stores ``W.T``, so
    each draw is transposed, and Q, K, V are stacked by rows into ``in_proj_weight``.  Non-linear
    input embeddings and trainable positional encodings keep their own initialisation (W_e is
    still drawn, so the later draws do not depend on the embedding).
    """
    rs = np.random.RandomState(random_state)
    d, dt = net.head.in_features, net.dtype

    def draw(rows, cols):
        return (rs.randn(rows, cols) * 0.1).astype(dt)

    def set_linear(lin, W):                 # lin(x) = x @ W + 0
        lin.weight.data[...] = W.T
        if lin.bias is not None:
            lin.bias.data[...] = 0.0

    W_e = draw(net.n_features, d)
    if isinstance(net.embedding, LinearInputEmbedding):
        set_linear(net.embedding.linear, W_e)
    for layer in net.encoder.layers:
        att = getattr(layer, "self_attn", None)
        if att is not None:
            W_q, W_k, W_v = draw(d, d), draw(d, d), draw(d, d)
            att.in_proj_weight.data[...] = np.concatenate([W_q.T, W_k.T, W_v.T], axis=0)
            if att.in_proj_bias is not None:
                att.in_proj_bias.data[...] = 0.0
            if att.out_proj is not None:
                set_linear(att.out_proj, draw(d, d))
        d_ff = layer.linear1.out_features
        set_linear(layer.linear1, draw(d, d_ff))
        set_linear(layer.linear2, draw(d_ff, d))
        for norm in (layer.norm1, layer.norm2):
            norm.weight.data[...] = 1.0
            norm.bias.data[...] = 0.0
    set_linear(net.head, draw(d, net.n_targets))


class LSTMRegressorNet(Module):
    """(Bidirectional) LSTM and a linear head: ``y_hat = W_y LSTM(X) + b_y``.

    Parameters
    ----------
    n_features, n_targets, hidden_size, num_layers : int
    bidirectional : bool
    dropout : float
        Between stacked LSTM layers, in training mode (as ``torch.nn.LSTM``).
    rng : numpy.random.Generator or int
        PyTorch's initialisation: U(-1/sqrt(H), 1/sqrt(H)) for the LSTM, the Linear default for the head.
    dtype : float64 or float32

    Shapes
    ------
    ``forward(X (batch, seq, n_features)) -> (batch, seq, n_targets)``; positions are accepted and
    ignored (the recurrence orders the samples).
    """

    def __init__(self, n_features: int, n_targets: int, *, hidden_size: int, num_layers: int,
                 bidirectional: bool, dropout: float, rng, dtype):
        super().__init__()
        self.n_features, self.n_targets = n_features, n_targets
        self.lstm = LSTM(n_features, hidden_size, num_layers, dropout=dropout, bidirectional=bidirectional,
                         rng=rng, dtype=dtype)
        self.head = Linear(hidden_size * (2 if bidirectional else 1), n_targets, rng=rng, dtype=dtype)

    def forward(self, X, positions=None) -> np.ndarray:
        """``y_hat (batch, seq, n_targets)`` from ``X (batch, seq, n_features)``; ``positions`` is ignored."""
        if self.check_inputs:
            X = _checked_windows(X, self.n_features, self.dtype, "LSTMRegressorNet.forward")
        H, _ = self.lstm(X)                          # (batch, seq, D * hidden_size)
        return self.head(H)                          # (batch, seq, n_targets)

    def backward(self, grad_output) -> np.ndarray:
        """Back-propagate ``dL/dy_hat``; adds every parameter gradient and returns ``dL/dX``."""
        dX, _ = self.lstm.backward(self.head.backward(grad_output))
        return dX
