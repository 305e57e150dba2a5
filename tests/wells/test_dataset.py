"""Several wells, each with its own role and interval: options, manifest, aliases and the errors that name
the well."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import CurveNotFoundError, DataFileError, DepthError, InputError
from glassformer.wells import build_dataset, read_manifest
from glassformer.wells.dataset import match_well, parse_depth_specs

INPUTS = ["PHIF", "VSH", "SW"]
DEPTH_A = 1000.0 + 0.5 * np.arange(200)        # 1000 .. 1099.5 m
DEPTH_B = 2000.0 + 0.5 * np.arange(150)        # 2000 .. 2074.5 m: no depth in common with A


@pytest.fixture
def two_wells(write_well):
    return write_well("well_a.las", "15/9-A-1 A", DEPTH_A, seed=1), write_well("well_b.las", "15/9-B-2", DEPTH_B, seed=2)


def test_parse_depth_specs():
    assert parse_depth_specs(["1:2", "F11B=3351.6:4300"], "--train-depth") == [
        (None, (1.0, 2.0), "--train-depth 1:2"), ("F11B", (3351.6, 4300.0), "--train-depth F11B=3351.6:4300")]
    with pytest.raises(InputError, match="TOP:BASE or WELL=TOP:BASE"):
        parse_depth_specs(["A=1-2"], "--train-depth")
    with pytest.raises(InputError, match="TOP < BASE"):
        parse_depth_specs(["5:1"], "--test-depth")
    with pytest.raises(InputError, match="not several bare intervals"):
        parse_depth_specs(["1:2", "3:4"], "--train-depth")


def test_per_well_intervals_on_two_wells_whose_depth_ranges_differ(two_wells):
    a, b = two_wells
    # one interval for both cannot work: it lies outside the second well
    with pytest.raises(DepthError, match=r"15/9-B-2.*1010 to 1050 m lies outside the log's depth range 2000 to 2074.5"):
        build_dataset([a, b], inputs=INPUTS, target="KLOGH", train_depth=["1010:1050"])
    ds = build_dataset([a, b], inputs=INPUTS, target="KLOGH", train_depth=["A1A=1010:1050", "well_b=2010:2040"],
                       test_depth=["A-1 A=1050:1080"], window=8)
    (ta, tb), (test,) = ds.train, ds.test
    assert (ta.name, ta.depth[0], ta.depth[-1]) == ("15/9-A-1 A", 1010.0, 1050.0)
    assert (tb.name, tb.depth[0], tb.depth[-1]) == ("15/9-B-2", 2010.0, 2040.0)
    assert (test.name, test.depth[0], test.depth[-1]) == ("15/9-A-1 A", 1050.5, 1080.0)   # 1050 stays in training
    assert ds.boundary == 1050.0 and ds.val == []
    # without intervals every well contributes its whole valid log
    whole = build_dataset([a, b], inputs=INPUTS, target="KLOGH")
    assert [(g.depth[0], g.depth[-1]) for g in whole.train] == [(1000.0, 1099.5), (2000.0, 2074.5)]
    assert whole.describe()["train_wells"][1] == {"name": "15/9-B-2", "source": str(b), "top": 2000.0,
                                                  "base": 2074.5, "depth_unit": "m"}


def test_a_bare_test_interval_applies_to_the_test_wells_and_keys_must_match_one_well(two_wells, write_well):
    a, b = two_wells
    c = write_well("well_c.las", "15/9-B-3", DEPTH_B, seed=3)
    ds = build_dataset([a], test_data=[b, c], inputs=INPUTS, target="KLOGH", test_depth=["2020:2030"])
    assert [(g.name, g.depth[0], g.depth[-1]) for g in ds.test] == [("15/9-B-2", 2020.0, 2030.0),
                                                                     ("15/9-B-3", 2020.0, 2030.0)]
    assert ds.boundary is None
    with pytest.raises(InputError, match=r"'15/9-B' matches several wells \(15/9-B-2 \(well_b.las\); 15/9-B-3"):
        build_dataset([a], test_data=[b, c], inputs=INPUTS, target="KLOGH", test_depth=["15/9-B=2020:2030"])
    with pytest.raises(InputError, match=r"'ZZ' names none of the wells \(15/9-A-1 A \(well_a.las\)"):
        build_dataset([a], inputs=INPUTS, target="KLOGH", train_depth=["ZZ=1000:1010"])
    with pytest.raises(InputError, match="15/9-B-2 is not a train well"):
        build_dataset([a], test_data=[b], inputs=INPUTS, target="KLOGH", train_depth=["B-2=2000:2010"])


def test_forecast_may_share_only_the_boundary_sample(two_wells):
    a, _ = two_wells
    with pytest.raises(DepthError, match=r"--test-depth A=1040:1060 overlaps --train-depth A=1010:1050 in "
                                         r"15/9-A-1 A: 21 depth samples \(1040 to 1050 m\)"):
        build_dataset([a], inputs=INPUTS, target="KLOGH", train_depth=["A=1010:1050"], test_depth=["A=1040:1060"])


def test_a_manifest_with_train_val_and_test_roles(two_wells, write_well, tmp_path):
    a, b = two_wells
    write_well("well_c.las", "C", DEPTH_B + 500, seed=3)       # listed in the manifest by its name
    manifest = tmp_path / "wells.csv"
    manifest.write_text("file,well,role,top,base\n"
                        "well_a.las,A-1,train,1000,1060\n"
                        "well_a.las,A-1,test,1060,1099.5\n"
                        f"{b},,val,,\n"
                        "well_c.las,C,test,2510,2550\n")
    entries = read_manifest(manifest)
    assert [(e.role, e.top, e.base, e.well) for e in entries] == [
        ("train", 1000.0, 1060.0, "A-1"), ("test", 1060.0, 1099.5, "A-1"), ("val", None, None, None),
        ("test", 2510.0, 2550.0, "C")]
    ds = build_dataset([], inputs=INPUTS, target="KLOGH", manifest=manifest, window=8)
    assert [(g.name, g.depth[0], g.depth[-1]) for g in ds.train] == [("A-1", 1000.0, 1060.0)]
    assert [(g.name, g.depth[0], g.depth[-1]) for g in ds.val] == [("15/9-B-2", 2000.0, 2074.5)]
    assert [(g.name, g.depth[0], g.depth[-1]) for g in ds.test] == [("A-1", 1060.5, 1099.5), ("C", 2510.0, 2550.0)]
    assert set(ds.curves_used) == {"A-1", "15/9-B-2", "C"} and ds.boundary == 1060.0


@pytest.mark.parametrize("text, message", [
    ("file,role\nnope.las,train\n", r"line 2: well file 'nope.las' not found"),
    ("file,role\nwell_a.las,holdout\n", r"line 2: role 'holdout' is not one of train, val, test"),
    ("file,role,top\nwell_a.las,train,1000\n", r"line 2: give both top and base"),
    ("path,role\nwell_a.las,train\n", r"no column file"),
])
def test_bad_manifests_name_the_line(two_wells, tmp_path, text, message):
    manifest = tmp_path / "m.csv"
    manifest.write_text(text)
    with pytest.raises(DataFileError, match=message):
        read_manifest(manifest)


def test_a_well_missing_an_input_curve_is_named(two_wells, write_well, make_curves):
    a, _ = two_wells
    curves = {k: v for k, v in make_curves(DEPTH_B, 4).items() if k != "VSH"}
    d = write_well("no_vsh.las", "15/9-D-4", DEPTH_B, curves=curves)
    with pytest.raises(CurveNotFoundError, match=r"curve 'VSH' not found in well '15/9-D-4' \(.*no_vsh.las\)"):
        build_dataset([a], test_data=[d], inputs=INPUTS, target="KLOGH")


def test_a_well_with_no_valid_sample_in_its_interval_is_named(write_well, make_curves):
    curves = make_curves(DEPTH_A, 5)
    k = curves["KLOGH"][1].copy()
    k[(DEPTH_A >= 1020) & (DEPTH_A <= 1030)] = np.nan
    curves["KLOGH"] = ("MD", k)
    a = write_well("gappy.las", "15/9-E-5", DEPTH_A, curves=curves)
    with pytest.raises(DataFileError, match=r"gappy.las: target curve KLOGH has no valid \(non-null\) sample in the "
                                            r"training interval 1020:1030 m \(21 samples, all null\) of well '15/9-E-5'"):
        build_dataset([a], inputs=INPUTS, target="KLOGH", train_depth=["1020:1030"])
    phi = curves["PHIF"][1].copy()
    phi[(DEPTH_A >= 1040) & (DEPTH_A <= 1050)] = np.nan
    k[(DEPTH_A >= 1030) & (DEPTH_A <= 1050)] = np.nan                # PHIF and KLOGH present, never together
    k[(DEPTH_A > 1040) & (DEPTH_A < 1050)] = 1.0
    curves.update(PHIF=("V/V", phi), KLOGH=("MD", k))
    b = write_well("apart.las", "15/9-E-7", DEPTH_A, curves=curves)
    with pytest.raises(DataFileError, match=r"well '15/9-E-7' \(.*apart.las\): no valid sample in its test interval "
                                            r"1035:1050 m: no depth has every one of PHIF, VSH, SW, KLOGH \(valid "
                                            r"samples per curve: PHIF 10, VSH 31, SW 31, KLOGH 19\)"):
        build_dataset([a], test_data=[b], inputs=INPUTS, target="KLOGH", test_depth=["E-7=1035:1050"])
    empty = {m: (u, np.full(len(DEPTH_A), np.nan)) if m == "SW" else (u, v) for m, (u, v) in curves.items()}
    b = write_well("no_sw.las", "15/9-E-6", DEPTH_A, curves=empty)
    with pytest.raises(DataFileError, match=r"well '15/9-E-6'.*no depth has every one of PHIF, VSH, SW, KLOGH"):
        build_dataset([b], inputs=INPUTS, target="KLOGH")


def test_aliases_are_resolved_per_well_and_recorded(two_wells, write_well, make_curves):
    synthetic_curves = make_curves
    a, _ = two_wells
    c = write_well("phie.las", "15/9-C-3", DEPTH_B, curves=synthetic_curves(DEPTH_B, 3, porosity="PHIE"))
    ds = build_dataset([a, c], inputs=INPUTS, target="KLOGH", aliases=["PHIF=PHIE"])
    assert ds.curves_used["15/9-C-3"]["PHIF"] == "PHIE" and ds.curves_used["15/9-A-1 A"]["PHIF"] == "PHIF"
    assert "PHIF" in ds.train[1].curves and "PHIE" not in ds.train[1].curves
    curves = {**synthetic_curves(DEPTH_B, 3, porosity="PHIE"), "POR": ("V/V", np.full(len(DEPTH_B), 0.2))}
    both = write_well("both.las", "15/9-C-4", DEPTH_B, curves=curves)
    with pytest.raises(DataFileError, match=r"several of its aliases given are: PHIE, POR"):
        build_dataset([both], inputs=INPUTS, target="KLOGH", aliases=["PHIF=PHIE", "PHIF=POR"])


def test_match_well_by_name_file_or_part(two_wells):
    from glassformer.data import read_well

    logs = [read_well(p) for p in two_wells]
    assert match_well("15/9-b-2", logs, "--x") is logs[1]           # the well name, any case
    assert match_well("well_a", logs, "--x") is logs[0]             # the file stem
    assert match_well("B2", logs, "--x") is logs[1]                 # a unique part, punctuation ignored
