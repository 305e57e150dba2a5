"""PyTorch counterparts of the glassformer parts that ``torch.nn`` does not have.

Input embeddings, positional encodings and rotary embeddings, each computing the same equation as
its glassformer module (:mod:`glassformer.nn.input_embedding`, :mod:`glassformer.nn.positional`)
with the same parameter names and layouts, so ``state_dict`` keys and shapes are identical.
Autograd differentiates them; glassformer's hand-written backward passes are the reference they
are tested against.

This module imports torch: :mod:`glassformer.interop` imports it only when a conversion runs.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..errors import InputError

_TWO_PI = 2.0 * math.pi


class GELUTanh(nn.Module):
    """GELU's tanh form, ``F.gelu(x, approximate="tanh")``.

    Not ``nn.GELU(approximate="tanh")``: ``torch.nn.TransformerEncoderLayer`` takes any ``nn.GELU``
    for the exact GELU on its fused inference path (measured with torch 2.13: outputs off by 2e-5 in
    eval mode), so the tanh form is given as a module of its own, which keeps that path off.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def activation_module(name: str) -> nn.Module:
    """``torch.nn`` activation for a glassformer activation name."""
    modules = {"relu": nn.ReLU, "gelu": nn.GELU, "gelu_tanh": GELUTanh, "tanh": nn.Tanh}
    if name not in modules:
        raise InputError(f"to_torch: activation {name!r} has no PyTorch counterpart here; "
                         "supported: 'relu', 'gelu', 'gelu_tanh', 'tanh'")
    return modules[name]()


def _frequencies(module: nn.Module, values, trainable: bool) -> None:
    """Register ``frequencies`` as a Parameter (trainable) or a buffer, both saved in ``state_dict``."""
    tensor = torch.as_tensor(np.array(values, dtype=np.float64))
    if trainable:
        module.frequencies = nn.Parameter(tensor)
    else:
        module.register_buffer("frequencies", tensor)


def fourier_features(x: torch.Tensor, frequencies: torch.Tensor) -> torch.Tensor:
    """``[sin(2 pi x_f B_fk) ..., cos(2 pi x_f B_fk) ...]`` (Tancik et al., 2020, eq. 5).

    ``x (..., n_features)``, ``frequencies (n_features, K)`` -> ``(..., 2 * n_features * K)``, the
    layout of :func:`glassformer.nn.input_embedding.fourier_features`.
    """
    angle = _TWO_PI * x[..., :, None] * frequencies                         # (..., n_features, K)
    return torch.cat([angle.sin().flatten(-2), angle.cos().flatten(-2)], dim=-1)  # (..., 2 n_features K)


# ----------------------------------------------------------------------------- input embeddings
class LinearInputEmbedding(nn.Module):
    """``e_t = W_e x_t + b_e`` (Pyrcz 2024, "Input Embeddings"); key ``linear``."""

    def __init__(self, n_features: int, d_model: int):
        super().__init__()
        self.linear = nn.Linear(n_features, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)                                               # (batch, seq, d_model)


class MLPInputEmbedding(nn.Module):
    """``e_t = W_2 act(W_1 x_t + b_1) + b_2``; keys ``linear1``, ``linear2``."""

    def __init__(self, n_features: int, d_model: int, hidden: int, activation: str):
        super().__init__()
        self.linear1 = nn.Linear(n_features, hidden)
        self.activation = activation_module(activation)
        self.linear2 = nn.Linear(hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.activation(self.linear1(x)))               # (batch, seq, d_model)


class FourierInputEmbedding(nn.Module):
    """Fourier features of the input values, then a linear map; keys ``frequencies``, ``linear``.

    ``frequencies (n_features, K)`` is a Parameter when trainable and a buffer otherwise (glassformer
    keeps fixed frequencies outside its ``state_dict``; here they travel with it).
    """

    def __init__(self, frequencies, d_model: int, trainable: bool, include_input: bool):
        super().__init__()
        n_features, k = np.shape(frequencies)
        _frequencies(self, frequencies, trainable)
        self.include_input = bool(include_input)
        self.linear = nn.Linear(2 * n_features * k + (n_features if include_input else 0), d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        phi = fourier_features(x, self.frequencies)                         # (batch, seq, 2 n_features K)
        if self.include_input:
            phi = torch.cat([x, phi], dim=-1)                               # (batch, seq, n_features + ...)
        return self.linear(phi)                                             # (batch, seq, d_model)


# ----------------------------------------------------------------------------- positional encodings
class SinCosPositionalEncoding(nn.Module):
    """``p[2i] = sin(w_i t)``, ``p[2i+1] = cos(w_i t)``: sinusoidal, wavelengths and the chapter's encoding.

    The angular frequencies are kept as Python floats and the angles formed in float64 whatever the
    model's dtype, as glassformer does (a depth of thousands of metres times a frequency loses digits
    in float32).  Returns float64; the model casts ``P`` to the embedding's dtype.
    """

    def __init__(self, angular, d_model: int):
        super().__init__()
        self.angular = [float(w) for w in angular]
        self.d_model = int(d_model)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        w = torch.tensor(self.angular, dtype=torch.float64, device=positions.device)
        angle = positions.to(torch.float64)[..., None] * w                  # (..., ceil(d_model / 2))
        out = angle.new_empty(positions.shape + (self.d_model,))           # (..., d_model)
        out[..., 0::2] = angle.sin()
        out[..., 1::2] = angle[..., : self.d_model // 2].cos()
        return out

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, angular={self.angular}"


class LearnedPositionalEmbedding(nn.Module):
    """A trainable row per integer position; key ``weight (max_len, d_model)``."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(max_len, d_model))

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        idx = torch.round(positions)
        max_len = self.weight.shape[0]
        if bool((idx != positions).any()) or bool((idx < 0).any()) or bool((idx >= max_len).any()):
            raise InputError(f"LearnedPositionalEmbedding: positions must be integer sample indices in "
                             f"[0, max_len={max_len}), got min {float(positions.min()):g} and max "
                             f"{float(positions.max()):g}")
        return self.weight[idx.long()]                                      # (..., d_model)


class ContinuousPositionalEncoding(nn.Module):
    """``p_t = W_2 act(W_1 (t - offset) / scale + b_1) + b_2``; keys ``linear1``, ``linear2``."""

    def __init__(self, d_model: int, hidden: int, activation: str, scale: float, offset: float):
        super().__init__()
        self.scale, self.offset = float(scale), float(offset)
        self.linear1 = nn.Linear(1, hidden)
        self.activation = activation_module(activation)
        self.linear2 = nn.Linear(hidden, d_model)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        u = ((positions.to(self.linear1.weight.dtype) - self.offset) / self.scale)[..., None]  # (..., 1)
        return self.linear2(self.activation(self.linear1(u)))              # (..., d_model)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, offset={self.offset}"


class FourierPositionalEncoding(nn.Module):
    """``p_t = [sin(2 pi B_k t) ..., cos(2 pi B_k t) ...]``; key ``frequencies (d_model / 2,)``."""

    def __init__(self, frequencies, trainable: bool):
        super().__init__()
        _frequencies(self, frequencies, trainable)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        t = positions.to(self.frequencies.dtype)[..., None]                 # (..., 1): one "feature"
        return fourier_features(t, self.frequencies[None, :])              # (..., d_model)


class ZeroPositionalEncoding(nn.Module):
    """No positional information (positions enter attention through RoPE, or not at all)."""

    def __init__(self, d_model: int):
        super().__init__()
        self.d_model = int(d_model)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return positions.new_zeros(positions.shape + (self.d_model,), dtype=torch.float64)  # (..., d_model)


# ----------------------------------------------------------------------------- rotary embedding
class Rotary:
    """RoPE (Su et al., 2021, eq. 34) at real positions, as :class:`glassformer.nn.RotaryEmbedding`.

    Pair ``i`` of each head's features is rotated by ``t * base ** (-2 i / head_dim)``; pairs are
    ``(x[i], x[i + head_dim/2])`` ("half-split") or ``(x[2i], x[2i+1])`` (``interleaved``).  No
    parameters, so it is a plain object, not a module.
    """

    def __init__(self, head_dim: int, base: float, interleaved: bool):
        self.head_dim, self.base, self.interleaved = int(head_dim), float(base), bool(interleaved)
        self.inv_freq = (self.base ** (-np.arange(0, self.head_dim, 2, dtype=np.float64) / self.head_dim)).tolist()

    def rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """``x (batch, heads, seq, head_dim)`` rotated by ``positions (seq,)`` or ``(batch, seq)``."""
        pos = positions.to(torch.float64)
        if pos.ndim == 2:
            pos = pos[:, None, :]                                           # (batch, 1 head axis, seq)
        w = torch.tensor(self.inv_freq, dtype=torch.float64, device=x.device)
        angle = pos[..., None] * w                                          # (..., seq, head_dim / 2)
        cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
        if self.interleaved:
            x1, x2 = x[..., 0::2], x[..., 1::2]
            return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)
        half = self.head_dim // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)  # (batch, heads, seq, head_dim)

    def __repr__(self) -> str:
        return f"Rotary(head_dim={self.head_dim}, base={self.base}, interleaved={self.interleaved})"
