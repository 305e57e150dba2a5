"""Attention masks with ``torch.nn.MultiheadAttention``'s conventions, and their merging.

* a **boolean** ``attn_mask`` is True where attention is **not allowed**;
* a **float** ``attn_mask`` is **added** to the scores (``-inf`` blocks);
* ``key_padding_mask (batch, S)`` is True at **padding** keys (or float, added);
* ``is_causal=True`` really builds the causal mask (in PyTorch it is only a hint).

Beware: ``torch.nn.functional.scaled_dot_product_attention`` and Hugging Face ``attention_mask``
use the **opposite** boolean polarity (True / 1 = *may attend*).

:func:`merge_masks` turns every mask into the two arrays the attention kernel takes: ``allowed``
(boolean, True = may attend) and ``bias`` (added to the scores).  A query row whose keys are all
blocked gets weights exactly 0 in the kernel, never NaN.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..errors import InputError, ShapeError

__all__ = ["causal_mask", "padding_mask", "merge_masks"]

_WHERE = "MultiheadAttention.forward"


def causal_mask(L: int, S: int | None = None, *, offset: int = 0) -> np.ndarray:
    """Boolean ``(L, S)`` mask, True where key ``j`` lies after query ``i``: ``j > i + offset``.

    Same polarity as ``torch.nn.MultiheadAttention``'s boolean ``attn_mask`` (True = blocked);
    equivalent to ``torch.nn.Transformer.generate_square_subsequent_mask(L)`` (which is float -inf/0).
    ``offset``: the position of the first query among the keys (incremental decoding: the number of
    cached positions).
    """
    L = check_positive_int(L, "L", "causal_mask")
    S = L if S is None else check_positive_int(S, "S", "causal_mask")
    return np.triu(np.ones((L, S), dtype=bool), k=1 + int(offset))


def padding_mask(lengths, S: int) -> np.ndarray:
    """Boolean ``(batch, S)`` key padding mask, True at positions ``>= lengths[b]`` (padding).

    Raises
    ------
    InputError if a length is negative or larger than ``S``.
    """
    S = check_positive_int(S, "S", "padding_mask")
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.dtype.kind not in "iu":
        raise InputError(f"padding_mask: lengths must be a 1-D integer array, got {lengths!r}")
    if lengths.size and (lengths.min() < 0 or lengths.max() > S):
        raise InputError(f"padding_mask: lengths must lie in [0, {S}], got {lengths.tolist()}")
    return np.arange(S)[None, :] >= lengths[:, None]


def _mask_array(mask, name: str, dtype) -> tuple[np.ndarray, bool]:
    """Return ``(array, is_bool)``; float masks become ``dtype``; NaN and +inf are refused."""
    m = np.asarray(mask)
    if m.dtype == bool:
        return m, True
    if m.dtype.kind != "f":
        # an integer 0/1 mask is ambiguous (added as a float it would not block anything)
        raise InputError(f"{_WHERE}: {name} must be bool (True = blocked) or float (added to the scores), "
                         f"got dtype {m.dtype}")
    m = m.astype(dtype, copy=False)
    if np.isnan(m).any() or np.isposinf(m).any():
        raise InputError(f"{_WHERE}: {name} contains NaN or +inf")
    return m, False


def _attn_mask(attn_mask, B, H, L, S, dtype):
    m, is_bool = _mask_array(attn_mask, "attn_mask", dtype)
    if m.shape == (B * H, L, S):
        m = m.reshape(B, H, L, S)             # PyTorch orders the first axis batch-major: b * H + h
    elif m.shape != (L, S):
        raise ShapeError(f"{_WHERE}: attn_mask must have shape ({L}, {S}) or ({B * H}, {L}, {S}) = "
                         f"(batch*num_heads, L, S), got {m.shape}")
    return m, is_bool


def _key_padding_mask(key_padding_mask, B, S, dtype):
    m, is_bool = _mask_array(key_padding_mask, "key_padding_mask", dtype)
    if m.shape != (B, S):
        raise ShapeError(f"{_WHERE}: key_padding_mask must have shape ({B}, {S}) = (batch, S), got {m.shape}")
    return m[:, None, None, :], is_bool        # (B, 1 head axis, 1 query axis, S)


def merge_masks(attn_mask, key_padding_mask, is_causal: bool, shape: tuple, dtype, *, offset: int = 0):
    """Combine every mask into ``(allowed, bias)``, each broadcastable to ``shape = (B, H, L, S)`` or None.

    ``allowed`` is True where query i may attend to key j (all boolean masks and ``is_causal``,
    with the first query at key position ``offset``); ``bias`` is the sum of the float masks.

    Raises
    ------
    ShapeError for a mask of the wrong shape; InputError for an integer mask or NaN / +inf.
    """
    allowed = bias = None
    if attn_mask is None and key_padding_mask is None and not is_causal:
        return allowed, bias
    B, H, L, S = shape
    masks = []
    if attn_mask is not None:
        masks.append(_attn_mask(attn_mask, B, H, L, S, dtype))
    if key_padding_mask is not None:
        masks.append(_key_padding_mask(key_padding_mask, B, S, dtype))
    if is_causal:
        masks.append((causal_mask(L, S, offset=offset), True))
    for m, is_bool in masks:
        if is_bool:
            allowed = ~m if allowed is None else allowed & ~m
        else:
            bias = m if bias is None else bias + m
    return allowed, bias
