"""Incremental (cached) inference through transformer layers: a key/value cache per attention.

Autoregressive decoding produces one token at a time.  Re-running the whole prefix at every step
costs ``O(t^2)`` per step; with a cache of the keys and values already computed for earlier
positions, step ``t`` only projects the new token and attends to the cached keys (Pope et al.,
2022, "Efficiently Scaling Transformer Inference", sec. 2).  Causal attention makes this exact:
earlier positions never see later ones, so their keys, values and layer outputs do not change.

These functions reuse the layers' own sub-modules and parameters (``self_attn.in_proj_weight``,
``out_proj``, ``norm1..3``, ``linear1``/``linear2``, the activation) without modifying them, and
follow :meth:`MultiheadAttention.forward` operation by operation (same scaling, same masked
softmax), so cached logits equal a full re-run to rounding (float64 tests: 1e-10).

Inference only: run inside ``model.no_cache()`` in ``eval()`` mode (no dropout); nothing here has a
backward pass.

Shapes: new inputs ``x (batch, n_new, d_model)``; cached keys and values
``(batch, num_heads, t_past, head_dim)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import MultiheadAttention, masked_softmax

__all__ = ["AttentionCache", "cross_attention_kv", "self_attention_step", "cross_attention_step",
           "encoder_layer_step", "decoder_layer_step"]


@dataclass
class AttentionCache:
    """Keys and values of the positions seen so far, ``(batch, num_heads, t_past, head_dim)`` each.

    ``k``/``v`` are None before the first step.  :meth:`reorder` selects batch rows (beam search).
    """

    k: np.ndarray | None = None
    v: np.ndarray | None = None

    @property
    def length(self) -> int:
        """Number of cached positions."""
        return 0 if self.k is None else self.k.shape[2]

    def reorder(self, index) -> None:
        """Keep rows ``index`` (in that order), e.g. the parent beams of the surviving hypotheses."""
        if self.k is not None:
            self.k = self.k[index]
            self.v = self.v[index]


def _heads(x: np.ndarray, H: int) -> np.ndarray:
    """``(B, n, E) -> (B, H, n, E/H)``."""
    B, n, E = x.shape
    return np.ascontiguousarray(x.reshape(B, n, H, E // H).transpose(0, 2, 1, 3))


def _project(attn: MultiheadAttention, x: np.ndarray, part: slice) -> np.ndarray:
    """``x W[rows]^T + b[rows]`` for the rows of Q (0), K (1), V (2) or a contiguous range of them."""
    E = attn.embed_dim
    rows = slice(part.start * E, part.stop * E)
    out = x @ attn.in_proj_weight.data[rows].T
    if attn.in_proj_bias is not None:
        out += attn.in_proj_bias.data[rows]
    return out


def _attend(attn: MultiheadAttention, q, k, v, allowed) -> np.ndarray:
    """Scores, masked softmax, weighted values, heads concatenated and ``out_proj``: ``(B, n, E)``."""
    scale = 1.0 / float(np.sqrt(attn.head_dim))   # as MultiheadAttention (a Python float keeps float32)
    scores = (q * scale) @ k.swapaxes(-1, -2)
    A = masked_softmax(scores, allowed)
    B, H, n, hd = q.shape
    U = (A @ v).transpose(0, 2, 1, 3).reshape(B, n, H * hd)
    return attn.out_proj(U) if attn.out_proj is not None else U


def self_attention_step(attn: MultiheadAttention, x: np.ndarray, cache: AttentionCache,
                        key_padding_mask: np.ndarray | None = None) -> np.ndarray:
    """Causal self-attention of ``n_new`` new positions to the cached ones and to each other.

    Parameters
    ----------
    attn : MultiheadAttention
        The layer's ``self_attn`` (its rotary embedding, if any, is applied at the absolute
        positions ``t_past + i``).
    x : ndarray (batch, n_new, d_model)
        Input of the attention for the new positions (already normalised in a pre-norm layer).
    cache : AttentionCache
        Extended in place with the new keys and values.
    key_padding_mask : bool ndarray (batch, t_past + n_new), optional
        True at padding keys (all positions so far, new ones included).

    Returns
    -------
    ndarray (batch, n_new, d_model): the attention output after ``out_proj``.
    """
    H = attn.num_heads
    t0 = cache.length
    n = x.shape[1]
    qkv = _project(attn, x, slice(0, 3))
    E = attn.embed_dim
    q, k, v = (_heads(qkv[..., i * E:(i + 1) * E], H) for i in range(3))
    if attn.rotary is not None:
        q = attn.rotary.rotate(q, offset=t0)
        k = attn.rotary.rotate(k, offset=t0)
    if cache.k is None:
        cache.k, cache.v = k, v
    else:
        cache.k = np.concatenate([cache.k, k], axis=2)
        cache.v = np.concatenate([cache.v, v], axis=2)
    # New query i sits at absolute position t0 + i and may attend to keys 0 .. t0 + i.
    allowed = np.arange(t0 + n)[None, :] <= (t0 + np.arange(n))[:, None]          # (n, t0 + n)
    if key_padding_mask is not None:
        allowed = allowed[None, None] & ~np.asarray(key_padding_mask, dtype=bool)[:, None, None, :]
    return _attend(attn, q, cache.k, cache.v, allowed)


def cross_attention_kv(attn: MultiheadAttention, memory: np.ndarray) -> AttentionCache:
    """Project the encoder output once into the cross-attention keys and values."""
    kv = _project(attn, memory, slice(1, 3))
    E = attn.embed_dim
    return AttentionCache(_heads(kv[..., :E], attn.num_heads), _heads(kv[..., E:], attn.num_heads))


def cross_attention_step(attn: MultiheadAttention, x: np.ndarray, memory_kv: AttentionCache,
                         memory_key_padding_mask: np.ndarray | None = None) -> np.ndarray:
    """Attention of the new positions ``x (batch, n_new, d_model)`` to the cached encoder keys/values.

    ``memory_key_padding_mask (batch, S)`` is True at padded source positions.
    """
    q = _heads(_project(attn, x, slice(0, 1)), attn.num_heads)
    allowed = None
    if memory_key_padding_mask is not None:
        allowed = ~np.asarray(memory_key_padding_mask, dtype=bool)[:, None, None, :]
    return _attend(attn, q, memory_kv.k, memory_kv.v, allowed)


def _ffn(layer, x):
    return layer.linear2(layer.activation(layer.linear1(x)))


def encoder_layer_step(layer, x: np.ndarray, cache: AttentionCache, key_padding_mask=None) -> np.ndarray:
    """One :class:`TransformerEncoderLayer` used causally (a GPT block) on the new positions only.

    Equals the rows ``t_past ..`` of ``layer(full_prefix, is_causal=True)`` in ``eval()`` mode.
    """
    if layer.norm_first:
        T1 = x + self_attention_step(layer.self_attn, layer.norm1(x), cache, key_padding_mask)
        return T1 + _ffn(layer, layer.norm2(T1))
    R = layer.norm1(x + self_attention_step(layer.self_attn, x, cache, key_padding_mask))
    return layer.norm2(R + _ffn(layer, R))


def decoder_layer_step(layer, x: np.ndarray, cache: AttentionCache, memory_kv: AttentionCache,
                       memory_key_padding_mask=None, tgt_key_padding_mask=None) -> np.ndarray:
    """One :class:`TransformerDecoderLayer` on the new target positions, with cached self-attention keys.

    Equals the rows ``t_past ..`` of ``layer(tgt_prefix, memory, tgt_is_causal=True, ...)`` in
    ``eval()`` mode.
    """
    if layer.norm_first:
        T1 = x + self_attention_step(layer.self_attn, layer.norm1(x), cache, tgt_key_padding_mask)
        T2 = T1 + cross_attention_step(layer.multihead_attn, layer.norm2(T1), memory_kv, memory_key_padding_mask)
        return T2 + _ffn(layer, layer.norm3(T2))
    R1 = layer.norm1(x + self_attention_step(layer.self_attn, x, cache, tgt_key_padding_mask))
    R2 = layer.norm2(R1 + cross_attention_step(layer.multihead_attn, R1, memory_kv, memory_key_padding_mask))
    return layer.norm3(R2 + _ffn(layer, R2))
