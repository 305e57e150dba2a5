"""The sweep figure: the settings ranked by validation RMSE, with every baseline named."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from glassformer.plots.sweep import plot_sweep  # noqa: E402


def _rows():
    return [{"setting": f"d_model {d}, lr {lr}", "d_model": d, "lr": lr, "status": "ok", "val_rmse": v}
            for (d, lr), v in zip([(8, 1e-3), (8, 3e-3), (16, 1e-3), (16, 3e-3)], [0.20, 0.15, 0.10, 0.05])]


def test_far_baselines_are_named_off_the_axis_and_near_ones_drawn():
    baselines = {"random forest": 0.30, "gradient boosting": 0.12, "porosity-permeability transform": 0.85,
                 "training mean": 1.73}
    fig = plot_sweep(_rows(), ["d_model", "lr"], 3, baselines)
    ranked = next(ax for ax in fig.axes if ax.get_xlabel().startswith("validation RMSE"))
    labels = {text for ax in fig.axes for text in ax.get_legend_handles_labels()[1]}
    labels |= {t.get_text() for legend in fig.legends for t in legend.get_texts()}
    assert {"random forest (0.3)", "gradient boosting (0.12)", "porosity-permeability transform (0.85, off the axis)",
            "training mean (1.73, off the axis)"} <= labels, labels
    assert abs(ranked.get_xlim()[1] - 1.15 * 0.30) < 1e-12          # the axis ends just past the random forest
    assert sorted(line.get_xdata()[0] for line in ranked.get_lines() if len(line.get_xdata())) == [0.12, 0.30]
