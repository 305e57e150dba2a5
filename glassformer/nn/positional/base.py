"""The base class of additive positional encodings, and the zero encoding ("none").

An additive encoding maps positions ``t`` -- a sample index (0, 1, 2, ...) or a depth in metres,
any real numbers, irregular spacing allowed (core plugs) -- to vectors added to the input embedding
(the chapter's combined embedding ``z_t = e_t + p_t``).

Shapes: ``forward(positions)`` takes ``(seq,)`` -> ``(seq, d_model)`` or ``(batch, seq)`` ->
``(batch, seq, d_model)`` (per-sequence positions, e.g. the real depths of each window).
``backward(grad_output)`` accumulates the parameter gradients of trainable encodings and returns
``None``: positions are coordinates, never differentiated.
"""

from __future__ import annotations

import numpy as np

from ..._validation import as_float_array, check_dtype, check_ndim, check_positive_int
from ...errors import ShapeError
from ..module import Module
from .registry import PositionalSpec, register

__all__ = ["PositionalEncoding", "ZeroPositionalEncoding"]


class PositionalEncoding(Module):
    """Base class: validates positions, tracks the output dtype, checks ``grad_output``'s shape.

    Subclasses implement ``_encode(t) -> (output, saved)`` with ``t`` a validated float array of
    shape (seq,) or (batch, seq) and, when trainable, ``_accumulate(grad_output)`` reading
    ``self._saved()``.
    """

    def __init__(self, d_model: int, dtype=np.float64):
        super().__init__()
        self.d_model = check_positive_int(d_model, "d_model", type(self).__name__)
        self._dtype = check_dtype(dtype)

    @property
    def dtype(self) -> np.dtype:
        """Output dtype (that of the parameters for trainable encodings)."""
        return self._dtype

    def _on_dtype_change(self, dtype: np.dtype) -> None:
        self._dtype = dtype

    def _positions(self, positions) -> np.ndarray:
        """Return ``positions`` as a finite float array of shape (seq,) or (batch, seq)."""
        where = f"{type(self).__name__}.forward"
        # A child gets positions its parent validated (Module.check_inputs): no scan of the values.
        if self.check_inputs:
            t = as_float_array(positions, "positions", where)
            check_ndim(t, (1, 2), "positions", where, layout="(seq,) or (batch, seq)")
            return t
        t = np.asarray(positions)
        return t if t.dtype.kind == "f" else t.astype(np.float64)

    def forward(self, positions) -> np.ndarray:
        """Encode ``positions`` (seq,) or (batch, seq) -> (seq, d_model) or (batch, seq, d_model)."""
        out, saved = self._encode(self._positions(positions))
        self._save(shape=out.shape, **saved)
        return out

    def backward(self, grad_output: np.ndarray) -> None:
        """Accumulate parameter gradients (trainable encodings only); returns None."""
        shape = self._saved()["shape"]
        if np.shape(grad_output) != shape:
            raise ShapeError(
                f"{type(self).__name__}.backward: grad_output must have the output's shape {shape}, "
                f"got {np.shape(grad_output)}"
            )
        self._accumulate(np.asarray(grad_output))
        return None

    def _encode(self, t: np.ndarray) -> tuple[np.ndarray, dict]:  # pragma: no cover - abstract
        """Return the encoding of ``t`` and the arrays ``_accumulate`` will need."""
        raise NotImplementedError

    def _accumulate(self, grad_output: np.ndarray) -> None:
        """Fixed encodings have nothing to accumulate."""

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}"


class ZeroPositionalEncoding(PositionalEncoding):
    """No positional information: zeros of shape (..., d_model), for ablations and per-head encodings."""

    def __init__(self, d_model: int, *, dtype=np.float64):
        super().__init__(d_model, dtype)

    def _encode(self, t: np.ndarray) -> np.ndarray:
        return np.zeros(t.shape + (self.d_model,), dtype=self.dtype), {}


register(PositionalSpec(
    "none", ZeroPositionalEncoding, "no positional information (zeros; an ablation)",
    gradcheck={"d_model": 6, "variants": [{}], "positions": "depth"},
))
