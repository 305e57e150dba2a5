"""Blind-well figures a petrophysicist reads: one held-out well, every model on its own track.

* :func:`plot_blind_well_tracks` -- the input logs, one track each with its unit, then one track per
  model (the observed target in black, that model's prediction in colour, its P10-P90 band where
  there is one), then a residual track (prediction minus observed) for a few chosen models;
* :func:`plot_predicted_vs_observed` -- a cross-plot of predicted against observed per model, on
  shared axes with the 1:1 line and the RMSE in the panel's title;
* :func:`zoom_windows` -- where to zoom: the depth windows of fixed length in which the observed
  target varies most, leaving out stretches where it is constant (a clip floor such as a
  log-derived permeability's 0.001 mD, or a missing stretch filled with one value).

Eight models overlaid on one track over a long well hide one another; one track per model keeps
each comparison with the observed curve readable, and the shared value axis keeps them comparable.
"""

from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.lines import Line2D
from numpy.lib.stride_tricks import sliding_window_view

from ..errors import InputError
from ._common import _depth_label, _invert_depth, _new_figure, _value_label, _vector, model_colour

__all__ = ["plot_blind_well_tracks", "plot_predicted_vs_observed", "rmse", "zoom_windows"]

#: Samples in a run of identical observed values from which the run counts as constant (floored).
FLAT_RUN = 5
#: At most this many models share the residual track (more lines hide each other again).
MAX_RESIDUAL_MODELS = 3


def rmse(observed, predicted) -> float:
    """Root-mean-square of ``predicted - observed`` over the depths where both are finite (NaN if none)."""
    o, p = np.asarray(observed, dtype=float), np.asarray(predicted, dtype=float)
    ok = np.isfinite(o) & np.isfinite(p)
    return float(np.sqrt(np.mean((p[ok] - o[ok]) ** 2))) if ok.any() else float("nan")


def _flat(values, min_run):
    """True where a value belongs to a run of at least ``min_run`` identical consecutive samples."""
    change = np.ones(values.size, dtype=bool)
    change[1:] = values[1:] != values[:-1]                       # NaN != NaN: every NaN starts a run
    run = np.cumsum(change) - 1                                  # (n,) run index of each sample
    return np.bincount(run)[run] >= min_run


def zoom_windows(depth, observed, *, length, n_windows=1, min_run=FLAT_RUN, min_live=0.5):
    """The depth windows of fixed ``length`` in which the observed target varies most.

    Samples that are NaN or sit in a run of at least ``min_run`` identical values (a floor, a
    constant fill) are left out: a window's score is the variance of its other ("live") samples,
    and only windows with at least ``min_live`` of their samples live are candidates.  Windows
    are picked greedily, highest variance first, without overlapping one already picked; on a tie
    the window with more live samples wins, then the shallower.

    Parameters
    ----------
    depth : array-like of shape (n,)
        Increasing depths, regularly sampled (the median step converts ``length`` to samples).
    observed : array-like of shape (n,)
        The observed target (e.g. log10 permeability); NaN where there is none.
    length : float
        Window length in the depth unit; the window holds ``round(length / step)`` samples.
    n_windows : int
        How many windows at most.
    min_run : int
        Runs of identical values at least this long count as constant and are left out.
    min_live : float
        Least share (0-1) of live samples in a candidate window.

    Returns
    -------
    list of (top, base)
        Depths of the first and last sample of each window, best first; empty when no window
        has enough live samples.

    Raises
    ------
    InputError
        ``length`` not positive, or fewer than two depths.
    """
    where = "zoom_windows"
    d = _vector(depth, "depth", where)
    y = _vector(observed, "observed", where, d.size)
    if d.size < 2 or not np.isfinite(length) or length <= 0:
        raise InputError(f"{where}: need at least two depths and a positive length, got {d.size} depths, "
                         f"length {length!r}")
    step = float(np.median(np.diff(d)))
    m = int(min(d.size, max(2, round(length / step))))           # samples per window
    live = np.isfinite(y) & ~_flat(y, min_run)
    W = sliding_window_view(np.where(live, y, 0.0), m)           # (n - m + 1, m)
    L = sliding_window_view(live, m)                             # (n - m + 1, m)
    count = L.sum(axis=1)
    mean = np.divide(W.sum(axis=1), count, out=np.zeros(count.shape), where=count > 0)
    dev = np.where(L, W - mean[:, None], 0.0)                    # (n - m + 1, m), deviations of live samples
    var = np.divide((dev ** 2).sum(axis=1), count, out=np.zeros(count.shape), where=count > 0)
    score = np.where(count >= np.ceil(min_live * m), var, -np.inf)
    picked = []
    for start in np.lexsort((np.arange(score.size), -count, -score)):      # by score, then live count, then depth
        if len(picked) == n_windows or not np.isfinite(score[start]):
            break
        if all(abs(int(start) - s) >= m for s in picked):
            picked.append(int(start))
    return [(float(d[s]), float(d[s + m - 1])) for s in picked]


def _wrap(text, width=16):
    """``text`` over lines of about ``width`` characters, breaking after a slash as after a space."""
    lines = textwrap.wrap(str(text).replace("/", "/ "), width, break_long_words=False)
    return "\n".join(line.replace("/ ", "/") for line in lines) or str(text)


def _value_limits(observed, predictions):
    """Common value-axis limits: the observed range and the central 99 % of every prediction."""
    parts = [observed[np.isfinite(observed)]]
    parts += [np.nanpercentile(p, [0.5, 99.5]) for p in predictions if np.isfinite(p).any()]
    vals = np.concatenate([np.ravel(p) for p in parts]) if parts else np.zeros(1)
    vals = vals[np.isfinite(vals)]
    lo, hi = (float(vals.min()), float(vals.max())) if vals.size else (0.0, 1.0)
    pad = 0.05 * (hi - lo) if hi > lo else 0.5
    return lo - pad, hi + pad




def plot_blind_well_tracks(depth, inputs, observed, predictions, *, input_units=None, quantity="Permeability",
                           unit="log10 mD", residual_models=None, bands=None, zooms=None, top=None, base=None,
                           colours=None, depth_unit="m", title=None):
    """Input-log tracks, one track per model against the observed target, and a residual track.

    Parameters
    ----------
    depth : array-like of shape (n,)
        Increasing depths in ``depth_unit``.
    inputs : dict of str -> array-like of shape (n,)
        The input logs (e.g. PHIF, VSH, SW), one track each, in order.
    observed : array-like of shape (n,)
        The observed target in ``unit`` (NaN: none).
    predictions : dict of str -> array-like of shape (n,)
        Model label -> prediction in ``unit``; one track each, in order, with its RMSE over the
        depths shown.
    input_units : dict of str -> str, optional
        Unit of each input for its axis label ("unit not given" where missing).
    quantity, unit : str
        The target's name and unit (e.g. ``"KLOGH"``, ``"log10 mD"``); residuals are in ``unit`` too.
    residual_models : sequence of str, optional
        Models drawn on the residual track (prediction minus observed); default the
        :data:`MAX_RESIDUAL_MODELS` with the lowest RMSE over the depths shown.
    bands : dict of str -> (p10, p90), optional
        A P10-P90 band (arrays of shape (n,), in ``unit``) shaded on that model's track.
    zooms : list of (top, base), optional
        Depth windows shaded and numbered on every track (where the zoomed figures look).
    top, base : float, optional
        Depth range shown (a zoom); default every depth.
    colours : dict of str -> colour, optional
        Colour of each model (its track title, line, band and residual), e.g. to keep one colour
        per model across runs; default matplotlib's cycle in the order of ``predictions``.
    title : str, optional
        The figure's title; default says what is drawn.

    Returns
    -------
    matplotlib.figure.Figure
        Axes in order: the input tracks, the model tracks, the residual track.

    Raises
    ------
    InputError, ShapeError
        No predictions, an unknown residual or band model, an empty depth range, or an array whose
        length differs from ``depth``.
    """
    where = "plot_blind_well_tracks"
    d = _vector(depth, "depth", where)
    if not predictions:
        raise InputError(f"{where}: predictions is empty; pass e.g. {{'gradient boosting': y_hat}}")
    lo_d = float(np.nanmin(d)) if top is None else float(top)
    hi_d = float(np.nanmax(d)) if base is None else float(base)
    view = (d >= lo_d) & (d <= hi_d)
    if not view.any():
        raise InputError(f"{where}: no depth between {lo_d:g} and {hi_d:g} {depth_unit}")
    d = d[view]                                                  # (n,) -> (n_shown,)
    x_in = {k: _vector(v, f"inputs[{k!r}]", where, view.size)[view] for k, v in inputs.items()}
    y = _vector(observed, "observed", where, view.size)[view]
    preds = {str(k): _vector(v, f"predictions[{k!r}]", where, view.size)[view] for k, v in predictions.items()}
    scores = {k: rmse(y, p) for k, p in preds.items()}
    chosen = _residual_models(residual_models, scores, where)
    units = dict(input_units or {})
    colour = {k: (colours or {}).get(k, model_colour(k, i)) for i, k in enumerate(preds)}
    n_in, n_mod = len(x_in), len(preds)
    fig = _new_figure((1.35 * (n_in + n_mod) + 2.2, 9.5))
    axes = fig.subplots(1, n_in + n_mod + 1, sharey=True, gridspec_kw={"width_ratios": [1] * (n_in + n_mod) + [1.4]})
    lw = 0.6 if d.size > 2000 else 1.0
    for ax, (name, v) in zip(axes[:n_in], x_in.items()):
        ax.plot(v, d, color="0.25", lw=lw)
        ax.set_title(_wrap(name), fontsize=9)
        ax.set_xlabel(_value_label(name, units.get(name) or "unit not given"), fontsize=8)
    limits = _value_limits(y, list(preds.values()))
    for ax, (name, p) in zip(axes[n_in:n_in + n_mod], preds.items()):
        if bands and name in bands:
            p10, p90 = (_vector(b, f"bands[{name!r}]", where, view.size)[view] for b in bands[name])
            ax.fill_betweenx(d, p10, p90, color=colour[name], alpha=0.25, lw=0, label="P10-P90")
        ax.plot(y, d, color="black", lw=lw, label="observed")
        ax.plot(p, d, color=colour[name], lw=lw, label="predicted")
        ax.set_xlim(*limits)
        ax.set_title(f"{_wrap(name)}\nRMSE {scores[name]:.2f}", fontsize=9, color=colour[name])
        ax.set_xlabel(_value_label(quantity, unit), fontsize=8)
    _residual_track(axes[-1], d, y, preds, chosen, colour, unit, lw)
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
        _shade_zooms(ax, zooms, label=ax is axes[0])
    axes[0].set_ylabel(_depth_label(depth_unit))
    _invert_depth(axes[0], d)
    fig.legend(handles=[Line2D([], [], color="black", lw=1.2), Line2D([], [], color="0.6", lw=1.2)],
               labels=[f"observed {quantity}", "predicted (in the colour of the model's name)"],
               loc="outside lower center", ncol=2, fontsize=8, frameon=False)
    span = f"{d[0]:.1f}-{d[-1]:.1f} {depth_unit}"
    fig.suptitle(title or f"{span}: input logs, observed {quantity} (black) against each model's prediction "
                          f"(RMSE in {unit} over the depths shown), and residuals", fontsize=11)
    return fig


def _residual_models(residual_models, scores, where):
    if residual_models is None:
        ranked = sorted((s, k) for k, s in scores.items() if np.isfinite(s))
        return [k for _, k in ranked[:MAX_RESIDUAL_MODELS]]
    unknown = [m for m in residual_models if m not in scores]
    if unknown:
        raise InputError(f"{where}: residual_models {unknown} are not among the predictions {list(scores)}")
    return list(residual_models)


def _residual_track(ax, d, y, preds, chosen, colour, unit, lw):
    """Prediction minus observed for the chosen models, on a symmetric axis around zero."""
    reach = 0.0
    for j, name in enumerate(chosen):
        r = preds[name] - y                                      # (n,), in the target's unit
        ax.plot(r, d, color=colour[name], lw=lw, alpha=0.8, label=name,
                zorder=2 + len(chosen) - j)                      # the first chosen (the best by default) on top
        if np.isfinite(r).any():
            reach = max(reach, float(np.nanpercentile(np.abs(r), 99.5)))
    ax.axvline(0.0, color="black", lw=0.8)
    reach = reach * 1.1 or 1.0
    ax.set_xlim(-reach, reach)
    ax.set_title("Residual\n(predicted - observed)", fontsize=9)
    ax.set_xlabel(_value_label("residual", unit), fontsize=8)
    if chosen:
        legend = ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.07), frameon=False)   # below the data
        for handle in legend.legend_handles:
            handle.set_linewidth(2.0)


def _shade_zooms(ax, zooms, *, label):
    for j, (z_top, z_base) in enumerate(zooms or [], start=1):
        ax.axhspan(z_top, z_base, color="tab:orange", alpha=0.15, lw=0, zorder=0)
        if label:
            ax.text(0.03, z_top, f"zoom {j}", transform=ax.get_yaxis_transform(), fontsize=7, va="bottom",
                    color="tab:orange")


def plot_predicted_vs_observed(observed, predictions, *, quantity="Permeability", unit="log10 mD", depth=None,
                               depth_unit="m", ncols=3, title=None):
    """Predicted against observed, one panel per model, on shared axes with the 1:1 line.

    Parameters
    ----------
    observed : array-like of shape (n,)
        The observed target in ``unit``.
    predictions : dict of str -> array-like of shape (n,)
        Model label -> prediction in ``unit``; one panel each, its RMSE in the panel's title.
    quantity, unit : str
        The target's name and unit, for the axis labels.
    depth : array-like of shape (n,), optional
        Colours the points by depth, with one colour bar (deeper at the bottom).
    ncols : int
        Panels per row.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes per model (in order), then the colour bar's when ``depth`` is given.

    Raises
    ------
    InputError, ShapeError
        No predictions, or an array whose length differs from ``observed``.
    """
    where = "plot_predicted_vs_observed"
    y = _vector(observed, "observed", where)
    if not predictions:
        raise InputError(f"{where}: predictions is empty; pass e.g. {{'gradient boosting': y_hat}}")
    preds = {str(k): _vector(v, f"predictions[{k!r}]", where, y.size) for k, v in predictions.items()}
    z = None if depth is None else _vector(depth, "depth", where, y.size)
    n = len(preds)
    ncols = max(1, min(int(ncols), n))
    nrows = -(-n // ncols)
    fig = _new_figure((3.0 * ncols + 1.2, 3.0 * nrows + 0.8))
    grid = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
    lo, hi = _value_limits(y, list(preds.values()))
    colour = {"color": "tab:blue"} if z is None else {"c": z, "cmap": "viridis_r", "vmin": np.nanmin(z),
                                                      "vmax": np.nanmax(z)}
    sc = None
    for ax, (name, p) in zip(grid.flat, preds.items()):
        ok = np.isfinite(y) & np.isfinite(p)
        kw = colour if z is None else {**colour, "c": z[ok]}
        sc = ax.scatter(y[ok], p[ok], s=2, alpha=0.4, lw=0, rasterized=True, **kw)
        ax.plot([lo, hi], [lo, hi], color="0.3", lw=0.9, ls="--", label="1:1")
        ax.set_title(f"{name}\nRMSE {rmse(y, p):.2f} {unit} (n={int(ok.sum())})", fontsize=9)
        ax.grid(alpha=0.3)
        ax.set_aspect("equal")
        ax.tick_params(labelsize=7)
    for ax in grid.flat[n:]:
        ax.set_axis_off()
    for i, ax in enumerate(grid.flat[:n]):
        if i + ncols >= n:                                       # the lowest panel of its column
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel(f"observed {_value_label(quantity, unit)}", fontsize=8)
        if i % ncols == 0:
            ax.set_ylabel(f"predicted {_value_label(quantity, unit)}", fontsize=8)
    grid.flat[0].set_xlim(lo, hi)
    grid.flat[0].set_ylim(lo, hi)
    grid.flat[0].legend(fontsize=7, loc="upper left")
    if z is not None:
        cb = fig.colorbar(sc, ax=grid, label=_depth_label(depth_unit), shrink=0.6)
        cb.solids.set_alpha(1.0)
        cb.ax.invert_yaxis()                                     # deeper at the bottom, as on a track
    fig.suptitle(title or f"Predicted against observed {quantity}, one panel per model (dashed: 1:1)", fontsize=11)
    return fig
