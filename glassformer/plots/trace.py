"""Wrappers over a model's trace: pick one layer and sample (or sequences) of the chapter's symbols
and call the plain figure functions.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import InputError
from ._common import _axes_grid
from .attention import plot_attention_heads
from .representations import (
    DEFAULT_STAGES, plot_embeddings, plot_positional_encoding, plot_qkv, plot_stages,
    plot_value_vs_output)

__all__ = ["plot_trace_attention", "plot_trace_embeddings", "plot_trace_qkv", "plot_trace_stages",
           "plot_trace_value_vs_output", "trace_array"]


_ALIASES = {"y_hat": ("y_hat", "yhat", "ŷ", "Y_hat"), "F": ("F", "F_out")}


def _get(obj, key):
    if isinstance(obj, Mapping):
        return obj[key] if key in obj else None
    return getattr(obj, key, None)


def trace_array(trace, symbol, *, layer=0, stack="encoder"):
    """One symbol's array from a model trace, tolerant of how the trace is laid out.

    Tried in order: ``trace[stack]["layers"][layer][symbol]``, ``trace["layers"][layer][symbol]``,
    flat keys ``"layers.{layer}.{symbol}"`` / ``"{stack}.layers.{layer}.{symbol}"``,
    ``trace[symbol]`` (indexed by ``layer`` when it is a list), and the same through attributes.
    Model-level symbols (E, P, Z, y_hat) are looked up at the top level first.

    Parameters
    ----------
    trace : Mapping or object
        ``Trace`` from ``model.trace(X, positions)`` or a plain dict.
    symbol : str
        One of E, P, Z, Q, K, V, S, A, U, T1, R, G, F, T2, H, y_hat.
    layer : int
    stack : str
        ``"encoder"`` or ``"decoder"`` for seq2seq traces.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    InputError
        If the symbol is not found (the message lists the keys present).
    """
    names = _ALIASES.get(symbol, (symbol,))
    for name in names:
        if name in ("E", "P", "Z", "y_hat", "yhat", "ŷ", "Y_hat"):
            val = _get(trace, name)
            if val is not None and not isinstance(val, (list, tuple)):
                return np.asarray(val)
        candidates = []
        for root in (_get(trace, stack), trace):
            layers = _get(root, "layers") if root is not None else None
            if layers is not None and len(layers) > layer:
                candidates.append(_get(layers[layer], name))
        for key in (f"layers.{layer}.{name}", f"{stack}.layers.{layer}.{name}", f"layer{layer}.{name}"):
            candidates.append(_get(trace, key))
        direct = _get(trace, name)
        if isinstance(direct, (list, tuple)):
            candidates.append(direct[layer] if len(direct) > layer else None)
        elif layer == 0:
            candidates.append(direct)
        if callable(getattr(trace, "get", None)) and not isinstance(trace, Mapping):
            try:
                candidates.append(trace.get(name, layer=layer))
            except TypeError:
                pass
        for c in candidates:
            if c is not None:
                return np.asarray(c)
    keys = sorted(trace.keys()) if isinstance(trace, Mapping) else [k for k in dir(trace) if not k.startswith("_")]
    raise InputError(f"trace has no {symbol!r} for layer {layer}; available: {keys}")


def _batched(trace):
    """Whether the trace holds a batch: E/Z are (batch, seq, d_model) rather than (seq, d_model)."""
    for sym in ("Z", "E", "H"):
        try:
            return trace_array(trace, sym).ndim == 3
        except InputError:
            continue
    return True


def _one(arr, batched, sample):
    return arr[sample] if batched else arr


def _trace_depth(trace, depth, sample=None):
    """Depth for a trace plot: the argument, else ``trace.positions``; one row when per-sequence."""
    d = depth if depth is not None else getattr(trace, "positions", None)
    if d is None:
        d = _get(trace, "positions")
    if d is None:
        raise InputError("no depth given and the trace has no positions; pass depth=(seq,) in metres")
    d = np.asarray(d, dtype=float)
    if sample is not None and d.ndim == 2:
        d = d[sample]
    return d


def _layer_count(trace):
    n = getattr(trace, "num_layers", None)
    if isinstance(n, (int, np.integer)):
        return int(n)
    count = 0
    while count < 1024:
        try:
            trace_array(trace, "A", layer=count)
        except InputError:
            break
        count += 1
    return count


def plot_trace_attention(trace, *, layers=None, sample=0, depth=None, vmin="auto", vmax="auto", depth_unit="m",
                         axes=None, symbol="A"):
    """Attention heat maps of one sequence, one panel per layer and head, from a trace.

    Parameters
    ----------
    trace : Trace or mapping
        ``layers.<i>.A`` (or ``.S``) of shape ``(batch, num_heads, seq, seq)`` (see :mod:`glassformer.trace`).
    symbol : {"A", "S"}, default "A"
        The weights A, or the scaled scores S (the colour bar then says "score").
    layers : sequence of int, optional
        Layers to draw (default: all).
    sample : int
        Batch element.
    depth : array-like of shape (seq,) or (batch, seq), optional
        Tick labels; default ``trace.positions``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    batched = _batched(trace)
    layers = list(range(_layer_count(trace))) if layers is None else list(layers)
    if symbol not in ("A", "S"):
        raise InputError(f"plot_trace_attention: symbol must be 'A' (weights) or 'S' (scores), got {symbol!r}")
    if not layers:
        raise InputError("plot_trace_attention: the trace holds no attention weights (layers.<i>.A)")
    mats = []
    for i in layers:
        A = _one(trace_array(trace, symbol, layer=i), batched, sample)
        mats.append(A if A.ndim == 3 else A[None])
    d = _trace_depth(trace, depth, sample)
    return plot_attention_heads(np.stack(mats), query_depths=d, layer_names=[f"layer {i}" for i in layers],
                                vmin=vmin, vmax=vmax, depth_unit=depth_unit, axes=axes,
                                quantity="weight" if symbol == "A" else "score")


def plot_trace_embeddings(trace, depth=None, *, sample=0, intervals=None, depth_unit="m", axes=None):
    """E, P and Z = E + P of one sequence side by side (array of three Axes), from a trace."""
    batched = _batched(trace)
    _, grid = _axes_grid(axes, 1, 3, (14.0, 5.5), "plot_trace_embeddings", sharey=True)
    d = _trace_depth(trace, depth, sample)
    E = _one(trace_array(trace, "E"), batched, sample)
    P = trace_array(trace, "P")
    P = P[sample] if P.ndim == 3 else P
    Z = _one(trace_array(trace, "Z"), batched, sample)
    plot_embeddings(d, E, intervals=intervals, depth_unit=depth_unit, ax=grid[0, 0])
    plot_positional_encoding(d, P, intervals=intervals, depth_unit=depth_unit, ax=grid[0, 1])
    plot_embeddings(d, Z, title="Combined embeddings Z = E + P", symbol="Z", intervals=intervals,
                    depth_unit=depth_unit, ax=grid[0, 2])
    return grid.ravel()


def _per_head_to_model(arr):
    """(num_heads, seq, head_dim) -> (seq, d_model); (seq, d_model) unchanged."""
    return arr.transpose(1, 0, 2).reshape(arr.shape[1], -1) if arr.ndim == 3 else arr


def plot_trace_qkv(trace, depth=None, *, layer=0, sample=0, intervals=None, depth_unit="m", axes=None):
    """Q, K, V of one sequence and layer (heads side by side), from a trace (array of three Axes)."""
    batched = _batched(trace)
    Q, K, V = (_per_head_to_model(_one(trace_array(trace, s, layer=layer), batched, sample)) for s in "QKV")
    return plot_qkv(_trace_depth(trace, depth, sample), Q, K, V, intervals=intervals, depth_unit=depth_unit,
                    axes=axes)


def _stack_sequences(trace, symbol, layer, batched, sequences):
    """(n_chosen, seq, d) for the chosen batch elements; per-head arrays merged to d_model."""
    arr = trace_array(trace, symbol, layer=layer)
    if not batched:
        return _per_head_to_model(arr)[None]
    if arr.ndim == 4:  # (batch, heads, seq, head_dim)
        arr = arr.transpose(0, 2, 1, 3).reshape(arr.shape[0], arr.shape[2], -1)
    bad = [s for s in sequences if not 0 <= s < arr.shape[0]]
    if bad:
        raise InputError(f"sequences {bad} out of range for a trace of {arr.shape[0]} sequences")
    return arr[list(sequences)]


def _chosen(trace, sequences, batched):
    seqs = list(sequences) if batched else [0]
    if batched:
        n = trace_array(trace, "Z").shape[0] if _get(trace, "Z") is not None else None
        if n is not None:
            seqs = [s for s in seqs if s < n] or [0]
    return seqs


def _chosen_depth(trace, depth, seqs):
    d = _trace_depth(trace, depth)
    return d[seqs] if d.ndim == 2 else d


def plot_trace_value_vs_output(trace, depth=None, *, layer=0, sequences=(0, 1, 2), depth_unit="m", axes=None):
    """V (heads merged to d_model) beside the attention output U for chosen sequences of a trace.

    Sequences beyond the batch size are skipped.  Returns an array of Axes, one per sequence.
    """
    batched = _batched(trace)
    seqs = _chosen(trace, sequences, batched)
    V = _stack_sequences(trace, "V", layer, batched, seqs)
    U = _stack_sequences(trace, "U", layer, batched, seqs)
    out = plot_value_vs_output(_chosen_depth(trace, depth, seqs), V, U, sequences=range(len(seqs)),
                               depth_unit=depth_unit, axes=axes)
    for ax, s in zip(out, seqs):
        ax.set_title(f"sequence {s}")
    return out


def plot_trace_stages(trace, depth=None, *, layer=0, sequences=(0, 1, 2), symbols=DEFAULT_STAGES,
                      depth_unit="m", axes=None):
    """The stages x sequences grid (Z, T1, R, F, T2, H of one layer) from a trace.

    For layers after the first, the row ``Z`` shows that layer's input, the previous layer's H.
    Sequences beyond the batch size are skipped.  Returns the Figure.
    """
    batched = _batched(trace)
    seqs = _chosen(trace, sequences, batched)
    stages = {}
    for sym in symbols:
        if sym == "Z" and layer > 0:  # a later block's input is the previous block's output
            stages[f"input = H of layer {layer - 1}"] = _stack_sequences(trace, "H", layer - 1, batched, seqs)
        elif sym == "Z":
            Z = trace_array(trace, "Z")
            stages["Z"] = Z[seqs] if batched else Z[None]
        else:
            stages[sym] = _stack_sequences(trace, sym, layer, batched, seqs)
    fig = plot_stages(stages, _chosen_depth(trace, depth, seqs), sequences=range(len(seqs)),
                      sequence_labels=[f"sequence {s}" for s in seqs], depth_unit=depth_unit, axes=axes)
    if layer:
        fig.suptitle(f"Representations through block {layer} (residuals, LayerNorm, feed-forward)")
    return fig
