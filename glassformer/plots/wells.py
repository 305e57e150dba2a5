"""Results per well: one metric of every model on every held-out well, side by side."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import InputError
from ._common import _one_axes, model_colour

__all__ = ["plot_metric_per_well"]


def plot_metric_per_well(table, *, metric="RMSE", unit="log10 mD", spread=None, title=None, ax=None):
    """Horizontal bars: for each well (a group of rows), one bar per model.

    Parameters
    ----------
    table : dict of str -> dict of str -> float
        ``table[well][model]``: the metric of each model on each well (NaN or None: no bar).
        The group order is the dict's; a last group such as ``"mean over folds"`` is drawn the same way.
    metric, unit : str
        Axis label, e.g. ``RMSE`` in ``log10 mD``.
    spread : dict, optional
        ``spread[well][model]``: a standard deviation drawn as an error bar (e.g. over folds).

    Returns
    -------
    matplotlib.axes.Axes
    """
    if not isinstance(table, Mapping) or not table:
        raise InputError("plot_metric_per_well: table must be a non-empty dict {well: {model: value}}")
    wells = list(table)
    models = list(dict.fromkeys(m for w in wells for m in table[w]))
    n_m = len(models)
    ax = _one_axes(ax, (9.5, 1.2 + 0.3 * n_m * len(wells)))
    height = 0.8 / n_m
    for j, m in enumerate(models):
        y = np.arange(len(wells)) + (j - (n_m - 1) / 2) * height
        vals = np.array([np.nan if (table[w].get(m) is None) else float(table[w][m]) for w in wells])
        err = None
        if spread:
            err = np.array([np.nan if (spread.get(w, {}).get(m) is None) else float(spread[w][m]) for w in wells])
        ax.barh(y, vals, height=height * 0.9, color=model_colour(m, j), label=m, xerr=err,
                error_kw={"elinewidth": 1, "capsize": 2})
        ends = vals + (np.nan_to_num(err) if err is not None else 0.0)      # the label clears the error bar
        for yy, v, end in zip(y, vals, ends):
            if np.isfinite(v):
                ax.text(end, yy, f" {v:.3f}", va="center", fontsize=7)
    ax.set_yticks(np.arange(len(wells)), wells)
    ax.invert_yaxis()                         # first well on top, as in the tables
    ax.set_xlabel(f"{metric} ({unit})" if unit else metric)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_xlim(0, np.nanmax([np.nanmax(list(_values(table, w))) for w in wells] + [0.0]) * 1.15 + 1e-12)
    ax.set_title(title or f"{metric} of every model on every held-out well (lower is better)")
    return ax


def _values(table, well):
    for v in table[well].values():
        yield np.nan if v is None else float(v)
