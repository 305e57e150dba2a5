"""The key/value cache of incremental (autoregressive) decoding.

Autoregressive decoding produces one token at a time.  Re-running the whole prefix at every step
costs ``O(t^2)`` per step; with a cache of the keys and values already computed for earlier
positions, step ``t`` only projects the new token and attends to the cached keys (Pope et al.,
2022, "Efficiently Scaling Transformer Inference", sec. 2).  Causal attention makes this exact:
earlier positions never see later ones, so their keys, values and layer outputs do not change.

The cache only stores arrays: the layers compute everything, the same way with or without it --
``MultiheadAttention.forward(..., cache=c)``, ``TransformerEncoderLayer.forward(..., cache=c)``,
``TransformerDecoderLayer.forward(..., cache=(self_cache, cross_cache))`` and the stacks with one
cache per layer -- so cached outputs equal a full re-run up to rounding.  Inference only: run in
``eval()`` mode inside ``no_cache()``; a forward with a cache keeps nothing for ``backward``.

Shapes: cached keys and values ``(batch, num_heads, t_past, head_dim)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["AttentionCache"]


@dataclass
class AttentionCache:
    """Keys and values seen so far, ``(batch, num_heads, t, head_dim)`` each (None before the first step).

    ``static=False`` (self-attention): every forward appends the keys and values of its new
    positions, and new queries sit after the cached positions (the causal mask and the head hook's
    positions are offset by :attr:`offset`).  ``static=True`` (cross-attention to an encoder output):
    the first forward projects the memory, later ones reuse it and skip that projection.
    """

    k: np.ndarray | None = None
    v: np.ndarray | None = None
    static: bool = False

    @property
    def length(self) -> int:
        """Number of cached positions."""
        return 0 if self.k is None else self.k.shape[2]

    @property
    def offset(self) -> int:
        """Position of the next query among the keys: the cached length (0 for a static cache)."""
        return 0 if self.static else self.length

    @property
    def holds_memory(self) -> bool:
        """True for a filled static cache: its keys and values need no new projection."""
        return self.static and self.k is not None

    def update(self, k, v) -> tuple[np.ndarray, np.ndarray]:
        """Add the new keys and values (ignored once a static cache is filled); return every key and value."""
        if self.k is None:
            self.k, self.v = k, v
        elif not self.static:
            self.k = np.concatenate([self.k, k], axis=2)
            self.v = np.concatenate([self.v, v], axis=2)
        return self.k, self.v

    def reorder(self, index) -> None:
        """Keep rows ``index`` (in that order), e.g. the parent beams of the surviving hypotheses."""
        if self.k is not None:
            self.k = self.k[index]
            self.v = self.v[index]
