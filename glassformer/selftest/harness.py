"""What the gradchecks share: test data, the pass rule, and adapters for layers with several inputs.

:func:`glassformer.gradcheck` differentiates ``module.forward(*inputs) -> array`` through
``module.backward(grad) -> gradient per input``.  Self-attention (one array used as query, key and
value), cross-attention (key is value) and the LSTM (a state in, a state out) do not have that
shape; the adapters here present them as such a module, with the wrapped layer as the child
``inner`` so its parameters are checked as ``inner.*``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..gradcheck import gradcheck
from ..nn import LSTM, LSTMCell, Module, MultiheadAttention
from .check import all_ok

__all__ = ["GRAD_TOL", "B", "L", "S", "D", "HEADS", "D_FF", "Adapter", "data", "grad", "grads", "mha",
           "self_attention", "cross_attention", "lstm_cell_with_state", "lstm_with_state"]

#: Largest accepted relative error of a gradcheck (float64, central differences).
GRAD_TOL = 1e-6

# Tiny sizes, so the whole command runs in seconds (cost ~ 2 forwards per element): batch, query
# length, key length, d_model, heads, feed-forward width.
B, L, S, D, HEADS, D_FF = 2, 4, 3, 8, 2, 12


def data(seed: int, *shape, scale: float = 1.0, shift: float = 0.0) -> np.ndarray:
    """Standard normal test data ``* scale + shift`` from ``default_rng(100 + seed)``."""
    # gradcheck draws its contraction from a stream no integer seed reproduces, so any data seed is
    # safe (a contraction parallel to the input is a direction LayerNorm is blind to).
    return np.random.default_rng(100 + seed).standard_normal(shape) * scale + shift


def grad(module: Module, inputs, kwargs=None, check_inputs: bool = True) -> tuple[bool, str]:
    """Gradcheck ``module`` and summarise: ok when every relative error is ``<= GRAD_TOL``."""
    report = gradcheck(module, inputs, kwargs=kwargs, check_inputs=check_inputs)
    if not report.errors:
        return False, "nothing to differentiate (no parameters and no floating inputs)"
    worst, err = report.worst()
    ok = all(e <= GRAD_TOL for e in report.errors.values())  # False for NaN as well
    return ok, f"max relative error {err:.1e} at {worst} ({len(report.errors)} tensors, tolerance {GRAD_TOL:g})"


def grads(*cases) -> tuple[bool, str]:
    """Several gradchecks as one check; ``cases`` are ``(label, module, inputs, kwargs)`` tuples."""
    out = []
    for label, module, inputs, kwargs in cases:
        ok, detail = grad(module, inputs, kwargs)
        out.append((ok, f"{label}: {detail}"))
    return all_ok(out)


def mha(seed: int, head_hook=None, out_proj: bool = True, d_model: int = D, heads: int = HEADS) -> MultiheadAttention:
    """``MultiheadAttention(d_model, heads)`` with non-zero biases, so their gradients are not trivially zero."""
    layer = MultiheadAttention(d_model, heads, rng=seed, head_hook=head_hook, out_proj=out_proj)
    layer.in_proj_bias.data[...] = data(seed, 3 * d_model, scale=0.1)
    if layer.out_proj is not None:
        layer.out_proj.bias.data[...] = data(seed + 1, d_model, scale=0.1)
    return layer


class Adapter(Module):
    """A layer with shared inputs or several outputs, presented to gradcheck as one array function.

    ``forward(adapter, *inputs, **kwargs) -> ndarray`` and ``backward(adapter, grad) -> tuple`` are
    the caller's; the wrapped layer is the child ``inner``.
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


def self_attention(layer: MultiheadAttention, grouped: bool = True) -> Adapter:
    """One array used as query, key and value.

    ``grouped=True`` passes the same array three times (the fused QKV path an encoder takes),
    ``False`` three copies of it; either way the array's gradient is the sum of the three returned.
    """
    if grouped:
        return Adapter(layer, lambda a, x, **kw: a.inner(x, x, x, **kw)[0], lambda a, g: (sum(a.inner.backward(g)),))
    return Adapter(layer, lambda a, x, **kw: a.inner(x, x.copy(), x.copy(), **kw)[0],
                   lambda a, g: (sum(a.inner.backward(g)),))


def cross_attention(layer: MultiheadAttention) -> Adapter:
    """Queries from ``x``, keys and values from the same ``memory`` array (a decoder's cross-attention)."""
    return Adapter(layer, lambda a, x, mem, **kw: a.inner(x, mem, mem, **kw)[0], lambda a, g: _query_memory(a.inner, g))


def _query_memory(layer: MultiheadAttention, g) -> tuple:
    """``(d_query, d_memory)``: the memory was key and value, so its gradient is the sum of theirs."""
    d_query, d_key, d_value = layer.backward(g)
    return d_query, d_key + d_value


def lstm_cell_with_state(cell: LSTMCell) -> Adapter:
    """``forward(x, h, c) -> concat(h', c')`` so both outputs and the state inputs are checked."""
    H = cell.hidden_size

    def fwd(a, x, h, c):
        h1, c1 = a.inner(x, (h, c))
        return np.concatenate([h1, c1], axis=-1)                     # (batch, 2 * hidden)

    def bwd(a, g):
        dx, (dh, dc) = a.inner.backward(g[..., :H], g[..., H:])
        return dx, dh, dc

    return Adapter(cell, fwd, bwd)


def lstm_with_state(lstm: LSTM) -> Adapter:
    """``forward(x, h0, c0) -> [output, h_n, c_n]`` flattened, so BPTT through all three is checked."""

    def fwd(a, x, h0, c0):
        out, (hn, cn) = a.inner(x, (h0, c0))
        a._save(shapes=(out.shape, hn.shape, cn.shape))
        return np.concatenate([out.ravel(), hn.ravel(), cn.ravel()])  # (out.size + 2 * hn.size,)

    def bwd(a, g):
        shapes = a._saved()["shapes"]
        cuts = np.cumsum([int(np.prod(s)) for s in shapes])[:-1]
        g_out, g_hn, g_cn = (part.reshape(s) for part, s in zip(np.split(g, cuts), shapes))
        dx, (dh0, dc0) = a.inner.backward(g_out, (g_hn, g_cn))
        return dx, dh0, dc0

    return Adapter(lstm, fwd, bwd)
