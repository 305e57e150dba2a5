"""The figure of a settings sweep: validation error against each swept setting, and every setting ranked."""

from __future__ import annotations

import math

from matplotlib.lines import Line2D
from matplotlib.transforms import ScaledTranslation
import numpy as np

from ..errors import InputError
from ._common import _new_figure

__all__ = ["plot_sweep"]

#: Settings listed in the ranked panel at most (the best ones).
MAX_RANKED = 30

_NAMES = {"d_model": "d_model", "num_heads": "attention heads", "num_layers": "encoder layers",
          "window": "window (samples)", "lr": "learning rate"}
_BASELINE_STYLE = (("tab:gray", "--"), ("tab:brown", ":"), ("tab:olive", "-."), ("tab:purple", (0, (5, 2, 1, 2))),
                   ("tab:green", (0, (1, 1))), ("black", (0, (8, 3))), ("tab:cyan", "--"), ("tab:pink", ":"))


def _score(row: dict) -> float:
    v = row.get("val_rmse") if row.get("status", "ok") == "ok" else None
    return math.inf if v is None or not math.isfinite(v) else float(v)


def _parameter_panel(ax, rows: list, key: str, chosen: int, unit: str) -> None:
    values = sorted({r[key] for r in rows})
    where = {v: i for i, v in enumerate(values)}
    x = np.array([where[r[key]] for r in rows], dtype=float)
    y = np.array([_score(r) for r in rows])
    ok = np.isfinite(y)
    # spread the settings that share a value a little, in grid order, so none hides another
    offsets = np.zeros_like(x)
    for v in range(len(values)):
        idx = np.flatnonzero((x == v) & ok)
        offsets[idx] = np.linspace(-0.15, 0.15, len(idx)) if len(idx) > 1 else 0.0
    ax.plot(x[ok] + offsets[ok], y[ok], "o", color="tab:blue", alpha=0.7)
    best = [np.min(y[(x == v) & ok]) if ((x == v) & ok).any() else np.nan for v in range(len(values))]
    ax.plot(range(len(values)), best, "-", color="tab:blue", lw=1, alpha=0.6)
    ax.plot(x[chosen] + offsets[chosen], y[chosen], "*", color="tab:red", ms=14, zorder=5)
    ax.set_xticks(range(len(values)), [f"{v:g}" if key == "lr" else str(v) for v in values])
    ax.set_xlim(-0.5, len(values) - 0.5)
    ax.set_xlabel(_NAMES.get(key, key))
    ax.set_ylabel(f"validation RMSE ({unit})")
    ax.grid(alpha=0.3)


def _ranked_panel(ax, rows: list, chosen: int, baselines: dict, unit: str) -> None:
    order = sorted(range(len(rows)), key=lambda i: (_score(rows[i]), i))[:MAX_RANKED]
    scores = [_score(rows[i]) for i in order]
    finite = [s for s in scores if math.isfinite(s)]
    worst = max(finite) if finite else 1.0
    # baselines far above every setting would squash the bars: they are named in the legend, off the axis
    shown = {k: v for k, v in baselines.items() if v is not None and math.isfinite(v)}
    drawn = {k: v for k, v in shown.items() if v <= 2 * worst}
    top = max([worst, *drawn.values()])
    for pos, (i, s) in enumerate(zip(order, scores)):
        colour = "tab:red" if i == chosen else "tab:blue"
        if math.isfinite(s):
            ax.barh(pos, s, color=colour, alpha=0.85)
            ax.text(s, pos, f" {s:.3g}", va="center", fontsize=8)
        else:
            ax.text(0, pos, " failed: " + (rows[i].get("error") or "no validation prediction")[:60], va="center",
                    fontsize=8, color="tab:red")
    for (name, rmse), (colour, style) in zip(drawn.items(), _BASELINE_STYLE):
        ax.axvline(rmse, color=colour, ls=style, lw=1.2, label=f"{name} ({rmse:.3g})")
    for name, rmse in shown.items():
        if name not in drawn:
            ax.plot([], [], " ", label=f"{name} ({rmse:.3g}, off the axis)")
    ax.set_yticks(range(len(order)), [rows[i]["setting"] for i in order], fontsize=8)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(0, 1.15 * top)
    shown = f"best {len(order)} of {len(rows)} settings" if len(order) < len(rows) else f"all {len(rows)} settings"
    ax.set_xlabel(f"validation RMSE ({unit}); {shown}, chosen in red")
    ax.grid(axis="x", alpha=0.3)


def _legend(ax, varied: bool) -> None:
    """One legend for every panel, under the ranked panel (where it hides no bar)."""
    handles, labels = ax.get_legend_handles_labels()
    if varied:
        handles = [Line2D([], [], ls="", marker="o", color="tab:blue", alpha=0.7),
                   Line2D([], [], color="tab:blue", lw=1, alpha=0.6),
                   Line2D([], [], ls="", marker="*", color="tab:red", ms=12), *handles]
        labels = ["a setting (upper panels)", "best at each value", "chosen", *labels]
    if handles:
        below = ax.transAxes + ScaledTranslation(0, -0.5, ax.figure.dpi_scale_trans)   # 0.5 inch under the axes
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=below, ncols=3,
                  fontsize=8, frameon=False)


def plot_sweep(rows: list, varied: list, chosen: int, baselines: dict | None = None, *, unit: str = "log10 mD",
               title: str | None = None):
    """Validation RMSE of every setting of a sweep: one panel per swept setting, and the settings ranked.

    Parameters
    ----------
    rows : list of dict
        One per setting (:func:`glassformer.wells.sweep.run_sweep`): ``"setting"`` (label), the
        value of each key of ``varied``, ``"val_rmse"`` (None or missing when it failed),
        ``"status"`` and ``"error"``.
    varied : list of str
        The settings that take several values (one panel each, x = their values).
    chosen : int
        Index of the chosen row (a red star and a red bar).
    baselines : dict name -> validation RMSE, optional
        Drawn as reference lines in the ranked panel (the porosity-permeability transform, the
        training mean).
    unit : str
        The RMSE's unit ("log10 mD" or "mD").

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InputError
        No row, ``chosen`` out of range, or a ``varied`` key missing from a row.
    """
    if not rows:
        raise InputError("plot_sweep: no setting to draw")
    if not 0 <= chosen < len(rows):
        raise InputError(f"plot_sweep: chosen={chosen} is not the index of one of the {len(rows)} settings")
    missing = [k for k in varied if any(k not in r for r in rows)]
    if missing:
        raise InputError(f"plot_sweep: rows lack the swept setting(s) {missing}")
    baselines = dict(baselines or {})
    ranked_height = 1.6 + 0.3 * min(len(rows), MAX_RANKED)          # inches: bars, tick labels and the legend
    width = max(7.0, 3.4 * len(varied))
    fig = _new_figure((width, (3.4 if varied else 0) + ranked_height))
    layout = [[k for k in varied], ["ranked"] * len(varied)] if varied else [["ranked"]]
    axes = fig.subplot_mosaic(layout, height_ratios=[3.4, ranked_height] if varied else None)
    for key in varied:
        _parameter_panel(axes[key], rows, key, chosen, unit)
    _ranked_panel(axes["ranked"], rows, chosen, baselines, unit)
    _legend(axes["ranked"], bool(varied))
    fig.suptitle(title or f"Settings chosen on validation data: {rows[chosen]['setting']}", fontsize=11)
    return fig
