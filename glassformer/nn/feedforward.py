"""The position-wise feed-forward network of a transformer block (Vaswani et al., 2017, eq. 2)."""

from __future__ import annotations

import numpy as np

from .._validation import as_input, check_positive_int, check_probability
from .activation import get_activation
from .dropout import Dropout
from .linear import Linear
from .module import Module, make_rng

__all__ = ["FeedForward"]


class FeedForward(Module):
    """``FFN(x) = linear2(dropout(activation(linear1(x))))``, applied to every position separately.

    The chapter's ``G = relu(R W1 + b1)``, ``F = G W2 + b2``: the composition of the modules
    :class:`Linear`, the activation, :class:`Dropout` and :class:`Linear`, each calling its kernel
    in :mod:`glassformer.nn.functional`.  Row-local: output row i depends on input row i only.  The
    transformer layers hold one as an inline child, so their ``state_dict`` keeps PyTorch's names
    ``linear1.*`` and ``linear2.*``.

    Parameters
    ----------
    d_model, d_ff : int
        Model width and hidden width.
    dropout : float, default 0.0
        Dropout on the hidden activations (as inside ``torch.nn.TransformerEncoderLayer``).
    activation : {"relu", "gelu", "gelu_tanh", "tanh"}
    bias : bool, default True
    rng : int or numpy.random.Generator, optional
        Initialisation (PyTorch's Linear default) and dropout masks.
    dtype : float64 (default) or float32

    Attributes
    ----------
    linear1 : Linear(d_model, d_ff); activation : ReLU, GELU or Tanh; dropout : Dropout;
    linear2 : Linear(d_ff, d_model)

    Shapes
    ------
    forward: ``(..., d_model) -> (..., d_model)``; ``hidden()`` returns the last G ``(..., d_ff)``.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu",
                 bias: bool = True, *, rng=None, dtype=np.float64):
        super().__init__()
        check_positive_int(d_model, "d_model", "FeedForward")
        check_positive_int(d_ff, "d_ff", "FeedForward")
        gen = make_rng(rng)
        self.linear1 = Linear(d_model, d_ff, bias, rng=gen, dtype=dtype)
        self.activation = get_activation(activation)
        self.dropout = Dropout(check_probability(dropout, "dropout", "FeedForward"), rng=gen)
        self.linear2 = Linear(d_ff, d_model, bias, rng=gen, dtype=dtype)
        self.activation_name = activation

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.check_inputs:                                    # a child gets checked data from its parent
            x = as_input(x, "x", "FeedForward.forward", self.dtype, True)
        G = self._tap("G", self.activation(self.linear1(x)))     # (..., d_ff)
        self._save(G=G)
        return self.linear2(self.dropout(G))                     # (..., d_model)

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        """Return dL/dx; a probe (:meth:`~glassformer.nn.Module.probing`) sees dL/dG."""
        self._saved()
        dG = self._tap_grad("G", self.dropout.backward(self.linear2.backward(grad_output)))
        return self.linear1.backward(self.activation.backward(dG))

    def hidden(self) -> np.ndarray:
        """The hidden activations G of the last forward (before dropout), ``(..., d_ff)``."""
        return self._saved()["G"]

    def extra_repr(self) -> str:
        return f"activation={self.activation_name!r}"
