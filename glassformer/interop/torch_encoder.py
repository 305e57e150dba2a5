"""The encoder block for what ``torch.nn.TransformerEncoderLayer`` cannot express.

``torch.nn.TransformerEncoderLayer`` always has an attention output projection, never rotates
queries and keys, and always attends.  The chapter's attention (Pyrcz 2024) has no output
projection, RoPE (Su et al., 2021) rotates queries and keys by their positions, and FNet
(Lee-Thorp et al., 2021) mixes tokens by a Fourier transform.  :class:`EncoderLayer` covers the
three with the parameter names of ``torch.nn.TransformerEncoderLayer`` (``self_attn.in_proj_weight``,
``linear1``, ``norm1`` ...), so ``state_dict`` keys equal glassformer's; the residual and LayerNorm
arrangement (post- or pre-norm) and the dropout sites are PyTorch's.

This module imports torch: :mod:`glassformer.interop` imports it only when a conversion runs.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .torch_layers import Rotary, activation_module


class SelfAttention(nn.Module):
    """Multi-head self-attention with an optional output projection and optional RoPE.

    ``[Q | K | V] = Z W_in^T + b_in`` split into heads; ``A = softmax(Q K^T / sqrt(d_k))`` with
    padding keys blocked (a query whose keys are all padding gets zero weights, as glassformer);
    ``U = concat_h(A_h V_h)``; output ``U W_out^T + b_out``, or ``U`` without the projection.

    Keys: ``in_proj_weight (3E, E)``, ``in_proj_bias (3E,)``, ``out_proj.weight/bias`` (if any).
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float, out_proj: bool, rotary: Rotary | None):
        super().__init__()
        self.num_heads, self.head_dim, self.dropout = num_heads, d_model // num_heads, float(dropout)
        self.in_proj_weight = nn.Parameter(torch.zeros(3 * d_model, d_model))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))
        self.out_proj = nn.Linear(d_model, d_model) if out_proj else None
        self.rotary = rotary

    def forward(self, x: torch.Tensor, key_padding_mask=None, positions=None) -> torch.Tensor:
        B, L, E = x.shape
        qkv = F.linear(x, self.in_proj_weight, self.in_proj_bias)          # (B, L, 3E)
        q, k, v = qkv.view(B, L, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)  # each (B, H, L, d_k)
        if self.rotary is not None:
            q, k = self.rotary.rotate(q, positions), self.rotary.rotate(k, positions)
        scores = (q * (1.0 / math.sqrt(self.head_dim))) @ k.transpose(-2, -1)  # (B, H, L, L)
        if key_padding_mask is not None:
            scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        A = torch.softmax(scores, dim=-1)                                   # (B, H, L, L)
        if key_padding_mask is not None:                                    # all keys padding: zeros, not NaN
            A = A.masked_fill(key_padding_mask.all(dim=-1)[:, None, None, None], 0.0)
        A = F.dropout(A, self.dropout, self.training)
        U = (A @ v).transpose(1, 2).reshape(B, L, E)                        # concat heads: (B, L, E)
        return self.out_proj(U) if self.out_proj is not None else U

    def extra_repr(self) -> str:
        return f"num_heads={self.num_heads}, rotary={self.rotary}"


class FourierMixing(nn.Module):
    """FNet's token mixing ``Re(FFT_seq(FFT_hidden(x)))`` (Lee-Thorp et al., 2021); no parameters."""

    def forward(self, x: torch.Tensor, key_padding_mask=None, positions=None) -> torch.Tensor:
        if key_padding_mask is not None:
            raise ValueError("FourierMixing supports no padding mask (every output mixes every position)")
        return torch.fft.fft2(x, dim=(-2, -1)).real                         # (B, L, E)


class EncoderLayer(nn.Module):
    """A token mixer and a feed-forward network, each with residual and LayerNorm (post- or pre-norm).

    Post-norm: ``R = norm1(Z + U(Z))``, ``H = norm2(R + FFN(R))``; pre-norm: ``T1 = Z + U(norm1(Z))``,
    ``H = T1 + FFN(norm2(T1))``.  Names and dropout sites as ``torch.nn.TransformerEncoderLayer``;
    the mixer is ``self_attn`` (:class:`SelfAttention`) or ``mixer`` (:class:`FourierMixing`).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float, activation: str,
                 norm_first: bool, *, mixer: str = "attention", out_proj: bool = True, rotary: Rotary | None = None):
        super().__init__()
        if mixer == "fourier":
            self.mixer = FourierMixing()
        else:
            self.self_attn = SelfAttention(d_model, num_heads, dropout, out_proj, rotary)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm_first = bool(norm_first)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm2 = nn.LayerNorm(d_model, eps=1e-5)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.activation = activation_module(activation)

    def _mix(self, x, key_padding_mask, positions):
        mix = self.mixer if hasattr(self, "mixer") else self.self_attn
        return self.dropout1(mix(x, key_padding_mask, positions))

    def _ffn(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src: torch.Tensor, src_key_padding_mask=None, positions=None) -> torch.Tensor:
        if self.norm_first:
            T1 = src + self._mix(self.norm1(src), src_key_padding_mask, positions)
            return T1 + self._ffn(self.norm2(T1))                           # (B, L, E)
        R = self.norm1(src + self._mix(src, src_key_padding_mask, positions))
        return self.norm2(R + self._ffn(R))                                 # (B, L, E)


class Encoder(nn.Module):
    """A stack of :class:`EncoderLayer` under ``layers`` (the keys of ``torch.nn.TransformerEncoder``)."""

    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = None

    def forward(self, src: torch.Tensor, src_key_padding_mask=None, positions=None) -> torch.Tensor:
        for layer in self.layers:
            src = layer(src, src_key_padding_mask, positions)
        return src
