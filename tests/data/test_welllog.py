"""WellLog: curve lookup, intervals, validation, frames, depth units, step, renaming."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from glassformer.data import WellLog, common_depth_unit, read_las
from glassformer.errors import CurveNotFoundError, DepthError, InputError, ShapeError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "wells"


def test_curve_lookup_and_not_found():
    log = read_las(FIX / "b18_wrapped.las")
    np.testing.assert_array_equal(log.curve("gr"), [85.1, 91.5])
    np.testing.assert_array_equal(log.curve("DEPT"), [7999.0, 8000.0])
    with pytest.raises(CurveNotFoundError, match=r"'PHIF' not found in well 'b18_wrapped'.*available: DEPT, DPHI, SP, GR, ILD"):
        log.curve("PHIF")
    np.testing.assert_array_equal(log.matrix(["GR", "ILD"]), [[85.1, 12.3], [91.5, 8.75]])
    np.testing.assert_array_equal(log.valid_mask(["DPHI", "SP"]), [False, True])


def test_interval_selects_and_rejects_outside():
    log = WellLog(name="w", depth=np.arange(10.0), curves={"phi": np.arange(10.0) / 10})
    sub = log.interval(2.0, 4.0)
    np.testing.assert_array_equal(sub.depth, [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(sub.curve("PHI"), [0.2, 0.3, 0.4])
    np.testing.assert_array_equal(log.interval(2.5, 3.4).depth, [3.0])
    with pytest.raises(DepthError, match=r"interval 5 to 12 m reaches outside the log's depth range 0 to 9 m"):
        log.interval(5, 12)
    with pytest.raises(DepthError, match=r"interval 2.2 to 2.8 m holds no sample"):
        log.interval(2.2, 2.8)
    with pytest.raises(InputError, match=r"top 4 is below its base 2"):
        log.interval(4, 2)


def test_interval_on_real_wells_in_file_unit():
    log = read_las(FIX / "b18_wrapped.las")
    with pytest.raises(DepthError, match=r"b18_wrapped\.las\): interval 100 to 200 ft lies outside .* 7999 to 8000 ft"):
        log.interval(100, 200)


def test_welllog_validates_construction():
    with pytest.raises(ShapeError, match=r"curve PHI has shape \(2,\), expected \(3,\)"):
        WellLog(name="w", depth=[1.0, 2.0, 3.0], curves={"PHI": [0.1, 0.2]})
    with pytest.raises(DepthError, match=r"strictly increasing; sample 2 \(2\) follows 3"):
        WellLog(name="w", depth=[1.0, 3.0, 2.0], curves={})
    with pytest.raises(InputError, match=r"curve 'phi' appears twice"):
        WellLog(name="w", depth=[1.0], curves={"PHI": [0.1], "phi": [0.2]})
    with pytest.raises(InputError, match=r"depth_unit must be 'm' or 'ft'"):
        WellLog(name="w", depth=[1.0], curves={}, depth_unit="km")
    with pytest.raises(InputError, match=r"curve A must hold numbers, got dtype <U1"):
        WellLog(name="w", depth=[1.0, 2.0], curves={"A": np.array(["a", "b"])})


def test_repr_names_samples_depths_and_units():
    log = read_las(FIX / "b19_bottom_up.las")
    text = repr(log)
    assert "3 samples" in text and "1669.75 to 1670 m" in text and "NPHI [V/V]" in text


def test_common_depth_unit():
    m = read_las(FIX / "b19_bottom_up.las")
    ft = read_las(FIX / "b18_wrapped.las")
    assert common_depth_unit([m, m]) == "m"
    with pytest.raises(DepthError, match=r"mix depth units.*b19_bottom_up\.las: m; .*b18_wrapped\.las: ft"):
        common_depth_unit([m, ft])


def test_step_is_the_median_spacing():
    depth = np.r_[100.0 + 0.1 * np.arange(20), 110.0 + 0.1 * np.arange(5)]   # one gap of 8.1 m
    log = WellLog(name="w", depth=depth, curves={})
    assert log.step == pytest.approx(0.1, abs=1e-12)
    assert WellLog(name="w", depth=[0.0, 0.1524, 0.3048, 0.4572], curves={}).step == pytest.approx(0.1524)
    assert np.isnan(WellLog(name="w", depth=[5.0], curves={}).step)


def test_rename_moves_units_and_descriptions_with_the_curve():
    log = WellLog(name="w", depth=[1.0, 2.0], curves={"PHIE": [0.1, 0.2], "KLOGH": [1.0, 2.0]},
                  units={"PHIE": "V/V", "KLOGH": "mD"}, descriptions={"PHIE": "effective porosity"})
    renamed = log.rename({"phie": "phif"})
    assert renamed.mnemonics == ["PHIF", "KLOGH"] and renamed.units == {"PHIF": "V/V", "KLOGH": "mD"}
    assert renamed.descriptions == {"PHIF": "effective porosity"}
    assert renamed.curve("PHIF") is log.curve("PHIE") and log.mnemonics == ["PHIE", "KLOGH"]  # no copy; original kept
    with pytest.raises(CurveNotFoundError, match=r"'SW' not found in well 'w'"):
        log.rename({"SW": "SWE"})
    with pytest.raises(InputError, match=r"renaming would give two curves the name KLOGH"):
        log.rename({"PHIE": "KLOGH"})
    assert log.label == "well 'w'" and WellLog(name="x", depth=[1.0], curves={}, source="a.las").label == "well 'x' (a.las)"
