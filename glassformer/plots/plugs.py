"""Core-to-log depth matching: correlation against depth shift per core run, and the core
porosity drawn over the log before and after the shifts.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, ShapeError
from ._common import _axes_grid, _depth_label, _invert_depth, _one_axes, _vector

__all__ = ["plot_plugs_on_log", "plot_depth_match", "plot_shift_correlation"]

_ESTIMATED = ("estimated", "at the window edge")
_CHOSEN = ("set by user", "disabled")


def plot_shift_correlation(candidates, correlations, *, runs, shifts, n_plugs=None, intervals=None,
                           status=None, reference=None, curve="PHIF", depth_unit="m", title=None, ax=None):
    """Correlation of core porosity with a log curve against the depth shift tried, one line per run.

    Parameters
    ----------
    candidates : array-like of shape (n_shifts,)
        Shifts tried, in ``depth_unit`` (added to the core depths; positive = deeper).
    correlations : array-like of shape (n_runs, n_shifts)
        Pearson correlation per run and shift; NaN where it could not be computed.
    runs : sequence of length n_runs
        Run (core) labels.
    shifts : sequence of float, length n_runs
        The shift kept for each run; marked with a filled circle on its line.
    n_plugs : sequence of int, optional
        Plugs behind each line, for the legend.
    intervals : sequence of (float, float), optional
        Per run, the shifts whose correlation is as good within one standard error (drawn as a
        bar under the marker; NaN pairs are skipped).
    status : sequence of str, optional
        Per run, as ``RunShift.status``: "estimated" and "at the window edge" are drawn solid;
        "set by user" and "disabled" dashed with a hollow marker; any other status ("too few
        plugs", "no correlation") gets a legend entry only, since a correlation over a handful
        of plugs swings wildly and says nothing.  Default: all "estimated".
    reference : dict of run -> float, optional
        Published or expected shifts, marked with a black cross on each line.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ShapeError
        If ``correlations`` is not (len(runs), len(candidates)) or a per-run list has another length.
    """
    where = "plot_shift_correlation"
    x = _vector(candidates, "candidates", where)
    r = np.asarray(correlations, dtype=float)
    n_runs = len(runs)
    if r.shape != (n_runs, x.size):
        raise ShapeError(f"{where}: correlations must have shape (n_runs={n_runs}, n_shifts={x.size}), got {r.shape}")
    shifts = _per_run(shifts, n_runs, "shifts", where)
    status = ["estimated"] * n_runs if status is None else _per_run(status, n_runs, "status", where)
    intervals = [(np.nan, np.nan)] * n_runs if intervals is None else _per_run(intervals, n_runs, "intervals", where)
    ax = _one_axes(ax, (8.0, 4.6))
    ax.axvline(0.0, color="0.5", lw=0.8, zorder=0)
    reference = {str(k): float(v) for k, v in (reference or {}).items()}
    for i, run in enumerate(runs):
        colour = f"C{i % 10}"
        label = _run_label(run, shifts[i], r[i], x, None if n_plugs is None else n_plugs[i], status[i])
        estimated = status[i] in _ESTIMATED
        if not (estimated or status[i] in _CHOSEN):
            ax.plot([], [], color=colour, lw=1.0, ls=":", label=label)
            continue
        style = {"lw": 1.6} if estimated else {"lw": 1.0, "ls": "--", "alpha": 0.7}
        ax.plot(x, r[i], color=colour, label=label, **style)
        at = np.interp(shifts[i], x, r[i]) if np.isfinite(r[i]).any() else np.nan
        ax.plot(shifts[i], at, "o", color=colour, ms=7, mfc=colour if estimated else "white", zorder=5)
        lo, hi = intervals[i]
        if np.isfinite(lo) and np.isfinite(hi) and np.isfinite(at):
            ax.plot([lo, hi], [at, at], color=colour, lw=5, alpha=0.25, solid_capstyle="butt", zorder=3)
        if str(run) in reference and np.isfinite(r[i]).any():
            ref = reference[str(run)]
            ax.plot(ref, np.interp(ref, x, r[i]), "x", color="black", ms=7, mew=1.6, zorder=6)
    if reference:
        ax.plot([], [], "x", color="black", ms=7, mew=1.6, label="published shift")
    ax.set_xlabel(f"Shift added to core depth ({depth_unit}; positive = core moved deeper)")
    ax.set_ylabel(f"Correlation, core porosity vs {curve} (Pearson r)")
    ax.set_xlim(x[0], x[-1])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_title(title or "Depth matching: correlation against shift per core run")
    return ax


def plot_depth_match(match, *, reference=None, title=None, ax=None):
    """:func:`plot_shift_correlation` for a ``DepthMatch`` (from ``estimate_depth_shifts``).

    Shaded bars show, per run, the shifts whose correlation is within one standard error of the
    best; runs whose shift was not estimated are dashed with a hollow marker.
    """
    return plot_shift_correlation(
        match.candidates, match.correlations, runs=[r.run for r in match.runs],
        shifts=[r.shift for r in match.runs], n_plugs=[r.n for r in match.runs],
        intervals=[r.interval for r in match.runs],
        status=[r.status for r in match.runs],
        reference=reference, curve=match.curve, depth_unit=match.depth_unit, title=title, ax=ax)


def plot_plugs_on_log(log_depth, log_porosity, core_depth, core_porosity, *, shifted_depth=None, run=None,
                      curve="PHIF", depth_unit="m", top=None, base=None, title=None, axes=None):
    """Core porosity (dots) over the log porosity (line) against depth: as measured, and shifted.

    Parameters
    ----------
    log_depth, log_porosity : array-like of shape (n_samples,)
        The log curve, fraction v/v (NaN = gap).
    core_depth, core_porosity : array-like of shape (n_plugs,)
        Plug depths as measured and core porosity, fraction v/v.
    shifted_depth : array-like of shape (n_plugs,), optional
        Plug depths after the depth shifts; adds a second track.
    run : array-like of shape (n_plugs,), optional
        Run label per plug; each run gets its colour.
    top, base : float, optional
        Depth range shown; default the plugs' range with a margin.

    Returns
    -------
    numpy.ndarray of Axes, shape (1,) or (2,)
    """
    where = "plot_plugs_on_log"
    ld = _vector(log_depth, "log_depth", where)
    lp = _vector(log_porosity, "log_porosity", where, ld.size)
    cd = _vector(core_depth, "core_depth", where)
    cp = _vector(core_porosity, "core_porosity", where, cd.size)
    tracks = [("as measured", cd)]
    if shifted_depth is not None:
        tracks.append(("after depth shifts", _vector(shifted_depth, "shifted_depth", where, cd.size)))
    labels = np.full(cd.size, "", dtype=object) if run is None else np.asarray(run, dtype=object)
    if labels.shape != cd.shape:
        raise ShapeError(f"{where}: run must have shape {cd.shape} (one label per plug), got {labels.shape}")
    every = np.concatenate([d for _, d in tracks])
    lo = float(np.min(every)) - 1.0 if top is None else float(top)
    hi = float(np.max(every)) + 1.0 if base is None else float(base)
    if not lo < hi:
        raise InputError(f"{where}: top {lo:g} must lie above base {hi:g}")
    _, grid = _axes_grid(axes, 1, len(tracks), (3.4 * len(tracks) + 1.2, 8.0), where, sharey=True)
    keep = (ld >= lo) & (ld <= hi)
    for j, (ax, (name, depth)) in enumerate(zip(grid.flat, tracks)):
        ax.plot(lp[keep], ld[keep], color="0.25", lw=1.0, label=f"{curve} (log)")
        for i, label in enumerate(dict.fromkeys(labels.tolist())):
            mine = labels == label
            shown = mine & (depth >= lo) & (depth <= hi)
            if shown.any():  # only runs in view get a legend entry
                ax.plot(cp[shown], depth[shown], "o", ms=2.6, color=f"C{i % 10}",
                        label=f"core {label}" if label != "" else "core plugs")
        ax.set_xlabel("Porosity (fraction, v/v)")
        ax.xaxis.set_label_position("top")
        ax.xaxis.tick_top()
        ax.set_title(name, fontsize=9, y=-0.04, va="top")
        ax.grid(alpha=0.3)
        if j == 0:
            ax.set_ylabel(_depth_label(depth_unit))
        _invert_depth(ax, np.array([lo, hi]))
    grid.flat[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    grid.flat[0].figure.suptitle(title or "Core porosity over the log porosity")
    return grid.ravel()


def _per_run(values, n, name, where):
    values = list(values)
    if len(values) != n:
        raise ShapeError(f"{where}: {name} must have one entry per run ({n}), got {len(values)}")
    return values


def _run_label(run, shift, r, x, n, status):
    at = np.interp(shift, x, r) if np.isfinite(r).any() else np.nan
    plugs = f", n={n}" if n is not None else ""
    if status in _ESTIMATED:
        edge = " (window edge)" if status != "estimated" else ""
        return f"core {run}{plugs}: {shift:+.2f}, r={at:.2f}{edge}"
    return f"core {run}{plugs}: {shift:+.2f} ({status})"
