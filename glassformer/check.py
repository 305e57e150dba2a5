"""``glassformer check``: the library's numerical self-test, one ``[ok]``/``[FAIL]`` line per check.

Three groups, all run with the library's own layers (``glassformer.nn``), fixed seeds, float64:

1. **seed 004** -- the eleven properties of seed 004's transformer entry, with ``n = 8`` tokens
   and ``d_model = 16``: same-shape layers compose (3 blocks of attention + feed-forward with
   residuals, 6 layers), attention mixes tokens while the feed-forward network is row-local, and
   Fourier mixing (FNet, both the 2-D and the token-axis form) propagates across tokens without an
   ``n x n`` score matrix and fits in the same block.
2. **gradcheck** -- central finite differences (:func:`glassformer.gradcheck`, maximum relative
   error ``<= 1e-6``) of every layer, attention mask kind, encoder/decoder block, stack, positional
   encoding (by name) and input embedding, and the LSTM.
3. **values** -- published hand-computed numbers: B03 (sinusoidal encoding), B05 (RoPE), B08
   (causal attention), B13 and B14 (LayerNorm).

A check is a function returning ``(ok, detail)``; one that raises counts as a failure whose detail
is the exception's message, so the run always reaches its ``N/N checks passed`` line.

Example
-------
>>> from glassformer.check import run_checks
>>> passed, total = run_checks(verbose=False, quick=True)
>>> passed == total
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import click
import numpy as np

from .gradcheck import gradcheck
from .nn import (
    LSTM, GELU, Dropout, Embedding, FeedForward, FourierMixing, LayerNorm, Linear, LSTMCell, Module,
    MultiheadAttention, ReLU, RotaryEmbedding, SinusoidalPositionalEncoding, Tanh, TokenEmbedding,
    TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer, build_positional,
    causal_mask, get_input_embedding, scaled_dot_product_attention,
)
from .nn.positional import REGISTRY, positional_names

__all__ = ["Check", "CHECKS", "GRAD_TOL", "run_check", "run_checks", "check_command"]

#: Largest accepted relative error of a gradcheck (float64, central differences).
GRAD_TOL = 1e-6

#: Seed 004's sizes: tokens and features.
N_TOKENS, D_SEED = 8, 16

# Gradcheck sizes: tiny, so the whole command runs in seconds (cost ~ 2 forwards per element).
B, L, S, D, HEADS, D_FF = 2, 4, 3, 8, 2, 12


@dataclass(frozen=True)
class Check:
    """One named check.

    Attributes
    ----------
    name : str
        The text printed after ``[ok]`` / ``[FAIL]``.
    group : {"seed004", "gradcheck", "values"}
    func : callable
        ``func() -> (ok: bool, detail: str)``.
    """

    name: str
    group: str
    func: Callable[[], tuple]


def run_check(check: Check) -> tuple[bool, str]:
    """Run one check; an exception counts as a failure with its message as the detail."""
    try:
        ok, detail = check.func()
        return bool(ok), str(detail)
    except Exception as exc:  # noqa: BLE001 -- a broken layer must show up as [FAIL], never crash the run
        message = " ".join(str(exc).split()) or "(no message)"
        return False, f"{type(exc).__name__}: {message}"


def run_checks(verbose: bool = True, *, quick: bool = False, only: str | None = None, details: bool = False,
               echo: Callable[[str], None] = print) -> tuple[int, int]:
    """Run the checks and print one line each, then ``N/N checks passed``.

    Parameters
    ----------
    verbose : bool, default True
        Print the lines (through ``echo``); False runs silently.
    quick : bool, default False
        Only seed 004's properties and the published values (no gradchecks).
    only : str, optional
        Run only the checks whose name contains this text (case-insensitive).
    details : bool, default False
        Also print the detail (measured error, shapes) after ``[ok]`` lines.
    echo : callable, default print

    Returns
    -------
    (passed, total) : tuple of int
    """
    selected = [c for c in CHECKS if not (quick and c.group == "gradcheck")]
    if only:
        selected = [c for c in selected if only.lower() in c.name.lower()]
    passed = 0
    for check in selected:
        ok, detail = run_check(check)
        passed += ok
        if verbose:
            if ok:
                echo(f"[ok] {check.name}" + (f" — {detail}" if details and detail else ""))
            else:
                echo(f"[FAIL] {check.name} — {detail}")
    if verbose:
        echo(f"{passed}/{len(selected)} checks passed")
    return passed, len(selected)


# =========================================================================== helpers
def _data(seed: int, *shape, scale: float = 1.0, shift: float = 0.0) -> np.ndarray:
    # Data seeds differ from gradcheck's contraction seed (0): a contraction parallel to the
    # input is a direction LayerNorm is blind to, and the check would compare zeros.
    return np.random.default_rng(100 + seed).standard_normal(shape) * scale + shift


def _max_diff(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0))


def _close(name: str, got, want, atol: float) -> tuple[bool, str]:
    err = _max_diff(got, want)
    ok = np.shape(got) == np.shape(want) and err <= atol
    return ok, f"{name}: max |got - expected| = {err:.2e} (tolerance {atol:g})"


def _all_ok(results) -> tuple[bool, str]:
    """Combine several ``(ok, detail)`` into one: all must pass; the detail lists the failures first."""
    results = list(results)
    bad = [d for ok, d in results if not ok]
    return not bad, "; ".join(bad or [d for _, d in results])


class _Adapter(Module):
    """Presents a layer with shared inputs or several outputs to :func:`gradcheck` as one array function.

    ``forward(inner, *inputs, **kwargs) -> ndarray`` and ``backward(inner, grad) -> tuple`` are the
    caller's; the wrapped layer is the child ``inner`` (its parameters are checked as ``inner.*``).
    """

    def __init__(self, inner: Module, forward: Callable, backward: Callable):
        super().__init__()
        self.inner = inner
        self._forward_fn = forward
        self._backward_fn = backward

    def forward(self, *inputs, **kwargs):
        return self._forward_fn(self, *inputs, **kwargs)

    def backward(self, grad_output):
        return self._backward_fn(self, grad_output)


def _self_attention(mha: MultiheadAttention, grouped: bool = True) -> _Adapter:
    """One array used as query, key and value.

    ``grouped=True`` passes the same array three times (the fused QKV path an encoder takes; one
    gradient back), ``False`` three copies of it, whose three gradients are added.
    """
    if grouped:
        return _Adapter(mha, lambda a, x, **kw: a.inner(x, x, x, **kw)[0], lambda a, g: a.inner.backward(g))
    return _Adapter(mha, lambda a, x, **kw: a.inner(x, x.copy(), x.copy(), **kw)[0],
                    lambda a, g: (sum(a.inner.backward(g)),))


def _cross_attention(mha: MultiheadAttention) -> _Adapter:
    """Queries from ``x``, keys and values from the same ``memory`` array (a decoder's cross-attention)."""
    return _Adapter(mha, lambda a, x, mem, **kw: a.inner(x, mem, mem, **kw)[0],
                    lambda a, g: a.inner.backward(g))


def _lstm_cell_with_state(cell: LSTMCell) -> _Adapter:
    """``forward(x, h, c) -> concat(h', c')`` so both outputs and the state inputs are checked."""
    H = cell.hidden_size

    def fwd(a, x, h, c):
        h1, c1 = a.inner(x, (h, c))
        return np.concatenate([h1, c1], axis=-1)

    def bwd(a, g):
        dx, (dh, dc) = a.inner.backward(g[..., :H], g[..., H:])
        return dx, dh, dc

    return _Adapter(cell, fwd, bwd)


def _lstm_with_state(lstm: LSTM) -> _Adapter:
    """``forward(x, h0, c0) -> [output, h_n, c_n]`` flattened, so BPTT through all three is checked."""

    def fwd(a, x, h0, c0):
        out, (hn, cn) = a.inner(x, (h0, c0))
        a._save(shapes=(out.shape, hn.shape, cn.shape))
        return np.concatenate([out.ravel(), hn.ravel(), cn.ravel()])

    def bwd(a, g):
        shapes = a._saved()["shapes"]
        cuts = np.cumsum([int(np.prod(s)) for s in shapes])[:-1]
        g_out, g_hn, g_cn = (part.reshape(s) for part, s in zip(np.split(g, cuts), shapes))
        dx, (dh0, dc0) = a.inner.backward(g_out, (g_hn, g_cn))
        return dx, dh0, dc0

    return _Adapter(lstm, fwd, bwd)


def _grad(module: Module, inputs, kwargs=None, check_inputs: bool = True) -> tuple[bool, str]:
    """Gradcheck ``module`` and summarise: ok when every relative error is ``<= GRAD_TOL``."""
    report = gradcheck(module, inputs, kwargs=kwargs, check_inputs=check_inputs)
    if not report.errors:
        return False, "nothing to differentiate (no parameters and no floating inputs)"
    worst, err = report.worst()
    ok = all(e <= GRAD_TOL for e in report.errors.values())  # False for NaN as well
    return ok, f"max relative error {err:.1e} at {worst} ({len(report.errors)} tensors, tolerance {GRAD_TOL:g})"


def _grads(*cases) -> tuple[bool, str]:
    """Several gradchecks as one check; ``cases`` are ``(label, module, inputs, kwargs)`` tuples."""
    out = []
    for label, module, inputs, kwargs in cases:
        ok, detail = _grad(module, inputs, kwargs)
        out.append((ok, f"{label}: {detail}"))
    return _all_ok(out)


def _mha(seed: int, head_hook=None, out_proj: bool = True, d_model: int = D, heads: int = HEADS) -> MultiheadAttention:
    mha = MultiheadAttention(d_model, heads, rng=seed, head_hook=head_hook, out_proj=out_proj)
    # Non-zero biases, so their gradients are not trivially zero.
    mha.in_proj_bias.data[...] = _data(seed, 3 * d_model, scale=0.1)
    if mha.out_proj is not None:
        mha.out_proj.bias.data[...] = _data(seed + 1, d_model, scale=0.1)
    return mha


# =========================================================================== group 1: seed 004
@dataclass
class _Seed004:
    """Seed 004's setup with library layers: X (8, 16), X with token 3 perturbed, 3 blocks."""

    X: np.ndarray
    Xp: np.ndarray
    attention: list
    ffn: list
    j: int = 3


def _seed004() -> _Seed004:
    rng = np.random.default_rng(42)
    attention = [MultiheadAttention(D_SEED, 2, rng=rng) for _ in range(3)]
    ffn = [FeedForward(D_SEED, 2 * D_SEED, rng=rng) for _ in range(3)]
    X = rng.normal(size=(N_TOKENS, D_SEED))
    Xp = X.copy()
    Xp[3] += 0.5 * rng.normal(size=D_SEED)      # perturb token j = 3
    return _Seed004(X, Xp, attention, ffn)


def _attend(mha: MultiheadAttention, X: np.ndarray):
    """Unbatched self-attention: ``(n, d) -> (output (n, d), weights (n, n))``."""
    return mha(X, X, X)


def _compose(s: _Seed004) -> list:
    """Apply the 6 layers (attention, FFN) x 3 with residuals; the shape after every layer."""
    Z, shapes = s.X, []
    for mha, ffn in zip(s.attention, s.ffn):
        Z = Z + _attend(mha, Z)[0]
        shapes.append(Z.shape)
        Z = Z + ffn(Z)
        shapes.append(Z.shape)
    return shapes


def _block_keeps_shape(k: int) -> Callable:
    def check():
        shapes = _compose(_seed004())
        pair = shapes[2 * k:2 * k + 2]
        want = (N_TOKENS, D_SEED)
        return all(sh == want for sh in pair), f"after Z + Attention(Z): {pair[0]}, after Z + FFN(Z): {pair[1]}"
    return check


def _composition_runs():
    s = _seed004()
    shapes = _compose(s)
    return len(shapes) == 6 and shapes[-1] == s.X.shape, f"{len(shapes)} layers, {s.X.shape} -> {shapes[-1]}"


def _others(s: _Seed004) -> list:
    return [i for i in range(N_TOKENS) if i != s.j]


def _attention_mixes_tokens():
    s = _seed004()
    A0, A1 = _attend(s.attention[0], s.X)[0], _attend(s.attention[0], s.Xp)[0]
    change = _max_diff(A1[_others(s)], A0[_others(s)])
    return change > 1e-6, f"max change of the other 7 rows: {change:.3g}"


def _ffn_outputs(s: _Seed004):
    return s.ffn[0](s.X), s.ffn[0](s.Xp)


def _ffn_other_rows_untouched():
    s = _seed004()
    M0, M1 = _ffn_outputs(s)
    change = _max_diff(M1[_others(s)], M0[_others(s)])
    return change <= 1e-12, f"max change of the other 7 rows: {change:.3g}"


def _ffn_only_row_j_changed():
    s = _seed004()
    M0, M1 = _ffn_outputs(s)
    changed = [i for i in range(N_TOKENS) if _max_diff(M1[i], M0[i]) > 1e-12]
    return changed == [s.j], f"rows changed: {changed}"


def _fourier_pair(mode: str, s: _Seed004):
    mix = FourierMixing(mode)
    return mix(s.X), mix(s.Xp)


def _fourier_keeps_shape():
    s = _seed004()
    shapes = {mode: _fourier_pair(mode, s)[0].shape for mode in ("seq", "2d")}
    return all(sh == (N_TOKENS, D_SEED) for sh in shapes.values()), f"output shapes {shapes}"


def _fourier_propagates():
    s = _seed004()
    changes = {}
    for mode in ("seq", "2d"):
        F0, F1 = _fourier_pair(mode, s)
        changes[mode] = _max_diff(F1[_others(s)], F0[_others(s)])
    return all(c > 1e-6 for c in changes.values()), \
        "max change of the other 7 rows: " + ", ".join(f"{m} {c:.3g}" for m, c in changes.items())


def _scores_attention_only():
    s = _seed004()
    mha = s.attention[0]
    with mha.tracing():                              # keep the scores for intermediates()
        _, weights = _attend(mha, s.X)
    S = mha.intermediates()["S"]                     # (batch=1, heads, n, n) pairwise scores
    ok = weights.shape == (N_TOKENS, N_TOKENS) and S.shape[-2:] == (N_TOKENS, N_TOKENS)
    # A fixed linear map of X has no data-dependent pairwise scores: check superposition and no parameters.
    Y = _data(4, N_TOKENS, D_SEED)
    linear = {}
    for mode in ("seq", "2d"):
        mix = FourierMixing(mode)
        linear[mode] = (mix.num_parameters(), _max_diff(mix(s.X + Y), mix(s.X) + mix(Y)))
    ok = ok and all(p == 0 and e <= 1e-10 for p, e in linear.values())
    return ok, (f"attention weights {weights.shape} ({weights.size} pairwise comparisons), scores {S.shape}; "
                "Fourier mixing: " + ", ".join(f"{m} {p} parameters, superposition error {e:.1e}"
                                               for m, (p, e) in linear.items()))


def _fourier_composes():
    s = _seed004()
    layer = TransformerEncoderLayer(D_SEED, 2, 2 * D_SEED, dropout=0.0, mixer="fourier", rng=7)
    H2d = layer(s.X)
    mix, ffn = FourierMixing("seq"), s.ffn[0]
    Z = s.X + mix(s.X)                               # token-axis FNet in the same residual block
    Hseq = Z + ffn(Z)
    want = (N_TOKENS, D_SEED)
    return H2d.shape == want and Hseq.shape == want, \
        f"TransformerEncoderLayer(mixer='fourier') -> {H2d.shape}; seq-FFT + FFN block -> {Hseq.shape}"


def _seed004_checks() -> list:
    n, d = N_TOKENS, D_SEED
    blocks = [Check(f"seed 004 P-shape: block {k + 1} (Z + Attention, Z + FFN) keeps the ({n}, {d}) shape",
                    "seed004", _block_keeps_shape(k)) for k in range(3)]
    return blocks + [
        Check("seed 004 P-shape: the 6-layer composition ran without shape bookkeeping", "seed004",
              _composition_runs),
        Check("seed 004 P-block: attention mixes tokens (perturbing token 3 changes other rows)", "seed004",
              _attention_mixes_tokens),
        Check("seed 004 P-block: feed-forward is row-local (other rows untouched)", "seed004",
              _ffn_other_rows_untouched),
        Check("seed 004 P-block: feed-forward changes only row 3", "seed004", _ffn_only_row_j_changed),
        Check(f"seed 004 P-alt: Fourier mixing (seq and 2-D) keeps the ({n}, {d}) shape", "seed004",
              _fourier_keeps_shape),
        Check("seed 004 P-alt: Fourier mixing (seq and 2-D) propagates across tokens", "seed004",
              _fourier_propagates),
        Check(f"seed 004 P-alt: attention forms an {n} x {n} score matrix, Fourier mixing none", "seed004",
              _scores_attention_only),
        Check("seed 004 P-alt: Fourier mixing composes in the same block structure", "seed004",
              _fourier_composes),
    ]


# =========================================================================== group 2: gradchecks
def _g_linear():
    return _grad(Linear(5, 3, rng=1), (_data(1, B, L, 5),))


def _g_embedding():
    ids = np.array([[0, 3, 3, 1], [5, 0, 2, 3]])  # repeated ids: their gradients must add up
    return _grad(Embedding(6, 4, rng=2), (ids,))


def _g_layernorm():
    ln = LayerNorm(5)
    ln.weight.data[...] = _data(3, 5)
    ln.bias.data[...] = _data(4, 5)
    return _grads(("affine", ln, (_data(5, B, L, 5, scale=2.0, shift=1.0),), None),
                  ("no affine", LayerNorm(5, elementwise_affine=False), (_data(6, B, L, 5),), None))


def _activation_input(seed: int) -> np.ndarray:
    # Keep |x| >= 0.1 so no finite-difference step straddles ReLU's kink at 0.
    x = _data(seed, B, L, 5, scale=2.0)
    return np.where(np.abs(x) < 0.1, 0.5, x)


def _g_relu():
    return _grad(ReLU(), (_activation_input(7),))


def _g_gelu():
    return _grads(("exact", GELU("none"), (_activation_input(8),), None),
                  ("tanh", GELU("tanh"), (_activation_input(9),), None))


def _g_tanh():
    return _grad(Tanh(), (_data(10, B, L, 5),))


def _g_dropout():
    return _grads(("p=0.5, eval", Dropout(0.5, rng=0).eval(), (_data(11, B, L, 5),), None),
                  ("p=0, train", Dropout(0.0, rng=0), (_data(12, B, L, 5),), None))


def _g_feedforward():
    return _grads(("relu", FeedForward(D, D_FF, rng=13), (_data(13, B, L, D),), None),
                  ("gelu", FeedForward(D, D_FF, activation="gelu", rng=14), (_data(14, B, L, D),), None))


def _g_mha_self(kwargs_fn: Callable) -> Callable:
    def check():
        x = _data(15, B, L, D)
        return _grads(("fused", _self_attention(_mha(15)), (x,), kwargs_fn()),
                      ("three copies", _self_attention(_mha(15), grouped=False), (x,), kwargs_fn()))
    return check


def _float_mask() -> np.ndarray:
    m = _data(16, L, L)
    m[0, 2:] = -np.inf                         # -inf blocks, finite values shift the scores
    return m


def _g_mha_bool():
    mask = np.zeros((L, L), dtype=bool)
    mask[1, 0] = mask[3, 1:3] = True
    per_head = np.random.default_rng(17).random((B * HEADS, L, L)) < 0.3
    per_head[..., 0] = False                   # keep every row partly open
    x = _data(17, B, L, D)
    return _grads(("(L, S) mask", _self_attention(_mha(17)), (x,), {"attn_mask": mask}),
                  ("(batch*heads, L, S) mask", _self_attention(_mha(18)), (x,), {"attn_mask": per_head}))


def _g_mha_fully_masked():
    """A fully masked query row: zero weights, output = out_proj.bias, zero (finite) gradients."""
    mha = _mha(19)
    x = _data(19, B, L, D)
    kpm = np.zeros((B, L), dtype=bool)
    kpm[1] = True                              # batch 1: every key is padding
    mask = np.zeros((L, L), dtype=bool)
    mask[2] = True                             # query 2 may attend to nothing
    kw = {"key_padding_mask": kpm, "attn_mask": mask}
    out, weights = mha(x, x, x, **kw)
    bias = mha.out_proj.bias.data
    values = (_max_diff(out[1], np.broadcast_to(bias, out[1].shape)) == 0.0
              and _max_diff(out[0, 2], bias) == 0.0 and not np.any(weights[1]) and not np.any(weights[0, 2]))
    ok, detail = _grad(_self_attention(mha), (x,), kw)
    return ok and values, f"masked rows equal out_proj.bias with zero weights: {values}; {detail}"


def _g_mha_cross():
    kpm = np.zeros((B, S), dtype=bool)
    kpm[0, -1] = True
    return _grad(_cross_attention(_mha(20)), (_data(20, B, L, D), _data(21, B, S, D)),
                 {"key_padding_mask": kpm})


def _g_mha_separate():
    return _grad(_mha(22), (_data(22, B, L, D), _data(23, B, S, D), _data(24, B, S, D)),
                 {"attn_mask": np.triu(np.ones((L, S), dtype=bool), k=2)})


def _encoder_layer(seed: int, **kw) -> TransformerEncoderLayer:
    return TransformerEncoderLayer(D, HEADS, D_FF, dropout=0.0, rng=seed, **kw)


def _g_encoder(norm_first: bool):
    def check():
        kpm = np.zeros((B, L), dtype=bool)
        kpm[1, -1] = True
        return _grad(_encoder_layer(27, norm_first=norm_first), (_data(27, B, L, D),),
                     {"is_causal": True, "src_key_padding_mask": kpm})
    return check


def _g_encoder_fourier():
    return _grads(*[(f"norm_first={nf}", _encoder_layer(28, mixer="fourier", norm_first=nf),
                     (_data(28, B, L, D),), None) for nf in (False, True)])


def _decoder_layer(seed: int, **kw) -> TransformerDecoderLayer:
    return TransformerDecoderLayer(D, HEADS, D_FF, dropout=0.0, rng=seed, **kw)


def _decoder_kwargs() -> dict:
    kpm = np.zeros((B, S), dtype=bool)
    kpm[1, 0] = True
    return {"tgt_is_causal": True, "memory_key_padding_mask": kpm}


def _g_decoder(norm_first: bool):
    def check():
        return _grad(_decoder_layer(29, norm_first=norm_first), (_data(29, B, L, D), _data(30, B, S, D)),
                     _decoder_kwargs())
    return check


def _g_encoder_stack():
    stack = TransformerEncoder(_encoder_layer(31, activation="gelu"), 2, norm=LayerNorm(D))
    return _grad(stack, (_data(31, B, L, D),), {"is_causal": True})


def _g_decoder_stack():
    stack = TransformerDecoder(_decoder_layer(32, norm_first=True), 2, norm=LayerNorm(D))
    return _grad(stack, (_data(32, B, L, D), _data(33, B, S, D)), _decoder_kwargs())


def _g_fourier(mode: str):
    def check():
        return _grad(FourierMixing(mode), (_data(34, B, L, D),))
    return check


def _positional_formula(name: str, t: np.ndarray, d_model: int, options: dict):
    """The closed form of each fixed encoding (the chapter / Vaswani et al. 2017, sec. 3.5); None if unknown."""
    if name == "none":
        return np.zeros(t.shape + (d_model,))
    if name == "sinusoidal":
        omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    elif name in ("wavelengths", "chapter"):
        lam = np.array(options.get("wavelengths", [2 * np.pi, 200 * np.pi]))
        omega = 2 * np.pi / lam
    else:
        return None
    angle = t[..., None] * omega
    out = np.empty(t.shape + (d_model,))
    out[..., 0::2] = np.sin(angle)
    out[..., 1::2] = np.cos(angle[..., : d_model // 2])
    return out


def _positions(kind: str) -> np.ndarray:
    if kind == "index":
        return np.array([[0.0, 1.0, 2.0, 5.0], [3.0, 3.0, 4.0, 0.0]])           # integer indices, repeats
    t = 1500.0 + np.cumsum(np.abs(_data(35, B, L)) * 0.25, axis=-1)            # irregular depths (m)
    # Window-relative positions: at 1500 m the phase 2*pi*B*t is so steep that the finite-difference
    # truncation error (~eps^2 (2*pi*t)^3) alone exceeds 1e-6.
    return t - 1500.0 if kind == "window" else t


def _positional_name(name: str) -> str:
    spec = REGISTRY[name]
    if spec.kind == "per_head":
        hook = type(_build(name)[1]).__name__
        return f"positional '{name}' gradcheck as the head hook of MultiheadAttention ({hook})"
    trainable = _build(name)[0].num_parameters() > 0
    return f"positional '{name}'" + (" gradcheck" if trainable else " fixed, closed form")


def _build(name: str, options: dict | None = None):
    g = REGISTRY[name].gradcheck
    opts = g["variants"][0] if options is None else options
    return build_positional(name, g["d_model"], g.get("num_heads", 1), rng=35, **opts)


def _g_positional(name: str):
    """The registry's gradcheck settings: trainable encodings by finite differences (parameters;
    positions are coordinates), fixed ones against their closed form, per-head ones inside attention."""
    g = REGISTRY[name].gradcheck

    def one(options):
        additive, hook = _build(name, options)
        t = _positions(g["positions"])
        if hook is not None:
            mha = _mha(26, head_hook=hook, d_model=g["d_model"], heads=g.get("num_heads", 1))
            return _grad(_self_attention(mha), (_data(26, B, L, g["d_model"]),), {"positions": t, "is_causal": True})
        if additive.num_parameters():
            return _grad(additive, (t,), check_inputs=False)
        got = additive(t)
        want = _positional_formula(name, t, g["d_model"], options)
        ok, detail = _close("values vs closed form", got, want, 1e-10) if want is not None else \
            (bool(np.isfinite(got).all()), "finite values (no closed form here)")
        back = additive.backward(np.ones_like(got))
        fixed = additive.num_parameters() == 0 and back is None
        return ok and fixed, f"fixed ({additive.num_parameters()} parameters, backward -> {back}); {detail}"

    return lambda: _all_ok(one(options) for options in g["variants"])


def _g_input_embedding(name: str, variants: list) -> Callable:
    def check():
        x = _data(36, B, L, 2, scale=0.5, shift=0.5)
        return _grads(*[(f"{name} {opts or ''}".strip(), get_input_embedding(name, 2, 6, rng=37, **opts), (x,), None)
                        for opts in variants])
    return check


def _g_token_embedding():
    ids = np.array([[1, 4, 4, 0], [2, 3, 1, 1]])
    return _grads(("scaled", TokenEmbedding(5, 6, rng=38), (ids,), None),
                  ("unscaled", TokenEmbedding(5, 6, scale=False, rng=39), (ids,), None))


def _g_lstm_cell():
    cell = LSTMCell(3, 4, rng=40)
    return _grad(_lstm_cell_with_state(cell), (_data(40, B, 3), _data(41, B, 4), _data(42, B, 4)))


def _g_lstm():
    lstm = LSTM(3, 3, num_layers=2, bidirectional=True, rng=43)
    n = 2 * 2
    return _grad(_lstm_with_state(lstm), (_data(43, B, L, 3), _data(44, n, B, 3), _data(45, n, B, 3)))


def _gradchecks() -> list:
    mha = "gradcheck MultiheadAttention"
    checks = [
        ("gradcheck Linear", _g_linear),
        ("gradcheck Embedding (table; repeated ids)", _g_embedding),
        ("gradcheck LayerNorm (affine and not)", _g_layernorm),
        ("gradcheck ReLU", _g_relu),
        ("gradcheck GELU (exact and tanh)", _g_gelu),
        ("gradcheck Tanh", _g_tanh),
        ("gradcheck Dropout (eval, p=0)", _g_dropout),
        ("gradcheck FeedForward (relu, gelu)", _g_feedforward),
        (f"{mha} self, no mask", _g_mha_self(dict)),
        (f"{mha} self, causal", _g_mha_self(lambda: {"is_causal": True})),
        (f"{mha} self, boolean attn_mask", _g_mha_bool),
        (f"{mha} self, float attn_mask", _g_mha_self(lambda: {"attn_mask": _float_mask()})),
        (f"{mha} self, key padding", _g_mha_self(
            lambda: {"key_padding_mask": np.arange(L)[None, :] >= np.array([[L], [L - 2]])})),
        (f"{mha} fully masked rows", _g_mha_fully_masked),
        (f"{mha} cross (key is value, padding)", _g_mha_cross),
        (f"{mha} separate query, key, value", _g_mha_separate),
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
    checks += [(_positional_name(name), _g_positional(name)) for name in positional_names()]
    checks += [
        ("gradcheck input embedding 'linear'", _g_input_embedding("linear", [{}])),
        ("gradcheck input embedding 'mlp'", _g_input_embedding("mlp", [{"hidden": 5}, {"activation": "tanh"}])),
        ("gradcheck input embedding 'fourier' (fixed, trainable, with input)", _g_input_embedding(
            "fourier", [{"num_frequencies": 3}, {"num_frequencies": 3, "trainable": True},
                        {"num_frequencies": 2, "trainable": True, "include_input": True}])),
        ("gradcheck TokenEmbedding (scaled, unscaled)", _g_token_embedding),
        ("gradcheck LSTMCell with state", _g_lstm_cell),
        ("gradcheck LSTM 2 layers, bidirectional, with state", _g_lstm),
    ]
    return [Check(name, "gradcheck", func) for name, func in checks]


# =========================================================================== group 3: published values
def _v_b03():
    got = SinusoidalPositionalEncoding(5)(np.array([0.0, 1.0, 2.0]))
    want = [[0, 1, 0, 1, 0], [0.84147098, 0.54030231, 0.02511622, 0.99968454, 0.00063096],
            [0.90929743, -0.41614684, 0.0502166, 0.99873835, 0.00126191]]
    return _close("PE(t = 0, 1, 2), d_model 5", got, np.array(want), 1e-8)


def _v_b05():
    X = np.array([[1.0, 0, 0.5, -1], [0, 1, 2, 0], [1, 2, 3, 4]])
    t = np.array([0.0, 1.0, 2.0])
    rows = {True: [-2.23474169, 0.07700375, 2.91940535, 4.05919603],
            False: [-3.14403912, 1.91960535, -0.33914308, 4.03919736]}
    dots = {True: 5.91581446, False: 1.24131918}
    out = []
    for inter in (True, False):
        rope = RotaryEmbedding(4, interleaved=inter)
        R = rope.rotate(X, t)
        tag = "interleaved" if inter else "half-split"
        out.append(_close(f"{tag} row 2", R[2], np.array(rows[inter]), 1e-8))
        out.append(_close(f"{tag} offset 2", rope.rotate(X[2:3], np.array([0.0]), offset=2.0)[0], R[2], 1e-12))
        out.append(_close(f"{tag} position 0", R[0], X[0], 1e-15))
        q, k = X[2:3], X[1:2]
        d1 = (rope.rotate(q, np.array([3.0])) @ rope.rotate(k, np.array([1.0])).T).item()
        d2 = (rope.rotate(q, np.array([10.0])) @ rope.rotate(k, np.array([8.0])).T).item()
        out.append(_close(f"{tag} <R(3)q, R(1)k> = <R(10)q, R(8)k>", [d1, d2], [dots[inter]] * 2, 1e-7))
    return _all_ok(out)


def _v_b08():
    q = np.array([[1.0], [2.0], [3.0]])
    v = np.array([[1.0], [10.0], [100.0]])
    allowed = ~causal_mask(3)
    out, w = scaled_dot_product_attention(q, q, v, allowed=allowed)
    want_w = [[1, 0, 0], [0.11920292, 0.88079708, 0], [0.00235563, 0.04731416, 0.95033021]]
    v2 = v.copy()
    v2[2] = -7.0
    out2, _ = scaled_dot_product_attention(q, q, v2, allowed=allowed)
    # The same numbers through the layer: one head of width 1, identity projections, no out_proj.
    mha = MultiheadAttention(1, 1, out_proj=False)
    mha.in_proj_weight.data[...] = 1.0
    mha.in_proj_bias.data[...] = 0.0
    layer_out, _ = mha(q, q, v, is_causal=True)
    return _all_ok([
        _close("weights", w, np.array(want_w), 1e-8),
        _close("output", out[:, 0], np.array([1, 8.9271737, 95.50851836]), 1e-7),
        _close("outputs 0, 1 after changing v[2]", out2[:2], out[:2], 0.0),
        _close("MultiheadAttention(is_causal=True) output", layer_out[:, 0], out[:, 0], 1e-12),
    ])


def _v_b13():
    out = []
    for dtype in (np.float64, np.float32):
        ln = LayerNorm(1, dtype=dtype)
        ln.weight.data[...] = 2.0
        ln.bias.data[...] = 3.0
        x = np.array([[1e6], [3.0]], dtype=dtype)
        y = ln(x)
        dx = ln.backward(np.ones_like(x))
        name = np.dtype(dtype).name
        out += [_close(f"{name} y", y, np.full((2, 1), 3.0), 1e-6), _close(f"{name} dx", dx, np.zeros((2, 1)), 1e-6),
                _close(f"{name} dweight", ln.weight.grad, [0.0], 1e-6),
                _close(f"{name} dbias", ln.bias.grad, [2.0], 1e-6)]
        if y.dtype != dtype or dx.dtype != dtype:
            out.append((False, f"{name}: outputs came back as {y.dtype}/{dx.dtype}"))
    return _all_ok(out)


def _v_b14():
    ln = LayerNorm(3)
    ln.weight.data[...] = [1, 2, 3]
    ln.bias.data[...] = [0.5, 0, -0.5]
    x = np.array([[[1, 2, 4], [0, -1, 3]], [[2, 2, 5], [-3, 0.5, 1]]], dtype=float)
    dy = np.array([[[1, 0, -1], [2, 1, 0]], [[0, 3, 1], [-1, -1, 2]]], dtype=float)
    ln(x)
    dx = ln.backward(dy)
    return _all_ok([
        _close("dweight", ln.weight.grad, np.array([-0.44862822, -3.66384462, 1.76375991]), 1e-7),
        _close("dbias", ln.bias.grad, np.array([2.0, 3.0, 2.0]), 1e-12),
        _close("dx[1, 1]", dx[1, 1], np.array([0.28097086, -2.24780062, 1.96682976]), 1e-7),
    ])


def _values() -> list:
    return [Check(name, "values", func) for name, func in [
        ("B03 sinusoidal encoding, d_model 5, positions 0-2", _v_b03),
        ("B05 RoPE values, offset and relative-position property", _v_b05),
        ("B08 causal attention weights and outputs", _v_b08),
        ("B13 LayerNorm over one feature (float64, float32)", _v_b13),
        ("B14 LayerNorm backward values", _v_b14),
    ]]


#: Every check, in the order printed.
CHECKS: tuple = tuple(_seed004_checks() + _gradchecks() + _values())


# =========================================================================== command line
@click.command("check", short_help="Numerical self-test: seed 004's properties, gradchecks, published values.")
@click.option("--quick", is_flag=True, help="Only seed 004's properties and the published values (no gradchecks).")
@click.option("-k", "--only", metavar="TEXT", default=None,
              help="Run only the checks whose name contains TEXT (case-insensitive), e.g. -k LayerNorm.")
@click.option("--details", is_flag=True, help="Also print the measured errors and shapes of passing checks.")
def check_command(quick: bool, only: str | None, details: bool) -> None:
    """Run glassformer's numerical self-test and print one [ok]/[FAIL] line per check.

    \b
    seed 004   the eleven properties of seed 004's transformer entry, with the library's
               own layers (8 tokens, d_model 16): same-shape composition, token mixing vs.
               the row-local feed-forward network, Fourier mixing (FNet) without scores
    gradcheck  finite differences (float64, relative error <= 1e-6) of every layer, mask
               kind, encoder/decoder block and stack, positional encoding, input embedding
               and the LSTM
    values     published numbers: B03, B05, B08, B13, B14

    Ends with "N/N checks passed"; the exit status is 0 only when every check passes
    (1 otherwise).  Takes a few seconds.
    """
    t0 = time.perf_counter()
    passed, total = run_checks(True, quick=quick, only=only, details=details, echo=click.echo)
    if details:
        click.echo(f"({time.perf_counter() - t0:.1f} s)")
    if total == 0:
        click.echo(f"glassformer check: no check name contains {only!r}", err=True)
    if passed != total or total == 0:
        # SystemExit, not ctx.exit: glassformer.cli.main runs click with standalone_mode=False,
        # where ctx.exit(1) would be turned into a return value and the status would read 0.
        raise SystemExit(1)
