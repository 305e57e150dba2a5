"""A small trained network of the real-valued position."""

from __future__ import annotations

import numpy as np

from ..._validation import check_positive_int
from ...errors import InputError
from ..input_embedding import _check_positive, _make_activation
from ..linear import Linear
from ..module import make_rng
from .base import PositionalEncoding
from .registry import PositionalSpec, register

__all__ = ["ContinuousPositionalEncoding"]


class ContinuousPositionalEncoding(PositionalEncoding):
    """A small trainable network of the real-valued position (learned continuous encoding).

    ::

        u   = (t - offset) / scale                          (dimensionless)
        p_t = W_2 act(W_1 u + b_1) + b_2                    (d_model values)

    Works at any real position (irregular depths, positions beyond the training window), unlike
    a learned table.  Choose ``offset`` and ``scale`` so that ``u`` is of order 1 over the data,
    e.g. the window's first depth and its length in metres; with raw depths of thousands of metres
    a tanh hidden layer saturates.

    Parameters
    ----------
    d_model : int
    hidden : int, default 32
    activation : {"tanh", "gelu", "relu", "gelu_tanh"}, default "tanh"
    scale : float, default 1.0
        In position units (samples or metres).
    offset : float, default 0.0
        In position units.
    rng : int or numpy.random.Generator, optional
        Seeds both Linear layers (PyTorch's default initialisation).
    dtype : float64 (default) or float32

    Attributes
    ----------
    linear1 : Linear(1, hidden)
    linear2 : Linear(hidden, d_model)
    """

    def __init__(self, d_model: int, hidden: int = 32, activation: str = "tanh", scale: float = 1.0,
                 offset: float = 0.0, *, rng=None, dtype=np.float64):
        super().__init__(d_model, dtype)
        where = "ContinuousPositionalEncoding"
        self.hidden = check_positive_int(hidden, "hidden", where)
        self.scale = _check_positive(scale, where, name="scale")
        try:
            self.offset = float(offset)
        except (TypeError, ValueError):
            raise InputError(f"{where}: offset must be a number (position units), got {offset!r}") from None
        if not np.isfinite(self.offset):
            raise InputError(f"{where}: offset must be finite, got {offset!r}")
        gen = make_rng(rng)
        self.linear1 = Linear(1, self.hidden, rng=gen, dtype=self._dtype)
        self.activation = _make_activation(activation, where)
        self.activation_name = activation
        self.linear2 = Linear(self.hidden, self.d_model, rng=gen, dtype=self._dtype)

    def _encode(self, t: np.ndarray) -> np.ndarray:
        u = ((t.astype(self.dtype) - self.offset) / self.scale)[..., None]
        return self.linear2.forward(self.activation.forward(self.linear1.forward(u))), {}

    def _accumulate(self, grad_output: np.ndarray) -> None:
        self.linear1.backward(self.activation.backward(self.linear2.backward(grad_output)))

    def extra_repr(self) -> str:
        return (f"d_model={self.d_model}, hidden={self.hidden}, activation={self.activation_name!r}, "
                f"scale={self.scale}, offset={self.offset}")


register(PositionalSpec(
    "continuous", ContinuousPositionalEncoding,
    "a small trained network of the real position (any depth, irregular spacing)",
    gradcheck={"d_model": 6, "variants": [{"hidden": 5, "scale": 10.0, "offset": 1500.0}], "positions": "depth"},
))
