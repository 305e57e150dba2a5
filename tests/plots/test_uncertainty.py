"""glassformer.plots.uncertainty: the band and the coverage figure draw exactly what they are given."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from glassformer import plots as gp  # noqa: E402
from glassformer.errors import ShapeError  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def test_band_p50_and_observed_by_role():
    depth = np.arange(100.0, 110.0, 0.5)                           # 20 samples
    p50 = np.linspace(0, 1, 20)
    observed = np.full(20, np.nan)
    observed[[3, 5, 12]] = [0.1, 0.3, 0.9]
    roles = np.array([""] * 20, dtype=object)
    roles[[3, 5]], roles[12] = "train", "test"
    ax = gp.plot_interval_vs_depth(depth, p50 - 0.2, p50, p50 + 0.2, observed=observed, roles=roles,
                                   curves={"KLOGH": p50 + 1}, top=100.0, base=110.0)
    labels = [line.get_label() for line in ax.lines]
    assert labels == ["P50", "KLOGH", "train (2)", "test (1)"]
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), p50)
    np.testing.assert_array_equal(ax.lines[2].get_ydata(), depth[[3, 5]])
    np.testing.assert_array_equal(ax.lines[3].get_xdata(), [0.9])
    lo, hi = ax.get_ylim()
    assert lo > hi                                                  # depth increases downward
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 0].min() == pytest.approx(-0.2) and band[:, 0].max() == pytest.approx(1.2)
    # by default the view is the observed depths, 101.5 to 106 m, with 1 m either side
    ax = gp.plot_interval_vs_depth(depth, p50 - 0.2, p50, p50 + 0.2, observed=observed, roles=roles)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), depth[(depth >= 100.5) & (depth <= 107.0)])


def test_band_refuses_arrays_of_another_length():
    with pytest.raises(ShapeError, match="p90 must have length 5"):
        gp.plot_interval_vs_depth(np.arange(5.0), np.zeros(5), np.zeros(5), np.zeros(4))


def test_coverage_lines_and_the_diagonal():
    nominal = [0.2, 0.5, 0.8]
    ax = gp.plot_coverage(nominal, {"before calibration": [0.05, 0.1, 0.2], "after calibration": [0.2, 0.45, 0.78]},
                          n=100)
    labels = [line.get_label() for line in ax.lines]
    assert labels[:3] == ["calibrated (diagonal)", "before calibration", "after calibration"]
    np.testing.assert_array_equal(ax.lines[2].get_ydata(), [0.2, 0.45, 0.78])
    band = ax.collections[0].get_paths()[0].vertices               # 95 % binomial band around the diagonal at n=100
    half = 1.96 * np.sqrt(0.5 * 0.5 / 100)
    assert band[:, 1].max() == pytest.approx(0.8 + 1.96 * np.sqrt(0.8 * 0.2 / 100))
    assert np.any(np.isclose(band[:, 1], 0.5 + half))
