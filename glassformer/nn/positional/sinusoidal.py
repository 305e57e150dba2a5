"""Fixed sine/cosine encodings: Vaswani et al.'s geometric wavelengths, user wavelengths, the chapter's."""

from __future__ import annotations

import numpy as np

from ..._validation import as_float_array
from ...errors import InputError
from .base import PositionalEncoding
from .registry import PositionalSpec, register

__all__ = ["SinusoidalPositionalEncoding", "WavelengthPositionalEncoding", "chapter_positional_encoding",
           "CHAPTER_WAVELENGTHS"]

_TWO_PI = 2.0 * np.pi

#: Wavelengths (position units) of the chapter's ``[sin t, cos t, sin t/100, cos t/100]``.
CHAPTER_WAVELENGTHS = (2.0 * np.pi, 200.0 * np.pi)


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
    """Sine/cosine pairs at user-chosen wavelengths (the chapter's "Positional Embeddings").

    For wavelength ``lambda_j`` (position units, e.g. metres)::

        p[2j]   = sin(2*pi*t / lambda_j)
        p[2j+1] = cos(2*pi*t / lambda_j)

    so ``d_model = 2 * len(wavelengths)`` (the chapter's ``n_p = 2|lambda|``).  The chapter's code,
    ``[sin t, cos t, sin t/100, cos t/100]``, is ``wavelengths = [2*pi, 200*pi]``
    (:data:`CHAPTER_WAVELENGTHS`).  The chapter's prose writes ``sin(2*pi/(lambda*t))`` and states the
    second wavelength as 20*pi; the form here is the standard ``sin(2*pi*t/lambda)`` and the code's
    second pair has wavelength 200*pi.

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


def chapter_positional_encoding(d_model: int = 4, *, dtype=np.float64) -> WavelengthPositionalEncoding:
    """The chapter's fixed encoding ``[sin t, cos t, sin(t/100), cos(t/100)]`` (d_model must be 4)."""
    if d_model != 4:
        raise InputError(f"the chapter's positional encoding has d_model 4 (wavelengths 2*pi and 200*pi), "
                         f"got {d_model!r}")
    return WavelengthPositionalEncoding(4, CHAPTER_WAVELENGTHS, dtype=dtype)


register(PositionalSpec(
    "sinusoidal", SinusoidalPositionalEncoding,
    "fixed sines and cosines at wavelengths 2*pi .. 2*pi*base position units (Vaswani et al. 2017)",
    gradcheck={"d_model": 6, "variants": [{}], "positions": "window"},
))
register(PositionalSpec(
    "wavelengths", WavelengthPositionalEncoding,
    "fixed sine/cosine pairs at the wavelengths you choose, in position units; d_model = 2 x their count",
    cli_options=("wavelengths",), d_model_for=lambda options: 2 * len(options["wavelengths"]),
    gradcheck={"d_model": 4, "variants": [{"wavelengths": [3.0, 40.0]}], "positions": "depth"},
))
register(PositionalSpec(
    "chapter", chapter_positional_encoding,
    "the chapter's fixed [sin t, cos t, sin t/100, cos t/100] (Pyrcz 2024); d_model 4",
    d_model_for=lambda options: 4,
    gradcheck={"d_model": 4, "variants": [{}], "positions": "window"},
))


