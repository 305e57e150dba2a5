"""Rotary position embedding, RoPE (Su et al., 2021, "RoFormer", eq. 34), at real-valued positions.

RoPE is a *per-head* encoding: nothing is added to the input embedding; the attention layers call
the hook's ``forward(q, k, positions)`` on their per-head queries and keys (and ``backward`` on
the gradients), so no model or command needs a special case for it.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_positive_int
from ...errors import InputError, ShapeError
from .registry import PositionalSpec, register

__all__ = ["RotaryEmbedding"]


class RotaryEmbedding:
    """Rotate pairs of query/key features by angles proportional to the position.

    Feature pair ``i`` (``i = 0 .. head_dim/2 - 1``) at position ``t`` is rotated by the angle
    ``t * theta_i`` with ``theta_i = base ** (-2 i / head_dim)`` (RoFormer eq. 15):

        ``[x1', x2'] = [x1 cos(t theta_i) - x2 sin(t theta_i),  x1 sin(t theta_i) + x2 cos(t theta_i)]``

    so ``<R(m) q, R(n) k>`` depends on ``m - n`` only.  Positions are real numbers (sample index
    or depth in metres), so irregularly sampled logs are handled exactly.

    Pairing convention
    ------------------
    ``interleaved=False`` (default, "half-split", as GPT-NeoX and Hugging Face Llama): pair ``i`` is
    ``(x[i], x[i + head_dim/2])``.  ``interleaved=True`` (as the RoFormer paper and GPT-J): pair ``i``
    is ``(x[2i], x[2i+1])``.  Weights trained with one convention do not transfer to the other.

    Parameters
    ----------
    head_dim : int
        Even feature size of each head.
    base : float, default 10000.0
    interleaved : bool, default False

    Raises
    ------
    InputError (a ValueError) when ``head_dim`` is odd or not positive.

    Notes
    -----
    The rotation has no parameters; ``rotate_backward`` applies the transpose (rotation by minus the
    angle), which is the exact gradient.  As a head hook of
    :class:`~glassformer.nn.MultiheadAttention` it keeps no state: ``forward`` and ``backward`` both
    receive the positions.
    """

    def __init__(self, head_dim: int, base: float = 10000.0, interleaved: bool = False):
        self.head_dim = check_positive_int(head_dim, "head_dim", "RotaryEmbedding")
        if self.head_dim % 2:
            raise InputError(
                f"RotaryEmbedding: head_dim must be even (features are rotated in pairs), got {head_dim}"
            )
        if not base > 0:
            raise InputError(f"RotaryEmbedding: base must be > 0, got {base!r}")
        self.base = float(base)
        self.interleaved = bool(interleaved)
        self.inv_freq = self.base ** (-np.arange(0, self.head_dim, 2, dtype=np.float64) / self.head_dim)

    def _cos_sin(self, x: np.ndarray, positions, offset: float):
        """cos and sin of the angles, shaped to broadcast against the pair halves of ``x``."""
        if x.ndim < 2 or x.shape[-1] != self.head_dim:
            raise ShapeError(
                f"RotaryEmbedding: x must have shape (..., seq, {self.head_dim}), got {x.shape}"
            )
        L = x.shape[-2]
        if positions is None:
            pos = np.arange(L, dtype=np.float64)
        else:
            pos = np.asarray(positions, dtype=np.float64)
            if pos.ndim not in (1, 2) or pos.shape[-1] != L:
                raise ShapeError(
                    f"RotaryEmbedding: positions must have shape ({L},) or (batch, {L}), got {pos.shape}"
                )
            if not np.isfinite(pos).all():
                raise InputError("RotaryEmbedding: positions contain NaN or inf")
            if pos.ndim == 2 and x.ndim == 4:
                pos = pos[:, None, :]  # (batch, 1 head axis, seq) against (batch, heads, seq, head_dim)
        angle = (pos + offset)[..., None] * self.inv_freq       # (..., seq, head_dim/2)
        return np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)

    def _apply(self, x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
        half = self.head_dim // 2
        out = np.empty_like(x)
        if self.interleaved:
            x1, x2 = x[..., 0::2], x[..., 1::2]
            out[..., 0::2] = x1 * cos - x2 * sin
            out[..., 1::2] = x1 * sin + x2 * cos
        else:
            x1, x2 = x[..., :half], x[..., half:]
            out[..., :half] = x1 * cos - x2 * sin
            out[..., half:] = x1 * sin + x2 * cos
        return out

    def rotate(self, x: np.ndarray, positions=None, offset: float = 0.0) -> np.ndarray:
        """Return ``x`` rotated by the angles of ``positions + offset``.

        Parameters
        ----------
        x : ndarray of shape (..., seq, head_dim)
            E.g. per-head queries ``(batch, num_heads, seq, head_dim)``.
        positions : array of shape (seq,) or (batch, seq), optional
            Real-valued positions; default ``0, 1, ..., seq-1``.
        offset : float
            Added to every position (incremental decoding: the index of the first new token).
        """
        x = np.asarray(x)
        cos, sin = self._cos_sin(x, positions, offset)
        return self._apply(x, cos, sin)

    def rotate_backward(self, grad: np.ndarray, positions=None, offset: float = 0.0) -> np.ndarray:
        """Gradient through :meth:`rotate`: rotate ``grad`` by minus the same angles (R is orthogonal)."""
        grad = np.asarray(grad)
        cos, sin = self._cos_sin(grad, positions, offset)
        return self._apply(grad, cos, -sin)

    def forward(self, q: np.ndarray, k: np.ndarray, positions=(None, None)):
        """Head hook: rotate per-head queries ``(..., L, head_dim)`` and keys ``(..., S, head_dim)``.

        ``positions = (query_positions, key_positions)``, each ``(seq,)``, ``(batch, seq)`` or None
        (``0, 1, ...``).
        """
        q_pos, k_pos = positions
        return self.rotate(q, q_pos), self.rotate(k, k_pos)

    def backward(self, dq: np.ndarray, dk: np.ndarray, positions=(None, None)):
        """Head hook: the gradients through :meth:`forward` (rotations by minus the same angles)."""
        q_pos, k_pos = positions
        return self.rotate_backward(dq, q_pos), self.rotate_backward(dk, k_pos)

    def __repr__(self) -> str:
        return f"RotaryEmbedding(head_dim={self.head_dim}, base={self.base}, interleaved={self.interleaved})"


def _rotary(d_model: int, *, num_heads: int = 1, base: float = 10000.0, interleaved: bool = False) -> RotaryEmbedding:
    """RoPE on each head's ``d_model / num_heads`` features."""
    if d_model % num_heads:
        raise InputError(f"rotary: d_model ({d_model}) must be divisible by num_heads ({num_heads})")
    return RotaryEmbedding(d_model // num_heads, base, interleaved)


register(PositionalSpec(
    "rotary", _rotary,
    "RoPE: queries and keys rotated per head by their positions, nothing added (Su et al. 2021)",
    kind="per_head",
    gradcheck={"d_model": 8, "num_heads": 2, "variants": [{}, {"interleaved": True}], "positions": "depth"},
))
