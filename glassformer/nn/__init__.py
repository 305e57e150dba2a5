"""Layers with explicit forward and backward passes and PyTorch-compatible parameters.

=====================  ===================================================================
module                 layers
=====================  ===================================================================
``module``             ``Module``, ``ModuleList``, ``Parameter``, ``make_rng`` (the contract)
``linear``             ``Linear``
``embedding``          ``Embedding`` (token table)
``activation``         ``ReLU``, ``GELU``, ``Tanh``
``normalization``      ``LayerNorm``
``dropout``            ``Dropout``
``feedforward``        ``FeedForward`` (position-wise)
``attention``          ``MultiheadAttention``, masks, the scaled-dot-product kernel
``rotary``             ``RotaryEmbedding`` (RoPE, applied inside attention)
``fourier``            ``FourierMixing`` (FNet token mixing)
``transformer``        encoder / decoder layers and stacks
``positional``         positional encodings at real-valued positions (depth in m)
``input_embedding``    input embeddings for continuous logs and tokens
``recurrent``          ``LSTM``, ``LSTMCell``
``kv_cache``           incremental (cached) attention for autoregressive decoding
=====================  ===================================================================
"""

from .activation import GELU, ReLU, Tanh, get_activation
from .attention import (
    MultiheadAttention, causal_mask, padding_mask, scaled_dot_product_attention,
    scaled_dot_product_attention_backward,
)
from .dropout import Dropout
from .embedding import Embedding
from .feedforward import FeedForward
from .fourier import FourierMixing
from .input_embedding import (
    FourierInputEmbedding, LinearInputEmbedding, MLPInputEmbedding, TokenEmbedding, get_input_embedding,
)
from .linear import Linear
from .module import Module, ModuleList, Parameter, make_rng
from .normalization import LayerNorm
from .positional import (
    ContinuousPositionalEncoding, FourierPositionalEncoding, LearnedPositionalEmbedding, PositionalEncoding,
    SinusoidalPositionalEncoding, WavelengthPositionalEncoding, ZeroPositionalEncoding, get_positional_encoding,
)
from .recurrent import LSTM, LSTMCell
from .rotary import RotaryEmbedding
from .transformer import TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "ContinuousPositionalEncoding", "Dropout", "Embedding", "FeedForward", "FourierInputEmbedding",
    "FourierMixing", "FourierPositionalEncoding", "GELU", "LSTM", "LSTMCell", "LayerNorm",
    "LearnedPositionalEmbedding", "Linear", "LinearInputEmbedding", "MLPInputEmbedding", "Module", "ModuleList",
    "MultiheadAttention", "Parameter", "PositionalEncoding", "ReLU", "RotaryEmbedding",
    "SinusoidalPositionalEncoding", "Tanh", "TokenEmbedding", "TransformerDecoder", "TransformerDecoderLayer",
    "TransformerEncoder", "TransformerEncoderLayer", "WavelengthPositionalEncoding", "ZeroPositionalEncoding",
    "causal_mask", "get_activation", "get_input_embedding", "get_positional_encoding", "make_rng",
    "padding_mask", "scaled_dot_product_attention", "scaled_dot_product_attention_backward",
]
