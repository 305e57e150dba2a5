"""Encoder/decoder layers and stacks: finite-difference gradients with every mask kind and both norm
placements, the chapter's intermediates, PyTorch parity and names, dropout, dtypes and shape properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassformer import gradcheck
from glassformer.errors import InputError, NotReadyError, StateDictError
from glassformer.nn import (
    FeedForward,
    LayerNorm,
    RotaryEmbedding,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    causal_mask,
)

B, L, S, E, H, DFF = 2, 4, 3, 6, 2, 7


def _perturb(module, seed=0, scale=0.3):
    """Random norms and biases so that no parameter sits at a special value."""
    rng = np.random.default_rng(seed)
    for name, p in module.named_parameters():
        if "norm" in name or "bias" in name:
            p.data[...] += scale * rng.standard_normal(p.shape)
    return module


def _enc_masks(kind, rng):
    if kind == "none":
        return {}
    if kind == "causal":
        return {"is_causal": True}
    if kind == "bool":
        m = rng.random((L, L)) < 0.4
        np.fill_diagonal(m, False)
        return {"src_mask": m}
    if kind == "float":
        return {"src_mask": rng.standard_normal((L, L))}
    if kind == "key_padding":
        k = np.zeros((B, L), bool)
        k[0, -2:] = True
        return {"src_key_padding_mask": k}
    if kind == "fully_masked":
        m = np.zeros((L, L), bool)
        m[2] = True                                   # query row 2 attends to nothing
        k = np.zeros((B, L), bool)
        k[1] = True                                   # batch 1 entirely padding
        return {"src_mask": m, "src_key_padding_mask": k}
    raise AssertionError(kind)


ENC_MASKS = ["none", "causal", "bool", "float", "key_padding", "fully_masked"]


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("mask", ENC_MASKS)
def test_encoder_layer_gradcheck(mask, norm_first):
    rng = np.random.default_rng(1)
    layer = _perturb(TransformerEncoderLayer(E, H, DFF, dropout=0.0, activation="gelu", norm_first=norm_first, rng=0))
    rep = gradcheck(layer, (rng.standard_normal((B, L, E)),), kwargs=_enc_masks(mask, rng))
    assert rep.max_error <= 1e-6, str(rep)


@pytest.mark.parametrize("variant", ["fourier", "no_out_proj", "rotary", "relu"])
def test_encoder_layer_variants_gradcheck(variant):
    rng = np.random.default_rng(2)
    d_model, heads, fwd = E, H, {}
    kwargs = {"fourier": {"mixer": "fourier"}, "no_out_proj": {"attn_out_proj": False},
              "relu": {"activation": "relu"}, "rotary": {"head_hook": RotaryEmbedding(4)}}[variant]
    if variant == "rotary":                            # RoPE needs an even head_dim: 8 / 2 heads = 4
        d_model, heads = 8, 2
        fwd = {"positions": np.array([0.0, 0.5, 2.0, 3.25]), "is_causal": True}
    layer = _perturb(TransformerEncoderLayer(d_model, heads, DFF, dropout=0.0, rng=0, **kwargs))
    if variant == "fourier":
        assert not any(k.startswith("self_attn") for k in layer.state_dict())
    if variant == "no_out_proj":
        assert "self_attn.out_proj.weight" not in layer.state_dict()
    rep = gradcheck(layer, (rng.standard_normal((B, L, d_model)),), kwargs=fwd)
    assert rep.max_error <= 1e-6, str(rep)


def _dec_masks(kind, rng):
    if kind == "none":
        return {}
    if kind == "causal_memory_padding":
        k = np.zeros((B, S), bool)
        k[0, -1] = True
        return {"tgt_is_causal": True, "memory_key_padding_mask": k}
    if kind == "bool_float":
        m = rng.random((L, L)) < 0.4
        np.fill_diagonal(m, False)
        return {"tgt_mask": m, "memory_mask": rng.standard_normal((L, S))}
    if kind == "fully_masked":
        k = np.zeros((B, S), bool)
        k[1] = True                                   # batch 1: all memory padded
        t = np.zeros((B, L), bool)
        t[0, :] = True                                # batch 0: all target keys padded
        return {"memory_key_padding_mask": k, "tgt_key_padding_mask": t}
    raise AssertionError(kind)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("mask", ["none", "causal_memory_padding", "bool_float", "fully_masked"])
def test_decoder_layer_gradcheck(mask, norm_first):
    rng = np.random.default_rng(3)
    layer = _perturb(TransformerDecoderLayer(E, H, DFF, dropout=0.0, norm_first=norm_first, rng=0))
    x, mem = rng.standard_normal((B, L, E)), rng.standard_normal((B, S, E))
    rep = gradcheck(layer, (x, mem), kwargs=_dec_masks(mask, rng))
    assert rep.max_error <= 1e-6, str(rep)


def test_stacks_gradcheck():
    rng = np.random.default_rng(4)
    enc = TransformerEncoder(TransformerEncoderLayer(E, H, DFF, dropout=0.0, rng=0), 2, norm=LayerNorm(E))
    _perturb(enc, 1)
    rep = gradcheck(enc, (rng.standard_normal((B, L, E)),), kwargs={"is_causal": True})
    assert rep.max_error <= 1e-6, str(rep)
    dec = TransformerDecoder(TransformerDecoderLayer(E, H, DFF, dropout=0.0, norm_first=True, rng=0), 2,
                             norm=LayerNorm(E))
    _perturb(dec, 2)
    rep = gradcheck(dec, (rng.standard_normal((B, L, E)), rng.standard_normal((B, S, E))),
                    kwargs={"tgt_is_causal": True})
    assert rep.max_error <= 1e-6, str(rep)


# --------------------------------------------------------------------------- intermediates
def _ln(x, layer_norm):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * layer_norm.weight.data + layer_norm.bias.data


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_intermediates_follow_the_chapter_equations(norm_first):
    rng = np.random.default_rng(5)
    layer = _perturb(TransformerEncoderLayer(E, H, DFF, dropout=0.0, norm_first=norm_first, rng=0))
    with pytest.raises(NotReadyError):
        layer.intermediates()
    x = rng.standard_normal((B, L, E))
    with layer.tracing():                      # S is recorded only when asked
        out = layer(x, is_causal=True)
    it = layer.intermediates()
    assert set(it) == {"Q", "K", "V", "S", "A", "U", "T1", "R", "G", "F", "T2", "H"}
    assert it["A"].shape == (B, H, L, L) and it["Q"].shape == (B, H, L, E // H)
    np.testing.assert_allclose(it["T1"], x + it["U"], atol=1e-12)
    W1, b1 = layer.linear1.weight.data, layer.linear1.bias.data
    W2, b2 = layer.linear2.weight.data, layer.linear2.bias.data
    np.testing.assert_allclose(it["G"], np.maximum(it["R"] @ W1.T + b1, 0), atol=1e-12)
    np.testing.assert_allclose(it["F"], it["G"] @ W2.T + b2, atol=1e-12)
    np.testing.assert_array_equal(it["H"], out)
    if norm_first:
        np.testing.assert_allclose(it["R"], _ln(it["T1"], layer.norm2), atol=1e-12)
        np.testing.assert_allclose(it["T2"], it["T1"] + it["F"], atol=1e-12)
        np.testing.assert_allclose(it["H"], it["T2"], atol=1e-12)
    else:
        np.testing.assert_allclose(it["R"], _ln(it["T1"], layer.norm1), atol=1e-12)
        np.testing.assert_allclose(it["T2"], it["R"] + it["F"], atol=1e-12)
        np.testing.assert_allclose(it["H"], _ln(it["T2"], layer.norm2), atol=1e-12)


def test_decoder_intermediates_and_stack_lists():
    rng = np.random.default_rng(6)
    dec = TransformerDecoder(TransformerDecoderLayer(E, H, DFF, dropout=0.0, rng=0), 2)
    x, mem = rng.standard_normal((B, L, E)), rng.standard_normal((B, S, E))
    dec(x, mem, tgt_is_causal=True)
    its = dec.intermediates()
    assert len(its) == 2
    assert its[0]["self"]["A"].shape == (B, H, L, L)
    assert its[0]["cross"]["A"].shape == (B, H, L, S)
    assert np.all(its[1]["self"]["A"][..., 0, 1:] == 0)          # causal
    np.testing.assert_allclose(its[0]["T1"], x + its[0]["U1"], atol=1e-12)


# --------------------------------------------------------------------------- behaviour
def test_dropout_in_layers_and_distinct_clone_generators():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((B, L, E))
    enc = TransformerEncoder(TransformerEncoderLayer(E, H, DFF, dropout=0.5, rng=0), 2)
    a, b = enc(x), enc(x)
    assert not np.allclose(a, b)
    enc.eval()
    np.testing.assert_array_equal(enc(x), enc(x))
    g0, g1 = enc.layers[0].dropout.rng, enc.layers[1].dropout.rng
    assert g0 is not g1 and g0.random() != g1.random()
    assert enc.layers[0].self_attn.rng is enc.layers[0].dropout.rng   # one generator per layer, shared
    enc2 = TransformerEncoder(TransformerEncoderLayer(E, H, DFF, dropout=0.5, rng=0), 2)
    enc3 = TransformerEncoder(TransformerEncoderLayer(E, H, DFF, dropout=0.5, rng=0), 2)
    np.testing.assert_array_equal(enc2(x), enc3(x))                    # reproducible from the seed


def test_unbatched_input_matches_batched():
    rng = np.random.default_rng(8)
    layer = TransformerEncoderLayer(E, H, DFF, dropout=0.0, rng=0)
    x = rng.standard_normal((1, L, E))
    full = layer(x, is_causal=True)
    g_full = layer.backward(np.ones_like(full))
    single = layer(x[0], is_causal=True)
    g_single = layer.backward(np.ones_like(single))
    np.testing.assert_allclose(single, full[0], atol=1e-12)
    np.testing.assert_allclose(g_single, g_full[0], atol=1e-12)


def test_float32_stays_float32():
    rng = np.random.default_rng(9)
    layer = TransformerDecoderLayer(E, H, DFF, dropout=0.0, rng=0, dtype=np.float32)
    x, mem = rng.standard_normal((B, L, E)).astype(np.float32), rng.standard_normal((B, S, E)).astype(np.float32)
    with layer.tracing():
        out = layer(x, mem, tgt_is_causal=True)
    assert out.dtype == np.float32
    it = layer.intermediates()
    for key in ("U1", "T1", "R1", "U2", "T2", "R2", "G", "F", "T3", "H"):
        assert it[key].dtype == np.float32, key
    for key in ("Q", "K", "V", "S", "A"):
        assert it["self"][key].dtype == np.float32 and it["cross"][key].dtype == np.float32
    dx, dm = layer.backward(np.ones_like(out))
    assert dx.dtype == np.float32 and dm.dtype == np.float32


def test_contract_errors():
    layer = TransformerEncoderLayer(E, H, DFF, rng=0)
    with pytest.raises(NotReadyError):
        layer.backward(np.zeros((B, L, E)))
    with pytest.raises(NotReadyError):
        TransformerDecoder(TransformerDecoderLayer(E, H, DFF, rng=0), 2).backward(np.zeros((B, L, E)))
    sd = layer.state_dict()
    sd["linear1.weight"] = np.zeros((DFF + 1, E))
    with pytest.raises(StateDictError, match="linear1.weight"):
        layer.load_state_dict(sd)
    fnet = TransformerEncoderLayer(E, H, DFF, mixer="fourier", rng=0)
    with pytest.raises(InputError, match="no masks"):
        fnet(np.zeros((B, L, E)), src_key_padding_mask=np.zeros((B, L), bool))
    with pytest.raises(InputError):
        TransformerEncoderLayer(E, H, DFF, mixer="lstm")


# --------------------------------------------------------------------------- properties
@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 3), seq=st.integers(1, 6), layers=st.integers(1, 3), norm_first=st.booleans(),
       causal=st.booleans())
def test_property_stacks_keep_shape(batch, seq, layers, norm_first, causal):
    enc = TransformerEncoder(TransformerEncoderLayer(E, H, DFF, dropout=0.0, norm_first=norm_first, rng=0), layers)
    x = np.random.default_rng(seq).standard_normal((batch, seq, E))
    out = enc(x, is_causal=causal)
    assert out.shape == (batch, seq, E) and np.isfinite(out).all()
    assert enc.backward(np.ones_like(out)).shape == (batch, seq, E)
    dec = TransformerDecoder(TransformerDecoderLayer(E, H, DFF, dropout=0.0, norm_first=norm_first, rng=0), layers)
    y = dec(x, out, tgt_is_causal=causal)
    assert y.shape == (batch, seq, E)


@settings(max_examples=25, deadline=None)
@given(j=st.integers(0, L - 1), delta=st.floats(0.5, 3.0))
def test_property_attention_mixes_tokens_ffn_is_row_local(j, delta):
    x = np.random.default_rng(10).standard_normal((1, L, E))
    x2 = x.copy()
    x2[0, j] += delta
    others = [i for i in range(L) if i != j]
    layer = TransformerEncoderLayer(E, H, DFF, dropout=0.0, rng=0)
    a, b = layer(x), layer(x2)
    assert np.all(np.abs(b[0, others] - a[0, others]).max(-1) > 1e-9)
    ffn = FeedForward(E, DFF, rng=0)
    f1, f2 = ffn(x), ffn(x2)
    np.testing.assert_array_equal(f1[0, others], f2[0, others])
    assert np.abs(f2[0, j] - f1[0, j]).max() > 1e-9


# --------------------------------------------------------------------------- PyTorch parity: encoder layer
LAYER_MASKS = ["none", "causal", "bool2d", "float2d", "kpm_bool", "fully_padded"]


def _torch_encoder_layer(tp, dtype, activation, norm_first):
    tp.torch.manual_seed(2)
    tl = tp.torch.nn.TransformerEncoderLayer(tp.E, tp.H, tp.DFF, dropout=0.0, activation=activation,
                                             batch_first=True, norm_first=norm_first).to(tp.DTYPES[dtype])
    with tp.torch.no_grad():                      # non-trivial norms and attention biases
        for name, p in tl.named_parameters():
            if name.startswith("norm") or "bias" in name:
                p.add_(0.3 * tp.torch.randn_like(p))
    return tl.train()


def _layer_masks(tp, mask, rng, dtype):
    if mask == "fully_padded":
        k = np.zeros((tp.B, tp.L), bool)
        k[1, :] = True
        k[0, -2:] = True
        return {"src_key_padding_mask": k}, {"src_key_padding_mask": tp.t(k)}
    ok, tk = tp.make_masks(mask, rng, tp.L, tp.L, dtype)
    rename = {"attn_mask": "src_mask", "key_padding_mask": "src_key_padding_mask", "is_causal": "is_causal"}
    ok = {rename[k]: v for k, v in ok.items()}
    tk = {rename[k]: v for k, v in tk.items()}
    if "is_causal" in ok:
        tk["is_causal"] = True                 # torch needs the explicit mask as well as the hint
    return ok, tk


def _expected_fully_padded_rows(tp, tl, x, norm_first):
    """Layer output when the attention output is out_proj.bias (our rule), from torch's own parts."""
    xt = tp.t(x)
    b = tl.self_attn.out_proj.bias
    ffn = lambda r: tl.linear2(tl.activation(tl.linear1(r)))  # noqa: E731
    with tp.torch.no_grad():
        if norm_first:
            t1 = xt + b
            return (t1 + ffn(tl.norm2(t1))).numpy()
        r = tl.norm1(xt + b)
        return tl.norm2(r + ffn(r)).numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("mask", LAYER_MASKS)
def test_encoder_layer_parity(mask, activation, norm_first, dtype, tp):
    rng = np.random.default_rng(tp.seed(mask, activation, norm_first))
    tl = _torch_encoder_layer(tp, dtype, activation, norm_first)
    ours = TransformerEncoderLayer(tp.E, tp.H, tp.DFF, dropout=0.0, activation=activation, norm_first=norm_first,
                                   rng=0, dtype=dtype)
    assert list(ours.state_dict()) == list(tl.state_dict())
    tp.load(ours, tl)
    x = tp.rand(rng, (tp.B, tp.L, tp.E), dtype)
    R = tp.rand(rng, (tp.B, tp.L, tp.E), dtype)
    ok, tk = _layer_masks(tp, mask, rng, dtype)
    out = ours(x, **ok)
    tx = tp.t(x, True)
    tout = tl(tx, **tk)
    if mask == "fully_padded":
        # Batch 1 has every key padded.  Our rule: its attention output is out_proj.bias, checked
        # against torch's own sub-layers.  torch 2.13's layer (scaled_dot_product_attention with a
        # "safe" softmax) also gives zeros there; older versions give NaN, then only rows 0 and 2 compare.
        tp.assert_match(out[1], _expected_fully_padded_rows(tp, tl, x[1], norm_first), dtype, "fully padded batch")
        if not np.isfinite(tout.detach().numpy()).all():
            tp.assert_match(out[[0, 2]], tout.detach().numpy()[[0, 2]], dtype, "output")
            return
    tp.assert_match(out, tout.detach().numpy(), dtype, "output")
    ours.zero_grad()
    dx = ours.backward(R)
    tout.backward(tp.t(R))
    tp.compare_param_grads(ours, tl, dtype)
    tp.assert_match(dx, tx.grad.numpy(), dtype, "d_src")


# --------------------------------------------------------------------------- PyTorch parity: decoder layer
DEC_MASKS = ["none", "causal_kpm", "bool_float", "tgt_kpm"]


def _decoder_masks(tp, mask, rng, dtype):
    if mask == "none":
        return {}, {}
    if mask == "causal_kpm":
        k = np.zeros((tp.B, tp.S), bool)
        k[0, -1] = k[2, :2] = True
        return ({"tgt_is_causal": True, "memory_key_padding_mask": k},
                {"tgt_mask": tp.t(causal_mask(tp.L)), "tgt_is_causal": True, "memory_key_padding_mask": tp.t(k)})
    if mask == "bool_float":
        m = rng.random((tp.L, tp.L)) < 0.3
        np.fill_diagonal(m, False)
        f = rng.standard_normal((tp.L, tp.S)).astype(dtype)
        return {"tgt_mask": m, "memory_mask": f}, {"tgt_mask": tp.t(m), "memory_mask": tp.t(f)}
    if mask == "tgt_kpm":
        k = np.zeros((tp.B, tp.L), bool)
        k[1, -2:] = True
        return {"tgt_key_padding_mask": k}, {"tgt_key_padding_mask": tp.t(k)}
    raise AssertionError(mask)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("mask", DEC_MASKS)
def test_decoder_layer_parity(mask, activation, norm_first, dtype, tp):
    rng = np.random.default_rng(tp.seed(mask, activation, norm_first, "dec"))
    tp.torch.manual_seed(3)
    tl = tp.torch.nn.TransformerDecoderLayer(tp.E, tp.H, tp.DFF, dropout=0.0, activation=activation, batch_first=True,
                                             norm_first=norm_first).to(tp.DTYPES[dtype])
    with tp.torch.no_grad():
        for name, p in tl.named_parameters():
            if name.startswith("norm") or "bias" in name:
                p.add_(0.3 * tp.torch.randn_like(p))
    tl.train()
    ours = TransformerDecoderLayer(tp.E, tp.H, tp.DFF, dropout=0.0, activation=activation, norm_first=norm_first,
                                   rng=0, dtype=dtype)
    assert list(ours.state_dict()) == list(tl.state_dict())
    tp.load(ours, tl)
    tgt, mem = tp.rand(rng, (tp.B, tp.L, tp.E), dtype), tp.rand(rng, (tp.B, tp.S, tp.E), dtype)
    R = tp.rand(rng, (tp.B, tp.L, tp.E), dtype)
    ok, tk = _decoder_masks(tp, mask, rng, dtype)
    out = ours(tgt, mem, **ok)
    ttgt, tmem = tp.t(tgt, True), tp.t(mem, True)
    tout = tl(ttgt, tmem, **tk)
    tp.assert_match(out, tout.detach().numpy(), dtype, "output")
    ours.zero_grad()
    dtgt, dmem = ours.backward(R)
    tout.backward(tp.t(R))
    tp.compare_param_grads(ours, tl, dtype)
    tp.assert_match(dtgt, ttgt.grad.numpy(), dtype, "d_tgt")
    tp.assert_match(dmem, tmem.grad.numpy(), dtype, "d_memory")


# --------------------------------------------------------------------------- PyTorch parity: 2-layer stacks
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_parity(norm_first, dtype, tp):
    rng = np.random.default_rng(11)
    tl = _torch_encoder_layer(tp, dtype, "gelu", norm_first)
    tenc = tp.torch.nn.TransformerEncoder(tl, 2, norm=tp.torch.nn.LayerNorm(tp.E).to(tp.DTYPES[dtype]),
                                          enable_nested_tensor=False).train()
    with tp.torch.no_grad():                      # make the two layers differ
        for p in tenc.layers[1].parameters():
            p.add_(0.1 * tp.torch.randn_like(p))
    layer = TransformerEncoderLayer(tp.E, tp.H, tp.DFF, dropout=0.0, activation="gelu", norm_first=norm_first, rng=0,
                                    dtype=dtype)
    ours = TransformerEncoder(layer, 2, norm=LayerNorm(tp.E, dtype=dtype))
    assert list(ours.state_dict()) == list(tenc.state_dict())
    tp.load(ours, tenc)
    x, R = tp.rand(rng, (tp.B, tp.L, tp.E), dtype), tp.rand(rng, (tp.B, tp.L, tp.E), dtype)
    k = np.zeros((tp.B, tp.L), bool)
    k[2, -2:] = True
    out = ours(x, src_key_padding_mask=k, is_causal=True)
    tx = tp.t(x, True)
    tout = tenc(tx, mask=tp.t(causal_mask(tp.L)), src_key_padding_mask=tp.t(k))
    tp.assert_match(out, tout.detach().numpy(), dtype, "stack output")
    ours.zero_grad()
    dx = ours.backward(R)
    tout.backward(tp.t(R))
    tp.compare_param_grads(ours, tenc, dtype)
    tp.assert_match(dx, tx.grad.numpy(), dtype, "d_src")
    assert len(ours.intermediates()) == 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_stack_parity(norm_first, dtype, tp):
    rng = np.random.default_rng(12)
    tp.torch.manual_seed(4)
    tl = tp.torch.nn.TransformerDecoderLayer(tp.E, tp.H, tp.DFF, dropout=0.0, batch_first=True,
                                             norm_first=norm_first).to(tp.DTYPES[dtype])
    tdec = tp.torch.nn.TransformerDecoder(tl, 2, norm=tp.torch.nn.LayerNorm(tp.E).to(tp.DTYPES[dtype])).train()
    with tp.torch.no_grad():
        for p in tdec.parameters():
            p.add_(0.1 * tp.torch.randn_like(p))
    layer = TransformerDecoderLayer(tp.E, tp.H, tp.DFF, dropout=0.0, norm_first=norm_first, rng=0, dtype=dtype)
    ours = TransformerDecoder(layer, 2, norm=LayerNorm(tp.E, dtype=dtype))
    assert list(ours.state_dict()) == list(tdec.state_dict())
    tp.load(ours, tdec)
    tgt, mem, R = tp.rand(rng, (tp.B, tp.L, tp.E), dtype), tp.rand(rng, (tp.B, tp.S, tp.E), dtype), tp.rand(rng, (tp.B, tp.L, tp.E), dtype)
    k = np.zeros((tp.B, tp.S), bool)
    k[1, -1] = True
    out = ours(tgt, mem, tgt_is_causal=True, memory_key_padding_mask=k)
    ttgt, tmem = tp.t(tgt, True), tp.t(mem, True)
    tout = tdec(ttgt, tmem, tgt_mask=tp.t(causal_mask(tp.L)), tgt_is_causal=True, memory_key_padding_mask=tp.t(k))
    tp.assert_match(out, tout.detach().numpy(), dtype, "stack output")
    ours.zero_grad()
    dtgt, dmem = ours.backward(R)
    tout.backward(tp.t(R))
    tp.compare_param_grads(ours, tdec, dtype)
    tp.assert_match(dtgt, ttgt.grad.numpy(), dtype, "d_tgt")
    tp.assert_match(dmem, tmem.grad.numpy(), dtype, "d_memory")


