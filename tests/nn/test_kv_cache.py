"""The key/value cache: the same layers, run one step at a time, equal a full causal re-run (1e-10)."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import InputError, NotReadyError
from glassformer.nn import (
    AttentionCache,
    MultiheadAttention,
    RotaryEmbedding,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

B, T, S, E, H, DFF = 2, 6, 5, 8, 2, 16


def test_cache_appends_keeps_static_memory_and_reorders():
    k1, v1 = np.ones((2, 1, 3, 4)), np.zeros((2, 1, 3, 4))
    c = AttentionCache()
    assert c.length == 0 and c.offset == 0 and not c.holds_memory
    c.update(k1, v1)
    k, v = c.update(k1[:, :, :1] * 2, v1[:, :, :1])
    assert k.shape == (2, 1, 4, 4) and c.length == 4 and c.offset == 4
    np.testing.assert_array_equal(k[:, :, 3], 2.0)
    c.k[1] = 5.0
    c.reorder([1, 1, 0])
    assert c.k.shape[0] == 3 and np.all(c.k[:2] == 5.0) and np.all(c.k[2, :, :3] == 1.0)
    m = AttentionCache(static=True)
    m.update(k1, v1)
    assert m.holds_memory and m.offset == 0
    k, _ = m.update(None, None)
    assert k is k1                                       # a static cache is filled once


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("rope", [False, True])
def test_encoder_stack_steps_equal_the_full_causal_run(norm_first, rope):
    layer = TransformerEncoderLayer(E, H, DFF, dropout=0.0, norm_first=norm_first,
                                    head_hook=RotaryEmbedding(E // H) if rope else None, rng=0)
    enc = TransformerEncoder(layer, 2).eval()
    x = np.random.default_rng(1).standard_normal((B, T, E))
    full = enc(x, is_causal=True)
    with enc.no_cache():
        caches = [AttentionCache() for _ in range(2)]
        first = enc(x[:, :3], is_causal=True, cache=caches)             # a prompt in one go
        rest = [enc(x[:, t:t + 1], is_causal=True, cache=caches) for t in range(3, T)]
    np.testing.assert_allclose(first, full[:, :3], rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.concatenate(rest, axis=1), full[:, 3:], rtol=0, atol=1e-10)
    assert caches[0].length == T


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_stack_steps_equal_the_full_causal_run(norm_first):
    dec = TransformerDecoder(TransformerDecoderLayer(E, H, DFF, dropout=0.0, norm_first=norm_first, rng=0), 2).eval()
    rng = np.random.default_rng(2)
    tgt, mem = rng.standard_normal((B, T, E)), rng.standard_normal((B, S, E))
    mem_pad = np.zeros((B, S), bool)
    mem_pad[1, -2:] = True
    full = dec(tgt, mem, tgt_is_causal=True, memory_key_padding_mask=mem_pad)
    caches = [(AttentionCache(), AttentionCache(static=True)) for _ in range(2)]
    with dec.no_cache():
        steps = [dec(tgt[:, t:t + 1], mem, tgt_is_causal=True, memory_key_padding_mask=mem_pad, cache=caches)
                 for t in range(T)]
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, rtol=0, atol=1e-10)
    assert caches[0][0].length == T and caches[0][1].length == S


def test_a_cached_forward_keeps_nothing_for_backward():
    mha = MultiheadAttention(E, H, rng=0)
    x = np.random.default_rng(3).standard_normal((B, 2, E))
    mha(x, x, x)
    mha(x, x, x, is_causal=True, cache=AttentionCache())
    with pytest.raises(NotReadyError):
        mha.backward(np.ones((B, 2, E)))
    with pytest.raises(InputError, match="static"):
        MultiheadAttention(E, H, head_hook=RotaryEmbedding(E // H))(x, x, x, cache=AttentionCache(static=True))
    with pytest.raises(InputError, match="one entry per layer"):
        TransformerEncoder(TransformerEncoderLayer(E, H, DFF, rng=0), 2)(x, cache=[AttentionCache()])
