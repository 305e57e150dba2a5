"""glassformer.plots.plugs: the depth-matching figures draw exactly the correlations, shifts and
depths they are given (Agg back end)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from glassformer import plots as gp  # noqa: E402
from glassformer.data import PlugTable, WellLog, estimate_depth_shifts  # noqa: E402
from glassformer.errors import ShapeError  # noqa: E402

SHIFTS = np.linspace(-1.0, 1.0, 21)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def curves():
    return np.vstack([1 - (SHIFTS - 0.4) ** 2, 0.5 - 0.3 * (SHIFTS + 0.2) ** 2, np.full(21, np.nan)])


def test_one_line_per_run_with_the_chosen_shift_marked_on_it():
    r = curves()
    ax = gp.plot_shift_correlation(SHIFTS, r, runs=[1, 2, 3], shifts=[0.4, -0.2, 0.0], n_plugs=[60, 40, 2],
                                   intervals=[(0.3, 0.5), (np.nan, np.nan), (np.nan, np.nan)],
                                   status=["estimated", "set by user", "too few plugs"], reference={1: 0.5})
    labels = [line.get_label() for line in ax.lines]
    curve_1 = ax.lines[labels.index("core 1, n=60: +0.40, r=1.00")]
    np.testing.assert_array_equal(curve_1.get_xdata(), SHIFTS)
    np.testing.assert_array_equal(curve_1.get_ydata(), r[0])
    assert curve_1.get_linestyle() == "-"
    markers = [line for line in ax.lines if line.get_marker() == "o"]
    np.testing.assert_allclose([m.get_xdata()[0] for m in markers], [0.4, -0.2])
    np.testing.assert_allclose([m.get_ydata()[0] for m in markers], [1.0, 0.5])
    assert markers[1].get_markerfacecolor() == "white"  # set by the user: hollow
    assert ax.lines[labels.index("core 2, n=40: -0.20 (set by user)")].get_linestyle() == "--"
    # a run with too few plugs gets a legend entry and no curve
    too_few = ax.lines[labels.index("core 3, n=2: +0.00 (too few plugs)")]
    assert len(too_few.get_xdata()) == 0
    cross = [line for line in ax.lines if line.get_marker() == "x" and len(line.get_xdata())]
    np.testing.assert_allclose([cross[0].get_xdata()[0], cross[0].get_ydata()[0]], [0.5, 0.99])
    bar = [line for line in ax.lines if line.get_linewidth() == 5]
    np.testing.assert_allclose(bar[0].get_xdata(), [0.3, 0.5])
    assert ax.get_xlabel().startswith("Shift added to core depth (m")
    assert ax.get_ylabel() == "Correlation, core porosity vs PHIF (Pearson r)"


def test_shapes_are_checked():
    with pytest.raises(ShapeError, match=r"correlations must have shape \(n_runs=2, n_shifts=21\)"):
        gp.plot_shift_correlation(SHIFTS, curves(), runs=[1, 2], shifts=[0, 0])
    with pytest.raises(ShapeError, match="shifts must have one entry per run"):
        gp.plot_shift_correlation(SHIFTS, curves(), runs=[1, 2, 3], shifts=[0, 0])


def test_plot_depth_match_draws_an_estimate_and_writes_a_png(tmp_path):
    rng = np.random.default_rng(0)
    depth = np.arange(0.0, 60.0, 0.1524)
    phif = np.convolve(rng.normal(0.2, 0.05, depth.size), np.ones(3) / 3, mode="same")
    plugs = np.sort(rng.uniform(10.0, 40.0, 80))
    core = PlugTable(depth=plugs, porosity=np.interp(plugs + 0.6, depth, phif), permeability=np.full(80, np.nan))
    match = estimate_depth_shifts(core, WellLog(name="w", depth=depth, curves={"PHIF": phif}))
    ax = gp.plot_depth_match(match)
    curve = [line for line in ax.lines if line.get_label().startswith("core all")][0]
    np.testing.assert_array_equal(curve.get_ydata(), match.correlations[0])
    marker = [line for line in ax.lines if line.get_marker() == "o"][0]
    assert marker.get_xdata()[0] == match.runs[0].shift == pytest.approx(0.6, abs=0.1524)
    path = gp.save_figure(ax, tmp_path / "match.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_core_on_log_draws_plugs_as_measured_and_shifted():
    depth = np.arange(100.0, 110.0, 0.5)
    axes = gp.plot_plugs_on_log(depth, np.linspace(0.1, 0.3, depth.size), [102.0, 103.0, 104.0], [0.1, 0.2, 0.3],
                                shifted_depth=[102.5, 103.5, 104.5], run=[1, 1, 2])
    assert len(axes) == 2
    run_2 = [line for line in axes[1].lines if line.get_label() == "core 2"][0]
    np.testing.assert_array_equal(run_2.get_ydata(), [104.5])
    run_1 = [line for line in axes[0].lines if line.get_label() == "core 1"][0]
    np.testing.assert_array_equal(run_1.get_ydata(), [102.0, 103.0])
    lo, hi = axes[0].get_ylim()
    assert lo > hi  # depth increases downward
    with pytest.raises(ShapeError, match="one label per plug"):
        gp.plot_plugs_on_log(depth, depth * 0, [102.0], [0.1], run=[1, 2])
