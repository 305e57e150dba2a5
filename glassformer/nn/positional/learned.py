"""A trained vector per integer position (BERT/GPT-style)."""

from __future__ import annotations

import numpy as np

from ..._validation import check_positive_int
from ...errors import InputError
from ..module import Parameter, make_rng
from .base import PositionalEncoding
from .registry import PositionalSpec, register

__all__ = ["LearnedPositionalEmbedding"]


class LearnedPositionalEmbedding(PositionalEncoding):
    """A trainable vector per integer position (BERT/GPT-style; the chapter's "learned" option).

    Parameters
    ----------
    d_model : int
    max_len : int
        Number of rows; positions must be integers in ``[0, max_len)`` (sample indices, not metres).
    init_std : float, default 0.02
        Rows start as N(0, init_std^2), GPT-2's choice: small next to unit-scale input embeddings.
    rng : int or numpy.random.Generator, optional
    dtype : float64 (default) or float32

    Attributes
    ----------
    weight : Parameter of shape (max_len, d_model)

    Shapes
    ------
    positions (seq,) or (batch, seq) of integer values (int dtype, or floats equal to integers)
    -> (..., d_model).  Repeated positions add their gradients.

    Raises
    ------
    InputError if positions are not integer-valued or fall outside ``[0, max_len)`` (the message
    gives max_len); ShapeError for a wrong rank.
    """

    def __init__(self, d_model: int, max_len: int, init_std: float = 0.02, *, rng=None, dtype=np.float64):
        super().__init__(d_model, dtype)
        self.max_len = check_positive_int(max_len, "max_len", "LearnedPositionalEmbedding")
        self.init_std = float(init_std)
        table = make_rng(rng).normal(0.0, self.init_std, size=(self.max_len, self.d_model))
        self.weight = Parameter(table.astype(self._dtype))

    def _positions(self, positions) -> np.ndarray:
        where = "LearnedPositionalEmbedding.forward"
        t = super()._positions(positions)
        idx = np.rint(t)
        if np.any(idx != t):
            bad = tuple(int(i) for i in np.argwhere(idx != t)[0])
            raise InputError(f"{where}: positions must be integer sample indices, got {t[bad]} at index {bad}")
        if idx.min() < 0 or idx.max() >= self.max_len:
            raise InputError(
                f"{where}: positions must be in [0, max_len={self.max_len}), got min {idx.min():g} and "
                f"max {idx.max():g}; build the embedding with a larger max_len or use a continuous encoding"
            )
        return idx.astype(np.intp)

    def _encode(self, t: np.ndarray) -> np.ndarray:
        return self.weight.data[t], {"idx": t}

    def _accumulate(self, grad_output: np.ndarray) -> None:
        idx = self._saved()["idx"]
        np.add.at(self.weight.grad, idx.reshape(-1), grad_output.reshape(-1, self.d_model))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"


register(PositionalSpec(
    "learned", LearnedPositionalEmbedding,
    "a trained vector per sample index (BERT, GPT-2); positions must be indices below max_len",
    integer_positions=True,
    gradcheck={"d_model": 6, "variants": [{"max_len": 6}], "positions": "index"},
))
