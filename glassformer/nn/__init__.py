"""Layers with explicit forward and backward passes (PyTorch-compatible parameters).

Each helper that adds a layer module re-exports it here.
"""

from .activation import GELU, ReLU, Tanh, get_activation
from .embedding import Embedding
from .input_embedding import (
    FourierInputEmbedding, LinearInputEmbedding, MLPInputEmbedding, TokenEmbedding, get_input_embedding,
)
from .positional import (
    ContinuousPositionalEncoding, FourierPositionalEncoding, LearnedPositionalEmbedding, PositionalEncoding,
    SinusoidalPositionalEncoding, WavelengthPositionalEncoding, ZeroPositionalEncoding, get_positional_encoding,
)
from .linear import Linear
from .module import Module, ModuleList, Parameter, make_rng
from .recurrent import LSTM, LSTMCell
from .normalization import LayerNorm
from .dropout import Dropout
from .feedforward import FeedForward
from .attention import MultiheadAttention, causal_mask, padding_mask, scaled_dot_product_attention, scaled_dot_product_attention_backward
from .rotary import RotaryEmbedding
from .fourier import FourierMixing
from .transformer import TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer

__all__ = ["LayerNorm", "Dropout", "FeedForward", "MultiheadAttention", "causal_mask", "padding_mask", "scaled_dot_product_attention", "scaled_dot_product_attention_backward", "RotaryEmbedding", "FourierMixing", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder", "TransformerDecoder", "LSTM", "LSTMCell", "Embedding", "GELU", "Linear", "Module", "ModuleList", "Parameter", "ReLU", "get_activation", "make_rng"]
__all__ += [
    "ContinuousPositionalEncoding", "FourierInputEmbedding", "FourierPositionalEncoding", "LearnedPositionalEmbedding",
    "LinearInputEmbedding", "MLPInputEmbedding", "PositionalEncoding", "SinusoidalPositionalEncoding",
    "TokenEmbedding", "WavelengthPositionalEncoding", "ZeroPositionalEncoding", "get_input_embedding",
    "get_positional_encoding",
]
