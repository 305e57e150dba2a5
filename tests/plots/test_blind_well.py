"""glassformer.plots.blind_well: zooms where the observed target varies, one track per model, residuals,
predicted-against-observed cross-plots on shared axes."""

from __future__ import annotations

import matplotlib.colors as mcolors
import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from numpy.lib.stride_tricks import sliding_window_view

from glassformer.errors import InputError
from glassformer.plots import plot_comparison, plot_metric_per_well
from glassformer.plots.blind_well import plot_blind_well_tracks, plot_predicted_vs_observed, rmse, zoom_windows
from tests.plots._helpers import inverted


def floored_top_well():
    """1,000 samples at 0.1 m (0.0-99.9 m): a floor of -3 (log10 of 0.001 mD) over 0-29.9 m, +-0.5
    alternating over 30-49.9 m, +-1 alternating over 50-69.9 m, a gentle ramp (-0.1 to 0.1) below."""
    depth = np.round(np.arange(1000) * 0.1, 1)
    y = np.empty(1000)
    y[:300] = -3.0
    y[300:500] = 0.5 * (-1.0) ** np.arange(200)
    y[500:700] = (-1.0) ** np.arange(200)
    y[700:] = np.linspace(-0.1, 0.1, 300)
    return depth, y


def test_zoom_lands_on_the_varying_middle_not_on_the_floored_top():
    depth, y = floored_top_well()
    assert zoom_windows(depth, y, length=20.0) == [(50.0, 69.9)]      # 200 samples of +-1: variance exactly 1
    # the second window may not overlap the first: the +-0.5 stretch (variance 0.25, every sample live)
    # beats windows half on the floor with the same variance over fewer live samples
    assert zoom_windows(depth, y, length=20.0, n_windows=2) == [(50.0, 69.9), (30.0, 49.9)]
    # without leaving the floor out, the plain variance would pick a window across the floor's base
    naive = sliding_window_view(y, 200).var(axis=1)
    assert 100 <= int(np.argmax(naive)) < 300 and naive.max() > 2.0


def test_zoom_leaves_out_nan_and_constant_runs_and_gives_none_when_nothing_varies():
    depth = np.round(np.arange(400) * 0.1, 1)
    y = np.full(400, -3.0)
    assert zoom_windows(depth, y, length=5.0) == []                    # floored everywhere: no zoom
    y[100:150] = np.linspace(0.0, 2.0, 50)                             # a 5 m rise in the middle
    y[200:260] = np.nan
    assert zoom_windows(depth, y, length=5.0) == [(10.0, 14.9)]
    with pytest.raises(InputError, match="positive length"):
        zoom_windows(depth, y, length=0.0)


def three_models():
    depth = np.array([100.0, 100.5, 101.0, 101.5, 102.0])
    observed = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    predictions = {"gradient boosting": np.array([1.5, 2.0, 2.0, 4.0, 7.0]),
                   "random forest": observed + 0.1,
                   "transformer": np.array([0.0, 2.0, 3.0, 4.0, 5.0])}
    inputs = {"PHIF": np.linspace(0.1, 0.2, 5), "VSH": np.linspace(0.5, 0.3, 5), "SW": np.linspace(1.0, 0.4, 5)}
    return depth, inputs, observed, predictions


def test_residual_track_is_prediction_minus_observed_in_the_target_unit():
    depth, inputs, observed, predictions = three_models()
    fig = plot_blind_well_tracks(depth, inputs, observed, predictions, input_units={"PHIF": "v/v"},
                                 quantity="KLOGH", unit="log10 mD", residual_models=["gradient boosting"])
    assert isinstance(fig, Figure)
    residual = fig.axes[3 + 3]
    np.testing.assert_allclose(residual.lines[0].get_xdata(), [0.5, 0.0, -1.0, 0.0, 2.0])
    np.testing.assert_array_equal(residual.lines[0].get_ydata(), depth)
    assert residual.get_xlabel() == "residual (log10 mD)"
    lo, hi = residual.get_xlim()
    assert lo == -hi and hi > 2.0                                      # symmetric around zero, every residual shown
    # RMSE of gradient boosting: sqrt((0.25 + 0 + 1 + 0 + 4) / 5) = sqrt(1.05) = 1.0247
    assert rmse(observed, predictions["gradient boosting"]) == pytest.approx(np.sqrt(1.05))
    assert "RMSE 1.02" in fig.axes[3].get_title()
    # by default the residual track holds the models with the lowest RMSE (at most three)
    default = plot_blind_well_tracks(depth, inputs, observed, predictions)
    assert [t.get_text() for t in default.axes[-1].get_legend().get_texts()] == [
        "random forest", "transformer", "gradient boosting"]               # RMSE 0.1, 0.447, 1.02


def test_each_model_gets_its_own_track_against_the_observed_curve():
    depth, inputs, observed, predictions = three_models()
    bands = {"transformer": (observed - 0.5, observed + 0.5)}
    fig = plot_blind_well_tracks(depth, inputs, observed, predictions, bands=bands, zooms=[(100.5, 101.0)],
                                 input_units={"PHIF": "v/v", "VSH": "v/v", "SW": "v/v"}, quantity="KLOGH",
                                 depth_unit="m")
    axes = fig.axes
    assert len(axes) == 3 + 3 + 1                                      # inputs, one per model, residual
    assert [a.get_xlabel() for a in axes[:3]] == ["PHIF (v/v)", "VSH (v/v)", "SW (v/v)"]
    for ax, (name, p) in zip(axes[3:6], predictions.items()):
        assert ax.get_title().startswith(name.replace(" ", "\n") if len(name) > 16 else name)
        assert len(ax.lines) == 2                                      # observed and this model only
        np.testing.assert_array_equal(ax.lines[0].get_xdata(), observed)
        np.testing.assert_array_equal(ax.lines[1].get_xdata(), p)
        assert ax.get_xlabel() == "KLOGH (log10 mD)"
        assert ax.get_xlim() == axes[3].get_xlim()                     # one value scale for every model
    assert sum(isinstance(c, PolyCollection) for c in axes[5].collections) == 1     # the transformer's P10-P90
    assert not any(isinstance(c, PolyCollection) for c in axes[3].collections)
    assert axes[0].get_ylabel() == "Depth (m)" and all(inverted(a) for a in axes)
    assert any(t.get_text() == "zoom 1" for t in axes[0].texts)
    plain = plot_blind_well_tracks(depth, inputs, observed, predictions, colours={"random forest": "tab:green"})
    assert "unit not given" in plain.axes[0].get_xlabel()
    # each model's own colour (MODEL_COLOURS), whatever its place; a colour given replaces it
    assert [a.lines[1].get_color() for a in plain.axes[3:6]] == ["C4", "tab:green", "C0"]
    assert plain.axes[-1].lines[0].get_color() == "tab:green"         # its residual in the same colour


def test_tracks_over_a_zoom_show_only_its_depths():
    depth, inputs, observed, predictions = three_models()
    fig = plot_blind_well_tracks(depth, inputs, observed, predictions, top=100.5, base=101.5)
    np.testing.assert_array_equal(fig.axes[3].lines[1].get_ydata(), [100.5, 101.0, 101.5])
    assert "100.5-101.5 m" in fig.get_suptitle()
    with pytest.raises(InputError, match="no depth between 200 and 300 m"):
        plot_blind_well_tracks(depth, inputs, observed, predictions, top=200, base=300)
    with pytest.raises(InputError, match="residual_models \\['LSTM'\\]"):
        plot_blind_well_tracks(depth, inputs, observed, predictions, residual_models=["LSTM"])
    with pytest.raises(InputError, match="predictions is empty"):
        plot_blind_well_tracks(depth, inputs, observed, {})


def test_crossplot_one_panel_per_model_on_shared_limits_with_the_one_to_one_line():
    depth, _, observed, predictions = three_models()
    predictions = {**predictions, "training mean": np.full(5, 3.0)}
    fig = plot_predicted_vs_observed(observed, predictions, quantity="KLOGH", unit="log10 mD", depth=depth, ncols=3)
    panels = fig.axes[:4]
    assert len(fig.axes) == 3 * 2 + 1                                  # 2 x 3 grid (two left empty) and the colour bar
    assert not fig.axes[4].axison and not fig.axes[5].axison
    limits = panels[0].get_xlim()
    assert limits[0] <= 0.0 and limits[1] >= 7.0                       # every observed and predicted value fits
    for ax, (name, p) in zip(panels, predictions.items()):
        assert ax.get_xlim() == limits and ax.get_ylim() == limits
        np.testing.assert_allclose(ax.collections[0].get_offsets(), np.column_stack([observed, p]))
        one_to_one = ax.lines[0]
        np.testing.assert_allclose(one_to_one.get_xdata(), one_to_one.get_ydata())
        assert name in ax.get_title() and f"RMSE {rmse(observed, p):.2f} log10 mD (n=5)" in ax.get_title()
    assert "RMSE 1.02 log10 mD" in panels[0].get_title()               # sqrt(1.05), by hand above
    assert panels[3].get_xlabel() == "observed KLOGH (log10 mD)"       # lowest panel of its column
    assert panels[0].get_ylabel() == panels[3].get_ylabel() == "predicted KLOGH (log10 mD)"
    assert fig.axes[-1].get_ylabel() == "Depth (m)"
    with pytest.raises(InputError, match="predictions is empty"):
        plot_predicted_vs_observed(observed, {})


def test_a_model_has_the_same_colour_in_every_figure():
    depth, inputs, observed, predictions = three_models()
    tracks = plot_blind_well_tracks(depth, inputs, observed, predictions)
    in_tracks = {a.get_title().split("\n")[0].replace("\n", " "): a.lines[1].get_color() for a in tracks.axes[3:6]}
    lines = plot_comparison(depth, observed, dict(reversed(list(predictions.items()))))
    in_lines = {line.get_label(): line.get_color() for line in lines.lines if line.get_label() != "observed"}
    bars = plot_metric_per_well({"W-1": {"training mean": 2.0, **{name: 0.5 for name in predictions}}})
    in_bars = {c.get_label(): c.patches[0].get_facecolor() for c in bars.containers}
    assert in_lines == {"transformer": "C0", "random forest": "C2", "gradient boosting": "C4"}
    assert in_tracks["transformer"] == "C0" and in_tracks["gradient"] == "C4"     # the title wraps "gradient\nboosting"
    assert {k: mcolors.to_hex(v) for k, v in in_bars.items()} == {
        k: mcolors.to_hex(c) for k, c in {"training mean": "C7", "transformer": "C0", "random forest": "C2",
                                          "gradient boosting": "C4"}.items()}
