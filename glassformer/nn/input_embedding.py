"""Input embeddings: continuous well-log values or text tokens -> ``(batch, seq, d_model)`` vectors.

The chapter (Pyrcz 2024, section "Input Embeddings") lists three families for continuous predictor
features, all provided here:

* :class:`LinearInputEmbedding` -- ``e_t = W_e x_t + b_e``, the chapter's own choice;
* :class:`MLPInputEmbedding` -- a one-hidden-layer network of the (normalised) features;
* :class:`FourierInputEmbedding` -- sine/cosine features of the input value at several
  frequencies (random Fourier features, Tancik et al., 2020, eq. 5), then a linear map.

:class:`TokenEmbedding` is the text counterpart (Vaswani et al., 2017, sec. 3.4: the embedding
is multiplied by ``sqrt(d_model)``).  :func:`get_input_embedding` selects a continuous one by name.
"""

from __future__ import annotations

import inspect

import numpy as np

from .._validation import as_float_array, as_input, check_dtype, check_last_dim, check_ndim, check_positive_int
from ..errors import InputError
from .activation import get_activation
from .embedding import Embedding
from .linear import Linear
from .module import Module, Parameter, make_rng

_TWO_PI = 2.0 * np.pi
ACTIVATIONS = ("tanh", "relu", "gelu", "gelu_tanh")


def _make_activation(name: str, where: str) -> Module:
    """Activation module by name: ``"tanh"``, ``"relu"``, ``"gelu"`` or ``"gelu_tanh"``."""
    if name in ACTIVATIONS:
        return get_activation(name)
    raise InputError(f"{where}: activation must be one of {ACTIVATIONS}, got {name!r}")


def _check_positive(value, where: str, name: str = "sigma") -> float:
    """Return ``value`` as a float, raising :class:`InputError` unless it is positive and finite."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {name} must be a positive number, got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise InputError(f"{where}: {name} must be a positive finite number, got {value!r}")
    return v


def fourier_features(x: np.ndarray, frequencies: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sine and cosine of ``2*pi*x*B`` per feature and frequency (Tancik et al., 2020, eq. 5).

    Parameters
    ----------
    x : ndarray of shape (..., n_features)
    frequencies : ndarray of shape (n_features, num_frequencies)
        ``B``, in cycles per unit of ``x``.

    Returns
    -------
    features : ndarray of shape (..., 2 * n_features * num_frequencies)
        ``[sin block, cos block]``; inside each block the index is ``feature * num_frequencies + k``.
    sin, cos : ndarrays of shape (..., n_features, num_frequencies)
        Kept for :func:`fourier_features_backward`.
    """
    angle = _TWO_PI * x[..., :, None] * frequencies
    s, c = np.sin(angle), np.cos(angle)
    flat = angle.shape[:-2] + (-1,)
    return np.concatenate([s.reshape(flat), c.reshape(flat)], axis=-1), s, c


def fourier_features_backward(grad: np.ndarray, x: np.ndarray, frequencies: np.ndarray,
                              s: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(dL/dx, dL/dB)`` from ``dL/d(features)`` of :func:`fourier_features`.

    With ``a = 2*pi*x_f*B_fk``: ``d sin(a) = 2*pi*cos(a) da`` and ``d cos(a) = -2*pi*sin(a) da``
    per unit change of ``x_f B_fk``, so both gradients share ``h = g_sin*cos - g_cos*sin``.
    """
    n_features, k = frequencies.shape
    half = n_features * k
    g_sin = grad[..., :half].reshape(s.shape)
    g_cos = grad[..., half:].reshape(c.shape)
    h = _TWO_PI * (g_sin * c - g_cos * s)  # (..., n_features, k)
    dx = np.sum(h * frequencies, axis=-1)
    dB = np.einsum("nf,nfk->fk", x.reshape(-1, n_features), h.reshape(-1, n_features, k))
    return dx, dB


def _check_input(x, n_features: int, where: str, dtype, check: bool = True) -> np.ndarray:
    """Return ``x`` as a float array of shape (batch, seq, n_features) or (seq, n_features).

    ``check=False`` (the module is a child, see ``Module.check_inputs``): no scan of the values.
    """
    x = as_input(x, "x", where, dtype, check)
    if check:
        check_ndim(x, (2, 3), "x", where, layout="(batch, seq, n_features) or (seq, n_features)")
        check_last_dim(x, n_features, "x", where)
    return x


class LinearInputEmbedding(Module):
    """Per-position affine map of the input logs, ``e_t = W_e x_t + b_e`` (the chapter's "Input Embeddings").

    Parameters
    ----------
    n_features : int
        Number of input logs per depth (1 for porosity alone).
    d_model : int
        Embedding size.
    rng : int or numpy.random.Generator, optional
        Seeds the initial weights (PyTorch's ``nn.Linear`` default, see :class:`Linear`).
    dtype : float64 (default) or float32

    Attributes
    ----------
    linear : Linear(n_features, d_model)
        State-dict keys ``linear.weight`` (d_model, n_features) and ``linear.bias`` (d_model,).

    Shapes
    ------
    forward: ``(batch, seq, n_features)`` or ``(seq, n_features)`` -> same leading axes + ``(d_model,)``.
    backward returns dL/dx of the input's shape and accumulates the parameter gradients.

    Raises
    ------
    ShapeError for a wrong rank or last axis; InputError for NaN/inf (mask gaps, never feed them).
    """

    def __init__(self, n_features: int, d_model: int, *, rng=None, dtype=np.float64):
        super().__init__()
        self.n_features = check_positive_int(n_features, "n_features", "LinearInputEmbedding")
        self.d_model = check_positive_int(d_model, "d_model", "LinearInputEmbedding")
        self.linear = Linear(n_features, d_model, rng=make_rng(rng), dtype=check_dtype(dtype))

    def forward(self, x) -> np.ndarray:
        x = _check_input(x, self.n_features, "LinearInputEmbedding.forward", self.dtype, self.check_inputs)
        return self.linear.forward(x)

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        return self.linear.backward(grad_output)

    def extra_repr(self) -> str:
        return f"n_features={self.n_features}, d_model={self.d_model}"


class MLPInputEmbedding(Module):
    """Non-linear embedding ``e_t = W_2 act(W_1 x_t + b_1) + b_2`` (the chapter's "Artificial Neural Networks").

    Parameters
    ----------
    n_features, d_model : int
        Input logs per depth and embedding size.
    hidden : int, default 32
        Width of the hidden layer.
    activation : {"gelu", "relu", "gelu_tanh", "tanh"}, default "gelu"
    rng : int or numpy.random.Generator, optional
        Seeds both Linear layers (PyTorch's default initialisation).
    dtype : float64 (default) or float32

    Attributes
    ----------
    linear1 : Linear(n_features, hidden)
    linear2 : Linear(hidden, d_model)

    Shapes
    ------
    forward: ``(batch, seq, n_features)`` or ``(seq, n_features)`` -> ``(..., d_model)``;
    backward returns dL/dx of the input's shape.

    Raises
    ------
    ShapeError for a wrong rank or last axis; InputError for NaN/inf or an unknown activation.
    """

    def __init__(self, n_features: int, d_model: int, hidden: int = 32, activation: str = "gelu",
                 *, rng=None, dtype=np.float64):
        super().__init__()
        where = "MLPInputEmbedding"
        self.n_features = check_positive_int(n_features, "n_features", where)
        self.d_model = check_positive_int(d_model, "d_model", where)
        self.hidden = check_positive_int(hidden, "hidden", where)
        dtype = check_dtype(dtype)
        gen = make_rng(rng)
        self.linear1 = Linear(n_features, hidden, rng=gen, dtype=dtype)
        self.activation = _make_activation(activation, where)
        self.activation_name = activation
        self.linear2 = Linear(hidden, d_model, rng=gen, dtype=dtype)

    def forward(self, x) -> np.ndarray:
        x = _check_input(x, self.n_features, "MLPInputEmbedding.forward", self.dtype, self.check_inputs)
        return self.linear2.forward(self.activation.forward(self.linear1.forward(x)))

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        return self.linear1.backward(self.activation.backward(self.linear2.backward(grad_output)))

    def extra_repr(self) -> str:
        return (f"n_features={self.n_features}, d_model={self.d_model}, hidden={self.hidden}, "
                f"activation={self.activation_name!r}")


class FourierInputEmbedding(Module):
    """Fourier features of the input values followed by a linear map to ``d_model``.

    For each input log ``f`` and frequency ``k`` (Tancik et al., 2020, eq. 5; the chapter's
    "Fourier Feature Embeddings", with the frequency written in cycles rather than radians)::

        phi_t = [sin(2*pi*x_{t,f}*B_{f,k}) ..., cos(2*pi*x_{t,f}*B_{f,k}) ...]   (2 * n_features * K values)
        e_t   = W phi_t + b                                                       (d_model values)

    ``B_{f,k} ~ N(0, sigma^2)`` is drawn once from ``rng``.  The inputs are expected to be scaled
    (e.g. min-max to [0, 1]); ``sigma`` is then in cycles per unit of the scaled value.

    Parameters
    ----------
    n_features, d_model : int
    num_frequencies : int, default 16
        K, frequencies per input log.
    sigma : float, default 1.0
        Standard deviation of the frequencies (cycles per input unit); larger resolves finer detail.
    trainable : bool, default False
        Learn the frequencies too (then ``frequencies`` is a Parameter and appears in ``state_dict``).
    include_input : bool, default False
        Also pass the raw values to the linear map (``phi_t = [x_t, sin..., cos...]``), so the linear
        embedding is a special case.
    frequencies : array_like of shape (n_features, num_frequencies), optional
        Explicit frequencies instead of random ones (e.g. to rebuild a saved fixed embedding).
    rng : int or numpy.random.Generator, optional
        Seeds the frequencies, then the Linear layer.
    dtype : float64 (default) or float32

    Attributes
    ----------
    frequencies : ndarray or Parameter of shape (n_features, num_frequencies)
    linear : Linear(2 * n_features * num_frequencies (+ n_features), d_model)

    Shapes
    ------
    forward: ``(batch, seq, n_features)`` or ``(seq, n_features)`` -> ``(..., d_model)``;
    backward returns dL/dx of the input's shape.

    Raises
    ------
    ShapeError for a wrong rank or last axis; InputError for NaN/inf or bad sigma/frequencies.
    """

    def __init__(self, n_features: int, d_model: int, num_frequencies: int = 16, sigma: float = 1.0,
                 trainable: bool = False, include_input: bool = False, frequencies=None,
                 *, rng=None, dtype=np.float64):
        super().__init__()
        where = "FourierInputEmbedding"
        self.n_features = check_positive_int(n_features, "n_features", where)
        self.d_model = check_positive_int(d_model, "d_model", where)
        self.num_frequencies = check_positive_int(num_frequencies, "num_frequencies", where)
        self.sigma = _check_positive(sigma, where)
        self.trainable = bool(trainable)
        self.include_input = bool(include_input)
        dtype = check_dtype(dtype)
        gen = make_rng(rng)
        shape = (self.n_features, self.num_frequencies)
        if frequencies is None:
            freqs = gen.normal(0.0, self.sigma, size=shape)
        else:
            freqs = as_float_array(frequencies, "frequencies", where, dtype=np.float64)
            if freqs.shape != shape:
                raise InputError(f"{where}: frequencies must have shape {shape}, got {freqs.shape}")
        freqs = freqs.astype(dtype)
        self.frequencies = Parameter(freqs) if self.trainable else freqs
        width = 2 * self.n_features * self.num_frequencies + (self.n_features if self.include_input else 0)
        self.linear = Linear(width, d_model, rng=gen, dtype=dtype)

    def _freqs(self) -> np.ndarray:
        return self.frequencies.data if self.trainable else self.frequencies

    def _on_dtype_change(self, dtype: np.dtype) -> None:
        if not self.trainable:
            self.frequencies = self.frequencies.astype(dtype)

    def forward(self, x) -> np.ndarray:
        x = _check_input(x, self.n_features, "FourierInputEmbedding.forward", self.dtype, self.check_inputs)
        phi, s, c = fourier_features(x, self._freqs())
        if self.include_input:
            phi = np.concatenate([x, phi], axis=-1)
        self._save(x=x, s=s, c=c)
        return self.linear.forward(phi)

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        saved = self._saved()
        x = saved["x"]
        g_phi = self.linear.backward(grad_output)
        g_direct = None
        if self.include_input:
            g_direct, g_phi = g_phi[..., : self.n_features], g_phi[..., self.n_features:]
        dx, dB = fourier_features_backward(g_phi, x, self._freqs(), saved["s"], saved["c"])
        if self.trainable:
            self.frequencies.grad += dB
        return dx if g_direct is None else dx + g_direct

    def extra_repr(self) -> str:
        return (f"n_features={self.n_features}, d_model={self.d_model}, num_frequencies={self.num_frequencies}, "
                f"sigma={self.sigma}, trainable={self.trainable}, include_input={self.include_input}")


class TokenEmbedding(Module):
    """Token ids -> vectors, optionally scaled by ``sqrt(d_model)`` (Vaswani et al., 2017, sec. 3.4).

    Parameters
    ----------
    vocab_size : int
    d_model : int
    padding_idx : int, optional
        That row starts at zero and receives no gradient (as ``torch.nn.Embedding``).
    scale : bool, default True
        Multiply the looked-up vectors by ``sqrt(d_model)``, so that with N(0, 1) rows they are
        not drowned by (or drown) the unit-amplitude sinusoidal positional encoding.
    rng : int or numpy.random.Generator, optional
        Seeds the table, N(0, 1) like PyTorch.
    dtype : float64 (default) or float32

    Attributes
    ----------
    embedding : Embedding(vocab_size, d_model, padding_idx)
        State-dict key ``embedding.weight`` of shape (vocab_size, d_model).

    Shapes
    ------
    forward: integer ids ``(batch, seq)`` (any shape) -> ``(..., d_model)``; backward returns None.

    Raises
    ------
    InputError for non-integer ids or ids outside ``[0, vocab_size)``.
    """

    def __init__(self, vocab_size: int, d_model: int, padding_idx: int | None = None, scale: bool = True,
                 *, rng=None, dtype=np.float64):
        super().__init__()
        self.embedding = Embedding(vocab_size, d_model, padding_idx, rng=rng, dtype=check_dtype(dtype))
        self.d_model = self.embedding.embedding_dim
        self.scale = bool(scale)

    def _factor(self):
        return np.sqrt(self.d_model).astype(self.dtype) if self.scale else None

    def forward(self, ids) -> np.ndarray:
        out = self.embedding.forward(ids)
        return out * self._factor() if self.scale else out.copy()

    def backward(self, grad_output: np.ndarray) -> None:
        g = grad_output * self._factor() if self.scale else grad_output
        self.embedding.backward(g)
        return None

    def extra_repr(self) -> str:
        return f"scale={self.scale}"


INPUT_EMBEDDINGS = {"linear": LinearInputEmbedding, "mlp": MLPInputEmbedding, "fourier": FourierInputEmbedding}


def check_options(cls, options: dict, where: str, reserved=()) -> None:
    """Raise :class:`InputError` naming any keyword ``cls`` does not accept (instead of a TypeError)."""
    params = inspect.signature(cls.__init__).parameters
    accepted = [p for p in params if p not in ("self",) + tuple(reserved)]
    unknown = [k for k in options if k not in accepted or k in reserved]
    if unknown:
        raise InputError(f"{where}: unknown option(s) {unknown} for {cls.__name__}; accepted: {accepted}")


def get_input_embedding(name: str, n_features: int, d_model: int, *, rng=None, dtype=np.float64,
                        **options) -> Module:
    """Build a continuous-input embedding by name.

    Parameters
    ----------
    name : {"linear", "mlp", "fourier"}
        :class:`LinearInputEmbedding` (the chapter's), :class:`MLPInputEmbedding`,
        :class:`FourierInputEmbedding`.
    n_features, d_model : int
    rng, dtype
        Passed to the constructor.
    **options
        The class's other keywords (``hidden``, ``activation``; ``num_frequencies``, ``sigma``,
        ``trainable``, ``include_input``).

    Raises
    ------
    InputError for an unknown name or option.
    """
    where = "get_input_embedding"
    if name not in INPUT_EMBEDDINGS:
        raise InputError(f"{where}: name must be one of {sorted(INPUT_EMBEDDINGS)}, got {name!r}")
    cls = INPUT_EMBEDDINGS[name]
    check_options(cls, options, where, reserved=("n_features", "d_model", "rng", "dtype"))
    return cls(n_features, d_model, rng=rng, dtype=dtype, **options)
