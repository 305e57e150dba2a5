"""Baselines: the poro-perm transform, the training mean and the metrics, on hand-computed cases
and on a real Volve well."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from glassformer.wells import PorosityPermeabilityTransform, TrainingMean, regression_metrics
from glassformer.errors import InputError, NotReadyError, ShapeError

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "real"


# --- poro-perm transform ---------------------------------------------------------------------

def test_exact_line_through_three_points():
    # log10 k = -1 + 10 * phi: k = 1, 10, 100 mD at phi = 0.1, 0.2, 0.3
    t = PorosityPermeabilityTransform().fit([0.1, 0.2, 0.3], [1.0, 10.0, 100.0])
    assert t.slope_ == pytest.approx(10.0, rel=1e-12)
    assert t.intercept_ == pytest.approx(-1.0, rel=1e-12)
    assert t.n_ == 3
    np.testing.assert_allclose(t.predict([0.25, 0.0]), [10 ** 1.5, 0.1], rtol=1e-12)
    np.testing.assert_allclose(t.predict_log10([0.25]), [1.5], rtol=1e-12)


def test_least_squares_and_nan_rows_ignored():
    # phi = 0, 1, 2 and log10 k = 0, 2, 1: slope = 1 / 2, intercept = 1 - 1/2 = 1/2
    phi = [0.0, np.nan, 1.0, 2.0, 5.0]
    logk = [0.0, 3.0, 2.0, 1.0, np.nan]
    t = PorosityPermeabilityTransform().fit_log10(phi, logk)
    assert (t.slope_, t.intercept_, t.n_) == (pytest.approx(0.5), pytest.approx(0.5), 3)
    t_mD = PorosityPermeabilityTransform().fit(phi, 10.0 ** np.asarray(logk))
    assert (t_mD.slope_, t_mD.intercept_) == (pytest.approx(0.5), pytest.approx(0.5))
    out = t.predict_log10([np.nan, 4.0])
    assert np.isnan(out[0]) and out[1] == pytest.approx(2.5)


def test_feature_matrix_uses_porosity_column():
    X = np.array([[9.0, 0.1], [7.0, 0.2], [3.0, 0.3]])
    t = PorosityPermeabilityTransform(porosity_feature=1).fit(X, [1.0, 10.0, 100.0])
    assert t.slope_ == pytest.approx(10.0)
    np.testing.assert_allclose(t.predict(X), [1.0, 10.0, 100.0], rtol=1e-12)
    with pytest.raises(InputError, match="porosity_feature=2"):
        PorosityPermeabilityTransform(porosity_feature=2).fit(X, [1.0, 10.0, 100.0])


def test_nonpositive_permeability_needs_a_floor():
    phi, k = [0.0, 0.1, 0.2], [0.0, 0.1, 10.0]
    with pytest.raises(InputError, match=r"1 value\(s\) <= 0 \(first at row 0"):
        PorosityPermeabilityTransform().fit(phi, k)
    # floor 0.001 mD: log10 k = -3, -1, 1 -> slope 20, intercept -3
    t = PorosityPermeabilityTransform(floor_mD=0.001).fit(phi, k)
    assert (t.slope_, t.intercept_) == (pytest.approx(20.0), pytest.approx(-3.0))
    with pytest.raises(InputError, match="floor_mD"):
        PorosityPermeabilityTransform(floor_mD=0.0)


def test_transform_errors():
    with pytest.raises(NotReadyError, match="fit"):
        PorosityPermeabilityTransform().predict([0.1])
    with pytest.raises(InputError, match="at least 2 rows"):
        PorosityPermeabilityTransform().fit([0.1, np.nan], [1.0, 2.0])
    with pytest.raises(InputError, match="constant"):
        PorosityPermeabilityTransform().fit([0.1, 0.1], [1.0, 2.0])
    with pytest.raises(ShapeError, match=r"shape \(3,\)"):
        PorosityPermeabilityTransform().fit([0.1, 0.2, 0.3], [1.0, 2.0])
    with pytest.raises(InputError, match="non-finite"):
        PorosityPermeabilityTransform().fit([0.1, np.inf], [1.0, 2.0])


# --- training mean ----------------------------------------------------------------------------

def test_training_mean():
    m = TrainingMean().fit(None, [1.0, np.nan, 2.0, 6.0])
    assert (m.mean_, m.n_) == (3.0, 3)
    np.testing.assert_array_equal(m.predict(np.zeros((5, 2))), np.full(5, 3.0))
    with pytest.raises(NotReadyError):
        TrainingMean().predict([1.0])
    with pytest.raises(InputError, match="no non-NaN"):
        TrainingMean().fit(None, [np.nan, np.nan])


# --- metrics ----------------------------------------------------------------------------------

def test_regression_metrics_by_hand():
    # pairs (1,1), (2,2), (3,5) after dropping the NaNs: errors 0, 0, 2
    out = regression_metrics([1.0, 2.0, 3.0, np.nan, 4.0], [1.0, 2.0, 5.0, 7.0, np.nan])
    assert out["n"] == 3
    assert out["rmse"] == pytest.approx(np.sqrt(4 / 3))
    assert out["mae"] == pytest.approx(2 / 3)
    assert out["r2"] == pytest.approx(1 - 4 / 2)   # SS_res = 4, SS_tot = 2
    assert set(out) == {"rmse", "mae", "r2", "n"}


def test_regression_metrics_edge_cases():
    one = regression_metrics([1.0], [3.0])
    assert one["rmse"] == 2.0 and np.isnan(one["r2"])
    with pytest.raises(ShapeError, match=r"\(2,\).*\(3,\)"):
        regression_metrics([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="no position"):
        regression_metrics([np.nan, 1.0], [1.0, np.nan])
    with pytest.raises(InputError, match="non-finite"):
        regression_metrics([1.0, 2.0], [1.0, np.inf])


# --- a real well ------------------------------------------------------------------------------

def _read(name):
    if not DATA.is_dir():
        pytest.skip(f"real well data not found at {DATA}")
    lasio = pytest.importorskip("lasio")
    return lasio.read(str(DATA / name)).df()


def test_volve_f1a_transform_matches_the_readme_correlation():
    df = _read("15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS")
    phi, k = df["PHIF"].to_numpy(), df["KLOGH"].to_numpy()   # v/v and mD (not log10)
    t = PorosityPermeabilityTransform().fit(phi, k)
    assert t.n_ == 2281                                       # rows with both curves, per the README
    both = ~(np.isnan(phi) | np.isnan(k))
    slope, intercept = np.polyfit(phi[both], np.log10(k[both]), 1)
    assert (t.slope_, t.intercept_) == (pytest.approx(slope, rel=1e-9), pytest.approx(intercept, rel=1e-9))
    m = regression_metrics(np.log10(k), t.predict_log10(phi))
    # a least-squares line's R^2 is Pearson's r^2; the README gives r = 0.835 (3 decimals)
    assert 0.8345 ** 2 <= m["r2"] <= 0.8355 ** 2
    base = regression_metrics(np.log10(k), TrainingMean().fit(None, np.log10(k)).predict(phi))
    assert abs(base["r2"]) < 1e-12 and base["rmse"] > m["rmse"]


def test_volve_19a_zero_permeability_needs_the_floor():
    df = _read("15_9-19_A_CPI.las")
    phi, k = df["PHIF"].to_numpy(), df["KLOGH"].to_numpy()
    with pytest.raises(InputError, match=r"597 value\(s\) <= 0"):   # README: KLOGH = 0 on 597 rows
        PorosityPermeabilityTransform().fit(phi, k)
    t = PorosityPermeabilityTransform(floor_mD=0.001).fit(phi, k)
    assert t.n_ == 1967 and t.slope_ > 0
