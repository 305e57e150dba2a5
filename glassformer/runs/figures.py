"""The figures every run folder holds, drawn from arrays or a model's trace into ``figures/``.

The single place where run figures are drawn (with :mod:`glassformer.plots`), so the demos, the
CLI and Python users get the same pictures.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .. import plots
from .folder import write_json

__all__ = ["close_figure", "write_figures", "write_trace_figures"]


def write_figures(run_dir, *, history=None, depth=None, observed=None, predictions=None, boundary=None,
                  quantity="log10 permeability", unit="log10 mD", log_scale=False, porosity=None,
                  permeability=None, log_perm=True, porosity_unit="fraction", crossplot_labels=None,
                  attention=None, attention_depths=None, depth_unit="m", title="", extra=None,
                  attention_title=None, permeability_quantity="Permeability", permeability_unit="mD") -> list:
    """Write the standard figures of a run into ``run_dir/figures`` and return their paths.

    Every argument group is optional; a figure is drawn when its data are given:

    * ``loss.png`` -- ``history`` (a :class:`~glassformer.train.History`);
    * ``prediction_vs_depth.png`` -- ``depth``, ``observed`` and ``predictions`` (dict name -> array)
      with the train/forecast ``boundary`` depth;
    * ``crossplot.png`` -- ``porosity`` against ``permeability`` (``permeability_quantity`` in
      ``permeability_unit``, mD by default; log scale unless ``log_perm`` is False);
    * ``attention.png`` -- one ``attention`` matrix (query x key) labelled with ``attention_depths``,
      and ``attention.json`` beside it (the matrix, its depths and unit) for the report's heat map;
    * ``extra``: dict name -> callable(ax-less) returning a Figure/Axes, saved as ``<name>.png``.

    The single place where run figures are drawn, so the plotting back end can be swapped.
    """
    figdir = Path(run_dir) / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    written = []

    def save(fig, name):
        written.append(plots.save_figure(fig, figdir / name))
        close_figure(fig)

    if history is not None and len(history.train_loss):
        h = {"train": history.train_loss}
        if any(np.isfinite(history.val_loss)):
            h["val"] = history.val_loss
        save(plots.plot_loss(h, title=f"{title} loss per epoch".strip()), "loss.png")
    if depth is not None and observed is not None and predictions:
        save(plots.plot_comparison_zoomed(depth, observed, predictions, boundary=boundary, quantity=quantity,
                                          unit=unit, log_scale=log_scale, depth_unit=depth_unit, title=title),
             "prediction_vs_depth.png")
    if porosity is not None and permeability is not None:
        what = "permeability" if permeability_quantity == "Permeability" else permeability_quantity
        ax = plots.plot_crossplot(porosity, permeability, log_perm=log_perm, labels=crossplot_labels,
                                  porosity_unit=porosity_unit, depth_unit=depth_unit,
                                  quantity=permeability_quantity, unit=permeability_unit,
                                  title=f"{title} porosity-{what}".strip())
        save(ax, "crossplot.png")
    if attention is not None:
        A = np.asarray(attention, dtype=float)
        # Near-uniform weights on a fixed 0-1 scale are one flat colour: stretch the scale to min-max
        # (and say so in the title) so the small contrasts the model did learn stay visible.
        flat = float(np.ptp(A)) < 0.25
        # Long depth labels (e.g. 2223.5) on 16 ticks run into each other: fewer ticks then.
        long_labels = attention_depths is not None and max(len(f"{v:g}") for v in np.ravel(attention_depths)) >= 4
        ax = plots.plot_attention(A, query_depths=attention_depths, vmin=None if flat else 0.0,
                                  vmax=None, depth_unit=depth_unit, max_ticks=8 if long_labels else 16,
                                  title=(attention_title or f"{title} attention weights (layer 0, head 0)"
                                         + ("\ncolour scale stretched to min-max: weights are near uniform"
                                            if flat else "")).strip())
        save(ax, "attention.png")
        # The matrix beside its picture: the report draws it as a heat map that shows each cell's
        # query depth, key depth and weight on hover.
        depths = None if attention_depths is None else np.asarray(attention_depths, dtype=float)
        write_json(figdir / "attention.json", {
            "title": (attention_title or f"{title} attention weights (layer 0, head 0)").strip(),
            "matrix": A, "query_positions": depths, "key_positions": depths if depths is not None and
            len(depths) == A.shape[1] else None, "position_unit": depth_unit})
    for name, make in (extra or {}).items():
        save(make(), f"{name}.png")
    return written


def write_trace_figures(run_dir, trace, depth, *, intervals=None, sequences=(0,), sample=0, depth_unit="m") -> list:
    """The chapter's look inside the model, from one ``model.trace(...)``, into ``run_dir/figures``.

    Writes ``positional_encoding.png`` (P against depth), ``embeddings.png`` (E, P, Z side by side),
    ``qkv.png`` (layer 0, batch element ``sample``), ``value_vs_output.png`` (V and U of
    ``sequences``) and ``stages.png`` (Z, T1, R, F, T2, H of ``sequences``).  ``intervals``
    (e.g. ``{"train": (0.5, 7.5), "forecast": (7.5, 14.5)}``) are shaded on the depth plots.
    Returns the written paths.
    """
    figdir = Path(run_dir) / "figures"
    written = []
    depth = np.asarray(depth, dtype=float)
    P = np.asarray(trace["P"])
    P = P[sample] if P.ndim == 3 else P
    makers = {
        "positional_encoding": lambda: plots.plot_positional_encoding(depth, P, intervals=intervals,
                                                                      depth_unit=depth_unit),
        "embeddings": lambda: plots.plot_trace_embeddings(trace, depth, sample=sample, intervals=intervals,
                                                          depth_unit=depth_unit),
        "qkv": lambda: plots.plot_trace_qkv(trace, depth, sample=sample, intervals=intervals, depth_unit=depth_unit),
        "value_vs_output": lambda: plots.plot_trace_value_vs_output(trace, depth, sequences=sequences,
                                                                    depth_unit=depth_unit),
        "stages": lambda: plots.plot_trace_stages(trace, depth, sequences=sequences, depth_unit=depth_unit),
    }
    for name, make in makers.items():
        fig = make()
        written.append(plots.save_figure(fig, figdir / f"{name}.png"))
        close_figure(fig)
    return written


def close_figure(fig) -> None:
    """Let pyplot forget a drawn figure (``fig``: a Figure, Axes or array of Axes).

    The plots make pyplot-managed figures only when the caller has imported pyplot (in Jupyter, say);
    otherwise they are standalone and nothing holds them, so pyplot is never imported here.
    """
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    figure = fig if hasattr(fig, "savefig") else getattr(fig, "figure", None)
    if figure is None:
        figure = np.asarray(fig, dtype=object).flat[0].figure
    pyplot.close(figure)
