"""What the model computes along depth: positional encoding, input embeddings, Q/K/V,
value vs attention output, and the stages of a block (the chapter's representation grid).
"""

from __future__ import annotations

from matplotlib.lines import Line2D
import numpy as np

from .._validation import as_float_array
from ..errors import InputError, ShapeError
from ._common import (
    _axes_grid, _component_lines, _depth_label, _figure_legend, _invert_depth, _matrix, _one_axes, _pick_components,
    _shade_intervals, _style, _vector, _vs_depth, component_name, components_title)

__all__ = ["DEFAULT_STAGES", "STAGE_LABELS", "plot_embeddings", "plot_positional_encoding", "plot_qkv",
           "plot_stages", "plot_value_vs_output"]


#: Row labels of the representation grid (the chapter's "residual connections, layer norm").
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


def plot_positional_encoding(depth, P, *, intervals=None, kind="auto", components=None, depth_unit="m", ax=None):
    """Positional encodings P against depth (the chapter's "check positional embeddings").

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
        Components to draw as lines, numbered 1 to d_model as in the chapter (``[1, 2]``: its
        ``sin t`` and ``cos t``); default the first 8.  Legends and titles use the same numbers.

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
    """Query, key and value projections against depth, one panel each (as in the chapter).

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
        title = name if len(comps) == M.shape[1] else f"{name} ({components_title(comps, M.shape[1])})"
        ax.set_title(title)
        ax.set_xlabel("Projection value (dimensionless)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2 if len(comps) > 4 else 1)
        _shade_intervals(ax, intervals, text=(i == 2))
        _invert_depth(ax, depth)
    grid.flat[0].set_ylabel(_depth_label(depth_unit))
    return grid.ravel()


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
    handles = [Line2D([], [], color="black", ls="--", marker="o", label="V: value vectors"),
               Line2D([], [], color="black", ls="-", marker="s", label="U: attention output")]
    handles += [Line2D([], [], color=f"C{j % 10}", lw=3, label=component_name(c)) for j, c in enumerate(comps)]
    _figure_legend(fig, handles, [h.get_label() for h in handles], ncol=min(len(handles), 6))
    return grid.ravel()


def plot_stages(stages, depth, *, sequences=(0, 1, 2), components=None, sequence_labels=None, depth_unit="m",
                axes=None):
    """The chapter's grid of representations through the block: rows = stages, columns = sequences.

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
        Components drawn, numbered 1 to d_model as in the chapter (default: the first 8).
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
                handles.setdefault(component_name(comp), line)
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
