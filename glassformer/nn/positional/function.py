"""A positional encoding given as a plain function: ``positional=f`` with ``f(positions, d_model) -> (seq, d_model)``.

A student's own encoding -- for example the chapter prose's ``sin(2 pi t / lambda)`` -- needs no
subclass and no registry entry: any callable taking the positions ``t`` ``(seq,)`` (sample indices
or depths in m) and the width ``d_model``, and returning the vectors ``p_t`` as ``(seq, d_model)``,
is an additive, fixed (parameter-free) encoding (the chapter's ``z_t = e_t + p_t``).  Per-window
positions ``(batch, seq)`` are encoded one window at a time.

:func:`get_spec` and :func:`build_positional` are the registry's, extended to such functions;
models build their encodings through them.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, ShapeError
from .base import PositionalEncoding
from .registry import PositionalSpec
from .registry import build_positional as build_registered
from .registry import get_spec as registered_spec

__all__ = ["FunctionPositionalEncoding", "build_positional", "get_spec"]


def _name(function) -> str:
    return getattr(function, "__name__", type(function).__name__)


class FunctionPositionalEncoding(PositionalEncoding):
    """The fixed encoding ``P = function(positions, d_model)``.

    Parameters
    ----------
    function : callable
        ``function(t (seq,) float array, d_model int) -> array (seq, d_model)``; it gets a copy of
        the positions, so it cannot change the model's.
    d_model : int
    dtype : float64 (default) or float32

    Raises
    ------
    ShapeError
        (when called) the function returns another shape than ``(seq, d_model)``.
    InputError
        (when called) it returns non-numeric or non-finite values.
    """

    def __init__(self, function, d_model: int, *, dtype=np.float64):
        super().__init__(d_model, dtype)
        if not callable(function):
            raise InputError(f"FunctionPositionalEncoding: function must be callable, got {type(function).__name__}")
        self.function = function

    def _encode(self, t: np.ndarray) -> tuple[np.ndarray, dict]:
        if t.ndim == 2:                                         # per-window positions: one call per window
            return np.stack([self._call(row) for row in t]), {}            # (batch, seq, d_model)
        return self._call(t), {}                                           # (seq, d_model)

    def _call(self, t: np.ndarray) -> np.ndarray:
        where = f"positional function {_name(self.function)!r}"
        P = np.asarray(self.function(t.copy(), self.d_model))
        if P.shape != (t.shape[0], self.d_model):
            raise ShapeError(f"{where} must return (seq, d_model) = ({t.shape[0]}, {self.d_model}) for positions of "
                             f"shape {t.shape}, got {P.shape}")
        if P.dtype.kind not in "fiu":
            raise InputError(f"{where} returned dtype {P.dtype}; it must return numbers")
        bad = ~np.isfinite(P)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise InputError(f"{where} returned {P[i, j]} at position {t[i]:g}, component {j + 1}")
        return P.astype(self.dtype, copy=False)

    def extra_repr(self) -> str:
        return f"{_name(self.function)}, d_model={self.d_model}"


def _function_spec(function) -> PositionalSpec:
    """A one-off registry entry for ``function`` (not registered: it lives with the model that uses it)."""
    def factory(d_model, dtype=np.float64):
        return FunctionPositionalEncoding(function, d_model, dtype=dtype)

    return PositionalSpec(_name(function), factory, f"the function {_name(function)}(positions, d_model)")


def get_spec(positional, where: str = "positional") -> PositionalSpec:
    """The registry entry of a name (:func:`glassformer.nn.positional.registry.get_spec`), or one made
    for a plain function ``f(positions, d_model) -> (seq, d_model)``."""
    if callable(positional) and not isinstance(positional, (str, PositionalSpec)):
        return _function_spec(positional)
    return registered_spec(positional, where)


def build_positional(positional, d_model: int, num_heads: int = 1, *, rng=None, dtype=np.float64,
                     max_len: int | None = None, **options):
    """:func:`glassformer.nn.positional.registry.build_positional` for a name, or a plain function.

    A function takes no options; it returns ``(FunctionPositionalEncoding, None)`` (additive, no head hook).

    Raises
    ------
    InputError
        An unknown name or option, a missing required option, or options given with a function.
    """
    if callable(positional) and not isinstance(positional, str):
        if options:
            raise InputError(f"build_positional: a positional function takes no options, got {sorted(options)}")
        return _function_spec(positional).build(d_model, dtype=dtype), None
    return build_registered(positional, d_model, num_heads, rng=rng, dtype=dtype, max_len=max_len, **options)
