"""glassformer.plots.logs: log tracks, cross-plots, predictions against depth, a real well."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from glassformer import plots as gp
from glassformer.errors import InputError, ShapeError
from tests.plots._helpers import DEPTH, INTERVALS, inverted

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "real"


# ------------------------------------------------------------------- data
def test_log_tracks_draw_curves_units_intervals_and_depth_downward():
    phi = np.linspace(5, 12, 14)
    k = np.linspace(40, 120, 14)
    axes = gp.plot_log_tracks(DEPTH, {"porosity": phi, "permeability": k}, porosity_unit="%", intervals=INTERVALS)
    assert len(axes) == 2 and all(isinstance(a, Axes) for a in axes)
    assert axes[0].get_xlabel() == "porosity (%)"
    assert axes[1].get_xlabel() == "permeability (mD)"
    assert axes[0].get_ylabel() == "Depth (m)"
    assert all(inverted(a) for a in axes)
    np.testing.assert_array_equal(axes[0].lines[0].get_xdata(), phi)
    np.testing.assert_array_equal(axes[1].lines[0].get_ydata(), DEPTH)
    assert len(axes[0].patches) == 2  # one shaded span per interval
    assert {"train", "forecast"} <= {t.get_text().strip() for t in axes[1].texts}
    assert axes[1].get_xscale() == "linear"  # 40-120 mD: less than two decades


def test_caller_axes_are_used_and_each_depth_axis_inverted():
    fig = Figure()
    given = fig.subplots(1, 2)  # not sharing y: every panel must be inverted on its own
    axes = gp.plot_log_tracks(DEPTH, {"porosity": DEPTH, "permeability": DEPTH}, axes=given)
    assert list(axes) == list(given) and all(inverted(a) for a in axes)
    with pytest.raises(ShapeError, match="axes must hold 1x3"):
        gp.plot_qkv(DEPTH, *(np.ones((14, 2)),) * 3, axes=given)


def test_log_tracks_log_axis_for_wide_permeability_and_explicit_units():
    d = np.linspace(3400, 3410, 101)
    k = np.logspace(-1, 3, 101)
    k[10:20] = np.nan  # a gap is drawn as a break, not an error
    axes = gp.plot_log_tracks(d, {"KLOGH": k, "GR": np.ones(101)}, units={"GR": "gAPI"})
    assert axes[0].get_xscale() == "log"
    assert axes[1].get_xlabel() == "GR (gAPI)"
    with pytest.raises(ShapeError, match="curves\\['GR'\\] must have length 101"):
        gp.plot_log_tracks(d, {"GR": np.ones(5)})
    with pytest.raises(InputError, match="curves is empty"):
        gp.plot_log_tracks(d, {})


def test_crossplot_raw_log_and_normalised_variants():
    phi = np.array([13.0, 11, 9, 9, 10, 8, 7])
    k = np.array([122.0, 110, 67, 55, 72, 40, 0.0])
    ax = gp.plot_crossplot(phi, k, labels=np.arange(1.0, 8.0), porosity_unit="%")
    np.testing.assert_array_equal(ax.collections[0].get_offsets(), np.column_stack([phi, k]))
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "Porosity (%)" and "mD" in ax.get_ylabel()
    texts = [t.get_text() for t in ax.texts]
    assert [t for t in texts if t in {"1", "2", "7"}] == ["1", "2", "7"]  # depth labels beside the points
    assert "1 point(s) <= 0 mD not shown" in texts
    ax2 = gp.plot_crossplot(phi / 20, k / 122, normalised=True)
    assert "normalised" in ax2.get_title() and ax2.get_yscale() == "linear"
    assert ax2.get_xlabel().startswith("Normalised porosity")
    ax3 = gp.plot_crossplot(phi, k + 1, depth=np.arange(7.0), log_perm=False)
    assert ax3.get_ylabel() == "Permeability (mD)"
    assert any(a.get_ylabel() == "Depth (m)" for a in ax3.figure.axes)  # colour bar in metres
    with pytest.raises(InputError, match="porosity_unit"):
        gp.plot_crossplot(phi, k, porosity_unit="pct")


# ------------------------------------------------------------- a real well
def test_real_well_tracks_and_crossplot():
    path = DATA / "15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS"
    if not path.is_file():
        pytest.skip(f"real well data not found at {path} (shared/data is not part of the repo)")
    lasio = pytest.importorskip("lasio")
    las = lasio.read(str(path))
    depth = np.asarray(las.index, dtype=float)
    phi = np.asarray(las["PHIF"], dtype=float)
    k = np.asarray(las["KLOGH"], dtype=float)
    ok = np.isfinite(phi) & np.isfinite(k)
    axes = gp.plot_log_tracks(depth, {"PHIF": phi, "KLOGH": k},
                              intervals={"train": (3430, 3600), "forecast": (3600, 3657)})
    assert axes[0].get_xlabel() == "PHIF (fraction, v/v)" and axes[1].get_xlabel() == "KLOGH (mD)"
    assert axes[1].get_xscale() == "log" and inverted(axes[0])
    assert axes[0].get_ylim()[0] >= depth.max()
    ax = gp.plot_crossplot(phi[ok], k[ok], depth=depth[ok])
    assert len(ax.collections[0].get_offsets()) == ok.sum() > 2000
    assert ax.get_yscale() == "log"
