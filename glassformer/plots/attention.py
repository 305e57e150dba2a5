"""Attention heat maps: one matrix, a grid of layers x heads, and cross-attention between
source and target tokens (queries on rows, keys on columns, the scale on the colour bar).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array
from ..errors import ShapeError
from ._common import _axes_grid, _one_axes

__all__ = ["plot_attention", "plot_attention_heads", "plot_cross_attention"]


def _ticks(n, max_ticks=12):
    """Every index up to ``max_ticks`` cells, else a regular stride (regular depth steps stay regular)."""
    step = 1 if n <= max_ticks else int(np.ceil(n / max_ticks))
    return np.arange(0, n, step)


def _tick_text(v):
    return f"{v:g}" if isinstance(v, (float, int, np.floating, np.integer)) else str(v)


def _scale_label(vmin, vmax):
    return f"attention weight ({vmin:.3g}–{vmax:.3g})"


def _heatmap(ax, W, *, row_labels, col_labels, vmin, vmax, cmap, annotate, colorbar, max_ticks, rotate=0):
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
            rgb = np.asarray(cm(norm(v)))[:3]
            lum = float(rgb @ np.array([0.299, 0.587, 0.114]))
            ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7,
                    color="black" if lum > 0.5 else "white")
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label=_scale_label(vmin, vmax))
    return im


def _weights(weights, where, ndims):
    W = as_float_array(weights, "weights", where)
    if W.ndim not in ndims:
        want = " or ".join(f"{d}-D" for d in ndims)
        raise ShapeError(f"{where}: weights must be {want}, got shape {W.shape}")
    return W


def plot_attention(weights, *, query_depths=None, key_depths=None, title=None, vmin=0.0, vmax=1.0,
                   cmap="viridis", annotate=None, colorbar=True, depth_unit="m", max_ticks=16, ax=None):
    """Attention-weight heat map: query depth (rows, downward) x key depth (columns).

    Parameters
    ----------
    weights : array-like of shape (L, S)
        Softmax weights A of one head and one sequence (rows sum to 1; a fully masked row is 0).
        The image array is exactly this matrix (``ax.images[0].get_array()``).
    query_depths : array-like of shape (L,), optional
        Row tick labels (depth in ``depth_unit``); indices when None.
    key_depths : array-like of shape (S,), optional
        Column tick labels; defaults to ``query_depths`` when L == S (self-attention).
    vmin, vmax : float, default 0 and 1
        Fixed colour scale, stated on the colour bar ("attention weight (0–1)"), so maps compare.
        ``vmax=None`` uses the largest weight (the chapter's choice, to see small contrasts).
    annotate : bool, optional
        Write each weight in its cell (default: when the map has at most 100 cells).

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
    vmin = float(np.min(W)) if vmin is None else float(vmin)
    vmax = float(np.max(W)) if vmax is None else float(vmax)
    ax = _one_axes(ax, (6.4, 5.4))
    _heatmap(ax, W, row_labels=query_depths, col_labels=key_depths, vmin=vmin, vmax=vmax, cmap=cmap,
             annotate=annotate, colorbar=colorbar, max_ticks=max_ticks)
    unit = f" ({depth_unit})" if query_depths is not None else " (index)"
    ax.set_ylabel(f"Query depth{unit}")
    ax.set_xlabel(f"Key depth{unit if key_depths is not None else ' (index)'}")
    ax.set_title(title or "Self-attention weights A")
    return ax


def plot_attention_heads(weights, *, query_depths=None, key_depths=None, layer_names=None, vmin=0.0, vmax=1.0,
                         cmap="viridis", annotate=None, depth_unit="m", axes=None):
    """One attention heat map per layer and head, with one shared colour bar.

    Parameters
    ----------
    weights : array-like of shape (L, S), (num_heads, L, S) or (num_layers, num_heads, L, S)
        One sequence's attention weights (select the batch element first).
    query_depths, key_depths, vmin, vmax, cmap, annotate, depth_unit
        As in :func:`plot_attention`; ``vmax=None`` uses the largest weight over all panels.
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
    vmin = float(W.min()) if vmin is None else float(vmin)
    vmax = float(W.max()) if vmax is None else float(vmax)
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
    fig.colorbar(im, ax=list(grid.flat), label=_scale_label(vmin, vmax), shrink=0.9)
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
