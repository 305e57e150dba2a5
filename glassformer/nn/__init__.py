"""Layers with explicit forward and backward passes (PyTorch-compatible parameters).

Each helper that adds a layer module re-exports it here.
"""

from .activation import GELU, ReLU, get_activation
from .linear import Linear
from .module import Module, ModuleList, Parameter, make_rng

__all__ = ["GELU", "Linear", "Module", "ModuleList", "Parameter", "ReLU", "get_activation", "make_rng"]
