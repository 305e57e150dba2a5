"""Shared pieces of the figures: figure and axes creation, depth axes and labels, interval
shading, line/image drawing of components, and :func:`save_figure`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from .._validation import as_float_array
from ..errors import InputError, ShapeError
from ..io import atomic_open


MAX_LINE_COMPONENTS = 8  # more lines than this is unreadable: draw the first 8 (or an image)
MAX_MARKERS = 60  # above this many samples draw lines only


_INTERVAL_COLOURS = {"train": "tab:blue", "training": "tab:blue", "val": "tab:green",
                     "validation": "tab:green", "forecast": "tab:orange", "test": "tab:red"}


#: One colour per model, the same in every figure of every run (the order of the comparison tables).
MODEL_COLOURS = {"transformer": "C0", "LSTM": "C1", "bidirectional LSTM": "C1", "random forest": "C2",
                 "random forest + context": "C3", "gradient boosting": "C4", "gradient boosting + context": "C5",
                 "porosity-permeability transform": "C6", "training mean": "C7",
                 "transformer/boosting blend": "C8"}


def model_colour(name, i: int) -> str:
    """The colour of model ``name`` (:data:`MODEL_COLOURS`); another model gets the ``i``-th colour after them."""
    return MODEL_COLOURS.get(str(name), f"C{(9 + i) % 10}")


def _new_figure(figsize):
    """A constrained-layout figure: pyplot-managed if the caller uses pyplot, else standalone."""
    pyplot = sys.modules.get("matplotlib.pyplot")       # never imported here: it may pick a GUI back end
    if pyplot is not None:
        return pyplot.figure(figsize=figsize, layout="constrained")
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
    """Column indices of the components to draw; ``components`` are numbered 1..d, as the chapter
    numbers them (default: the first eight)."""
    if components is None:
        return list(range(min(d, MAX_LINE_COMPONENTS)))
    comps = [int(c) for c in np.atleast_1d(components)]
    bad = [c for c in comps if not 1 <= c <= d]
    if bad:
        raise InputError(f"components {bad} out of range: they are numbered 1 to d_model={d}, as in the chapter")
    return [c - 1 for c in comps]


def component_name(index: int) -> str:
    """The chapter's name of column ``index`` (0-based) of an embedding: ``"component 1"`` for column 0."""
    return f"component {index + 1}"


def components_title(comps, d) -> str:
    """``"components 1-8 of 16"`` (or ``"components 2, 4 of 4"``) for column indices ``comps``, 1-based."""
    numbers = [c + 1 for c in comps]
    run = numbers == list(range(numbers[0], numbers[-1] + 1))
    listed = f"{numbers[0]}-{numbers[-1]}" if run and len(numbers) > 2 else ", ".join(map(str, numbers))
    return f"components {listed} of {d}"


def _style(n):
    """Line style: markers for short sequences (demonstration 1's 7- and 14-depth examples), thin lines for logs."""
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
        ax.plot(M[:, c], depth, color=colour, label=f"{prefix}, {component_name(c)}", **style)
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
    mesh = ax.pcolormesh(np.arange(d + 1) + 0.5, edges, M, cmap="RdBu_r", vmin=-lim, vmax=lim, shading="flat")
    ax.figure.colorbar(mesh, ax=ax, label=label)
    ax.set_xlabel(f"Component (1 to {d}, as in the chapter)")      # column j is component j + 1
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
            title = f"{title} ({components_title(comps, d)})"
    _shade_intervals(ax, intervals)
    ax.set_ylabel(_depth_label(depth_unit))
    ax.set_title(title)
    _invert_depth(ax, depth)
    return ax


def _value_label(quantity, unit):
    return f"{quantity} ({unit})" if unit else quantity


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
