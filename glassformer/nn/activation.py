"""Element-wise activations with their derivatives: ReLU and GELU (exact and tanh forms)."""

from __future__ import annotations

import numpy as np
from scipy.special import erf

from ..errors import InputError
from .module import Module

# Python floats (not np.float64) so float32 arrays stay float32 under NumPy 2 promotion rules.
_SQRT_2_OVER_PI = float(np.sqrt(2.0 / np.pi))
_INV_SQRT_2 = float(1.0 / np.sqrt(2.0))
_INV_SQRT_2PI = float(1.0 / np.sqrt(2.0 * np.pi))


class ReLU(Module):
    """``max(0, x)``; the derivative at exactly 0 is taken as 0, as PyTorch does. Any shape."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        mask = x > 0
        self._save(mask=mask)
        return x * mask

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        return grad_output * self._saved()["mask"]


class GELU(Module):
    """Gaussian error linear unit (Hendrycks & Gimpel, 2016), as ``torch.nn.GELU``.

    Parameters
    ----------
    approximate : {"none", "tanh"}
        ``"none"``: ``x * Phi(x)`` with the exact normal CDF; ``"tanh"``:
        ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.  Same names as PyTorch's argument.
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise InputError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (x + 0.044715 * x**3)
            t = np.tanh(inner)
            self._save(x=x, t=t)
            return 0.5 * x * (1.0 + t)
        cdf = 0.5 * (1.0 + erf(x * _INV_SQRT_2))
        self._save(x=x, cdf=cdf)
        return x * cdf

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        c = self._saved()
        x = c["x"]
        if self.approximate == "tanh":
            t = c["t"]
            dinner = _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x**2)
            return grad_output * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t**2) * dinner)
        pdf = _INV_SQRT_2PI * np.exp(-0.5 * x * x)
        return grad_output * (c["cdf"] + x * pdf)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    """Hyperbolic tangent; derivative ``1 - tanh(x)^2``. Any shape."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        y = np.tanh(x)
        self._save(y=y)
        return y

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        y = self._saved()["y"]
        return grad_output * (1.0 - y * y)


def get_activation(name: str) -> Module:
    """Return a fresh activation module by name: ``"relu"``, ``"gelu"``, ``"gelu_tanh"`` or ``"tanh"``."""
    if name == "relu":
        return ReLU()
    if name == "gelu":
        return GELU()
    if name == "gelu_tanh":
        return GELU("tanh")
    if name == "tanh":
        return Tanh()
    raise InputError(f"activation must be 'relu', 'gelu', 'gelu_tanh' or 'tanh', got {name!r}")
