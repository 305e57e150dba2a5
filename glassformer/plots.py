"""Figures of seed 000, as library functions over plain arrays (and a trace).

Every function draws into the ``ax=`` / ``axes=`` it is given (or creates a figure
when that is None), returns the Axes, an array of Axes, or the Figure, and never
calls ``show`` or saves; :func:`save_figure` writes a PNG atomically.

Conventions (reference/aesthetics.md, section 2.7):

* depth is on the y-axis, increasing downward, on every track and heat map;
* labels carry units: depth (m), porosity (fraction, v/v, or %), permeability (mD)
  or log10 permeability (log10 mD);
* attention heat maps put query depths on the rows and key depths on the columns,
  the image array is exactly the weights, and the colour bar states the scale;
* no global ``rcParams`` are changed.

Figures are created through ``matplotlib.pyplot`` only when the caller has already
imported it (so Jupyter shows them inline); otherwise they are standalone
:class:`matplotlib.figure.Figure` objects that need no display (CLI, demos, tests).

The plain functions take arrays; the ``plot_trace_*`` wrappers take a model's trace
(a mapping of the seed's symbols E, P, Z, Q, K, V, S, A, U, T1, R, G, F, T2, H,
y_hat), pick one layer and one sample, and call the plain functions.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ._validation import as_float_array
from .errors import InputError, ShapeError
from .io import atomic_open

__all__ = [
    "STAGE_LABELS",
    "plot_ablation",
    "plot_attention",
    "plot_attention_heads",
    "plot_comparison",
    "plot_cross_attention",
    "plot_crossplot",
    "plot_embeddings",
    "plot_log_tracks",
    "plot_loss",
    "plot_positional_encoding",
    "plot_prediction",
    "plot_prediction_panels",
    "plot_qkv",
    "plot_stages",
    "plot_trace_attention",
    "plot_trace_embeddings",
    "plot_trace_qkv",
    "plot_trace_stages",
    "plot_trace_value_vs_output",
    "plot_value_vs_output",
    "save_figure",
    "trace_array",
]

#: Row labels of the representation grid (seed 000, "residual connections, layer norm").
STAGE_LABELS = {
    "E": r"$E$ (input embedding)",
    "P": r"$P$ (positional encoding)",
    "Z": r"$Z = E + P$",
    "U": r"$U$ (attention output)",
    "T1": r"$T_1 = Z + U$",
    "R": r"$R = \mathrm{LN}(T_1)$",
    "G": r"$G = \mathrm{ReLU}(R W_1 + b_1)$",
    "F": r"$F = \mathrm{FFN}(R)$",
    "T2": r"$T_2 = R + F$",
    "H": r"$H = \mathrm{LN}(T_2)$",
}

DEFAULT_STAGES = ("Z", "T1", "R", "F", "T2", "H")
MAX_LINE_COMPONENTS = 8  # more lines than this is unreadable: draw the first 8 (or an image)
MAX_MARKERS = 60  # above this many samples draw lines only
_INTERVAL_COLOURS = {"train": "tab:blue", "training": "tab:blue", "val": "tab:green",
                     "validation": "tab:green", "forecast": "tab:orange", "test": "tab:red"}


# --------------------------------------------------------------------------- helpers
def _new_figure(figsize):
    """A constrained-layout figure: pyplot-managed if the caller uses pyplot, else standalone."""
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt

        return plt.figure(figsize=figsize, layout="constrained")
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def _one_axes(ax, figsize):
    if ax is not None:
        return ax
    return _new_figure(figsize).add_subplot()


def _axes_grid(axes, nrows, ncols, figsize, where, **subplot_kw):
    """Return (figure, 2-D array of Axes), creating them when ``axes`` is None."""
    if axes is None:
        fig = _new_figure(figsize)
        grid = fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
        return fig, grid
    grid = np.asarray(axes, dtype=object)
    if grid.size != nrows * ncols:
        raise ShapeError(f"{where}: axes must hold {nrows}x{ncols} = {nrows * ncols} Axes, got {grid.size}")
    return grid.flat[0].figure, grid.reshape(nrows, ncols)


def _vector(x, name, where, n=None):
    arr = as_float_array(x, name, where, allow_nan=True)
    arr = np.squeeze(arr) if arr.ndim > 1 and arr.size == max(arr.shape) else arr
    if arr.ndim != 1:
        raise ShapeError(f"{where}: {name} must be 1-D, got shape {np.shape(x)}")
    if n is not None and arr.shape[0] != n:
        raise ShapeError(f"{where}: {name} must have length {n} (one value per depth), got shape {arr.shape}")
    return arr


def _matrix(x, name, where, n):
    """A (n, d) array (a (n,) vector becomes (n, 1))."""
    arr = as_float_array(x, name, where, allow_nan=True)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ShapeError(f"{where}: {name} must have shape (seq={n}, d_model), got shape {arr.shape}")
    return arr


def _depth_label(unit="m"):
    return f"Depth ({unit})"


def _invert_depth(ax, *depths):
    """Depth increases downward: the larger depth at the bottom, with a small margin."""
    vals = np.concatenate([np.ravel(d) for d in depths])
    vals = vals[np.isfinite(vals)]
    lo, hi = float(vals.min()), float(vals.max())
    pad = 0.03 * (hi - lo) if hi > lo else 0.5
    ax.set_ylim(hi + pad, lo - pad)


def _porosity_label(unit, prefix="Porosity"):
    u = str(unit).strip().lower()
    if u in ("fraction", "frac", "v/v", "fraction (v/v)"):
        return f"{prefix} (fraction, v/v)"
    if u in ("%", "percent", "pu", "p.u."):
        return f"{prefix} (%)"
    raise InputError(f"porosity_unit must be 'fraction' or '%', got {unit!r}")


def _guess_unit(name, porosity_unit):
    low = name.lower()
    if "perm" in low or low in ("k", "kh", "klogh", "ckhl", "ckhg", "klog"):
        return "log10 mD" if "log10" in low or low.startswith("log") else "mD"
    if "poro" in low or low in ("phi", "phif", "por", "cpor", "nphi", "phie", "phit"):
        return "%" if str(porosity_unit).strip() in ("%", "percent") else "fraction, v/v"
    return None


def _pick_components(d, components):
    if components is None:
        return list(range(min(d, MAX_LINE_COMPONENTS)))
    comps = [int(c) for c in np.atleast_1d(components)]
    bad = [c for c in comps if not 0 <= c < d]
    if bad:
        raise InputError(f"components {bad} out of range for d_model={d}")
    return comps


def _style(n):
    """Line style: markers for short sequences (the seed's 7- and 14-depth examples), thin lines for logs."""
    return {"marker": "o", "markersize": 3.5} if n <= MAX_MARKERS else {"lw": 0.8}


def _shade_intervals(ax, intervals, *, text=True):
    """Shade named depth intervals ``{label: (top, base)}`` and write the label at the top."""
    if not intervals:
        return
    for i, (label, span) in enumerate(intervals.items()):
        try:
            top, base = (float(v) for v in span)
        except (TypeError, ValueError):
            raise InputError(f"intervals[{label!r}] must be (top, base) depths, got {span!r}") from None
        top, base = min(top, base), max(top, base)
        colour = _INTERVAL_COLOURS.get(str(label).lower(), f"C{(i + 3) % 10}")
        ax.axhspan(top, base, color=colour, alpha=0.10, lw=0, zorder=0)
        ax.axhline(top, color=colour, lw=0.8, ls=":", zorder=0.5)
        if text:
            ax.text(0.98, top, f" {label} ", transform=ax.get_yaxis_transform(), ha="right", va="top",
                    fontsize=8, color=colour, zorder=5,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7, "pad": 1})


def _boundary(ax, boundary, labels=("train", "forecast")):
    if boundary is None:
        return
    b = float(boundary)
    ax.axhline(b, color="black", lw=1.0, zorder=4)
    tr = ax.get_yaxis_transform()
    ax.annotate(labels[0], (0.98, b), xycoords=tr, xytext=(0, 3), textcoords="offset points",
                ha="right", va="bottom", fontsize=8)
    ax.annotate(labels[1], (0.98, b), xycoords=tr, xytext=(0, -3), textcoords="offset points",
                ha="right", va="top", fontsize=8)


def _component_lines(ax, depth, M, *, prefix, components, colours=None, **kw):
    n, d = M.shape
    comps = _pick_components(d, components)
    style = {"lw": 1.5, **_style(n), **kw}
    for j, c in enumerate(comps):
        colour = colours[j] if colours is not None else f"C{j % 10}"
        ax.plot(M[:, c], depth, color=colour, label=f"{prefix}[{c}]", **style)
    return comps


def _component_image(ax, depth, M, *, label):
    """Depth x component heat map (pcolormesh, so irregular depth steps are honoured)."""
    n, d = M.shape
    if n > 1:
        mid = 0.5 * (depth[1:] + depth[:-1])
        edges = np.concatenate([[depth[0] - (mid[0] - depth[0])], mid, [depth[-1] + (depth[-1] - mid[-1])]])
    else:
        edges = np.array([depth[0] - 0.5, depth[0] + 0.5])
    lim = float(np.nanmax(np.abs(M))) or 1.0
    mesh = ax.pcolormesh(np.arange(d + 1) - 0.5, edges, M, cmap="RdBu_r", vmin=-lim, vmax=lim, shading="flat")
    ax.figure.colorbar(mesh, ax=ax, label=label)
    ax.set_xlabel("Component index")
    return mesh


def _figure_legend(fig, handles, labels, ncol):
    if not handles:
        return None
    engine = fig.get_layout_engine()
    if engine is not None and type(engine).__name__ == "ConstrainedLayoutEngine":
        return fig.legend(handles, labels, loc="outside lower center", ncol=ncol, frameon=False, fontsize=8)
    return fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False, fontsize=8)


def _vs_depth(ax, depth, M, *, title, xlabel, prefix, intervals, kind, components, depth_unit):
    n, d = M.shape
    if kind not in ("auto", "lines", "image"):
        raise InputError(f"kind must be 'auto', 'lines' or 'image', got {kind!r}")
    if kind == "image" or (kind == "auto" and d > MAX_LINE_COMPONENTS and components is None):
        _component_image(ax, depth, M, label=xlabel)
    else:
        comps = _component_lines(ax, depth, M, prefix=prefix, components=components)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2 if len(comps) > 4 else 1, loc="best")
        if len(comps) < d:
            title = f"{title} (components {comps[0]}-{comps[-1]} of {d})"
    _shade_intervals(ax, intervals)
    ax.set_ylabel(_depth_label(depth_unit))
    ax.set_title(title)
    _invert_depth(ax, depth)
    return ax


# ------------------------------------------------------------------------ data
def plot_log_tracks(depth, curves, *, units=None, intervals=None, porosity_unit="fraction", log_x=None,
                    depth_unit="m", axes=None):
    """Log tracks: one panel per curve against depth (depth increasing downward).

    Parameters
    ----------
    depth : array-like of shape (n,)
        Depth of each sample, in ``depth_unit`` (metres by default).
    curves : dict of str -> array-like of shape (n,)
        Curves to draw, one track each, in order (e.g. ``{"porosity": phi, "permeability": k}``).
        NaN marks a gap (the line breaks there).
    units : dict of str -> str, optional
        Unit of each curve for the x label.  Missing entries are guessed from the name:
        porosity-like names get ``porosity_unit``, permeability-like names get mD.
    intervals : dict of str -> (top, base), optional
        Depth intervals to shade and label on every track, e.g. ``{"train": (1, 7), "forecast": (8, 14)}``.
    porosity_unit : {'fraction', '%'}
        Unit assumed for porosity-like curves whose unit is not given.
    log_x : iterable of str, optional
        Curves to draw on a logarithmic x-axis.  Default: curves in mD whose positive values span
        more than two decades.
    axes : sequence of Axes, optional
        One Axes per curve; created (sharing the depth axis) when None.

    Returns
    -------
    numpy.ndarray of Axes, shape (len(curves),)

    Raises
    ------
    InputError, ShapeError
        Empty ``curves``, or a curve whose length differs from ``depth``.
    """
    where = "plot_log_tracks"
    if not curves:
        raise InputError(f"{where}: curves is empty; pass e.g. {{'porosity': phi}}")
    depth = _vector(depth, "depth", where)
    data = {name: _vector(v, f"curves[{name!r}]", where, len(depth)) for name, v in curves.items()}
    units = dict(units or {})
    _, grid = _axes_grid(axes, 1, len(data), (2.6 * len(data) + 0.8, 6.5), where, sharey=True)
    style = _style(len(depth))
    for i, (ax, (name, values)) in enumerate(zip(grid.flat, data.items())):
        unit = units.get(name) or _guess_unit(name, porosity_unit)
        ax.plot(values, depth, **{"color": f"C{i}", "lw": 1.2, **style})
        ax.set_xlabel(f"{name} ({unit})" if unit else name)
        ax.xaxis.set_label_position("top")
        ax.xaxis.tick_top()
        pos = values[np.isfinite(values) & (values > 0)]
        auto_log = unit == "mD" and pos.size > 1 and pos.max() / pos.min() > 100.0
        if (log_x is None and auto_log) or (log_x is not None and name in log_x):
            ax.set_xscale("log")
        ax.grid(alpha=0.3, which="both")
        _shade_intervals(ax, intervals, text=(i == len(data) - 1))
        if i == 0:
            ax.set_ylabel(_depth_label(depth_unit))
        _invert_depth(ax, depth)  # every panel: caller-given axes need not share y
    return grid.ravel()


def plot_crossplot(porosity, permeability, *, log_perm=True, normalised=False, labels=None, depth=None,
                   porosity_unit="fraction", depth_unit="m", title=None, ax=None):
    """Porosity-permeability cross-plot (seed 000, the data figure's right-hand panels).

    Parameters
    ----------
    porosity, permeability : array-like of shape (n,)
        Porosity (``porosity_unit``) and permeability (mD); NaN pairs are not drawn.
        With ``normalised=True`` both are already scaled to [0, 1] (e.g. by the scaler fitted
        on the training interval): only the labels and title change.
    log_perm : bool, default True
        Logarithmic permeability axis (raw values only).  Values <= 0 mD cannot be shown on it;
        their count is written on the plot.
    labels : sequence of str or float, optional
        Text beside each point (the seed annotates depths).  Meant for a few dozen points.
    depth : array-like of shape (n,), optional
        Colour the points by depth, with a colour bar in ``depth_unit``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    where = "plot_crossplot"
    phi = _vector(porosity, "porosity", where)
    k = _vector(permeability, "permeability", where, len(phi))
    ax = _one_axes(ax, (6.0, 4.8))
    colour_kw = {"color": "tab:red"}
    if depth is not None:
        d = _vector(depth, "depth", where, len(phi))
        colour_kw = {"c": d, "cmap": "viridis_r"}
    few = len(phi) <= 500
    sc = ax.scatter(phi, k, s=28 if few else 6, edgecolor="black" if few else "none", linewidth=0.4, zorder=3,
                    alpha=1.0 if few else 0.6, **colour_kw)
    if depth is not None:
        cb = ax.figure.colorbar(sc, ax=ax, label=_depth_label(depth_unit))
        cb.ax.invert_yaxis()  # deeper at the bottom, as on a track
    if labels is not None:
        if len(labels) != len(phi):
            raise ShapeError(f"{where}: labels must have one entry per point ({len(phi)}), got {len(labels)}")
        for x, y, text in zip(phi, k, labels):
            if np.isfinite(x) and np.isfinite(y):
                ax.annotate(f"{text:g}" if isinstance(text, (float, np.floating)) else str(text), (x, y),
                            xytext=(4, 4), textcoords="offset points", fontsize=7, color="0.3")
    if normalised:
        ax.set_xlabel("Normalised porosity (0-1)")
        ax.set_ylabel("Normalised permeability (0-1)")
        ax.set_title(title or "Porosity-permeability cross-plot (normalised)")
    else:
        ax.set_xlabel(_porosity_label(porosity_unit))
        if log_perm:
            ax.set_yscale("log")
            ax.set_ylabel("Permeability (mD, log scale)")
            hidden = int(np.sum(np.isfinite(k) & (k <= 0)))
            if hidden:
                ax.text(0.02, 0.02, f"{hidden} point(s) <= 0 mD not shown", transform=ax.transAxes,
                        fontsize=8, color="0.3")
        else:
            ax.set_ylabel("Permeability (mD)")
        ax.set_title(title or "Porosity-permeability cross-plot")
    ax.grid(alpha=0.3)
    return ax


# ------------------------------------------------------------------ embeddings
def plot_positional_encoding(depth, P, *, intervals=None, kind="auto", components=None, depth_unit="m", ax=None):
    """Positional encodings P against depth (seed 000, "check positional embeddings").

    Parameters
    ----------
    depth : array-like of shape (seq,)
        The positions encoded (depth in ``depth_unit``, or the sample index).
    P : array-like of shape (seq, d_model)
    intervals : dict of str -> (top, base), optional
        Training / forecast intervals to shade, to show that P keeps varying past the training depths.
    kind : {'auto', 'lines', 'image'}
        One line per component, or a depth x component heat map; 'auto' uses lines up to 8 components.
    components : sequence of int, optional
        Components to draw as lines (default: the first 8).

    Returns
    -------
    matplotlib.axes.Axes
    """
    depth = _vector(depth, "depth", "plot_positional_encoding")
    P = _matrix(P, "P", "plot_positional_encoding", len(depth))
    ax = _one_axes(ax, (5.5, 5.5))
    return _vs_depth(ax, depth, P, title="Positional encoding P", xlabel="Encoding value (dimensionless)",
                     prefix="P", intervals=intervals, kind=kind, components=components, depth_unit=depth_unit)


def plot_embeddings(depth, E, *, title="Learned input embeddings E", symbol=None, intervals=None, kind="auto",
                    components=None, depth_unit="m", ax=None):
    """Embedding components against depth: learned input embeddings E or combined Z = E + P.

    Parameters
    ----------
    depth : array-like of shape (seq,)
    E : array-like of shape (seq, d_model)
    title : str
        E.g. ``"Combined embeddings Z = E + P"`` for Z.
    symbol : str, optional
        Legend prefix (default: 'E', or 'Z' when the title mentions Z).
    intervals, kind, components, depth_unit
        As in :func:`plot_positional_encoding`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    depth = _vector(depth, "depth", "plot_embeddings")
    E = _matrix(E, "E", "plot_embeddings", len(depth))
    ax = _one_axes(ax, (5.5, 5.5))
    prefix = symbol or ("Z" if title.lstrip().lower().startswith("combined") or " Z" in title else "E")
    return _vs_depth(ax, depth, E, title=title, xlabel="Embedding value (dimensionless)", prefix=prefix,
                     intervals=intervals, kind=kind, components=components, depth_unit=depth_unit)


def _merge_heads(x, name, where, n):
    """(num_heads, seq, head_dim) -> (seq, num_heads * head_dim); (seq, d) passes through."""
    arr = as_float_array(x, name, where, allow_nan=True)
    if arr.ndim == 3:
        arr = arr.transpose(1, 0, 2).reshape(arr.shape[1], -1)
    return _matrix(arr, name, where, n)


def plot_qkv(depth, Q, K, V, *, intervals=None, components=None, depth_unit="m", axes=None):
    """Query, key and value projections against depth, one panel each (seed 000).

    Parameters
    ----------
    depth : array-like of shape (seq,)
    Q, K, V : array-like of shape (seq, d_model) or (num_heads, seq, head_dim)
        Per-head arrays are laid side by side (head 0 components first), as before the head split.
    intervals, components, depth_unit
        As in :func:`plot_positional_encoding`.
    axes : sequence of 3 Axes, optional

    Returns
    -------
    numpy.ndarray of 3 Axes (Q, K, V)
    """
    where = "plot_qkv"
    depth = _vector(depth, "depth", where)
    mats = [_merge_heads(m, s, where, len(depth)) for m, s in ((Q, "Q"), (K, "K"), (V, "V"))]
    _, grid = _axes_grid(axes, 1, 3, (12.0, 5.5), where, sharey=True)
    names = ("Query Q", "Key K", "Value V")
    for i, (ax, M, name) in enumerate(zip(grid.flat, mats, names)):
        comps = _component_lines(ax, depth, M, prefix=name[-1], components=components)
        title = name if len(comps) == M.shape[1] else f"{name} (components {comps[0]}-{comps[-1]} of {M.shape[1]})"
        ax.set_title(title)
        ax.set_xlabel("Projection value (dimensionless)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2 if len(comps) > 4 else 1)
        _shade_intervals(ax, intervals, text=(i == 2))
        _invert_depth(ax, depth)
    grid.flat[0].set_ylabel(_depth_label(depth_unit))
    return grid.ravel()


# ------------------------------------------------------------------- attention
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
    if max(L, S) <= 24:  # white lines between cells, as in the seed's 7 x 7 map
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
        ``vmax=None`` uses the largest weight (the seed's choice, to see small contrasts).
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


# ------------------------------------------------------- inside the block
def _sequences(arr, name, where, sequences):
    """(L, d) -> (1, L, d) with ids [0]; (n, L, d) -> the chosen sequences."""
    arr = as_float_array(arr, name, where, allow_nan=True)
    if arr.ndim == 2:
        return arr[None], [0]
    if arr.ndim != 3:
        raise ShapeError(f"{where}: {name} must be (seq, d_model) or (n_seq, seq, d_model), got shape {arr.shape}")
    ids = [int(s) for s in sequences]
    bad = [s for s in ids if not 0 <= s < arr.shape[0]]
    if bad:
        raise InputError(f"{where}: sequences {bad} out of range for {name} with {arr.shape[0]} sequences")
    return arr[ids], ids


def _depth_rows(depth, where, n_seq_total, ids, L):
    """Depth (L,) shared by all sequences, or (n_seq, L) per sequence -> list of (L,) per chosen id."""
    d = as_float_array(depth, "depth", where, allow_nan=True)
    if d.ndim == 1:
        if d.shape[0] != L:
            raise ShapeError(f"{where}: depth must have length seq={L}, got shape {d.shape}")
        return [d] * len(ids), True
    if d.ndim == 2 and d.shape[1] == L and d.shape[0] == n_seq_total:
        return [d[i] for i in ids], False
    raise ShapeError(f"{where}: depth must be (seq={L},) or (n_seq={n_seq_total}, seq={L}), got shape {d.shape}")


def plot_value_vs_output(depth, V, U, *, sequences=(0, 1, 2), components=None, depth_unit="m", axes=None):
    """Value vectors V (dashed, circles) beside attention outputs U = A V (solid, squares).

    Parameters
    ----------
    depth : array-like of shape (seq,) or (n_seq, seq)
    V, U : array-like of shape (seq, d_model) or (n_seq, seq, d_model)
        U row t is the attention-weighted mix of all value vectors; where U differs from V,
        attention moved information across depth.  Per-head V must be merged first
        (``(num_heads, seq, head_dim) -> (seq, d_model)``, see :func:`plot_trace_value_vs_output`).
    sequences : sequence of int
        Which sequences to draw (one panel each) when V and U are 3-D.

    Returns
    -------
    numpy.ndarray of Axes, one per sequence
    """
    where = "plot_value_vs_output"
    V3 = as_float_array(V, "V", where, allow_nan=True)
    U3 = as_float_array(U, "U", where, allow_nan=True)
    if V3.shape != U3.shape:
        raise ShapeError(f"{where}: V and U must have the same shape, got {V3.shape} and {U3.shape}")
    n_total = V3.shape[0] if V3.ndim == 3 else 1
    Vs, ids = _sequences(V3, "V", where, sequences)
    Us, _ = _sequences(U3, "U", where, sequences)
    depths, shared = _depth_rows(depth, where, n_total, ids, Vs.shape[1])
    fig, grid = _axes_grid(axes, 1, len(ids), (4.0 * len(ids) + 0.6, 5.8), where, sharey=shared)
    comps = _pick_components(Vs.shape[2], components)
    marked = "marker" in _style(Vs.shape[1])
    for k, ax in enumerate(grid.flat):
        for j, c in enumerate(comps):
            ax.plot(Vs[k, :, c], depths[k], ls="--", color=f"C{j % 10}", alpha=0.75, lw=1.2,
                    **({"marker": "o", "markersize": 3.5} if marked else {}))
            ax.plot(Us[k, :, c], depths[k], ls="-", color=f"C{j % 10}", lw=1.6,
                    **({"marker": "s", "markersize": 3.5} if marked else {}))
        ax.set_title(f"sequence {ids[k]}")
        ax.set_xlabel("Component value (dimensionless)")
        ax.grid(alpha=0.3)
        _invert_depth(ax, depths[k])
        if k == 0:
            ax.set_ylabel(_depth_label(depth_unit))
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color="black", ls="--", marker="o", label="V: value vectors"),
               Line2D([], [], color="black", ls="-", marker="s", label="U: attention output")]
    handles += [Line2D([], [], color=f"C{j % 10}", lw=3, label=f"component {c}") for j, c in enumerate(comps)]
    _figure_legend(fig, handles, [h.get_label() for h in handles], ncol=min(len(handles), 6))
    return grid.ravel()


def plot_stages(stages, depth, *, sequences=(0, 1, 2), components=None, sequence_labels=None, depth_unit="m",
                axes=None):
    """The seed's grid of representations through the block: rows = stages, columns = sequences.

    Parameters
    ----------
    stages : dict of str -> array-like of shape (n_seq, seq, d_model) or (seq, d_model)
        Usually ``Z, T1, R, F, T2, H`` in that order (rows follow the dict's order): the input,
        the first residual sum, LayerNorm 1, the feed-forward output, the second residual sum,
        LayerNorm 2.  Known symbols get their equation as the row label (:data:`STAGE_LABELS`).
    depth : array-like of shape (seq,) or (n_seq, seq)
    sequences : sequence of int
        Columns (sequence indices) when the stages are 3-D.
    components : sequence of int, optional
        Components drawn (default: first 8).
    sequence_labels : sequence of str, optional
        Column titles (default ``"sequence <i>"``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    where = "plot_stages"
    if not stages:
        raise InputError(f"{where}: stages is empty; pass e.g. {{'Z': Z, 'T1': T1, ...}}")
    arrays, ids, n_total = {}, None, None
    for sym, arr in stages.items():
        a = as_float_array(arr, f"stages[{sym!r}]", where, allow_nan=True)
        n_total = a.shape[0] if a.ndim == 3 else 1
        arrays[sym], ids_k = _sequences(a, f"stages[{sym!r}]", where, sequences)
        if ids is None:
            ids, shape = ids_k, arrays[sym].shape
        elif arrays[sym].shape[:2] != shape[:2]:
            raise ShapeError(f"{where}: stages[{sym!r}] has shape {np.shape(arr)}, inconsistent with the "
                             f"first stage's {shape}")
    L = shape[1]
    depths, shared = _depth_rows(depth, where, n_total, ids, L)
    nrows, ncols = len(arrays), len(ids)
    fig, grid = _axes_grid(axes, nrows, ncols, (3.9 * ncols + 1.4, 2.5 * nrows + 1.0), where,
                           sharey=True if shared else "col", sharex="row")
    handles = {}
    for r, (sym, A) in enumerate(arrays.items()):
        comps = _pick_components(A.shape[2], components)
        for c in range(ncols):
            ax = grid[r, c]
            for j, comp in enumerate(comps):
                (line,) = ax.plot(A[c, :, comp], depths[c], **{"color": f"C{j % 10}", "lw": 1.4, **_style(L)})
                handles.setdefault(f"component {comp}", line)
            ax.axvline(0.0, color="0.5", lw=0.7, alpha=0.6)
            ax.grid(alpha=0.3)
            _invert_depth(ax, depths[c])
            if r == 0:
                ax.set_title(sequence_labels[c] if sequence_labels is not None else f"sequence {ids[c]}")
            if c == 0:
                ax.set_ylabel(f"{STAGE_LABELS.get(sym, sym)}\n{_depth_label(depth_unit)}", fontsize=9)
            if r == nrows - 1:
                ax.set_xlabel("Component value (dimensionless)")
    fig.suptitle("Representations through the block (residuals, LayerNorm, feed-forward)")
    _figure_legend(fig, list(handles.values()), list(handles.keys()), ncol=min(len(handles), 8))
    return fig


# ------------------------------------------------------------- training & results
def plot_loss(history, *, log=True, loss_label="Loss (MSE, scaled units)", title=None, ax=None):
    """Training (and validation) loss per epoch.

    Parameters
    ----------
    history : dict
        ``"train"``: sequence of per-epoch losses; optional ``"val"`` (one per epoch, or per entry of
        ``"val_epochs"`` when validation ran every few epochs).  NaN entries leave gaps.
    log : bool, default True
        Logarithmic loss axis (falls back to linear if some loss is <= 0).

    Returns
    -------
    matplotlib.axes.Axes
    """
    where = "plot_loss"
    if not isinstance(history, Mapping) or "train" not in history:
        raise InputError(f"{where}: history must be a dict with a 'train' list, got {type(history).__name__}"
                         + (f" with keys {sorted(history)}" if isinstance(history, Mapping) else ""))
    train = _vector(history["train"], "history['train']", where)
    ax = _one_axes(ax, (7.0, 4.2))
    epochs = np.arange(1, len(train) + 1)
    ax.plot(epochs, train, color="tab:red", lw=1.8, label="train")
    everything = [train]
    val = history.get("val", history.get("validation"))
    if val is not None and len(val):
        v = _vector(val, "history['val']", where)
        ve = np.asarray(history.get("val_epochs", np.arange(1, len(v) + 1)), dtype=float)
        if ve.shape != v.shape:
            raise ShapeError(f"{where}: history['val_epochs'] has {ve.size} entries for {v.size} losses")
        ax.plot(ve, v, color="tab:blue", lw=1.8, label="validation")
        if np.isfinite(v).any():
            b = int(np.nanargmin(v))
            ax.plot(ve[b], v[b], "o", color="tab:blue", mfc="white", zorder=5, clip_on=False,
                    label=f"best validation (epoch {ve[b]:g})")
        everything.append(v)
    finite = np.concatenate(everything)
    finite = finite[np.isfinite(finite)]
    if log and finite.size and finite.min() > 0:
        ax.set_yscale("log")
    ax.set_xlabel("Epoch")
    ax.set_ylabel(loss_label + (", log scale" if ax.get_yscale() == "log" else ""))
    ax.set_xlim(1, max(len(train), 2))
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(title or "Loss per epoch")
    return ax


def _value_label(quantity, unit):
    return f"{quantity} ({unit})" if unit else quantity


def plot_prediction(depth, y_true, y_pred, *, boundary=None, intervals=None, quantity="Permeability", unit="mD",
                    log_scale=False, depth_unit="m", title=None, ax=None):
    """Observed and predicted log against depth (seed 000, "predict over train and forecast").

    Parameters
    ----------
    depth : array-like of shape (n,)
    y_true, y_pred : array-like of shape (n,)
        Observed (NaN = gap) and predicted values, in ``unit``.
    boundary : float, optional
        Depth of the train/forecast split: a line with "train" above and "forecast" below.
    quantity, unit : str
        Axis label, e.g. ``"Permeability", "mD"`` or ``"log10 permeability", "log10 mD"``.
    log_scale : bool
        Logarithmic value axis.

    Returns
    -------
    matplotlib.axes.Axes
    """
    return plot_comparison(depth, y_true, {"prediction": y_pred}, boundary=boundary, intervals=intervals,
                           quantity=quantity, unit=unit, log_scale=log_scale, depth_unit=depth_unit,
                           title=title or f"{quantity}: observed and predicted", ax=ax)


def plot_comparison(depth, y_true, predictions, *, boundary=None, intervals=None, quantity="Permeability",
                    unit="mD", log_scale=False, depth_unit="m", title=None, ax=None):
    """All models' predictions against depth, beside the observed log.

    Parameters
    ----------
    depth : array-like of shape (n,)
    y_true : array-like of shape (n,)
    predictions : dict of str -> array-like of shape (n,)
        Model name -> prediction (e.g. transformer, LSTM, porosity-permeability transform, mean).
    boundary, intervals, quantity, unit, log_scale, depth_unit
        As in :func:`plot_prediction`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    where = "plot_comparison"
    depth = _vector(depth, "depth", where)
    y = _vector(y_true, "y_true", where, len(depth))
    preds = {str(k): _vector(v, f"predictions[{k!r}]", where, len(depth)) for k, v in predictions.items()}
    ax = _one_axes(ax, (5.0, 7.0))
    dense = len(depth) > MAX_MARKERS
    ax.plot(y, depth, **{"color": "black", "label": "observed", **_style(len(depth)), "lw": 1.3 if dense else 2.0})
    dashes = ["--", "-.", ":", (0, (5, 1, 1, 1, 1, 1))]
    for i, (name, p) in enumerate(preds.items()):
        ax.plot(p, depth, color=f"C{(i + 1) % 10}", lw=1.0 if dense else 1.6, ls=dashes[i % len(dashes)],
                label=name)
    if log_scale:
        ax.set_xscale("log")
    _shade_intervals(ax, intervals)
    _boundary(ax, boundary)
    ax.set_xlabel(_value_label(quantity, unit))
    ax.set_ylabel(_depth_label(depth_unit))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="best")
    ax.set_title(title or f"{quantity}: observed and predicted by each model")
    _invert_depth(ax, depth)
    return ax


def plot_prediction_panels(depth, y_true, y_pred, *, ids=None, inputs=None, input_label="Porosity (fraction, v/v)",
                           quantity="Permeability", unit="mD", depth_unit="m", title=None, nrows=3, ncols=3,
                           axes=None):
    """A 3 x 3 grid of sequences: observed (solid) and predicted (dashed) against depth.

    Parameters
    ----------
    depth : array-like of shape (seq,) or (n, seq)
        Shared depths, or each window's own depths (real wells).
    y_true, y_pred : array-like of shape (n, seq) (a trailing axis of 1 is dropped)
    ids : sequence of int, optional
        The sequences to show (at most nrows*ncols); default: evenly spaced over the n sequences.
    inputs : array-like of shape (n, seq), optional
        Input log (e.g. porosity) drawn in grey on a second x-axis at the top, as in the seed.
    quantity, unit : str
        Value label, e.g. ``"Permeability", "mD"`` or ``"Permeability (normalised)", ""``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    where = "plot_prediction_panels"

    def as2d(a, name):
        arr = as_float_array(a, name, where, allow_nan=True)
        if arr.ndim == 3 and arr.shape[-1] == 1:
            arr = arr[..., 0]
        if arr.ndim == 1:
            arr = arr[None]
        if arr.ndim != 2:
            raise ShapeError(f"{where}: {name} must be (n, seq), got shape {arr.shape}")
        return arr

    yt, yp = as2d(y_true, "y_true"), as2d(y_pred, "y_pred")
    if yt.shape != yp.shape:
        raise ShapeError(f"{where}: y_true and y_pred must have the same shape, got {yt.shape} and {yp.shape}")
    x_in = as2d(inputs, "inputs") if inputs is not None else None
    if x_in is not None and x_in.shape != yt.shape:
        raise ShapeError(f"{where}: inputs must have shape {yt.shape}, got {x_in.shape}")
    n, L = yt.shape
    cap = nrows * ncols
    if ids is None:
        ids = np.unique(np.linspace(0, n - 1, min(n, cap)).round().astype(int))
    ids = [int(i) for i in ids][:cap]
    bad = [i for i in ids if not 0 <= i < n]
    if bad:
        raise InputError(f"{where}: ids {bad} out of range for {n} sequences")
    depths, shared = _depth_rows(depth, where, n, ids, L)
    fig, grid = _axes_grid(axes, nrows, ncols, (4.2 * ncols, 3.9 * nrows), where)
    for k, ax in enumerate(grid.flat):
        if k >= len(ids):
            ax.set_visible(False)
            continue
        i, d = ids[k], depths[k]
        ax.plot(yt[i], d, **{"color": "tab:red", "lw": 1.8, "label": "observed", **_style(L)})
        ax.plot(yp[i], d, color="black", lw=1.5, ls="--", label="predicted")
        if x_in is not None:
            twin = ax.twiny()
            twin.plot(x_in[i], d, color="0.55", lw=1.0, label=input_label.split(" (")[0])
            twin.set_xlabel(input_label, fontsize=8, color="0.4")
            twin.tick_params(labelsize=7, colors="0.4")
        ax.set_title(f"sequence {i}", fontsize=10)
        ax.set_xlabel(_value_label(quantity, unit), fontsize=9)
        ax.set_ylabel(_depth_label(depth_unit), fontsize=9)
        ax.grid(alpha=0.3)
        _invert_depth(ax, d)
        if k == 0:
            handles, labels = ax.get_legend_handles_labels()
            if x_in is not None:
                handles += twin.get_lines()[:1]
                labels += [input_label.split(" (")[0]]
            ax.legend(handles, labels, fontsize=7, loc="best")
    fig.suptitle(title or f"{quantity}: observed vs predicted, {len(ids)} sequences")
    return fig


def plot_ablation(errors, *, metric="RMSE", unit="mD", title=None, ax=None):
    """Bar chart of the test error with attention learned, uniform, or replaced by identity.

    Parameters
    ----------
    errors : dict of str -> float
        Variant name -> error (e.g. ``{"learned": 8.1, "uniform": 12.4, "identity": 15.0}``).
    metric, unit : str
        Axis label, e.g. ``"RMSE", "mD"``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    where = "plot_ablation"
    if not errors:
        raise InputError(f"{where}: errors is empty; pass e.g. {{'learned': 8.1, 'uniform': 12.4}}")
    names = [str(k) for k in errors]
    vals = _vector(list(errors.values()), "errors", where)
    ax = _one_axes(ax, (1.3 * len(names) + 2.5, 4.2))
    best = int(np.nanargmin(vals))
    colours = ["tab:green" if i == best else "0.65" for i in range(len(names))]
    bars = ax.bar(names, vals, color=colours, edgecolor="black", linewidth=0.6)
    ax.bar_label(bars, labels=[f"{v:.3g}" for v in vals], padding=2, fontsize=9)
    ax.set_ylabel(_value_label(metric, unit) + " (lower is better)")
    ax.set_xlabel("Attention variant")
    ax.set_ylim(0, np.nanmax(vals) * 1.15 if np.nanmax(vals) > 0 else 1)
    ax.grid(alpha=0.3, axis="y")
    ax.set_axisbelow(True)
    ax.set_title(title or "Attention ablation")
    return ax


# ------------------------------------------------------------------- saving
def save_figure(fig, path, *, dpi=110):
    """Write a figure to PNG atomically (temp file in the same folder, then ``os.replace``).

    Parameters
    ----------
    fig : Figure, Axes or array of Axes
        What a plot function returned.
    path : str or Path
        Target file; parent folders are created.  ``bbox_inches="tight"`` keeps every label
        and colour bar inside the image.

    Returns
    -------
    pathlib.Path
        The written file.
    """
    if hasattr(fig, "savefig"):
        figure = fig
    elif hasattr(fig, "figure"):
        figure = fig.figure
    else:
        figure = np.asarray(fig, dtype=object).flat[0].figure
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as fh:
        figure.savefig(fh, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
    return path


# ------------------------------------------------------------- trace wrappers
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


def plot_trace_attention(trace, *, layers=None, sample=0, depth=None, vmin=0.0, vmax=1.0, depth_unit="m",
                         axes=None):
    """Attention heat maps of one sequence, one panel per layer and head, from a trace.

    Parameters
    ----------
    trace : Trace or mapping
        ``layers.<i>.A`` of shape ``(batch, num_heads, seq, seq)`` (see :mod:`glassformer.trace`).
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
    if not layers:
        raise InputError("plot_trace_attention: the trace holds no attention weights (layers.<i>.A)")
    mats = []
    for i in layers:
        A = _one(trace_array(trace, "A", layer=i), batched, sample)
        mats.append(A if A.ndim == 3 else A[None])
    d = _trace_depth(trace, depth, sample)
    return plot_attention_heads(np.stack(mats), query_depths=d, layer_names=[f"layer {i}" for i in layers],
                                vmin=vmin, vmax=vmax, depth_unit=depth_unit, axes=axes)


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
