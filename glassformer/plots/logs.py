"""Well-log figures: log tracks against depth, the porosity-permeability cross-plot, and
predictions (one model or several) against the measured log along depth.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, ShapeError
from ._common import (
    _axes_grid, _boundary, _depth_label, _guess_unit, _invert_depth, _new_figure, _one_axes, _porosity_label,
    _shade_intervals, _style, _value_label, _vector, MAX_MARKERS, model_colour)

__all__ = ["plot_comparison", "plot_comparison_zoomed", "plot_crossplot", "plot_log_tracks", "plot_prediction"]


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
                   porosity_unit="fraction", depth_unit="m", title=None, ax=None, quantity="Permeability",
                   unit="mD"):
    """Porosity-permeability cross-plot (the chapter's data figure, right-hand panels).

    Parameters
    ----------
    porosity, permeability : array-like of shape (n,)
        Porosity (``porosity_unit``) and permeability (``unit``, mD by default); NaN pairs are not drawn.
        With ``normalised=True`` both are already scaled to [0, 1] (e.g. by the scaler fitted
        on the training interval): only the labels and title change.
    log_perm : bool, default True
        Logarithmic permeability axis (raw values only).  Values <= 0 mD cannot be shown on it;
        their count is written on the plot.
    labels : sequence of str or float, optional
        Text beside each point (the chapter annotates depths).  Meant for a few dozen points.
    depth : array-like of shape (n,), optional
        Colour the points by depth, with a colour bar in ``depth_unit``.
    quantity, unit : str, default "Permeability", "mD"
        The y-axis: what the second curve is and its unit as its file states it (``""``: none stated),
        e.g. ``"KLOGH", "mD"`` or ``"DT", "us/ft"`` for a target that is not permeability.

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
        scale = ", log scale" if log_perm else ""
        ax.set_ylabel(f"{quantity} ({unit}{scale})" if unit else f"{quantity}{f' (log scale)' if log_perm else ''}")
        if log_perm:
            ax.set_yscale("log")
            hidden = int(np.sum(np.isfinite(k) & (k <= 0)))
            if hidden:
                ax.text(0.02, 0.02, f"{hidden} point(s) <= 0 {unit} not shown".replace("  ", " "),
                        transform=ax.transAxes, fontsize=8, color="0.3")
        ax.set_title(title or ("Porosity-permeability" if quantity == "Permeability" else f"Porosity-{quantity}")
                     + " cross-plot")
    ax.grid(alpha=0.3)
    return ax


def plot_prediction(depth, y_true, y_pred, *, boundary=None, intervals=None, quantity="Permeability", unit="mD",
                    log_scale=False, depth_unit="m", title=None, ax=None):
    """Observed and predicted log against depth (the chapter's "predict over train and forecast").

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
        ax.plot(p, depth, color=model_colour(name, i), lw=1.0 if dense else 1.6, ls=dashes[i % len(dashes)],
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


#: Above this many samples :func:`plot_comparison_zoomed` adds a zoomed panel (4,000-sample lines overlap).
ZOOM_SAMPLES = 200


def plot_comparison_zoomed(depth, y_true, predictions, *, boundary=None, quantity="Permeability", unit="mD",
                           log_scale=False, depth_unit="m", title=""):
    """:func:`plot_comparison` of every model against depth, plus a zoomed panel for a long log.

    The zoom shows 300 samples (a fifth of the log if that is shorter, at least 60) from where
    observed values begin below ``boundary``, so that individual predictions stay visible.
    Logs of at most :data:`ZOOM_SAMPLES` samples get the single panel.  Returns the Figure (or the
    Axes of the single panel).
    """
    depth = np.asarray(depth, dtype=float)
    y_true = np.asarray(y_true, dtype=float)
    kw = dict(quantity=quantity, unit=unit, log_scale=log_scale, depth_unit=depth_unit)
    if len(depth) <= ZOOM_SAMPLES:
        return plot_comparison(depth, y_true, predictions, boundary=boundary,
                               title=f"{title} observed and predicted".strip(), **kw)
    fig = _new_figure((11.0, 7.5))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    plot_comparison(depth, y_true, predictions, boundary=boundary, ax=left, title=f"{title} all depths".strip(), **kw)
    start = int(np.searchsorted(depth, boundary, side="right")) if boundary is not None else 0
    # Begin where there is something to compare (logs often start with missing inputs or target).
    seen = np.isfinite(y_true)
    seen[:start] = False
    start = int(np.argmax(seen)) if seen.any() else start
    n_zoom = min(300, max(60, len(depth) // 5))
    start = min(start, max(0, len(depth) - n_zoom))
    sl = slice(start, start + n_zoom)
    plot_comparison(depth[sl], y_true[sl], {k: np.asarray(v)[sl] for k, v in predictions.items()},
                    boundary=boundary if boundary is not None and depth[sl][0] <= boundary else None, ax=right,
                    title=f"zoom: {depth[sl][0]:g} to {depth[sl][-1]:g} {depth_unit}"
                          + (" (start of the forecast)" if boundary is not None else ""), **kw)
    left.get_legend().remove()
    return fig
