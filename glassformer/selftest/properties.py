"""The properties of a transformer layer, checked with glassformer's own layers.

These are the statements of the dictionary entry "transformer" that its numerical companion
verifies, here with ``n = 8`` tokens and ``d_model = 16`` and the library's layers instead of a
sketch:

* **same shape** -- layers map ``(n, d)`` to ``(n, d)``, so 3 blocks of attention + feed-forward
  with residuals (6 layers) compose without any shape bookkeeping;
* **token mixing** -- perturbing token 3 changes the attention output of the *other* tokens,
  while the position-wise feed-forward network changes row 3 only;
* **Fourier mixing** -- FNet's mixing (Lee-Thorp et al. 2021; the 2-D form and the token-axis
  form) keeps the shape and propagates across tokens without an ``n x n`` score matrix, and fits
  in the same residual block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..nn import FeedForward, FourierMixing, MultiheadAttention, TransformerEncoderLayer
from .check import Check, max_diff

__all__ = ["N_TOKENS", "D_MODEL", "property_checks"]

#: Tokens and features of the setting.
N_TOKENS, D_MODEL = 8, 16
_MODES = ("seq", "2d")          # FourierMixing: token axis, 2-D (FNet)


@dataclass
class Setting:
    """``X (8, 16)``, ``Xp`` = X with token ``j`` perturbed, and 3 blocks of attention + FFN."""

    X: np.ndarray
    Xp: np.ndarray
    attention: list
    ffn: list
    j: int = 3

    @property
    def others(self) -> list:
        """Every row but the perturbed one."""
        return [i for i in range(len(self.X)) if i != self.j]


def setting() -> Setting:
    """The fixed setting (seed 42): layers drawn first, then X, then the perturbation of token 3."""
    rng = np.random.default_rng(42)
    attention = [MultiheadAttention(D_MODEL, 2, rng=rng) for _ in range(3)]
    ffn = [FeedForward(D_MODEL, 2 * D_MODEL, rng=rng) for _ in range(3)]
    X = rng.normal(size=(N_TOKENS, D_MODEL))
    Xp = X.copy()
    Xp[3] += 0.5 * rng.normal(size=D_MODEL)
    return Setting(X, Xp, attention, ffn)


def _attend(mha: MultiheadAttention, X: np.ndarray):
    """Unbatched self-attention: ``(n, d) -> (output (n, d), weights (n, n))``."""
    return mha(X, X, X)


def _compose(s: Setting) -> list:
    """Apply the 6 layers (attention, FFN) x 3 with residuals; the shape after every layer."""
    Z, shapes = s.X, []
    for mha, ffn in zip(s.attention, s.ffn):
        Z = Z + _attend(mha, Z)[0]
        shapes.append(Z.shape)
        Z = Z + ffn(Z)
        shapes.append(Z.shape)
    return shapes


# --------------------------------------------------------------------------- same shape
def _block_keeps_shape(k: int) -> Callable:
    def check():
        pair = _compose(setting())[2 * k:2 * k + 2]
        want = (N_TOKENS, D_MODEL)
        return all(sh == want for sh in pair), f"after Z + Attention(Z): {pair[0]}, after Z + FFN(Z): {pair[1]}"
    return check


def _composition_runs():
    s = setting()
    shapes = _compose(s)
    return len(shapes) == 6 and shapes[-1] == s.X.shape, f"{len(shapes)} layers, {s.X.shape} -> {shapes[-1]}"


# --------------------------------------------------------------------------- token mixing
def _attention_mixes_tokens():
    s = setting()
    A0, A1 = _attend(s.attention[0], s.X)[0], _attend(s.attention[0], s.Xp)[0]
    change = max_diff(A1[s.others], A0[s.others])
    return change > 1e-6, f"max change of the other 7 rows: {change:.3g}"


def _ffn_outputs(s: Setting):
    return s.ffn[0](s.X), s.ffn[0](s.Xp)


def _ffn_other_rows_untouched():
    s = setting()
    M0, M1 = _ffn_outputs(s)
    change = max_diff(M1[s.others], M0[s.others])
    return change <= 1e-12, f"max change of the other 7 rows: {change:.3g}"


def _ffn_only_row_j_changed():
    s = setting()
    M0, M1 = _ffn_outputs(s)
    changed = [i for i in range(N_TOKENS) if max_diff(M1[i], M0[i]) > 1e-12]
    return changed == [s.j], f"rows changed: {changed}"


# --------------------------------------------------------------------------- Fourier mixing
def _fourier_pair(mode: str, s: Setting):
    mix = FourierMixing(mode)
    return mix(s.X), mix(s.Xp)


def _fourier_keeps_shape():
    s = setting()
    shapes = {mode: _fourier_pair(mode, s)[0].shape for mode in _MODES}
    return all(sh == (N_TOKENS, D_MODEL) for sh in shapes.values()), f"output shapes {shapes}"


def _fourier_propagates():
    s = setting()
    changes = {}
    for mode in _MODES:
        F0, F1 = _fourier_pair(mode, s)
        changes[mode] = max_diff(F1[s.others], F0[s.others])
    return all(c > 1e-6 for c in changes.values()), \
        "max change of the other 7 rows: " + ", ".join(f"{m} {c:.3g}" for m, c in changes.items())


def _scores_attention_only():
    s = setting()
    mha = s.attention[0]
    with mha.tracing():                              # keep the scores for intermediates()
        _, weights = _attend(mha, s.X)
    S = mha.intermediates()["S"]                     # (batch=1, heads, n, n) pairwise scores
    ok = weights.shape == (N_TOKENS, N_TOKENS) and S.shape[-2:] == (N_TOKENS, N_TOKENS)
    # A fixed linear map of X has no data-dependent pairwise scores: check superposition and no parameters.
    Y = np.random.default_rng(104).standard_normal((N_TOKENS, D_MODEL))
    linear = {}
    for mode in _MODES:
        mix = FourierMixing(mode)
        linear[mode] = (mix.num_parameters(), max_diff(mix(s.X + Y), mix(s.X) + mix(Y)))
    ok = ok and all(p == 0 and e <= 1e-10 for p, e in linear.values())
    return ok, (f"attention weights {weights.shape} ({weights.size} pairwise comparisons), scores {S.shape}; "
                "Fourier mixing: " + ", ".join(f"{m} {p} parameters, superposition error {e:.1e}"
                                               for m, (p, e) in linear.items()))


def _fourier_composes():
    s = setting()
    layer = TransformerEncoderLayer(D_MODEL, 2, 2 * D_MODEL, dropout=0.0, mixer="fourier", rng=7)
    H2d = layer(s.X)
    mix, ffn = FourierMixing("seq"), s.ffn[0]
    Z = s.X + mix(s.X)                               # token-axis FNet in the same residual block
    Hseq = Z + ffn(Z)
    want = (N_TOKENS, D_MODEL)
    return H2d.shape == want and Hseq.shape == want, \
        f"TransformerEncoderLayer(mixer='fourier') -> {H2d.shape}; seq-FFT + FFN block -> {Hseq.shape}"


def property_checks() -> list:
    """The eleven property checks, in the order printed."""
    n, d = N_TOKENS, D_MODEL
    named = [(f"property, same shape: block {k + 1} (Z + Attention, Z + FFN) keeps the ({n}, {d}) shape",
              _block_keeps_shape(k)) for k in range(3)]
    named += [
        ("property, same shape: the 6-layer composition runs without shape bookkeeping", _composition_runs),
        ("property, token mixing: attention mixes tokens (perturbing token 3 changes other rows)",
         _attention_mixes_tokens),
        ("property, token mixing: the feed-forward network is row-local (other rows untouched)",
         _ffn_other_rows_untouched),
        ("property, token mixing: the feed-forward network changes only row 3", _ffn_only_row_j_changed),
        (f"property, Fourier mixing (token axis and 2-D) keeps the ({n}, {d}) shape", _fourier_keeps_shape),
        ("property, Fourier mixing (token axis and 2-D) propagates across tokens", _fourier_propagates),
        (f"property, Fourier mixing: attention forms an {n} x {n} score matrix, Fourier mixing none",
         _scores_attention_only),
        ("property, Fourier mixing composes in the same block structure", _fourier_composes),
    ]
    return [Check(name, "properties", func) for name, func in named]
