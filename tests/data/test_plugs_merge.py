"""glassformer.data.plugs_merge: plugs onto a log's depth grid, with the expected arrays written out
by hand (between samples, two plugs near one sample, outside the log, irregular spacing, runs)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from glassformer.data import PlugTable, WellLog, merge_plugs
from glassformer.errors import DepthError, InputError

NAN = np.nan
GRID = np.array([100.0, 100.5, 101.0, 101.5, 102.0])  # step 0.5 m: default tolerance 0.25 m


def log_on(depth, unit="m"):
    depth = np.asarray(depth, dtype=float)
    return WellLog(name="W", depth=depth, curves={"PHIF": np.linspace(0.1, 0.2, depth.size)}, depth_unit=unit)


def core(depth, porosity, permeability, run=None, **kw):
    run = None if run is None else np.array(run, dtype=object)
    return PlugTable(depth=depth, porosity=porosity, permeability=permeability, run=run,
                     columns={"porosity": "CPOR", "permeability": "CKHL"}, **kw)


def quiet_merge(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return merge_plugs(*args, **kw)


def test_plugs_between_samples_go_to_the_nearest_sample():
    # 100.1 is 0.1 from 100.0; 100.65 is 0.15 from 100.5; 101.2 is 0.2 from 101.0 (0.3 from 101.5)
    merged = merge_plugs(core([100.1, 100.65, 101.2], [0.10, 0.20, 0.15], [10.0, 100.0, 50.0]), log_on(GRID))
    np.testing.assert_array_equal(merged.porosity, [0.10, 0.20, 0.15, NAN, NAN])
    np.testing.assert_array_equal(merged.permeability, [10.0, 100.0, 50.0, NAN, NAN])
    np.testing.assert_array_equal(merged.n_plugs, [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(merged.plug_sample, [0, 1, 2])
    r = merged.report
    assert (r.n_plugs, r.matched, r.unmatched, r.averaged, r.tolerance) == (3, 3, 0, 0, 0.25)


def test_a_plug_halfway_between_two_samples_goes_to_the_shallower_one():
    merged = merge_plugs(core([101.25], [0.3], [7.0]), log_on(GRID))
    np.testing.assert_array_equal(merged.porosity, [NAN, NAN, 0.3, NAN, NAN])


def test_two_plugs_near_one_sample_are_averaged_and_said_so():
    # 100.9 and 101.1 are both nearest to 101.0
    table = core([100.9, 101.1], [0.10, 0.20], [10.0, 1000.0])
    with pytest.warns(UserWarning, match="2 plugs averaged on 1 shared log sample"):
        merged = merge_plugs(table, log_on(GRID))
    np.testing.assert_allclose(merged.porosity, [NAN, NAN, 0.15, NAN, NAN])
    np.testing.assert_allclose(merged.permeability, [NAN, NAN, 505.0, NAN, NAN])  # (10 + 1000) / 2
    np.testing.assert_array_equal(merged.n_plugs, [0, 0, 2, 0, 0])
    assert merged.report.shared_samples == ((101.0, (1, 2)),) and merged.report.averaged == 2
    assert "1 log sample(s) received several plugs (2 plugs averaged; permeability: arithmetic mean)" in str(
        merged.report)
    geometric = quiet_merge(table, log_on(GRID), permeability_mean="geometric")
    np.testing.assert_allclose(geometric.permeability[2], 100.0, rtol=1e-13)  # sqrt(10 * 1000)
    harmonic = quiet_merge(table, log_on(GRID), permeability_mean="harmonic")
    np.testing.assert_allclose(harmonic.permeability[2], 2 / (1 / 10 + 1 / 1000), rtol=1e-13)
    with pytest.raises(DepthError, match=r"2 plugs \(line 1 \(100.9 m\), line 2 \(101.1 m\)\) fall on "
                                         r"log sample 101 m"):
        merge_plugs(table, log_on(GRID), on_shared_sample="raise")


def test_averaging_skips_a_missing_value_and_keeps_a_zero_permeability():
    table = core([100.9, 101.1, 101.4, 101.6], [0.10, NAN, 0.2, 0.3], [NAN, 40.0, 0.0, 8.0])
    merged = quiet_merge(table, log_on(GRID), permeability_mean="geometric")
    np.testing.assert_array_equal(merged.porosity, [NAN, NAN, 0.10, 0.25, NAN])
    np.testing.assert_array_equal(merged.permeability, [NAN, NAN, 40.0, 0.0, NAN])  # geometric mean with a 0 is 0


def test_plugs_outside_the_log_are_counted_and_named():
    # 99.0 is 1 m above the top; 99.8 is 0.2 from 100.0 (kept); 102.3 and 103.0 are below the base
    table = core([99.0, 99.8, 102.3, 103.0], [0.1, 0.2, 0.3, 0.4], [1.0, 2.0, 3.0, 4.0], line=[11, 12, 13, 14])
    merged = merge_plugs(table, log_on(GRID))
    np.testing.assert_array_equal(merged.porosity, [0.2, NAN, NAN, NAN, NAN])
    np.testing.assert_array_equal(merged.plug_sample, [-1, 0, -1, -1])
    r = merged.report
    assert (r.matched, r.unmatched, r.unmatched_lines) == (1, 3, (11, 13, 14))
    assert r.per_run == {"all": {"plugs": 4, "matched": 1, "unmatched": 3, "overlap": 0, "averaged": 0,
                                 "samples": 1, "shift": 0.0}}


def test_irregular_log_spacing_uses_half_the_median_step_or_the_given_tolerance():
    depth = [10.0, 10.1, 10.3, 10.35, 11.0]  # steps 0.1, 0.2, 0.05, 0.65: median 0.15, tolerance 0.075
    plugs = core([10.04, 10.22, 10.33, 10.7, 10.95], [0.1, 0.2, 0.3, 0.4, 0.5], [1.0, 2.0, 3.0, 4.0, 5.0])
    # 10.04 -> 10.0 (0.04); 10.22 -> nearest 10.3 is 0.08 away: too far; 10.33 -> 10.35 (0.02);
    # 10.7 -> nearest 11.0 is 0.3 away: too far; 10.95 -> 11.0 (0.05)
    merged = merge_plugs(plugs, log_on(depth))
    np.testing.assert_allclose(merged.report.tolerance, 0.075)
    np.testing.assert_array_equal(merged.porosity, [0.1, NAN, NAN, 0.3, 0.5])
    assert merged.report.unmatched_lines == (2, 4)
    wider = merge_plugs(plugs, log_on(depth), tolerance=0.1)  # now 10.22 reaches 10.3
    np.testing.assert_array_equal(wider.porosity, [0.1, NAN, 0.2, 0.3, 0.5])


def test_shifts_are_applied_per_run_before_merging_and_counted_per_run():
    table = core([100.1, 100.4, 101.0], [0.1, 0.2, 0.3], [1.0, 2.0, 3.0], run=[1, 1, 2])
    # run 1 moves 0.5 m deeper (100.6 -> 100.5, 100.9 -> 101.0), run 2 moves 1 m (-> 102.0)
    merged = merge_plugs(table, log_on(GRID), shifts={1: 0.5, 2: 1.0})
    np.testing.assert_array_equal(merged.porosity, [NAN, 0.1, 0.2, NAN, 0.3])
    np.testing.assert_array_equal(merged.run_index, [-1, 0, 0, -1, 1])
    assert merged.runs == (1, 2)
    assert merged.report.per_run[1]["shift"] == 0.5 and merged.report.per_run[2]["matched"] == 1


def test_two_runs_meeting_on_one_sample_keep_the_nearest_plug_and_report_the_other():
    # run 1's plug is 0.05 from 101.0, run 2's is 0.1 from it: run 1 keeps the sample
    table = core([100.95, 101.1, 101.5], [0.1, 0.2, 0.3], [1.0, 2.0, 3.0], run=[1, 2, 2])
    with pytest.warns(UserWarning, match="1 left out where two runs met"):
        merged = merge_plugs(table, log_on(GRID))
    np.testing.assert_array_equal(merged.porosity, [NAN, NAN, 0.1, 0.3, NAN])
    np.testing.assert_array_equal(merged.run_index, [-1, -1, 0, 1, -1])
    np.testing.assert_array_equal(merged.plug_sample, [2, -1, 3])
    assert merged.report.overlap_lines == (2,) and merged.report.unmatched == 0
    assert merged.report.per_run[2]["overlap"] == 1


def test_add_to_puts_the_core_curves_on_the_log_under_the_core_column_names():
    log = log_on(GRID)
    merged = merge_plugs(core([100.1], [0.1], [10.0]), log)
    with_core = merged.add_to(log)
    np.testing.assert_array_equal(with_core.curve("CKHL"), [10.0, NAN, NAN, NAN, NAN])
    assert with_core.units["CPOR"] == "v/v" and with_core.units["CKHL"] == "mD"
    with pytest.raises(InputError, match="already has a curve CPOR"):
        merged.add_to(with_core)


# --------------------------------------------------------------- bad input
def test_no_plug_inside_the_log_depth_range_is_an_error_naming_both_ranges():
    with pytest.raises(DepthError, match=r"no plug lies within 0.25 m of a sample of 'W': core 200-210 m, "
                                         r"log 100-102 m"):
        merge_plugs(core([200.0, 210.0], [0.1, 0.2], [1.0, 2.0]), log_on(GRID))


def test_depth_units_must_agree_and_options_are_checked():
    with pytest.raises(DepthError, match="core depths are in m, the log 'W' is in ft"):
        merge_plugs(core([100.1], [0.1], [1.0]), log_on(GRID, unit="ft"))
    with pytest.raises(InputError, match="tolerance must be a finite depth >= 0"):
        merge_plugs(core([100.1], [0.1], [1.0]), log_on(GRID), tolerance=-1)
    with pytest.raises(InputError, match="on_shared_sample must be"):
        merge_plugs(core([100.1], [0.1], [1.0]), log_on(GRID), on_shared_sample="first")
    with pytest.raises(InputError, match="permeability_mean must be one of"):
        merge_plugs(core([100.1], [0.1], [1.0]), log_on(GRID), permeability_mean="median")


# --------------------------------------------------------------- real data
def test_the_19a_core_at_its_corrected_depths_gives_554_permeability_samples(shared_data):
    """With the published depths (DEPTH column) the 557 plugs with permeability land on 554 log
    samples: three pairs of plugs closer than half the 0.1524 m log step are averaged. 426 of the
    554 lie where PHIF exists (the log's PHIF stops at 3966.21 m, inside core 6)."""
    from glassformer.data import read_plugs, read_well

    log = read_well(shared_data / "real" / "15_9-19_A_CPI.las")
    table = read_plugs(shared_data / "real" / "15_9-19A-CORE.csv", run="CORE_NO", porosity_unit="%")
    merged = quiet_merge(table, log)
    assert (merged.report.matched, merged.report.unmatched) == (593, 0)
    assert len(merged.report.shared_samples) == 3
    assert np.isfinite(merged.permeability).sum() == 554
    assert (np.isfinite(merged.permeability) & np.isfinite(log.curve("PHIF"))).sum() == 426
