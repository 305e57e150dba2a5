"""Layer normalisation (Ba et al., 2016) with PyTorch's ``nn.LayerNorm`` semantics."""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, as_input, check_last_dim, check_positive_int
from ..errors import InputError
from .tiers import ops as F
from .module import Module, Parameter


class LayerNorm(Module):
    """Normalise the last axis to zero mean and unit variance, then scale and shift.

    ``y = (x - mean) / sqrt(var + eps) * weight + bias``, with the *biased* variance
    (divide by D) and ``eps`` inside the square root, exactly as ``torch.nn.LayerNorm``
    (the chapter's "residual connection and layer normalisation"); the kernel is
    :func:`glassformer.nn.functional.layer_norm`.

    Parameters
    ----------
    normalized_shape : int
        Size D of the last axis (a 1-tuple ``(D,)`` is accepted too).
    eps : float, default 1e-5
        Added to the variance inside the square root.
    elementwise_affine : bool, default True
        Learn ``weight`` (init 1) and ``bias`` (init 0); without them the layer has no parameters.
    dtype : float64 (default) or float32

    Attributes
    ----------
    weight, bias : Parameter of shape (D,), or None when ``elementwise_affine=False``.

    Shapes
    ------
    forward: ``(..., D) -> (..., D)``; backward returns dL/dx of the same shape.

    Raises
    ------
    ShapeError if the last axis of ``x`` is not D; InputError for a bad ``eps``.
    """

    def __init__(self, normalized_shape: int, eps: float = 1e-5, elementwise_affine: bool = True,
                 *, dtype=np.float64):
        super().__init__()
        if isinstance(normalized_shape, (tuple, list)):
            if len(normalized_shape) != 1:
                raise InputError(f"LayerNorm: only the last axis can be normalised, got normalized_shape={normalized_shape}")
            normalized_shape = normalized_shape[0]
        self.normalized_shape = check_positive_int(normalized_shape, "normalized_shape", "LayerNorm")
        if not eps > 0:
            raise InputError(f"LayerNorm: eps must be > 0, got {eps!r}")
        self.eps = float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        if self.elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=dtype))
            self.bias = Parameter(np.zeros(self.normalized_shape, dtype=dtype))
        else:
            self.weight = None
            self.bias = None

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.check_inputs:                     # a child gets checked data from its parent
            where = "LayerNorm.forward"
            x = as_input(x, "x", where, self.weight.data.dtype, True) if self.elementwise_affine else \
                as_float_array(x, "x", where)
            check_last_dim(x, self.normalized_shape, "x", where)
        affine = self.elementwise_affine
        y, xhat, rstd = F.layer_norm(x, self.weight.data if affine else None, self.bias.data if affine else None,
                                     self.eps)
        self._save(xhat=xhat, rstd=rstd)
        return y

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        c = self._saved()
        if not self.elementwise_affine:
            return F.layer_norm_backward(grad_output, c["xhat"], c["rstd"], None)[0]
        dx, dweight, dbias = F.layer_norm_backward(grad_output, c["xhat"], c["rstd"], self.weight.data)
        self.weight.grad += dweight
        self.bias.grad += dbias
        return dx

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
