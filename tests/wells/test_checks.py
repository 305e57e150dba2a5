"""Inputs checked before a prediction is trusted: units, depth unit, sample step and training ranges."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data import WellLog
from glassformer.errors import DataFileError, DepthError
from glassformer.wells import check_inputs, training_record
from glassformer.wells.checks import check_wells, convert_depth


def _log(name, depth, phi, *, unit="V/V", depth_unit="m", vsh=None, source=""):
    vsh = np.full(len(depth), 0.3) if vsh is None else vsh
    return WellLog(name=name, depth=np.asarray(depth, float), curves={"PHIF": phi, "VSH": vsh},
                   units={"PHIF": unit, "VSH": "V/V"}, depth_unit=depth_unit, source=source)


@pytest.fixture
def record():
    rng = np.random.default_rng(0)
    a = _log("A", 1000 + 0.1 * np.arange(400), rng.uniform(0.05, 0.30, 400), vsh=rng.uniform(0.1, 0.6, 400))
    b = _log("B", 2000 + 0.1 * np.arange(300), rng.uniform(0.10, 0.25, 300), unit="", vsh=rng.uniform(0, 0.5, 300))
    return training_record([a, b], ["PHIF", "VSH"]), (a, b)


def test_the_record_holds_units_step_and_percentile_ranges(record):
    rec, (a, b) = record
    phi = np.concatenate([a.curve("PHIF"), b.curve("PHIF")])
    assert rec["depth_unit"] == "m" and rec["step"] == pytest.approx(0.1)
    assert rec["inputs"]["PHIF"] == {"unit": "V/V", "kind": "fraction", "low": np.percentile(phi, 0.5),
                                     "high": np.percentile(phi, 99.5)}
    assert rec["inputs"]["VSH"]["low"] == np.percentile(np.concatenate([a.curve("VSH"), b.curve("VSH")]), 0.5)


def test_training_wells_in_two_units_of_one_input_are_refused():
    a = _log("A", np.arange(10.0), np.full(10, 0.2))
    b = _log("B", np.arange(10.0), np.full(10, 20.0), unit="%")
    with pytest.raises(DataFileError, match=r"input curve PHIF is in different units in the training wells "
                                            r"\(well 'A': V/V; well 'B': %\)"):
        training_record([a, b], ["PHIF"])


def test_percent_porosity_for_a_fraction_model_is_converted(record):
    rec, (a, _) = record
    pct = _log("A", a.depth, 100 * a.curve("PHIF"), unit="%", source="f1a_percent.las")
    check = check_inputs(rec, pct)                          # was refused: % and v/v are converted, and said
    assert check.notes == ["f1a_percent.las: PHIF converted from % to V/V (/ 100) to match the model"]
    np.testing.assert_allclose(check.log.curve("PHIF"), a.curve("PHIF"), rtol=1e-12)
    assert check.log.units["PHIF"] == "V/V" and pct.units["PHIF"] == "%"       # the caller's log untouched
    assert check.counts["PHIF"] == check_inputs(rec, a).counts["PHIF"]
    ratio = training_record([_log("A", a.depth, a.curve("PHIF"), unit="unitless")], ["PHIF", "VSH"])
    with pytest.raises(DataFileError, match=r"^f1a_percent.las: curve PHIF is in % \(percent\) but the model was "
                                            r"trained on unitless \(fraction\); convert the curve to unitless first"):
        check_inputs(ratio, pct)                            # a unit that is not v/v: not converted, still refused
    # unlabelled (a CSV) and percent-like (median above 1) for a v/v model: refused, naming the values and the fix
    phi = 100 * a.curve("PHIF")
    unlabelled = _log("A", a.depth, phi, unit="", source="f1a.csv")
    with pytest.raises(DataFileError, match=rf"^f1a.csv: curve PHIF has no unit and looks like percent \(median "
                                            rf"{np.median(phi):.4g}, range {phi.min():.4g} to {phi.max():.4g}\), but "
                                            r"the model was trained on V/V \(a fraction, 0 to 1\); pass --unit PHIF=% "
                                            r"to convert it, or convert the file's PHIF to V/V$"):
        check_inputs(rec, unlabelled)
    with pytest.raises(DataFileError, match=r"^f1a.csv: curve PHIF is in unitless and looks like percent"):
        check_inputs(rec, _log("A", a.depth, phi, unit="unitless", source="f1a.csv"))   # not held to [0, 1]
    # a stated unit of no known kind is not refused here; it is warned about, twice over
    check = check_inputs(rec, _log("A", a.depth, phi, unit="p.u.x", source="f1a.csv"))
    assert check.n_flagged == len(a) and check.counts["PHIF"] == len(a)
    assert any("looks like percent; convert it first" in w for w in check.warnings)


def test_feet_for_a_depth_position_model_refused_or_converted(record):
    rec, (a, _) = record
    feet = _log("A", a.depth / 0.3048, a.curve("PHIF"), depth_unit="ft", source="a_ft.las")
    with pytest.raises(DepthError, match=r"a_ft.las: depth is in ft but the model was trained with depth positions "
                                         r"in m; pass --depth-unit m"):
        check_inputs(rec, feet, positions="depth")
    check = check_inputs(rec, feet, positions="depth", depth_unit="m")
    np.testing.assert_allclose(check.log.depth, a.depth, rtol=1e-12)
    assert check.log.depth_unit == "m" and "converted from ft to m" in check.notes[0]
    assert not check.warnings                       # the step, in metres, is the training step
    # sample-index positions: the unit alone does not matter, only the step (compared in metres)
    assert not check_inputs(rec, feet, positions="index").warnings
    assert convert_depth(check.log, "ft").depth == pytest.approx(feet.depth)


def test_a_different_step_is_warned_about(record):
    rec, (a, _) = record
    coarse = _log("A", 1000 + 0.1524 * np.arange(400), a.curve("PHIF"), source="coarse.las")
    (warning,) = check_inputs(rec, coarse, window=32).warnings
    assert warning == ("coarse.las is sampled every 0.1524 m, the model was trained on samples every 0.1 m: a window "
                       "of 32 samples spans 4.88 m here, 3.2 m in training")
    close = _log("A", 1000 + 0.104 * np.arange(400), a.curve("PHIF"))          # 4 %: within tolerance
    assert not check_inputs(rec, close).warnings


def test_out_of_range_samples_are_flagged_and_counted(record):
    rec, _ = record
    lo, hi = rec["inputs"]["PHIF"]["low"], rec["inputs"]["PHIF"]["high"]
    phi = np.array([lo - 0.01, lo, 0.2, hi, hi + 0.01, np.nan, 0.2])
    vsh = np.array([0.3, 0.3, 0.95, 0.3, 0.3, 0.3, 0.3])    # above the training range, inside [0, 1]
    check = check_inputs(rec, _log("X", 3000 + 0.1 * np.arange(7), phi, vsh=vsh))
    np.testing.assert_array_equal(check.out_of_range, [1, 0, 1, 0, 1, np.nan, 0])
    assert check.counts == {"PHIF": 2, "VSH": 1} and check.n_flagged == 3
    assert check.summary("KLOGH") == ("3 of 6 predicted depths have inputs outside the training range (0.5-99.5 "
                                      "percentiles; flag curve KLOGH_OOR): PHIF 2, VSH 1")


def test_a_model_without_a_record_is_predicted_unchecked_and_says_so(record):
    _, (a, _) = record
    check = check_inputs(None, a)
    assert np.isnan(check.out_of_range).all() and check.out_of_range.shape == (len(a),)
    assert "predicted unchecked" in check.warnings[0] and "not checked" in check.summary("KLOGH")


def test_a_percent_curve_whose_values_are_all_fractions_is_refused():
    from glassformer.wells.checks import check_percent_range, check_wells

    frac = np.linspace(0.05, 0.30, 50)
    labelled = _log("T", 1000 + 0.1 * np.arange(50), frac, unit="%", source="teaching.csv")
    with pytest.raises(DataFileError, match=r"^teaching.csv: curve PHIF is in % \(percent, 0 to 100\), but all 50 "
                                            r"of its values lie in \[0, 1\] \(range 0.05 to 0.3\): it looks like a "
                                            r"fraction; convert it to percent \(x 100\), or state its unit with "
                                            r"--unit PHIF=v/v"):
        check_percent_range(labelled, ["PHIF"])
    with pytest.raises(DataFileError, match=r"curve PHIF is in %"):      # train, cv, compare, sweep: every well
        check_wells([labelled], [], ["PHIF", "VSH"])
    check_percent_range(_log("T", labelled.depth, 100 * frac, unit="%"), ["PHIF"])      # real percent: accepted
    check_percent_range(labelled, ["VSH"])                                               # only the curves named


def test_an_unlabelled_fraction_for_a_percent_model_is_refused_and_a_unit_assumed_is_said():
    depth = 1000 + 0.1 * np.arange(200)
    rng = np.random.default_rng(3)
    trained = _log("P", depth, rng.uniform(5, 30, 200), unit="%")
    rec = training_record([trained], ["PHIF", "VSH"])
    fraction = _log("W", depth, rng.uniform(0.05, 0.30, 200), unit="", source="w.csv")
    with pytest.raises(DataFileError, match=r"^w.csv: curve PHIF has no unit and the model was trained on % "
                                            r"\(percent\), but all 200 of its values lie in \[0, 1\] .* it looks "
                                            r"like a fraction; convert it to percent \(x 100\), or state its unit "
                                            r"with --unit PHIF=v/v"):
        check_inputs(rec, fraction)
    unlabelled = _log("W", depth, rng.uniform(5, 30, 200), unit="", source="w.csv")
    check = check_inputs(rec, unlabelled)
    assert check.assumed == ["w.csv: no unit in the file for PHIF; taken to be the units the model was trained on "
                             "(PHIF in %); --unit CURVE=UNIT states them"]          # VSH states V/V: not assumed


def test_unitless_fraction_beside_unitless_percent_wells_is_refused_and_stated_units_are_converted():
    from glassformer.wells.checks import check_wells

    depth = 1000 + 0.1 * np.arange(100)
    phi = np.linspace(0.02, 0.27, 100)
    train = _log("P", depth, 100 * phi, unit="", source="pct_nounit.csv")
    test = _log("F", depth, phi, unit="", source="nounits.csv")
    with pytest.raises(DataFileError) as info:
        check_wells([train], [test], ["PHIF", "VSH"])
    assert str(info.value) == (
        "curve PHIF differs by a factor of about 100 between wells: in nounits.csv it has no unit and lies in [0, 1] "
        "(range 0.02 to 0.27), in pct_nounit.csv it has no unit and reaches 27 (range 2 to 27): a fraction beside "
        "percent; state each file's unit in its header (PHIF (v/v) in nounits.csv, PHIF (%) in pct_nounit.csv; "
        "--unit states one unit for every file), and validation and test wells are converted to the training wells' "
        "unit")
    with pytest.raises(DataFileError, match="factor of about 100"):          # one unit stated is not enough
        check_wells([_log("P", depth, 100 * phi, unit="%")], [test], ["PHIF", "VSH"])
    # the fix the message gives: both units stated -> the test well converted to the training wells' %
    train_pct, test_vv = _log("P", depth, 100 * phi, unit="%"), _log("F", depth, phi, unit="v/v", source="nounits.csv")
    warnings = check_wells([train_pct], [test_vv], ["PHIF", "VSH"])
    assert warnings == ["nounits.csv: PHIF converted from v/v to % (x 100) to match the training wells"]
    np.testing.assert_allclose(test_vv.curve("PHIF"), 100 * phi, rtol=1e-12)
    assert test_vv.units["PHIF"] == "%" and train_pct.units["PHIF"] == "%"
    # both fractions without units, or both in percent: nothing to say
    assert check_wells([_log("P", depth, phi, unit="")], [test], ["PHIF", "VSH"]) == []


def test_a_model_trained_on_unitless_percent_refuses_a_fraction_well_and_the_reverse():
    depth = 1000 + 0.1 * np.arange(200)
    phi = np.linspace(0.02, 0.27, 200)
    pct_model = training_record([_log("P", depth, 100 * phi, unit="")], ["PHIF", "VSH"])
    fraction = _log("F", depth, phi, unit="", source="wellB_frac_nounit.csv")
    with pytest.raises(DataFileError) as info:
        check_inputs(pct_model, fraction)
    low, high = pct_model["inputs"]["PHIF"]["low"], pct_model["inputs"]["PHIF"]["high"]
    assert str(info.value) == (
        f"wellB_frac_nounit.csv: curve PHIF has no unit and lies in 0.02 to 0.27, but the model was trained on PHIF "
        f"without a unit over {low:.4g} to {high:.4g} (0.5-99.5 percentiles): a fraction curve beside a percent one, a "
        "factor of about 100; retrain with the unit stated (--unit PHIF=%, or a header PHIF (%)), then predict with "
        "--unit PHIF=v/v, which converts the well")
    frac_model = training_record([_log("F", depth, phi, unit="")], ["PHIF", "VSH"])
    with pytest.raises(DataFileError, match=r"^p.csv: curve PHIF has no unit and lies in 2 to 27, .* a percent curve "
                                            r"beside a fraction one"):
        check_inputs(frac_model, _log("P", depth, 100 * phi, unit="", source="p.csv"))
    assert check_inputs(frac_model, fraction).counts == {"PHIF": 2, "VSH": 0}   # same scale: only the two ends beyond 0.5-99.5


def test_a_well_shorter_than_the_window_is_warned_about(record):
    rec, (a, _) = record
    short = _log("S", 5030.0 + 0.25 * np.arange(12), a.curve("PHIF")[:12], source="short.csv")
    rec = {**rec, "step": 0.25}                                  # the step matches: the run is the only warning
    (warning,) = check_inputs(rec, short, window=16).warnings
    assert warning == ("short.csv: 12 samples at 5030-5032.75 m, fewer than the model's window of 16: the "
                       "transformer sees shorter windows than it was trained on; its values there are less reliable "
                       "than the tree models'")
    assert not check_inputs(rec, short, window=12).warnings          # as long as the window: nothing to say
    assert not check_inputs(rec, short, window=16, check_step=False).warnings   # resampled: checked by the caller


def test_short_runs_between_gaps_are_merged_into_one_line(record):
    rec, (a, _) = record
    phi = a.curve("PHIF")[:40].copy()
    # runs (sample index): 0-19 (20, long enough), 21-25 (5), 27-29 (3), 31-34 (4), 36-37 (2); 38-39 missing
    phi[[20, 26, 30, 35, 38, 39]] = np.nan
    gappy = _log("G", 100.0 + 0.5 * np.arange(40), phi, source="gappy.csv")
    (warning,) = check_inputs({**rec, "step": 0.5}, gappy, window=8).warnings
    assert warning == ("gappy.csv: 4 gap-free runs (14 samples: 5 samples at 110.5-112.5 m, 3 samples at 113.5-114.5 "
                       "m, 4 samples at 115.5-117 m and 1 more) are shorter than the model's window of 8: the "
                       "transformer sees shorter windows than it was trained on; its values there are less reliable "
                       "than the tree models'")
    # a gap in VSH ends a run too: the runs are those of every input together
    vsh = np.full(40, 0.3)
    vsh[10] = np.nan
    whole = _log("W", 100.0 + 0.5 * np.arange(40), a.curve("PHIF")[:40], vsh=vsh, source="w.csv")
    (warning,) = check_inputs({**rec, "step": 0.5}, whole, window=16).warnings
    assert warning.startswith("w.csv: 10 samples at 100-104.5 m, fewer than the model's window of 16")


def test_a_curve_in_a_unit_of_another_quantity_is_refused(record):
    rec, (a, _) = record
    density = _log("A", a.depth, 2.3 + a.curve("PHIF"), unit="G/CC", source="f1a_density.las")
    with pytest.raises(DataFileError, match=r"^f1a_density.las: curve PHIF is in G/CC \(a density\) but the model was "
                                            r"trained on V/V \(a volume fraction\); check the curve read for PHIF "
                                            r"\(--alias\) or its stated unit \(--unit PHIF=UNIT\)$"):
        check_inputs(rec, density)
    with pytest.raises(DataFileError, match=r"is in gAPI \(a gamma ray\)"):
        check_inputs(rec, _log("A", a.depth, 60 + a.curve("PHIF"), unit="gAPI", source="gr.csv"))
    same = check_inputs(rec, _log("A", a.depth, a.curve("PHIF"), unit="DEC", source="dec.las"))   # v/v by another name
    assert same.warnings == [] and same.counts["PHIF"] == check_inputs(rec, a).counts["PHIF"]


def test_a_porosity_headed_g_per_cc_is_not_trained_on(record):
    rec, (a, b) = record
    wrong = _log("A", a.depth, a.curve("PHIF"), unit="g/cc", source="well_badunit.csv")
    message = (rf"^well_badunit.csv: curve PHIF is stated in g/cc \(a density\) but its values are not densities "
               rf"\(median {np.median(a.curve('PHIF')):.4g}, range {a.curve('PHIF').min():.4g} to "
               rf"{a.curve('PHIF').max():.4g}; rocks lie between 0.8 and 5.5 g/cc\): correct the unit in the file's "
               r"header, or state it with --unit PHIF=UNIT$")
    with pytest.raises(DataFileError, match=message):
        check_wells([wrong], [], ["PHIF", "VSH"])                 # a training well alone
    with pytest.raises(DataFileError, match=message):
        check_inputs(rec, wrong)                                  # before a prediction
    density = _log("A", a.depth, 2.3 + a.curve("PHIF"), unit="g/cc", source="rhob.las")
    assert check_wells([density], [], ["PHIF", "VSH"]) == []      # real densities pass
