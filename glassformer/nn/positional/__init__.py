"""Positional encodings: one registry entry per encoding (:mod:`.registry`), one module per family.

======================  ===========================================  ==========  =========================
name                    class                                        kind        trainable parameters
======================  ===========================================  ==========  =========================
``"sinusoidal"``        :class:`SinusoidalPositionalEncoding`        additive    none (Vaswani et al., 2017)
``"wavelengths"``       :class:`WavelengthPositionalEncoding`        additive    none (user wavelengths)
``"chapter"``           wavelengths ``[2*pi, 200*pi]``, d_model 4    additive    none (the chapter's code)
``"learned"``           :class:`LearnedPositionalEmbedding`          additive    ``weight`` (max_len, d_model)
``"continuous"``        :class:`ContinuousPositionalEncoding`        additive    ``linear1.*``, ``linear2.*``
``"fourier"``           :class:`FourierPositionalEncoding`           additive    ``frequencies`` if trainable
``"none"``              :class:`ZeroPositionalEncoding`              additive    none (ablation)
``"rotary"``            :class:`RotaryEmbedding` (RoPE)              per head    none (Su et al., 2021)
a function ``f``        :class:`FunctionPositionalEncoding`          additive    none (``f(positions, d_model)``)
======================  ===========================================  ==========  =========================

Models build every encoding through :func:`build_positional`, which returns the additive module
and the per-head hook they hand to the attention layers.  ``positional=`` also takes a plain function
``f(positions, d_model) -> (seq, d_model)`` (:mod:`.function`): a student's own encoding, with no
subclass and no registry entry.  Every module of this package is imported
here, and each registers its encodings: a new encoding is one new file.
"""

import importlib
import pkgutil

from .base import PositionalEncoding, ZeroPositionalEncoding
from .continuous import ContinuousPositionalEncoding
from .fourier import FourierPositionalEncoding
from .learned import LearnedPositionalEmbedding
from .function import FunctionPositionalEncoding, build_positional, get_spec
from .registry import (
    REGISTRY, PositionalSpec, get_positional_encoding, positional_names, register,
)
from .rotary import RotaryEmbedding
from .sinusoidal import (
    CHAPTER_WAVELENGTHS, SinusoidalPositionalEncoding, WavelengthPositionalEncoding, chapter_positional_encoding,
)

for _module in pkgutil.iter_modules(__path__):          # families added as new files register themselves
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "CHAPTER_WAVELENGTHS", "ContinuousPositionalEncoding", "FourierPositionalEncoding", "FunctionPositionalEncoding",
    "LearnedPositionalEmbedding",
    "PositionalEncoding", "PositionalSpec", "REGISTRY", "RotaryEmbedding", "SinusoidalPositionalEncoding",
    "WavelengthPositionalEncoding", "ZeroPositionalEncoding", "build_positional", "chapter_positional_encoding",
    "get_positional_encoding", "get_spec", "positional_names", "register",
]
