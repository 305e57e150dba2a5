"""PyTorch twins of the benchmarked glassformer models (eager mode, ``torch.nn`` building blocks).

Each twin has the same parameter names as its glassformer model, so
``twin.load_state_dict(state_from_numpy(model.state_dict()))`` gives it the same weights.  Fixed
positional encodings are computed by glassformer and handed over as constants.  Only used by the
benchmarks (torch is never a run-time dependency of glassformer).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["SeedAttention", "SeedRegressor", "WellRegressor", "Translator", "encoder_stack",
           "state_from_numpy"]


def state_from_numpy(state: dict) -> dict:
    """``{name: ndarray}`` -> ``{name: tensor}`` (copies, dtypes kept)."""
    return {k: torch.from_numpy(np.array(v, copy=True)) for k, v in state.items()}


class SeedAttention(nn.Module):
    """Single-head self-attention without output projection (the chapter's block): ``softmax(QK^T/sqrt d) V``."""

    def __init__(self, d_model: int, dtype):
        super().__init__()
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model, dtype=dtype))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model, dtype=dtype))

    def forward(self, z):
        q, k, v = F.linear(z, self.in_proj_weight, self.in_proj_bias).chunk(3, dim=-1)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
        return a @ v


class SeedLayer(nn.Module):
    """Post-norm encoder block with :class:`SeedAttention` (names as torch.nn.TransformerEncoderLayer)."""

    def __init__(self, d_model: int, d_ff: int, dtype):
        super().__init__()
        self.self_attn = SeedAttention(d_model, dtype)
        self.linear1 = nn.Linear(d_model, d_ff, dtype=dtype)
        self.linear2 = nn.Linear(d_ff, d_model, dtype=dtype)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5, dtype=dtype)
        self.norm2 = nn.LayerNorm(d_model, eps=1e-5, dtype=dtype)

    def forward(self, z):
        r = self.norm1(z + self.self_attn(z))
        return self.norm2(r + self.linear2(torch.relu(self.linear1(r))))


class _Layers(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, z):
        for layer in self.layers:
            z = layer(z)
        return z


class _Embedding(nn.Module):
    def __init__(self, n_features: int, d_model: int, dtype):
        super().__init__()
        self.linear = nn.Linear(n_features, d_model, dtype=dtype)

    def forward(self, x):
        return self.linear(x)


class SeedRegressor(nn.Module):
    """SequenceRegressor's defaults in PyTorch: embedding + encoding, one seed block, linear head."""

    def __init__(self, pe: np.ndarray, n_features: int = 1, d_model: int = 4, d_ff: int = 16, dtype=torch.float64):
        super().__init__()
        self.embedding = _Embedding(n_features, d_model, dtype)
        self.encoder = _Layers([SeedLayer(d_model, d_ff, dtype)])
        self.head = nn.Linear(d_model, 1, dtype=dtype)
        self.register_buffer("pe", torch.from_numpy(np.array(pe, copy=True)), persistent=False)

    def forward(self, x):
        return self.head(self.encoder(self.embedding(x) + self.pe))


def encoder_stack(d_model: int, nhead: int, d_ff: int, num_layers: int, dtype) -> nn.TransformerEncoder:
    """``nn.TransformerEncoder`` of post-norm ReLU layers, no dropout, batch first."""
    layer = nn.TransformerEncoderLayer(d_model, nhead, d_ff, dropout=0.0, batch_first=True, dtype=dtype)
    return nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)


class WellRegressor(nn.Module):
    """Windowed well-log regressor: linear input embedding + fixed encoding + nn.TransformerEncoder + head."""

    def __init__(self, pe: np.ndarray, n_features: int, d_model: int, nhead: int, d_ff: int, num_layers: int,
                 dtype=torch.float32):
        super().__init__()
        self.embedding = _Embedding(n_features, d_model, dtype)
        self.encoder = encoder_stack(d_model, nhead, d_ff, num_layers, dtype)
        self.head = nn.Linear(d_model, 1, dtype=dtype)
        self.register_buffer("pe", torch.from_numpy(np.array(pe, copy=True)), persistent=False)

    def forward(self, x):
        return self.head(self.encoder(self.embedding(x) + self.pe))


class _Tokens(nn.Module):
    def __init__(self, vocab: int, d_model: int, pad: int, dtype):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model, padding_idx=pad, dtype=dtype)

    def forward(self, ids):
        return self.embedding(ids)


class Translator(nn.Module):
    """Encoder-decoder for translation, as glassformer's Seq2SeqTransformer (post-norm, no final norms).

    ``sqrt(d_model)``-scaled token embeddings plus a fixed sinusoidal encoding, nn.TransformerEncoder
    and nn.TransformerDecoder (causal target mask, key padding masks), a linear generator.  Names:
    ``src_embed.embedding.weight``, ``tgt_embed.embedding.weight``, ``encoder.layers.<i>.*``,
    ``decoder.layers.<i>.*``, ``generator.*``.
    """

    def __init__(self, pe: np.ndarray, vocab: int, d_model: int, nhead: int, d_ff: int, layers: int, pad: int,
                 dtype=torch.float32):
        super().__init__()
        self.src_embed = _Tokens(vocab, d_model, pad, dtype)
        self.tgt_embed = _Tokens(vocab, d_model, pad, dtype)
        self.encoder = encoder_stack(d_model, nhead, d_ff, layers, dtype)
        dec_layer = nn.TransformerDecoderLayer(d_model, nhead, d_ff, dropout=0.0, batch_first=True, dtype=dtype)
        self.decoder = nn.TransformerDecoder(dec_layer, layers)
        self.generator = nn.Linear(d_model, vocab, dtype=dtype)
        self.register_buffer("pe", torch.from_numpy(np.array(pe, copy=True)), persistent=False)
        self.scale = math.sqrt(d_model)
        self.pad = pad

    def forward(self, src, tgt_in):
        S, T = src.shape[1], tgt_in.shape[1]
        src_pad, tgt_pad = src == self.pad, tgt_in == self.pad
        memory = self.encoder(self.src_embed(src) * self.scale + self.pe[:S], src_key_padding_mask=src_pad)
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        h = self.decoder(self.tgt_embed(tgt_in) * self.scale + self.pe[:T], memory, tgt_mask=causal,
                         tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        return self.generator(h)
