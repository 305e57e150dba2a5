"""Gradchecks: central finite differences of every layer, mask kind, block, stack and encoding.

Every backward pass is compared with :func:`glassformer.gradcheck` (float64, maximum relative
error ``<= GRAD_TOL``): the layers, multi-head attention with every mask kind and with RoPE at
real depths (as a per-head positional encoding), the encoder/decoder blocks (post- and pre-norm) and stacks, Fourier mixing, the
positional encodings by name (trainable ones by finite differences, fixed ones against their
closed form), the input embeddings and the LSTM.

The positional section is one loop over the registry of positional encodings
(:mod:`glassformer.nn.positional`): each entry carries its own gradcheck settings, so a new
encoding is checked without touching this module (a fixed one also needs its closed form in
:data:`CLOSED_FORMS`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..nn import (
    LSTM, GELU, Dropout, Embedding, FeedForward, FourierMixing, LayerNorm, Linear, LSTMCell, ReLU, Tanh,
    TokenEmbedding, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
    build_positional, get_input_embedding,
)
from ..nn.positional import REGISTRY
from .harness import (B, D, D_FF, HEADS, L, S, cross_attention, data, grad, grads, lstm_cell_with_state,
                      lstm_with_state, mha, self_attention)
from .check import Check, close

__all__ = ["CLOSED_FORMS", "gradient_checks", "positional_check", "registry_entries"]


# --------------------------------------------------------------------------- layers
def _g_linear():
    return grad(Linear(5, 3, rng=1), (data(1, B, L, 5),))


def _g_embedding():
    ids = np.array([[0, 3, 3, 1], [5, 0, 2, 3]])  # repeated ids: their gradients must add up
    return grad(Embedding(6, 4, rng=2), (ids,))


def _g_layernorm():
    ln = LayerNorm(5)
    ln.weight.data[...] = data(3, 5)
    ln.bias.data[...] = data(4, 5)
    return grads(("affine", ln, (data(5, B, L, 5, scale=2.0, shift=1.0),), None),
                 ("no affine", LayerNorm(5, elementwise_affine=False), (data(6, B, L, 5),), None))


def _activation_input(seed: int) -> np.ndarray:
    # Keep |x| >= 0.1 so no finite-difference step straddles ReLU's kink at 0.
    x = data(seed, B, L, 5, scale=2.0)
    return np.where(np.abs(x) < 0.1, 0.5, x)


def _g_relu():
    return grad(ReLU(), (_activation_input(7),))


def _g_gelu():
    return grads(("exact", GELU("none"), (_activation_input(8),), None),
                 ("tanh", GELU("tanh"), (_activation_input(9),), None))


def _g_tanh():
    return grad(Tanh(), (data(10, B, L, 5),))


def _g_dropout():
    return grads(("p=0.5, eval", Dropout(0.5, rng=0).eval(), (data(11, B, L, 5),), None),
                 ("p=0, train", Dropout(0.0, rng=0), (data(12, B, L, 5),), None))


def _g_feedforward():
    return grads(("relu", FeedForward(D, D_FF, rng=13), (data(13, B, L, D),), None),
                 ("gelu", FeedForward(D, D_FF, activation="gelu", rng=14), (data(14, B, L, D),), None))


# --------------------------------------------------------------------------- attention
def _g_mha_self(kwargs_fn: Callable) -> Callable:
    def check():
        x = data(15, B, L, D)
        return grads(("fused", self_attention(mha(15)), (x,), kwargs_fn()),
                     ("backward", self_attention(mha(15), grouped=False), (x,), kwargs_fn()))
    return check


def _float_mask() -> np.ndarray:
    m = data(16, L, L)
    m[0, 2:] = -np.inf                         # -inf blocks, finite values shift the scores
    return m


def _key_padding() -> dict:
    return {"key_padding_mask": np.arange(L)[None, :] >= np.array([[L], [L - 2]])}


def _g_mha_bool():
    mask = np.zeros((L, L), dtype=bool)
    mask[1, 0] = mask[3, 1:3] = True
    per_head = np.random.default_rng(17).random((B * HEADS, L, L)) < 0.3
    per_head[..., 0] = False                   # keep every row partly open
    x = data(17, B, L, D)
    return grads(("(L, S) mask", self_attention(mha(17)), (x,), {"attn_mask": mask}),
                 ("(batch*heads, L, S) mask", self_attention(mha(18)), (x,), {"attn_mask": per_head}))


def _g_mha_fully_masked():
    """A fully masked query row: zero weights, output = out_proj.bias, zero (finite) gradients."""
    layer = mha(19)
    x = data(19, B, L, D)
    kpm = np.zeros((B, L), dtype=bool)
    kpm[1] = True                              # batch 1: every key is padding
    mask = np.zeros((L, L), dtype=bool)
    mask[2] = True                             # query 2 may attend to nothing
    kw = {"key_padding_mask": kpm, "attn_mask": mask}
    out, weights = layer(x, x, x, **kw)
    bias = layer.out_proj.bias.data
    values = (np.array_equal(out[1], np.broadcast_to(bias, out[1].shape)) and np.array_equal(out[0, 2], bias)
              and not np.any(weights[1]) and not np.any(weights[0, 2]))
    ok, detail = grad(self_attention(layer), (x,), kw)
    return ok and values, f"masked rows equal out_proj.bias with zero weights: {values}; {detail}"


def _g_mha_cross():
    kpm = np.zeros((B, S), dtype=bool)
    kpm[0, -1] = True
    return grad(cross_attention(mha(20)), (data(20, B, L, D), data(21, B, S, D)), {"key_padding_mask": kpm})


def _g_mha_separate():
    return grad(mha(22), (data(22, B, L, D), data(23, B, S, D), data(24, B, S, D)),
                {"attn_mask": np.triu(np.ones((L, S), dtype=bool), k=2)})


# --------------------------------------------------------------------------- blocks and stacks
def _encoder_layer(seed: int, **kw) -> TransformerEncoderLayer:
    return TransformerEncoderLayer(D, HEADS, D_FF, dropout=0.0, rng=seed, **kw)


def _decoder_layer(seed: int, **kw) -> TransformerDecoderLayer:
    return TransformerDecoderLayer(D, HEADS, D_FF, dropout=0.0, rng=seed, **kw)


def _g_encoder(norm_first: bool) -> Callable:
    def check():
        kpm = np.zeros((B, L), dtype=bool)
        kpm[1, -1] = True
        return grad(_encoder_layer(27, norm_first=norm_first), (data(27, B, L, D),),
                    {"is_causal": True, "src_key_padding_mask": kpm})
    return check


def _g_encoder_fourier():
    return grads(*[(f"norm_first={nf}", _encoder_layer(28, mixer="fourier", norm_first=nf),
                    (data(28, B, L, D),), None) for nf in (False, True)])


def _decoder_kwargs() -> dict:
    kpm = np.zeros((B, S), dtype=bool)
    kpm[1, 0] = True
    return {"tgt_is_causal": True, "memory_key_padding_mask": kpm}


def _g_decoder(norm_first: bool) -> Callable:
    def check():
        return grad(_decoder_layer(29, norm_first=norm_first), (data(29, B, L, D), data(30, B, S, D)),
                    _decoder_kwargs())
    return check


def _g_encoder_stack():
    stack = TransformerEncoder(_encoder_layer(31, activation="gelu"), 2, norm=LayerNorm(D))
    return grad(stack, (data(31, B, L, D),), {"is_causal": True})


def _g_decoder_stack():
    stack = TransformerDecoder(_decoder_layer(32, norm_first=True), 2, norm=LayerNorm(D))
    return grad(stack, (data(32, B, L, D), data(33, B, S, D)), _decoder_kwargs())


def _g_fourier(mode: str) -> Callable:
    def check():
        return grad(FourierMixing(mode), (data(34, B, L, D),))
    return check


# --------------------------------------------------------------------------- positional encodings
def _sinusoids(t: np.ndarray, omega: np.ndarray, d_model: int) -> np.ndarray:
    """``[sin(omega_0 t), cos(omega_0 t), sin(omega_1 t), ...]`` cut to ``d_model`` features."""
    angle = t[..., None] * omega                                        # (..., ceil(d_model / 2))
    out = np.empty(t.shape + (d_model,))                                # (..., d_model)
    out[..., 0::2] = np.sin(angle)
    out[..., 1::2] = np.cos(angle[..., : d_model // 2])
    return out


def sinusoidal_formula(t: np.ndarray, d_model: int, options: dict) -> np.ndarray:
    """Vaswani et al. 2017, section 3.5: frequencies ``10000^(-2i / d_model)``."""
    return _sinusoids(t, 10000.0 ** (-np.arange(0, d_model, 2) / d_model), d_model)


def wavelengths_formula(t: np.ndarray, d_model: int, options: dict) -> np.ndarray:
    """Frequencies ``2 pi / wavelength``; the default wavelengths (2 pi, 200 pi) give the chapter's
    ``[sin t, cos t, sin t/100, cos t/100]`` (Pyrcz 2024)."""
    lam = np.array(options.get("wavelengths", [2 * np.pi, 200 * np.pi]))
    return _sinusoids(t, 2 * np.pi / lam, d_model)


def zero_formula(t: np.ndarray, d_model: int, options: dict) -> np.ndarray:
    return np.zeros(t.shape + (d_model,))


#: The closed form each fixed encoding must equal, by registry name.
CLOSED_FORMS = {"sinusoidal": sinusoidal_formula, "wavelengths": wavelengths_formula,
                "chapter": wavelengths_formula, "none": zero_formula}


def registry_entries() -> list:
    """``(name, options, settings)`` for every variant of every registered encoding, from its own
    gradcheck settings: ``d_model`` (and ``num_heads``), the ``positions`` to use (``"index"``:
    integer indices with repeats, ``"depth"``: irregular depths near 1500 m, ``"window"``: the same
    relative to the window top), and how it is checked -- ``"per_head"`` (inside attention, by
    finite differences), ``trainable`` (its parameters by finite differences; positions are
    coordinates and get no gradient), or the ``closed_form(t, d_model, options)`` it must equal."""
    entries = []
    for name, spec in REGISTRY.items():
        g = spec.gradcheck
        for options in g.get("variants", [{}]):
            settings = {"d_model": g["d_model"], "num_heads": g.get("num_heads", 1), "positions": g["positions"]}
            if spec.kind == "per_head":
                settings["per_head"] = True
            elif name in CLOSED_FORMS:
                settings["closed_form"] = CLOSED_FORMS[name]
            else:
                settings["trainable"] = True
            entries.append((name, options, settings))
    return entries


def _positions(kind: str) -> np.ndarray:
    """``(B, L)`` positions of one kind (see :func:`registry_entries`)."""
    if kind == "index":
        return np.array([[0.0, 1.0, 2.0, 5.0], [3.0, 3.0, 4.0, 0.0]])
    depths = 1500.0 + np.cumsum(np.abs(data(35, B, L)) * 0.25, axis=-1)     # irregular depths (m)
    if kind == "window":
        # At 1500 m the phase 2*pi*B*t is so steep that the finite-difference truncation error
        # (~eps^2 (2*pi*t)^3) alone exceeds the tolerance; window-relative positions avoid it.
        return depths - 1500.0
    return depths


def positional_check(name: str, options: dict, settings: dict) -> Callable:
    """The check of one positional encoding: inside attention (per-head), gradcheck if trainable,
    else its closed form."""

    def check():
        d_model = settings["d_model"]
        enc, hook = build_positional(name, d_model, settings.get("num_heads", 1), rng=35, **options)
        t = _positions(settings["positions"])
        if settings.get("per_head"):
            layer = mha(26, head_hook=hook, d_model=d_model, heads=settings.get("num_heads", 1))
            return grad(self_attention(layer), (data(26, B, L, d_model),), {"positions": t, "is_causal": True})
        if settings.get("trainable"):
            return grad(enc, (t,), check_inputs=False)
        got = enc(t)
        ok, detail = close("values vs closed form", got, settings["closed_form"](t, d_model, options), 1e-10)
        back = enc.backward(np.ones_like(got))
        fixed = enc.num_parameters() == 0 and back is None
        return ok and fixed, f"fixed ({enc.num_parameters()} parameters, backward -> {back}); {detail}"
    return check


def _positional_checks(entries) -> list:
    """One check per encoding; the variants of one encoding are checked together."""
    by_name = {}
    for name, options, settings in entries:
        by_name.setdefault(name, []).append((options, settings))
    out = []
    for name, variants in by_name.items():
        settings = variants[0][1]
        how = (" gradcheck inside attention" if settings.get("per_head") else
               " gradcheck" if settings.get("trainable") else " fixed, closed form")
        checks = [positional_check(name, options, st) for options, st in variants]
        out.append((f"positional '{name}'{how}", _all_of(checks)))
    return out


def _all_of(checks) -> Callable:
    def check():
        results = [c() for c in checks]
        return all(ok for ok, _ in results), "; ".join(detail for _, detail in results)
    return check


# --------------------------------------------------------------------------- embeddings and the LSTM
def _g_input_embedding(name: str, variants: list) -> Callable:
    def check():
        x = data(36, B, L, 2, scale=0.5, shift=0.5)
        return grads(*[(f"{name} {opts or ''}".strip(), get_input_embedding(name, 2, 6, rng=37, **opts), (x,), None)
                       for opts in variants])
    return check


def _g_token_embedding():
    ids = np.array([[1, 4, 4, 0], [2, 3, 1, 1]])
    return grads(("scaled", TokenEmbedding(5, 6, rng=38), (ids,), None),
                 ("unscaled", TokenEmbedding(5, 6, scale=False, rng=39), (ids,), None))


def _g_lstm_cell():
    cell = LSTMCell(3, 4, rng=40)
    return grad(lstm_cell_with_state(cell), (data(40, B, 3), data(41, B, 4), data(42, B, 4)))


def _g_lstm():
    lstm = LSTM(3, 3, num_layers=2, bidirectional=True, rng=43)
    n = 2 * 2                                                            # layers x directions
    return grad(lstm_with_state(lstm), (data(43, B, L, 3), data(44, n, B, 3), data(45, n, B, 3)))


def _layer_checks() -> list:
    m = "gradcheck MultiheadAttention"
    return [
        ("gradcheck Linear", _g_linear),
        ("gradcheck Embedding (table; repeated ids)", _g_embedding),
        ("gradcheck LayerNorm (affine and not)", _g_layernorm),
        ("gradcheck ReLU", _g_relu),
        ("gradcheck GELU (exact and tanh)", _g_gelu),
        ("gradcheck Tanh", _g_tanh),
        ("gradcheck Dropout (eval, p=0)", _g_dropout),
        ("gradcheck FeedForward (relu, gelu)", _g_feedforward),
        (f"{m} self, no mask", _g_mha_self(dict)),
        (f"{m} self, causal", _g_mha_self(lambda: {"is_causal": True})),
        (f"{m} self, boolean attn_mask", _g_mha_bool),
        (f"{m} self, float attn_mask", _g_mha_self(lambda: {"attn_mask": _float_mask()})),
        (f"{m} self, key padding", _g_mha_self(_key_padding)),
        (f"{m} fully masked rows", _g_mha_fully_masked),
        (f"{m} cross (key is value, padding)", _g_mha_cross),
        (f"{m} separate query, key, value", _g_mha_separate),
        ("gradcheck TransformerEncoderLayer post-norm", _g_encoder(False)),
        ("gradcheck TransformerEncoderLayer pre-norm", _g_encoder(True)),
        ("gradcheck TransformerEncoderLayer mixer='fourier'", _g_encoder_fourier),
        ("gradcheck TransformerDecoderLayer post-norm", _g_decoder(False)),
        ("gradcheck TransformerDecoderLayer pre-norm", _g_decoder(True)),
        ("gradcheck TransformerEncoder, 2 layers", _g_encoder_stack),
        ("gradcheck TransformerDecoder, 2 layers", _g_decoder_stack),
        ("gradcheck FourierMixing 2-D", _g_fourier("2d")),
        ("gradcheck FourierMixing token axis", _g_fourier("seq")),
    ]


def _embedding_checks() -> list:
    fourier = [{"num_frequencies": 3}, {"num_frequencies": 3, "trainable": True},
               {"num_frequencies": 2, "trainable": True, "include_input": True}]
    return [
        ("gradcheck input embedding 'linear'", _g_input_embedding("linear", [{}])),
        ("gradcheck input embedding 'mlp'", _g_input_embedding("mlp", [{"hidden": 5}, {"activation": "tanh"}])),
        ("gradcheck input embedding 'fourier' (fixed, trainable, with input)", _g_input_embedding("fourier", fourier)),
        ("gradcheck TokenEmbedding (scaled, unscaled)", _g_token_embedding),
        ("gradcheck LSTMCell with state", _g_lstm_cell),
        ("gradcheck LSTM 2 layers, bidirectional, with state", _g_lstm),
    ]


def gradient_checks(positional=None) -> list:
    """Every gradcheck, in the order printed; ``positional`` defaults to :func:`registry_entries`."""
    named = _layer_checks() + _positional_checks(registry_entries() if positional is None else positional)
    return [Check(name, "gradcheck", func) for name, func in named + _embedding_checks()]
