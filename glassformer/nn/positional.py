"""Additive positional encodings evaluated at real-valued positions.

Every encoding here maps positions ``t`` -- a sample index (0, 1, 2, ...) or a depth in metres,
any real numbers, irregular spacing allowed (core plugs) -- to vectors that are added to the
input embedding (seed 000, "Combined Embeddings": ``z_t = e_t + p_t``):

======================  ==========================================  =============================
name                    class                                       trainable parameters
======================  ==========================================  =============================
``"sinusoidal"``        :class:`SinusoidalPositionalEncoding`       none (Vaswani et al., 2017)
``"wavelengths"``       :class:`WavelengthPositionalEncoding`       none (user wavelengths)
``"seed"``              wavelengths ``[2*pi, 200*pi]``, d_model 4   none (seed 000's code)
``"learned"``           :class:`LearnedPositionalEmbedding`         ``weight`` (max_len, d_model)
``"continuous"``        :class:`ContinuousPositionalEncoding`       ``linear1.*``, ``linear2.*``
``"fourier"``           :class:`FourierPositionalEncoding`          ``frequencies`` if trainable
``"none"``              :class:`ZeroPositionalEncoding`             none (ablation)
======================  ==========================================  =============================

Rotary embeddings (RoPE) rotate queries and keys inside attention instead of adding a vector;
they live in :mod:`glassformer.nn.rotary`.

Shapes: ``forward(positions)`` takes ``(seq,)`` -> ``(seq, d_model)`` or ``(batch, seq)`` ->
``(batch, seq, d_model)`` (per-sequence positions, e.g. the real depths of each window).
``backward(grad_output)`` accumulates the parameter gradients of trainable encodings and returns
``None``: positions are coordinates, never differentiated.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, check_dtype, check_ndim, check_positive_int
from ..errors import InputError, ShapeError
from .input_embedding import (
    _check_positive, _make_activation, check_options, fourier_features, fourier_features_backward,
)
from .linear import Linear
from .module import Module, Parameter, make_rng

_TWO_PI = 2.0 * np.pi

#: Wavelengths (position units) of seed 000's code ``[sin t, cos t, sin t/100, cos t/100]``.
SEED_WAVELENGTHS = (2.0 * np.pi, 200.0 * np.pi)


class PositionalEncoding(Module):
    """Base class: validates positions, tracks the output dtype, checks ``grad_output``'s shape.

    Subclasses implement ``_encode(t) -> (output, saved)`` with ``t`` a validated float array of
    shape (seq,) or (batch, seq) and, when trainable, ``_accumulate(grad_output)`` reading
    ``self._saved()``.
    """

    def __init__(self, d_model: int, dtype=np.float64):
        super().__init__()
        self.d_model = check_positive_int(d_model, "d_model", type(self).__name__)
        self._dtype = check_dtype(dtype)

    @property
    def dtype(self) -> np.dtype:
        """Output dtype (that of the parameters for trainable encodings)."""
        return self._dtype

    def _on_dtype_change(self, dtype: np.dtype) -> None:
        self._dtype = dtype

    def _positions(self, positions) -> np.ndarray:
        """Return ``positions`` as a finite float array of shape (seq,) or (batch, seq)."""
        where = f"{type(self).__name__}.forward"
        # A child gets positions its parent validated (Module.check_inputs): no scan of the values.
        if self.check_inputs:
            t = as_float_array(positions, "positions", where)
        else:
            t = np.asarray(positions)
            t = t if t.dtype.kind == "f" else t.astype(np.float64)
        check_ndim(t, (1, 2), "positions", where, layout="(seq,) or (batch, seq)")
        return t

    def forward(self, positions) -> np.ndarray:
        """Encode ``positions`` (seq,) or (batch, seq) -> (seq, d_model) or (batch, seq, d_model)."""
        out, saved = self._encode(self._positions(positions))
        self._save(shape=out.shape, **saved)
        return out

    def backward(self, grad_output: np.ndarray) -> None:
        """Accumulate parameter gradients (trainable encodings only); returns None."""
        shape = self._saved()["shape"]
        if np.shape(grad_output) != shape:
            raise ShapeError(
                f"{type(self).__name__}.backward: grad_output must have the output's shape {shape}, "
                f"got {np.shape(grad_output)}"
            )
        self._accumulate(np.asarray(grad_output))
        return None

    def _encode(self, t: np.ndarray) -> tuple[np.ndarray, dict]:  # pragma: no cover - abstract
        """Return the encoding of ``t`` and the arrays ``_accumulate`` will need."""
        raise NotImplementedError

    def _accumulate(self, grad_output: np.ndarray) -> None:
        """Fixed encodings have nothing to accumulate."""

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}"


def _interleaved_sin_cos(t: np.ndarray, angular: np.ndarray, d_model: int, dtype) -> np.ndarray:
    """``out[..., 2i] = sin(w_i t)``, ``out[..., 2i+1] = cos(w_i t)``; an odd last column is a sine.

    Angles are formed in float64 (depths of thousands of metres times a frequency lose digits in
    float32) and the result is cast to ``dtype``.
    """
    angle = t.astype(np.float64)[..., None] * angular  # (..., ceil(d_model / 2))
    out = np.empty(t.shape + (d_model,), dtype=np.float64)
    out[..., 0::2] = np.sin(angle)
    out[..., 1::2] = np.cos(angle[..., : d_model // 2])
    return out.astype(dtype, copy=False)


class SinusoidalPositionalEncoding(PositionalEncoding):
    """The standard fixed encoding of Vaswani et al. (2017), sec. 3.5, at real-valued positions.

    For feature pair ``i`` (``0 <= 2i < d_model``)::

        PE(t, 2i)   = sin(t / base^(2i / d_model))
        PE(t, 2i+1) = cos(t / base^(2i / d_model))

    i.e. wavelengths ``2*pi*base^(2i/d_model)`` position units, from ``2*pi`` to about
    ``2*pi*base``.  Any ``d_model`` works; when it is odd the last column is a sine.

    Parameters
    ----------
    d_model : int
    base : float, default 10000.0
    dtype : float64 (default) or float32

    Shapes
    ------
    positions (seq,) or (batch, seq), in sample index or metres -> (..., d_model).

    Raises
    ------
    ShapeError if positions are not 1-D or 2-D; InputError if they hold NaN/inf.
    """

    def __init__(self, d_model: int, base: float = 10000.0, *, dtype=np.float64):
        super().__init__(d_model, dtype)
        if not float(base) > 0:
            raise InputError(f"SinusoidalPositionalEncoding: base must be positive, got {base!r}")
        self.base = float(base)
        pairs = np.arange(0, self.d_model, 2, dtype=np.float64)
        self._angular = self.base ** (-pairs / self.d_model)

    def _encode(self, t: np.ndarray) -> np.ndarray:
        return _interleaved_sin_cos(t, self._angular, self.d_model, self.dtype), {}

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, base={self.base}"


class WavelengthPositionalEncoding(PositionalEncoding):
    """Sine/cosine pairs at user-chosen wavelengths (seed 000, "Positional Embeddings").

    For wavelength ``lambda_j`` (position units, e.g. metres)::

        p[2j]   = sin(2*pi*t / lambda_j)
        p[2j+1] = cos(2*pi*t / lambda_j)

    so ``d_model = 2 * len(wavelengths)`` (the seed's ``n_p = 2|lambda|``).  Seed 000's code,
    ``[sin t, cos t, sin t/100, cos t/100]``, is ``wavelengths = [2*pi, 200*pi]``
    (:data:`SEED_WAVELENGTHS`).  The seed's prose writes ``sin(2*pi/(lambda*t))`` and states the
    second wavelength as 20*pi; both are errors -- the form here is the standard ``sin(2*pi*t/lambda)``
    and the code's second pair has wavelength 200*pi.

    Parameters
    ----------
    d_model : int
        Must equal ``2 * len(wavelengths)``.
    wavelengths : sequence of positive floats
        In the unit of the positions (samples or metres).
    dtype : float64 (default) or float32

    Raises
    ------
    InputError if a wavelength is not positive and finite, or ``d_model != 2 * len(wavelengths)``.
    ShapeError / InputError for bad positions, as :class:`SinusoidalPositionalEncoding`.
    """

    def __init__(self, d_model: int, wavelengths, *, dtype=np.float64):
        super().__init__(d_model, dtype)
        where = "WavelengthPositionalEncoding"
        lam = as_float_array(wavelengths, "wavelengths", where, dtype=np.float64)
        if lam.ndim != 1 or np.any(lam <= 0):
            raise InputError(f"{where}: wavelengths must be a 1-D list of positive numbers, got {lam.tolist()}")
        if self.d_model != 2 * lam.size:
            raise InputError(
                f"{where}: d_model must be 2 * len(wavelengths) = {2 * lam.size} "
                f"(a sine and a cosine per wavelength), got d_model={self.d_model}"
            )
        self.wavelengths = lam
        self._angular = _TWO_PI / lam

    def _encode(self, t: np.ndarray) -> np.ndarray:
        return _interleaved_sin_cos(t, self._angular, self.d_model, self.dtype), {}

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, wavelengths={self.wavelengths.tolist()}"


def seed_positional_encoding(d_model: int = 4, *, dtype=np.float64) -> WavelengthPositionalEncoding:
    """Seed 000's fixed encoding ``[sin t, cos t, sin(t/100), cos(t/100)]`` (d_model must be 4)."""
    if d_model != 4:
        raise InputError(f"seed positional encoding has d_model 4 (wavelengths 2*pi and 200*pi), got {d_model!r}")
    return WavelengthPositionalEncoding(4, SEED_WAVELENGTHS, dtype=dtype)


class LearnedPositionalEmbedding(PositionalEncoding):
    """A trainable vector per integer position (BERT/GPT-style; the "learned" option of seed 000).

    Parameters
    ----------
    d_model : int
    max_len : int
        Number of rows; positions must be integers in ``[0, max_len)`` (sample indices, not metres).
    init_std : float, default 0.02
        Rows start as N(0, init_std^2), GPT-2's choice: small next to unit-scale input embeddings.
    rng : int or numpy.random.Generator, optional
    dtype : float64 (default) or float32

    Attributes
    ----------
    weight : Parameter of shape (max_len, d_model)

    Shapes
    ------
    positions (seq,) or (batch, seq) of integer values (int dtype, or floats equal to integers)
    -> (..., d_model).  Repeated positions add their gradients.

    Raises
    ------
    InputError if positions are not integer-valued or fall outside ``[0, max_len)`` (the message
    gives max_len); ShapeError for a wrong rank.
    """

    def __init__(self, d_model: int, max_len: int, init_std: float = 0.02, *, rng=None, dtype=np.float64):
        super().__init__(d_model, dtype)
        self.max_len = check_positive_int(max_len, "max_len", "LearnedPositionalEmbedding")
        self.init_std = float(init_std)
        table = make_rng(rng).normal(0.0, self.init_std, size=(self.max_len, self.d_model))
        self.weight = Parameter(table.astype(self._dtype))

    def _positions(self, positions) -> np.ndarray:
        where = "LearnedPositionalEmbedding.forward"
        t = super()._positions(positions)
        idx = np.rint(t)
        if np.any(idx != t):
            bad = tuple(int(i) for i in np.argwhere(idx != t)[0])
            raise InputError(f"{where}: positions must be integer sample indices, got {t[bad]} at index {bad}")
        if idx.min() < 0 or idx.max() >= self.max_len:
            raise InputError(
                f"{where}: positions must be in [0, max_len={self.max_len}), got min {idx.min():g} and "
                f"max {idx.max():g}; build the embedding with a larger max_len or use a continuous encoding"
            )
        return idx.astype(np.intp)

    def _encode(self, t: np.ndarray) -> np.ndarray:
        return self.weight.data[t], {"idx": t}

    def _accumulate(self, grad_output: np.ndarray) -> None:
        idx = self._saved()["idx"]
        np.add.at(self.weight.grad, idx.reshape(-1), grad_output.reshape(-1, self.d_model))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"


class ContinuousPositionalEncoding(PositionalEncoding):
    """A small trainable network of the real-valued position (learned continuous encoding).

    ::

        u   = (t - offset) / scale                          (dimensionless)
        p_t = W_2 act(W_1 u + b_1) + b_2                    (d_model values)

    Works at any real position (irregular depths, positions beyond the training window), unlike
    a learned table.  Choose ``offset`` and ``scale`` so that ``u`` is of order 1 over the data,
    e.g. the window's first depth and its length in metres; with raw depths of thousands of metres
    a tanh hidden layer saturates.

    Parameters
    ----------
    d_model : int
    hidden : int, default 32
    activation : {"tanh", "gelu", "relu", "gelu_tanh"}, default "tanh"
    scale : float, default 1.0
        In position units (samples or metres).
    offset : float, default 0.0
        In position units.
    rng : int or numpy.random.Generator, optional
        Seeds both Linear layers (PyTorch's default initialisation).
    dtype : float64 (default) or float32

    Attributes
    ----------
    linear1 : Linear(1, hidden)
    linear2 : Linear(hidden, d_model)
    """

    def __init__(self, d_model: int, hidden: int = 32, activation: str = "tanh", scale: float = 1.0,
                 offset: float = 0.0, *, rng=None, dtype=np.float64):
        super().__init__(d_model, dtype)
        where = "ContinuousPositionalEncoding"
        self.hidden = check_positive_int(hidden, "hidden", where)
        self.scale = _check_positive(scale, where, name="scale")
        try:
            self.offset = float(offset)
        except (TypeError, ValueError):
            raise InputError(f"{where}: offset must be a number (position units), got {offset!r}") from None
        if not np.isfinite(self.offset):
            raise InputError(f"{where}: offset must be finite, got {offset!r}")
        gen = make_rng(rng)
        self.linear1 = Linear(1, self.hidden, rng=gen, dtype=self._dtype)
        self.activation = _make_activation(activation, where)
        self.activation_name = activation
        self.linear2 = Linear(self.hidden, self.d_model, rng=gen, dtype=self._dtype)

    def _encode(self, t: np.ndarray) -> np.ndarray:
        u = ((t.astype(self.dtype) - self.offset) / self.scale)[..., None]
        return self.linear2.forward(self.activation.forward(self.linear1.forward(u))), {}

    def _accumulate(self, grad_output: np.ndarray) -> None:
        self.linear1.backward(self.activation.backward(self.linear2.backward(grad_output)))

    def extra_repr(self) -> str:
        return (f"d_model={self.d_model}, hidden={self.hidden}, activation={self.activation_name!r}, "
                f"scale={self.scale}, offset={self.offset}")


class FourierPositionalEncoding(PositionalEncoding):
    """Random Fourier features of the position (Tancik et al., 2020, eq. 5).

    ::

        p_t = [sin(2*pi*B_1 t), ..., sin(2*pi*B_K t), cos(2*pi*B_1 t), ..., cos(2*pi*B_K t)]

    with ``K = d_model / 2`` frequencies ``B_k ~ N(0, sigma^2)`` drawn once from ``rng`` (sines in
    the first half of the features, cosines in the second).  ``sigma`` is in cycles per position
    unit: with sample-index positions, keep it well under the Nyquist 0.5 cycles/sample.

    Parameters
    ----------
    d_model : int
        Must be even.
    sigma : float, default 0.1
        Standard deviation of the frequencies (cycles per sample or per metre).
    trainable : bool, default False
        Learn the frequencies (then ``frequencies`` is a Parameter and appears in ``state_dict``).
    frequencies : array_like of shape (d_model // 2,), optional
        Explicit frequencies (cycles per position unit) instead of random ones.
    rng : int or numpy.random.Generator, optional
    dtype : float64 (default) or float32

    Attributes
    ----------
    frequencies : ndarray or Parameter of shape (d_model // 2,)

    Raises
    ------
    InputError if d_model is odd, sigma is not positive, or frequencies have the wrong shape.
    """

    def __init__(self, d_model: int, sigma: float = 0.1, trainable: bool = False, frequencies=None,
                 *, rng=None, dtype=np.float64):
        super().__init__(d_model, dtype)
        where = "FourierPositionalEncoding"
        if self.d_model % 2:
            raise InputError(f"{where}: d_model must be even (a sine and a cosine per frequency), got {d_model}")
        self.sigma = _check_positive(sigma, where)
        self.trainable = bool(trainable)
        k = self.d_model // 2
        if frequencies is None:
            freqs = make_rng(rng).normal(0.0, self.sigma, size=k)
        else:
            freqs = as_float_array(frequencies, "frequencies", where, dtype=np.float64)
            if freqs.shape != (k,):
                raise InputError(f"{where}: frequencies must have shape ({k},), got {freqs.shape}")
        freqs = freqs.astype(self._dtype)
        self.frequencies = Parameter(freqs) if self.trainable else freqs

    def _freqs(self) -> np.ndarray:
        return self.frequencies.data if self.trainable else self.frequencies

    def _on_dtype_change(self, dtype: np.dtype) -> None:
        super()._on_dtype_change(dtype)
        if not self.trainable:
            self.frequencies = self.frequencies.astype(dtype)

    def _encode(self, t: np.ndarray) -> np.ndarray:
        t = t.astype(self.dtype)[..., None]  # one "feature": the position
        out, s, c = fourier_features(t, self._freqs()[None, :])
        return out, ({"t": t, "s": s, "c": c} if self.trainable else {})

    def _accumulate(self, grad_output: np.ndarray) -> None:
        if not self.trainable:
            return
        saved = self._saved()
        _, dB = fourier_features_backward(grad_output, saved["t"], self._freqs()[None, :], saved["s"], saved["c"])
        self.frequencies.grad += dB[0]

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, sigma={self.sigma}, trainable={self.trainable}"


class ZeroPositionalEncoding(PositionalEncoding):
    """No positional information: zeros of shape (..., d_model), for ablations."""

    def __init__(self, d_model: int, *, dtype=np.float64):
        super().__init__(d_model, dtype)

    def _encode(self, t: np.ndarray) -> np.ndarray:
        return np.zeros(t.shape + (self.d_model,), dtype=self.dtype), {}


POSITIONAL_ENCODINGS = {
    "sinusoidal": SinusoidalPositionalEncoding,
    "wavelengths": WavelengthPositionalEncoding,
    "seed": seed_positional_encoding,
    "learned": LearnedPositionalEmbedding,
    "continuous": ContinuousPositionalEncoding,
    "fourier": FourierPositionalEncoding,
    "none": ZeroPositionalEncoding,
}
_DRAWS = ("learned", "continuous", "fourier")  # the encodings that take rng


def get_positional_encoding(name: str, d_model: int, *, rng=None, dtype=np.float64, **options) -> PositionalEncoding:
    """Build an additive positional encoding by name.

    Parameters
    ----------
    name : {"sinusoidal", "wavelengths", "seed", "learned", "continuous", "fourier", "none"}
        See the table in this module's docstring.  ``"rotary"`` is not additive: it is applied
        to queries and keys inside attention (:mod:`glassformer.nn.rotary`).
    d_model : int
    rng : int or numpy.random.Generator, optional
        Used by "learned", "continuous" and "fourier"; ignored by the fixed encodings.
    dtype : float64 (default) or float32
    **options
        The class's other keywords: ``base``; ``wavelengths``; ``max_len``, ``init_std``;
        ``hidden``, ``activation``, ``scale``, ``offset``; ``sigma``, ``trainable``, ``frequencies``.

    Raises
    ------
    InputError for an unknown name or option, or a missing required option (``wavelengths``,
    ``max_len``).
    """
    where = "get_positional_encoding"
    if name in ("rotary", "rope"):
        raise InputError(f"{where}: rotary embeddings are applied inside attention, not added to the input; "
                         "use glassformer.nn.rotary with positional encoding 'none'")
    if name not in POSITIONAL_ENCODINGS:
        raise InputError(f"{where}: name must be one of {list(POSITIONAL_ENCODINGS)}, got {name!r}")
    build = POSITIONAL_ENCODINGS[name]
    if name == "seed":
        if options:
            raise InputError(f"{where}: 'seed' takes no options (its wavelengths are fixed), got {sorted(options)}")
    else:
        check_options(build, options, where, reserved=("d_model", "rng", "dtype"))
    for required in {"wavelengths": ("wavelengths",), "learned": ("max_len",)}.get(name, ()):
        if required not in options:
            raise InputError(f"{where}: {name!r} needs the option {required}=...")
    if name in _DRAWS:
        options["rng"] = rng
    return build(d_model, dtype=dtype, **options)

