"""Element-wise activations as modules: ReLU, GELU (exact and tanh forms), Tanh.

The equations and their derivatives are the kernels of :mod:`glassformer.nn.functional`; a module
keeps what its backward needs.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .tiers import ops as F
from .module import Module

__all__ = ["ReLU", "GELU", "Tanh", "get_activation", "ACTIVATIONS"]

#: The names :func:`get_activation` accepts.
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "tanh")


class ReLU(Module):
    """``max(0, x)``; the derivative at exactly 0 is taken as 0, as PyTorch does. Any shape."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        y, mask = F.relu(x)
        self._save(mask=mask)
        return y

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        return F.relu_backward(grad_output, self._saved()["mask"])


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
            y, t = F.gelu_tanh(x)
            self._save(x=x, t=t)
        else:
            y, cdf = F.gelu(x)
            self._save(x=x, cdf=cdf)
        return y

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        c = self._saved()
        if self.approximate == "tanh":
            return F.gelu_tanh_backward(grad_output, c["x"], c["t"])
        return F.gelu_backward(grad_output, c["x"], c["cdf"])

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    """Hyperbolic tangent; derivative ``1 - tanh(x)^2``. Any shape."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        y = F.tanh(x)
        self._save(y=y)
        return y

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        return F.tanh_backward(grad_output, self._saved()["y"])


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
