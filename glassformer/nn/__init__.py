"""Layers with explicit forward and backward passes and PyTorch-compatible parameters.

Read :mod:`.reference` first: the chapter's equations as plain forward/backward pairs.  The
modules below hold the parameters and caches and call the kernels of the active tier
(:mod:`.kernels`): the fast ones of :mod:`.functional` by default, the reference's under
``kernels("reference")``.

=====================  ===================================================================
module                 contents
=====================  ===================================================================
``reference``          the chapter's equations, plain, each backward under its forward (read first)
``functional``         the fast kernels, the optimised implementation of the reference
``tiers``              the switch between the two (``kernels("reference")``, ``ops``)
``reference_tier``     the reference behind the fast kernels' names (what the switch runs)
``heads``              the fused query/key/value projection into heads, head split/merge
``attention_blocks``   attention by blocks of queries (long sequences, no stored weights)
``lstm_step``          the LSTM step's kernel and its backward
``module``             ``Module``, ``ModuleList``, ``Parameter``, ``make_rng`` (the contract)
``linear``             ``Linear``
``embedding``          ``Embedding`` (token table)
``activation``         ``ReLU``, ``GELU``, ``Tanh``
``normalization``      ``LayerNorm``
``dropout``            ``Dropout``
``feedforward``        ``FeedForward`` (position-wise)
``masks``              ``causal_mask``, ``padding_mask``, merging of the attention masks
``attention``          ``MultiheadAttention`` (head hook, weights override, cache)
``kv_cache``           ``AttentionCache`` (incremental decoding)
``fourier``            ``FourierMixing`` (FNet token mixing)
``transformer``        encoder / decoder layers and stacks
``positional``         positional encodings: the registry, ``build_positional``, RoPE
``input_embedding``    input embeddings for continuous logs and tokens
``recurrent``          ``LSTM``
``lstm_cell``          ``LSTMCell``
=====================  ===================================================================
"""

from . import functional, reference
from .activation import GELU, ReLU, Tanh, get_activation
from .attention import MultiheadAttention
from .dropout import Dropout
from .embedding import Embedding
from .feedforward import FeedForward
from .fourier import FourierMixing
from .functional import scaled_dot_product_attention, scaled_dot_product_attention_backward
from .input_embedding import (
    FourierInputEmbedding, LinearInputEmbedding, MLPInputEmbedding, TokenEmbedding, get_input_embedding,
)
from .tiers import active_kernels, kernels
from .kv_cache import AttentionCache
from .linear import Linear
from .masks import causal_mask, padding_mask
from .module import Module, ModuleList, Parameter, make_rng
from .normalization import LayerNorm
from .positional import (
    ContinuousPositionalEncoding, FourierPositionalEncoding, LearnedPositionalEmbedding, PositionalEncoding,
    RotaryEmbedding, SinusoidalPositionalEncoding, WavelengthPositionalEncoding, ZeroPositionalEncoding,
    build_positional, get_positional_encoding,
)
from .lstm_cell import LSTMCell
from .recurrent import LSTM
from .transformer import TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "AttentionCache", "ContinuousPositionalEncoding", "Dropout", "Embedding", "FeedForward", "FourierInputEmbedding",
    "FourierMixing", "FourierPositionalEncoding", "GELU", "LSTM", "LSTMCell", "LayerNorm",
    "LearnedPositionalEmbedding", "Linear", "LinearInputEmbedding", "MLPInputEmbedding", "Module", "ModuleList",
    "MultiheadAttention", "Parameter", "PositionalEncoding", "ReLU", "RotaryEmbedding",
    "SinusoidalPositionalEncoding", "Tanh", "TokenEmbedding", "TransformerDecoder", "TransformerDecoderLayer",
    "TransformerEncoder", "TransformerEncoderLayer", "WavelengthPositionalEncoding", "ZeroPositionalEncoding",
    "active_kernels", "build_positional", "causal_mask", "functional", "get_activation", "get_input_embedding",
    "get_positional_encoding", "kernels", "make_rng", "padding_mask", "reference", "scaled_dot_product_attention",
    "scaled_dot_product_attention_backward",
]
