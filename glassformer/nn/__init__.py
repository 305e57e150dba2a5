"""Layers with explicit forward and backward passes (PyTorch-compatible parameters).

Each helper that adds a layer module re-exports it here.
"""

from .activation import GELU, ReLU, get_activation
from .embedding import Embedding
from .linear import Linear
from .module import Module, ModuleList, Parameter, make_rng

__all__ = ["Embedding", "GELU", "Linear", "Module", "ModuleList", "Parameter", "ReLU", "get_activation", "make_rng"]
