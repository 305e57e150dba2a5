"""Attention heat maps: one matrix, a grid of layers x heads, and cross-attention between
source and target tokens (queries on rows, keys on columns, the scale on the colour bar).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array
from ..errors import InputError, ShapeError
from ._common import _axes_grid, _one_axes

__all__ = ["plot_attention", "plot_attention_heads", "plot_cross_attention"]


def _ticks(n, max_ticks=12):
    """Every index up to ``max_ticks`` cells, else a regular stride (regular depth steps stay regular)."""
    step = 1 if n <= max_ticks else int(np.ceil(n / max_ticks))
    return np.arange(0, n, step)


def _tick_text(v):
    return f"{v:g}" if isinstance(v, (float, int, np.floating, np.integer)) else str(v)


#: What a map holds -> the colour bar's name: softmax weights A, or the scaled scores S before the softmax.
QUANTITIES = {"weight": "attention weight", "score": "score S = QKᵀ/√d_k"}


def _quantity(W, quantity, where):
    """``"weight"`` or ``"score"``: as given, else read from the matrix (weights lie in [0, 1] and each
    row sums to 1, or to 0 when fully masked; anything else, e.g. negative or -inf entries, is a score)."""
    if quantity is not None:
        if quantity not in QUANTITIES:
            raise InputError(f"{where}: quantity must be one of {sorted(QUANTITIES)} or None, got {quantity!r}")
        return quantity
    if not np.isfinite(W).all() or W.min() < 0.0 or W.max() > 1.0 + 1e-9:
        return "score"
    sums = W.sum(axis=-1)
    return "weight" if bool(np.all((np.abs(sums - 1.0) < 1e-6) | (np.abs(sums) < 1e-12))) else "score"


def _limits(W, vmin, vmax, quantity):
    """The colour scale: "auto" is 0-1 for weights and the finite range for scores; None the data's."""
    finite = W[np.isfinite(W)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    weights = quantity == "weight"
    vmin = (0.0 if weights else lo) if vmin == "auto" else (lo if vmin is None else float(vmin))
    vmax = (1.0 if weights else hi) if vmax == "auto" else (hi if vmax is None else float(vmax))
    return vmin, vmax


def _scale_label(vmin, vmax, quantity="weight"):
    return f"{QUANTITIES[quantity]} ({vmin:.3g}–{vmax:.3g})"


def _heatmap(ax, W, *, row_labels, col_labels, vmin, vmax, cmap, annotate, colorbar, max_ticks, rotate=0,
             quantity="weight"):
    """imshow of W (rows = queries, top row first) with tick labels and an optional colour bar."""
    L, S = W.shape
    im = ax.imshow(W, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest", origin="upper")
    for axis, n, labels, setter, lsetter in ((0, S, col_labels, ax.set_xticks, ax.set_xticklabels),
                                              (1, L, row_labels, ax.set_yticks, ax.set_yticklabels)):
        idx = _ticks(n, max_ticks)
        setter(idx)
        if labels is not None:
            text = [_tick_text(labels[i]) for i in idx]
            rot = rotate if axis == 0 else 0
            if axis == 0 and not rot and len(idx) > 4 and max(map(len, text)) > 4:
                rot = 90  # long depth labels would overlap side by side
            lsetter(text, **({"rotation": rot, "ha": "right" if rot and rot != 90 else "center"}
                             if axis == 0 else {}))
    if max(L, S) <= 24:  # white lines between cells, as in the chapter's 7 x 7 map
        ax.set_xticks(np.arange(-0.5, S, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, L, 1), minor=True)
        ax.grid(which="minor", color="white", lw=1.0)
        ax.tick_params(which="minor", length=0)
    if annotate is None:
        annotate = L * S <= 100
    if annotate:
        norm = im.norm
        cm = im.get_cmap()
        for (r, c), v in np.ndenumerate(W):
            if not np.isfinite(v):                     # a masked score: the cell stays blank
                continue
            rgb = np.asarray(cm(norm(v)))[:3]
            lum = float(rgb @ np.array([0.299, 0.587, 0.114]))
            ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7,
                    color="black" if lum > 0.5 else "white")
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label=_scale_label(vmin, vmax, quantity))
    return im


def _weights(weights, where, ndims):
    raw = np.asarray(weights)
    blocked = raw.dtype.kind == "f" and bool(np.isneginf(raw).any())
    # -inf is a masked score (blocked before the softmax): kept, and drawn as the scale's low end
    W = as_float_array(np.where(np.isneginf(raw), 0.0, raw) if blocked else raw, "weights", where)
    if blocked:
        W = np.where(np.isneginf(raw), -np.inf, W)
    if W.ndim not in ndims:
        want = " or ".join(f"{d}-D" for d in ndims)
        raise ShapeError(f"{where}: weights must be {want}, got shape {W.shape}")
    return W


def plot_attention(weights, *, query_depths=None, key_depths=None, title=None, vmin="auto", vmax="auto",
                   cmap="viridis", annotate=None, colorbar=True, depth_unit="m", max_ticks=16, ax=None,
                   quantity=None):
    """Attention heat map -- weights A or scores S -- query depth (rows, downward) x key depth (columns).

    Parameters
    ----------
    weights : array-like of shape (L, S)
        Softmax weights A of one head and one sequence (rows sum to 1; a fully masked row is 0), or
        the scaled scores S before the softmax (``-inf`` where masked).  The image array is exactly
        this matrix (``ax.images[0].get_array()``).
    query_depths : array-like of shape (L,), optional
        Row tick labels (depth in ``depth_unit``); indices when None.
    key_depths : array-like of shape (S,), optional
        Column tick labels; defaults to ``query_depths`` when L == S (self-attention).
    vmin, vmax : float, None or "auto" (default)
        Colour scale, stated on the colour bar ("attention weight (0–1)").  "auto": 0 and 1 for
        weights, so maps compare, and the finite range for scores; None: the matrix's smallest or
        largest value (``vmax=None``: the chapter's choice for weights, to see small contrasts).
    annotate : bool, optional
        Write each value in its cell (default: when the map has at most 100 cells).
    quantity : {"weight", "score"}, optional
        What the matrix holds, named on the colour bar ("attention weight" or "score S = QKᵀ/√d_k")
        and in the default title; None reads it from the matrix (values in [0, 1] with rows summing
        to 1 are weights).

    Returns
    -------
    matplotlib.axes.Axes
    """
    where = "plot_attention"
    W = _weights(weights, where, (2,))
    L, S = W.shape
    if key_depths is None and query_depths is not None and L == S:
        key_depths = query_depths
    for name, labels, n in (("query_depths", query_depths, L), ("key_depths", key_depths, S)):
        if labels is not None and len(labels) != n:
            raise ShapeError(f"{where}: {name} must have length {n} for weights of shape {W.shape}, "
                             f"got {len(labels)}")
    kind = _quantity(W, quantity, where)
    vmin, vmax = _limits(W, vmin, vmax, kind)
    ax = _one_axes(ax, (6.4, 5.4))
    _heatmap(ax, W, row_labels=query_depths, col_labels=key_depths, vmin=vmin, vmax=vmax, cmap=cmap,
             annotate=annotate, colorbar=colorbar, max_ticks=max_ticks, quantity=kind)
    unit = f" ({depth_unit})" if query_depths is not None else " (index)"
    ax.set_ylabel(f"Query depth{unit}")
    ax.set_xlabel(f"Key depth{unit if key_depths is not None else ' (index)'}")
    ax.set_title(title or ("Self-attention weights A" if kind == "weight" else "Scaled scores S"))
    return ax


def plot_attention_heads(weights, *, query_depths=None, key_depths=None, layer_names=None, vmin="auto", vmax="auto",
                         cmap="viridis", annotate=None, depth_unit="m", axes=None, quantity=None):
    """One attention heat map per layer and head, with one shared colour bar.

    Parameters
    ----------
    weights : array-like of shape (L, S), (num_heads, L, S) or (num_layers, num_heads, L, S)
        One sequence's attention weights (select the batch element first).
    query_depths, key_depths, vmin, vmax, cmap, annotate, depth_unit, quantity
        As in :func:`plot_attention` (weights or scores); ``vmax=None`` uses the largest value over
        all panels.
    layer_names : sequence of str, optional
        Row titles (default ``"layer 0"``, ...).
    axes : array of Axes of shape (num_layers, num_heads), optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    where = "plot_attention_heads"
    W = _weights(weights, where, (2, 3, 4))
    W = W.reshape((1,) * (4 - W.ndim) + W.shape)
    n_layers, n_heads, L, S = W.shape
    if key_depths is None and query_depths is not None and L == S:
        key_depths = query_depths
    kind = _quantity(W, quantity, where)
    vmin, vmax = _limits(W, vmin, vmax, kind)
    fig, grid = _axes_grid(axes, n_layers, n_heads, (3.4 * n_heads + 1.3, 3.1 * n_layers + 0.5), where)
    names = list(layer_names) if layer_names is not None else [f"layer {i}" for i in range(n_layers)]
    im = None
    for i in range(n_layers):
        for h in range(n_heads):
            ax = grid[i, h]
            im = _heatmap(ax, W[i, h], row_labels=query_depths, col_labels=key_depths, vmin=vmin, vmax=vmax,
                          cmap=cmap, annotate=annotate, colorbar=False, max_ticks=8)
            ax.set_title(f"{names[i]}, head {h}", fontsize=10)
            unit = f" ({depth_unit})" if query_depths is not None else " (index)"
            if h == 0:
                ax.set_ylabel(f"Query depth{unit}")
            if i == n_layers - 1:
                ax.set_xlabel(f"Key depth{unit}")
    fig.colorbar(im, ax=list(grid.flat), label=_scale_label(vmin, vmax, kind), shrink=0.9)
    return fig


def plot_cross_attention(weights, source_tokens, target_tokens, *, title=None, vmin=0.0, vmax=1.0,
                         cmap="viridis", annotate=None, ax=None):
    """Cross-attention of a seq2seq decoder: target tokens (rows) x source tokens (columns).

    Parameters
    ----------
    weights : array-like of shape (T, S)
        Weights of one head for one sentence pair: row t is where target token t looked.
    source_tokens : sequence of str, length S
    target_tokens : sequence of str, length T

    Returns
    -------
    matplotlib.axes.Axes
    """
    where = "plot_cross_attention"
    W = _weights(weights, where, (2,))
    T, S = W.shape
    if len(source_tokens) != S or len(target_tokens) != T:
        raise ShapeError(f"{where}: weights of shape {W.shape} need {T} target and {S} source tokens, "
                         f"got {len(target_tokens)} and {len(source_tokens)}")
    vmin = float(W.min()) if vmin is None else float(vmin)
    vmax = float(W.max()) if vmax is None else float(vmax)
    ax = _one_axes(ax, (0.42 * S + 2.8, 0.36 * T + 1.8))
    _heatmap(ax, W, row_labels=list(target_tokens), col_labels=list(source_tokens), vmin=vmin, vmax=vmax,
             cmap=cmap, annotate=annotate, colorbar=True, max_ticks=80, rotate=60)
    ax.set_xlabel("Source token (key)")
    ax.set_ylabel("Target token (query)")
    ax.set_title(title or "Cross-attention weights")
    return ax
