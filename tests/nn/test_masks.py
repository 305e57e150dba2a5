"""Attention masks: the helpers, PyTorch's polarity, and how merge_masks combines them."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import InputError, ShapeError
from glassformer.nn import causal_mask, padding_mask
from glassformer.nn.masks import merge_masks


def test_mask_helpers():
    np.testing.assert_array_equal(causal_mask(3), [[0, 1, 1], [0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(causal_mask(2, 3), [[0, 1, 1], [0, 0, 1]])
    np.testing.assert_array_equal(padding_mask([3, 1, 0], 3), [[0, 0, 0], [0, 1, 1], [1, 1, 1]])
    with pytest.raises(InputError):
        padding_mask([4], 3)


def test_causal_mask_with_an_offset_is_the_lower_rows_of_the_full_mask():
    full = causal_mask(6)
    np.testing.assert_array_equal(causal_mask(2, 6, offset=4), full[4:])
    np.testing.assert_array_equal(causal_mask(1, 3, offset=2), [[False, False, False]])


def test_merge_masks_combines_every_kind():
    B, H, L, S = 2, 3, 4, 4
    attn = np.zeros((L, S), bool)
    attn[0, 1] = True
    kpm = np.zeros((B, S), bool)
    kpm[1, 2] = True
    allowed, bias = merge_masks(attn, kpm, True, (B, H, L, S), np.float64)
    assert bias is None and np.broadcast_shapes(allowed.shape, (B, H, L, S)) == (B, H, L, S)
    expected = ~attn & ~kpm[:, None, None, :] & ~causal_mask(L)
    np.testing.assert_array_equal(np.broadcast_to(allowed, (B, H, L, S)), np.broadcast_to(expected, (B, H, L, S)))
    float_mask = np.arange(B * H * L * S, dtype=float).reshape(B * H, L, S)
    fkpm = np.full((B, S), -1.5)
    allowed, bias = merge_masks(float_mask, fkpm, False, (B, H, L, S), np.float32)
    assert allowed is None and bias.dtype == np.float32
    np.testing.assert_array_equal(bias, float_mask.reshape(B, H, L, S) - 1.5)    # batch-major b * H + h
    assert merge_masks(None, None, False, (B, H, L, S), np.float64) == (None, None)


def test_merge_masks_errors_name_the_mask_and_the_shape():
    shape = (2, 1, 3, 3)
    with pytest.raises(ShapeError, match=r"attn_mask must have shape \(3, 3\) or \(2, 3, 3\)"):
        merge_masks(np.zeros((3, 4), bool), None, False, shape, np.float64)
    with pytest.raises(ShapeError, match=r"key_padding_mask must have shape \(2, 3\)"):
        merge_masks(None, np.zeros((3, 3), bool), False, shape, np.float64)
    with pytest.raises(InputError, match="bool"):
        merge_masks(np.zeros((3, 3), int), None, False, shape, np.float64)
    with pytest.raises(InputError, match=r"NaN or \+inf"):
        merge_masks(np.full((3, 3), np.inf), None, False, shape, np.float64)
