"""Uncertainty figures: the P10-P90 band of an ensemble against depth, and measured coverage.

* :func:`plot_interval_vs_depth` -- P50 as a line inside the shaded P10-P90 band, other curves
  (a log-derived permeability, a baseline) as thin lines, and the observed values (core plugs)
  as dots coloured by their role (train, validation, test);
* :func:`plot_coverage` -- the share of held-out values inside the central interval against the
  interval's nominal coverage, before and after calibration: a calibrated interval lies on the
  diagonal.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ._common import _INTERVAL_COLOURS, _depth_label, _invert_depth, _one_axes, _value_label, _vector

__all__ = ["plot_coverage", "plot_interval_vs_depth"]


def plot_interval_vs_depth(depth, p10, p50, p90, *, observed=None, roles=None, curves=None, quantity="Permeability",
                           unit="log10 mD", depth_unit="m", top=None, base=None, title=None, ax=None):
    """P10-P90 band and P50 against depth (depth down), with observed values as dots.

    Parameters
    ----------
    depth, p10, p50, p90 : array-like of shape (n_samples,)
        Depths (``depth_unit``) and the quantiles in ``unit`` (NaN: no prediction there).
    observed : array-like of shape (n_samples,), optional
        Observed values (e.g. core permeability on the log grid), NaN where none; drawn as dots
        (as a line when there are no ``roles`` and more than 300 values: a whole log).
    roles : array-like of str, shape (n_samples,), optional
        Role of each observed value ("train", "validation", "test"); each role gets its colour.
    curves : dict name -> array (n_samples,), optional
        Further curves drawn as thin lines (a log-derived permeability, a baseline).
    top, base : float, optional
        Depth range shown; default the range of the observed values (else of the band) with a margin.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ShapeError
        An array whose length differs from ``depth``.
    """
    where = "plot_interval_vs_depth"
    d = _vector(depth, "depth", where)
    lo, mid, hi = (_vector(v, name, where, d.size) for v, name in ((p10, "p10"), (p50, "p50"), (p90, "p90")))
    ax = _one_axes(ax, (5.2, 8.0))
    obs = None if observed is None else _vector(observed, "observed", where, d.size)
    shown = np.isfinite(obs) if obs is not None and np.isfinite(obs).any() else np.isfinite(mid)
    top = float(d[shown].min()) - 1.0 if top is None else float(top)
    base = float(d[shown].max()) + 1.0 if base is None else float(base)
    view = (d >= top) & (d <= base)
    ax.fill_betweenx(d[view], lo[view], hi[view], color="tab:purple", alpha=0.25, lw=0, label="P10-P90")
    ax.plot(mid[view], d[view], color="tab:purple", lw=1.2, label="P50")
    for i, (name, values) in enumerate((curves or {}).items()):
        v = _vector(values, name, where, d.size)
        ax.plot(v[view], d[view], color=f"C{(i + 7) % 10}", lw=0.8, alpha=0.8, label=name)
    if obs is not None:
        _observed_dots(ax, d, obs, view, roles, where)
    ax.set_xlabel(_value_label(quantity, unit))
    ax.set_ylabel(_depth_label(depth_unit))
    ax.grid(alpha=0.3)
    _invert_depth(ax, np.array([top, base]))
    ax.legend(fontsize=7, loc="best")
    ax.set_title(title or "P50 and the P10-P90 interval against depth", fontsize=10)
    return ax


def _observed_dots(ax, d, obs, view, roles, where):
    if roles is None and int((view & np.isfinite(obs)).sum()) > 300:      # a whole log: a line, not dots
        ax.plot(obs[view], d[view], color="black", lw=0.7, label="observed", zorder=4)
        return
    labels = np.full(d.size, "observed", dtype=object) if roles is None else np.asarray(roles, dtype=object)
    if labels.shape != d.shape:
        raise ShapeError(f"{where}: roles must have shape {d.shape} (one per depth), got {labels.shape}")
    have = view & np.isfinite(obs)
    for role in dict.fromkeys(labels[have].tolist()):
        mine = have & (labels == role)
        ax.plot(obs[mine], d[mine], "o", ms=3.0, color=_INTERVAL_COLOURS.get(str(role), "black"),
                label=f"{role} ({int(mine.sum())})", zorder=5)


def plot_coverage(nominal, curves, *, n=None, title=None, ax=None):
    """Empirical against nominal coverage of central intervals, one line per curve.

    Parameters
    ----------
    nominal : array-like of shape (n_levels,)
        Nominal coverage of each interval (0-1), e.g. 0.1 ... 0.9.
    curves : dict name -> array-like of shape (n_levels,)
        Measured coverage (0-1) per level, e.g. ``{"before calibration": ..., "after calibration": ...}``.
    n : int, optional
        Held-out values behind the measurement; draws the 95 % binomial band around the diagonal
        (``±1.96 sqrt(p (1 - p) / n)``, for independent values).

    Returns
    -------
    matplotlib.axes.Axes
    """
    where = "plot_coverage"
    x = _vector(nominal, "nominal", where)
    ax = _one_axes(ax, (5.4, 5.0))
    ax.plot([0, 1], [0, 1], color="0.4", lw=1.0, ls="--", label="calibrated (diagonal)")
    if n:
        se = 1.96 * np.sqrt(x * (1 - x) / n)
        ax.fill_between(x, x - se, x + se, color="0.5", alpha=0.15, lw=0, label=f"95 % binomial band, n={n}")
    for i, (name, values) in enumerate(curves.items()):
        ax.plot(x, _vector(values, name, where, x.size), "o-", color=f"C{i}", ms=4, lw=1.4, label=name)
    if np.any(np.isclose(x, 0.8)):
        ax.axvline(0.8, color="0.6", lw=0.8, ls=":")
        ax.text(0.805, 0.02, "P10-P90", fontsize=8, color="0.4")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("Nominal coverage of the central interval")
    ax.set_ylabel("Share of held-out values inside it")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(title or "Coverage on held-out data", fontsize=10)
    return ax
