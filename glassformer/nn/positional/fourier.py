"""Random Fourier features of the position (Tancik et al., 2020)."""

from __future__ import annotations

import numpy as np

from ..._validation import as_float_array
from ...errors import InputError
from ..input_embedding import _check_positive, fourier_features, fourier_features_backward
from ..module import Parameter, make_rng
from .base import PositionalEncoding
from .registry import PositionalSpec, register

__all__ = ["FourierPositionalEncoding"]


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


register(PositionalSpec(
    "fourier", FourierPositionalEncoding,
    "random Fourier features of the position, fixed or trained (Tancik et al. 2020)",
    gradcheck={"d_model": 6, "variants": [{"trainable": True, "sigma": 0.2}], "positions": "window"},
))
