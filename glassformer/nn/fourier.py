"""Fourier token mixing, FNet (Lee-Thorp et al., 2021, "FNet: Mixing Tokens with Fourier Transforms")."""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, check_ndim
from ..errors import InputError
from .module import Module


class FourierMixing(Module):
    """Parameter-free token mixing: the real part of a discrete Fourier transform.

    * ``mode="2d"`` (FNet, Lee-Thorp et al. 2021, sec. 3.2): ``y = Re(FFT_seq(FFT_hidden(x)))``,
      the 2-D DFT over the sequence and hidden axes.
    * ``mode="seq"``: ``y = Re(FFT_seq(x))``, the DFT along the token axis only.

    Every output row depends on every input row, yet no ``seq x seq`` score matrix is formed.

    Backward: writing the DFT as the symmetric matrix F (``F^T = F``), ``y = Re(F_L x F_E)`` is
    linear in the real ``x`` with ``dy_ij/dx_ab = Re(F_ia F_bj)``, so
    ``dL/dx = Re(F_L g F_E) = Re(FFT2(g))``: the same transform applied to the upstream gradient.

    Limitations
    -----------
    No padding mask (padded positions leak into every output) and not causal (every position sees
    the future): use it only on full, unpadded windows of an encoder.  No parameters.

    Shapes
    ------
    forward: ``(batch, seq, d_model) -> (batch, seq, d_model)`` (also ``(seq, d_model)``).
    """

    def __init__(self, mode: str = "2d"):
        super().__init__()
        if mode not in ("2d", "seq"):
            raise InputError(f"FourierMixing: mode must be '2d' or 'seq', got {mode!r}")
        self.mode = mode

    def _transform(self, x: np.ndarray) -> np.ndarray:
        if self.mode == "2d":
            y = np.fft.fft2(x, axes=(-2, -1))
        else:
            y = np.fft.fft(x, axis=-2)
        return y.real.astype(x.dtype, copy=False)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_float_array(x, "x", "FourierMixing.forward")
        check_ndim(x, (2, 3), "x", "FourierMixing.forward", layout="(batch, seq, d_model)")
        self._save(shape=x.shape)
        return self._transform(x)

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._saved()
        return self._transform(np.asarray(grad_output))

    def extra_repr(self) -> str:
        return f"mode={self.mode!r}"
