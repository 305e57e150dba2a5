"""Training and results: loss curves, prediction panels per window, and the attention ablation.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validation import as_float_array
from ..errors import InputError, ShapeError
from ._common import _axes_grid, _depth_label, _invert_depth, _one_axes, _style, _value_label, _vector
from .representations import _depth_rows

__all__ = ["plot_ablation", "plot_loss", "plot_prediction_panels"]


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
        Input log (e.g. porosity) drawn in grey on a second x-axis at the top, as in the chapter.
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
