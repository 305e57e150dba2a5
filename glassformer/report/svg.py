"""Inline SVG heat maps of attention weights: one ``<rect>`` per cell, its ``<title>`` the hover text.

Used by the report (the interactive attention figure) and by the notebook display of a trace
(:mod:`glassformer.report.display`).  Plain SVG, no script and no external resource: a browser shows a
cell's ``<title>`` ("query depth 3 m, key depth 4 m, weight 0.647") when the pointer rests on it.
Colours are matplotlib's viridis, the colour map of the package's PNG attention figures.
"""

from __future__ import annotations

from matplotlib import colormaps
import numpy as np

from ..errors import ShapeError
from .tables import esc

#: Map at most this many rows/columns; a longer sequence shows its first ``MAX_CELLS`` positions.
MAX_CELLS = 64


def _colours(values: np.ndarray, vmin: float, vmax: float, cmap: str = "viridis") -> np.ndarray:
    """``#rrggbb`` strings of ``cmap`` at ``(values - vmin) / (vmax - vmin)`` (clipped to 0-1)."""
    span = vmax - vmin
    t = np.clip((values - vmin) / span, 0.0, 1.0) if span > 0 else np.full(values.shape, 0.5)
    rgb = (colormaps[cmap](t)[..., :3] * 255).round().astype(int)                 # (..., 3)
    return np.array([f"#{r:02x}{g:02x}{b:02x}" for r, g, b in rgb.reshape(-1, 3)]).reshape(values.shape)


def position_name(unit: str | None) -> str:
    """"depth" for a length unit (m, ft), else "position"."""
    return "depth" if unit in ("m", "ft", "metre", "metres", "foot", "feet") else "position"


def _label(v) -> str:
    return f"{v:g}" if isinstance(v, (int, float, np.floating, np.integer)) else str(v)


def _ticks(n: int, max_ticks: int, cell: float = 0.0, label_px: float = 0.0) -> range:
    """Every k-th index: at most ``max_ticks`` labels, and none closer than a label's width."""
    step = max(1, -(-n // max_ticks), int(np.ceil((label_px + 6) / cell)) if cell > 0 else 1)
    return range(0, n, step)


#: Width of one tick-label character at the maps' 11 px font (px).
CHAR_PX = 6.5


def heatmap_svg(weights, *, query_labels=None, key_labels=None, unit: str | None = None, cell: float = 16.0,
                vmin: float | None = None, vmax: float | None = None, axes: bool = True, max_ticks: int = 16,
                title: str = "", value_name: str = "weight", svg_id: str = "", cmap: str = "viridis") -> str:
    """An SVG heat map of one attention matrix, rows = queries, columns = keys.

    Parameters
    ----------
    weights : array-like of shape (L, S)
        Attention weights of one head and one sequence (rows normally sum to 1).
    query_labels, key_labels : sequence of length L and S, optional
        Position of each query and key (depth in ``unit`` or sample index); 1..L when None.  Only
        the first :data:`MAX_CELLS` of each are drawn.
    unit : str, optional
        Unit of the labels ("m": hover text says "query depth 3 m"; otherwise "query position 3").
    cell : float, default 16
        Cell size in px.
    vmin, vmax : float, optional
        Colour scale; the matrix's min and max when None (stated in the legend when ``axes``).
    axes : bool, default True
        Draw tick labels, axis names and a colour legend; False gives a bare map (small multiples).
    title : str
        The SVG's own ``<title>`` (its accessible name).
    value_name : str, default "weight"
        What a cell holds, in the hover text and the legend (e.g. "dL/dA" for a gradient).
    cmap : str, default "viridis"
        A matplotlib colour map; a diverging one ("RdBu_r") with ``vmin = -vmax`` for signed values.

    Returns
    -------
    str
        ``<svg ...>...</svg>`` with one ``<rect>`` per cell, each holding a ``<title>``.

    Raises
    ------
    ShapeError
        If ``weights`` is not 2-D or a label list does not match its shape.
    """
    W = np.asarray(weights, dtype=float)
    if W.ndim != 2:
        raise ShapeError(f"heatmap_svg: weights must be 2-D (queries, keys), got shape {W.shape}")
    L, S = W.shape
    q = list(query_labels) if query_labels is not None else list(range(1, L + 1))
    k = list(key_labels) if key_labels is not None else (q if L == S and query_labels is not None
                                                         else list(range(1, S + 1)))
    if len(q) != L or len(k) != S:
        raise ShapeError(f"heatmap_svg: {len(q)} query and {len(k)} key labels for weights of shape {W.shape}")
    W, q, k = W[:MAX_CELLS, :MAX_CELLS], q[:MAX_CELLS], k[:MAX_CELLS]                # (l, s)
    finite = W[np.isfinite(W)]
    lo = float(finite.min()) if vmin is None and finite.size else float(vmin or 0.0)
    hi = float(finite.max()) if vmax is None and finite.size else float(1.0 if vmax is None else vmax)
    colours = _colours(np.nan_to_num(W, nan=lo), lo, hi, cmap)                     # (l, s)
    where = position_name(unit)
    suffix = f" {unit}" if unit and where == "depth" else ""
    widest = max(len(_label(v)) for v in q) if q else 1
    left, top = (max(56.0, 30.0 + CHAR_PX * widest), 40.0) if axes else (0.0, 0.0)
    rects = []
    for i, qi in enumerate(q):
        for j, kj in enumerate(k):
            tip = f"query {where} {_label(qi)}{suffix}, key {where} {_label(kj)}{suffix}, {value_name} {W[i, j]:.4g}"
            rects.append(f"<rect x=\"{left + j * cell:g}\" y=\"{top + i * cell:g}\" width=\"{cell:g}\" "
                         f"height=\"{cell:g}\" fill=\"{colours[i, j]}\"><title>{esc(tip)}</title></rect>")
    width, height = left + len(k) * cell, top + len(q) * cell
    extra = ""
    if axes:
        extra = _axes(q, k, cell, left, top, where, unit, max_ticks) + _legend(lo, hi, left, height + 8, value_name,
                                                                             cmap)
        width, height = max(width + 8, left + 330), height + 40
    ident = f" id=\"{esc(svg_id)}\"" if svg_id else ""
    label = f"<title>{esc(title)}</title>" if title else ""
    return (f"<svg{ident} class=\"heatmap\" width=\"{width:g}\" "
            f"height=\"{height:g}\" viewBox=\"0 0 {width:g} {height:g}\" role=\"img\">{label}"
            f"<g class=\"cells\">{''.join(rects)}</g>{extra}</svg>")


def _axes(q, k, cell, left, top, where, unit, max_ticks) -> str:
    """Tick labels (queries down the left, keys along the top) and the two axis names."""
    parts = []
    key_px = CHAR_PX * max((len(_label(v)) for v in k), default=1)
    for i in _ticks(len(q), max_ticks, cell, 5.0):
        parts.append(f"<text x=\"{left - 4:g}\" y=\"{top + (i + 0.5) * cell:g}\" text-anchor=\"end\" "
                     f"dominant-baseline=\"middle\">{esc(_label(q[i]))}</text>")
    for j in _ticks(len(k), max_ticks, cell, key_px):
        parts.append(f"<text x=\"{left + (j + 0.5) * cell:g}\" y=\"{top - 6:g}\" text-anchor=\"middle\">"
                     f"{esc(_label(k[j]))}</text>")
    unit_text = f" ({unit})" if unit else ""
    parts.append(f"<text x=\"{left:g}\" y=\"12\">key {where}{esc(unit_text)} →</text>")
    parts.append(f"<text x=\"12\" y=\"{top:g}\" transform=\"rotate(90 12 {top:g})\">query {where}{esc(unit_text)} →"
                 "</text>")
    return f"<g class=\"axes\" font-size=\"11\" fill=\"#333\">{''.join(parts)}</g>"


def _legend(lo, hi, x, y, value_name, cmap="viridis") -> str:
    """A 10-step colour bar from ``lo`` to ``hi`` with its two end values."""
    steps = np.linspace(lo, hi, 10)
    cols = _colours(steps, lo, hi, cmap)
    boxes = "".join(f"<rect x=\"{x + 60 + 12 * i:g}\" y=\"{y:g}\" width=\"12\" height=\"10\" fill=\"{c}\"/>"
                    for i, c in enumerate(cols))
    return (f"<g class=\"legend\" font-size=\"11\" fill=\"#333\"><text x=\"{x:g}\" y=\"{y + 9:g}\">{esc(value_name)}"
            f"</text>{boxes}"
            f"<text x=\"{x + 60:g}\" y=\"{y + 24:g}\">{lo:.3g}</text>"
            f"<text x=\"{x + 180:g}\" y=\"{y + 24:g}\" text-anchor=\"end\">{hi:.3g}</text></g>")
