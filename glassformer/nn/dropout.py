"""Inverted dropout (Srivastava et al., 2014), as ``torch.nn.Dropout``."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from .._validation import check_probability
from .tiers import ops as F
from .module import Module, make_rng


#: The cache of an identity forward (evaluation mode or ``p = 0``): read only, shared by every layer.
_IDENTITY = MappingProxyType({"scale": None})


class Dropout(Module):
    """Zero each element with probability ``p`` in training mode and scale the rest by ``1/(1-p)``.

    A new mask is drawn on every call from the layer's own generator, so the same seed gives the
    same masks on every run.  In evaluation mode, or with
    ``p == 0``, the layer is the identity (no random numbers are drawn).

    Parameters
    ----------
    p : float in [0, 1), default 0.5
        Drop probability.
    rng : int or numpy.random.Generator, optional
        Source of the masks.

    Shapes
    ------
    Any shape; backward multiplies the upstream gradient by the same scaled mask.
    """

    def __init__(self, p: float = 0.5, *, rng=None):
        super().__init__()
        self.p = check_probability(p, "p", "Dropout")
        self.rng = make_rng(rng)

    def scale(self, shape, dtype):
        """A fresh multiplier for an array of ``shape`` (training mode), or None (the identity)."""
        if not self.training or self.p == 0.0:
            return None
        return F.dropout_scale(shape, self.p, self.rng, dtype)

    def forward(self, x: np.ndarray) -> np.ndarray:
        if not self.training or self.p == 0.0:
            # The identity: no mask drawn.  Its cache is a shared constant (a small model calls this
            # on every sub-layer of every step).
            object.__setattr__(self, "_cache", _IDENTITY if self._keep_cache else None)
            return np.asarray(x)
        x = np.asarray(x)
        scale = F.dropout_scale(x.shape, self.p, self.rng, x.dtype)
        self._save(scale=scale)
        return F.dropout(x, scale)

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        c = self._cache
        if c is _IDENTITY:
            return grad_output
        scale = self._saved()["scale"]
        return grad_output if scale is None else F.dropout_backward(grad_output, scale)

    def extra_repr(self) -> str:
        return f"p={self.p}"
