"""Affine map ``y = x @ W.T + b`` (the chapter's ``W z + b``), PyTorch's ``nn.Linear`` layout."""

from __future__ import annotations

import numpy as np

from .._validation import as_input, check_last_dim, check_positive_int
from .tiers import ops as F
from .module import Module, Parameter, make_rng


class Linear(Module):
    """Fully connected layer, applied to the last axis.

    Parameters
    ----------
    in_features, out_features : int
        Sizes of the last axis of the input and output.
    bias : bool, default True
        Whether to add a learned bias.
    rng : int or numpy.random.Generator, optional
        Source of the initial weights: PyTorch's default, U(-1/sqrt(in), 1/sqrt(in)) for weight and bias.
    dtype : float64 (default) or float32

    Attributes
    ----------
    weight : Parameter of shape (out_features, in_features)   -- PyTorch's layout, so ``y = x @ W.T + b``
    bias : Parameter of shape (out_features,) or None

    Shapes
    ------
    forward: ``(..., in_features) -> (..., out_features)``; backward returns dL/dx of the input's shape.

    Raises
    ------
    ShapeError if the last axis of ``x`` is not ``in_features``.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, rng=None, dtype=np.float64):
        super().__init__()
        self.in_features = check_positive_int(in_features, "in_features", "Linear")
        self.out_features = check_positive_int(out_features, "out_features", "Linear")
        gen = make_rng(rng)
        bound = 1.0 / np.sqrt(in_features)
        self.weight = Parameter(gen.uniform(-bound, bound, size=(out_features, in_features)).astype(dtype))
        self.bias = Parameter(gen.uniform(-bound, bound, size=out_features).astype(dtype)) if bias else None

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.check_inputs:                     # a child gets checked data from its parent
            x = as_input(x, "x", "Linear.forward", self.weight.data.dtype, True)
            check_last_dim(x, self.in_features, "x", "Linear.forward")
        self._save(x=x)
        return F.linear(x, self.weight.data, None if self.bias is None else self.bias.data)

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        x = self._saved()["x"]
        dx, dW, db = F.linear_backward(grad_output, x, self.weight.data, self.bias is not None)
        self.weight.grad += dW
        if self.bias is not None:
            self.bias.grad += db
        return dx

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
