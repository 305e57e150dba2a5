"""Element-wise activations as modules: ReLU, GELU (exact and tanh forms), Tanh.

The equations and their derivatives are the kernels of :mod:`glassformer.nn.functional`; a module
keeps what its backward needs.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from . import functional as F
from .module import Module

__all__ = ["ReLU", "GELU", "Tanh", "get_activation", "check_activation"]


class _Activation(Module):
    """An element-wise activation: ``forward(x)`` of any shape, ``backward`` of the same shape."""

    kernel = "relu"                    # the name in functional.ACTIVATIONS

    def __init__(self):
        super().__init__()
        self._kernels = F.ACTIVATIONS[self.kernel]   # (forward, backward)

    def forward(self, x: np.ndarray) -> np.ndarray:
        y, saved = self._kernels[0](x)
        self._save(**saved)
        return y

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        return self._kernels[1](grad_output, self._saved())


class ReLU(_Activation):
    """``max(0, x)``; the derivative at exactly 0 is taken as 0, as PyTorch does. Any shape."""


class GELU(_Activation):
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
        self.kernel = "gelu" if approximate == "none" else "gelu_tanh"
        self._kernels = F.ACTIVATIONS[self.kernel]

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(_Activation):
    """Hyperbolic tangent; derivative ``1 - tanh(x)^2``. Any shape."""

    kernel = "tanh"


def check_activation(name: str) -> str:
    """Return ``name`` if it names an activation kernel, else raise :class:`InputError`."""
    if name not in F.ACTIVATIONS:
        raise InputError(f"activation must be 'relu', 'gelu', 'gelu_tanh' or 'tanh', got {name!r}")
    return name


def get_activation(name: str) -> Module:
    """Return a fresh activation module by name: ``"relu"``, ``"gelu"``, ``"gelu_tanh"`` or ``"tanh"``."""
    check_activation(name)
    if name == "relu":
        return ReLU()
    if name == "gelu":
        return GELU()
    if name == "gelu_tanh":
        return GELU("tanh")
    return Tanh()
