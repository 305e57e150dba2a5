"""`glassformer predict` checks a well before trusting a prediction: units, depth unit, step, training ranges,
curve aliases.  One tiny model (depth positions, 1 epoch) is trained once on a hand-written LAS well."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main

DEPTH = 1000.0 + 0.1 * np.arange(400)          # m


@pytest.fixture(scope="module")
def model(tmp_path_factory, las_writer):
    folder = tmp_path_factory.mktemp("predict")
    train = las_writer(folder / "train.las", "15/9-T-1", DEPTH, seed=1)
    run = folder / "run"
    assert main(["train", "--data", str(train), "--inputs", "PHIF", "VSH", "SW", "--target", "KLOGH", "--log-target",
                 "--positions", "depth", "--window", "8", "--epochs", "1", "--d-model", "4", "--heads", "1",
                 "--out", str(run), "--no-progress"]) == 0
    return run, folder


def _predict(model_run, data, out, *extra):
    return main(["predict", "--model", str(model_run), "--data", str(data), "--out", str(out), *extra])


def test_percent_porosity_for_a_fraction_model_is_converted(model, las_writer, make_curves, capsys):
    run, folder = model
    capsys.readouterr()
    pct = las_writer(folder / "percent.las", "15/9-T-1", DEPTH, make_curves(DEPTH, 2, percent=True))
    vv = las_writer(folder / "vv.las", "15/9-T-1", DEPTH, make_curves(DEPTH, 2))          # the same well in V/V
    out = folder / "pct.csv"
    assert _predict(run, pct, out) == 0                     # was refused: % and V/V are converted, and said
    assert "percent.las: PHIF converted from % to V/V (/ 100) to match the model" in capsys.readouterr().out
    assert _predict(run, vv, folder / "vv.csv") == 0
    np.testing.assert_allclose(pd.read_csv(out)["KLOGH_PRED"], pd.read_csv(folder / "vv.csv")["KLOGH_PRED"],
                               rtol=1e-3)                   # the LAS file rounds the % values


def test_feet_refused_for_depth_positions_or_converted_when_asked(model, las_writer, make_curves, capsys):
    run, folder = model
    curves = make_curves(DEPTH, 3)
    metres = las_writer(folder / "m.las", "15/9-T-2", DEPTH, curves)
    feet = las_writer(folder / "ft.las", "15/9-T-2", DEPTH / 0.3048, curves, depth_unit="FT")
    capsys.readouterr()
    assert _predict(run, feet, folder / "ft.csv") == 2
    err = capsys.readouterr().err
    assert "ft.las: depth is in ft but the model was trained with depth positions in m; pass --depth-unit m" in err
    assert _predict(run, metres, folder / "m.csv") == 0
    assert _predict(run, feet, folder / "ft.csv", "--depth-unit", "m") == 0
    assert "depths converted from ft to m" in capsys.readouterr().out
    a, b = pd.read_csv(folder / "m.csv"), pd.read_csv(folder / "ft.csv")
    np.testing.assert_allclose(b["DEPTH_FT"], DEPTH / 0.3048, rtol=1e-6)       # the file's own depths, in feet
    np.testing.assert_allclose(b["KLOGH_PRED_LOG10"], a["KLOGH_PRED_LOG10"], rtol=1e-6, atol=1e-7)


def test_a_different_step_is_warned_about(model, las_writer, make_curves, capsys):
    run, folder = model
    depth = 1000.0 + 0.1524 * np.arange(400)
    coarse = las_writer(folder / "coarse.las", "15/9-T-3", depth, make_curves(depth, 4))
    capsys.readouterr()
    assert _predict(run, coarse, folder / "coarse.csv") == 0
    err = capsys.readouterr().err
    assert "warning: " in err and "sampled every 0.1524 m, the model was trained on samples every 0.1 m: a window of " \
                                  "8 samples spans 1.22 m here, 0.8 m in training" in err


def test_out_of_range_samples_get_a_flag_curve_and_a_count(model, las_writer, make_curves, capsys):
    import lasio

    run, folder = model
    train = lasio.read(str(folder / "train.las"))
    curves = make_curves(DEPTH, 1)              # the training well itself, 20 samples pushed out of range
    phi = curves["PHIF"][1].copy()
    phi[100:120] = 0.6
    curves["PHIF"] = ("V/V", phi)
    path = las_writer(folder / "oor.las", "15/9-T-1", DEPTH, curves)
    capsys.readouterr()
    assert _predict(run, path, folder / "oor.csv") == 0
    out = capsys.readouterr().out
    # the training range: 0.5 and 99.5 percentiles of the training samples, computed here from the file
    outside = {}
    for m, values in (("PHIF", phi), ("VSH", curves["VSH"][1]), ("SW", curves["SW"][1])):
        lo, hi = np.percentile(train[m], [0.5, 99.5])
        outside[m] = (values < lo) | (values > hi)
    expect = np.any(list(outside.values()), axis=0)
    flag = pd.read_csv(folder / "oor.csv")["KLOGH_OOR"].to_numpy()
    np.testing.assert_array_equal(flag, expect.astype(float))
    assert (flag[100:120] == 1).all() and 20 < expect.sum() <= 20 + 12
    counts = ", ".join(f"{m} {int(v.sum())}" for m, v in outside.items() if v.any())
    assert (f"{int(expect.sum())} of 400 predicted depths have inputs outside the training range (0.5-99.5 "
            f"percentiles; flag curve KLOGH_OOR): {counts}") in out
    assert _predict(run, path, folder / "oor_pred.las") == 0
    las = lasio.read(str(folder / "oor_pred.las"))
    np.testing.assert_array_equal(las["KLOGH_OOR"], flag)


def test_an_alias_gives_the_output_of_the_renamed_original(model, las_writer, make_curves, capsys):
    run, folder = model
    original = las_writer(folder / "orig.las", "15/9-T-4", DEPTH, make_curves(DEPTH, 5))
    renamed = las_writer(folder / "phie.las", "15/9-T-4", DEPTH, make_curves(DEPTH, 5, porosity="PHIE"))
    assert _predict(run, original, folder / "orig.csv") == 0
    capsys.readouterr()
    assert _predict(run, renamed, folder / "phie.csv", "--alias", "PHIF=PHIE") == 0
    assert "input PHIF read from curve PHIE" in capsys.readouterr().out
    assert (folder / "orig.csv").read_text() == (folder / "phie.csv").read_text()


def test_an_ambiguous_alias_lists_the_candidates(model, las_writer, make_curves, capsys):
    run, folder = model
    curves = {**make_curves(DEPTH, 6, porosity="PHIE"), "POR": ("V/V", np.full(len(DEPTH), 0.2))}
    both = las_writer(folder / "both.las", "15/9-T-5", DEPTH, curves)
    capsys.readouterr()
    assert _predict(run, both, folder / "both.csv", "--alias", "PHIF=PHIE", "--alias", "PHIF=POR") == 2
    err = capsys.readouterr().err
    assert "curve 'PHIF' is not in well '15/9-T-5'" in err and "several of its aliases given are: PHIE, POR" in err


def test_a_well_missing_an_input_curve_is_named(model, las_writer, make_curves, capsys):
    run, folder = model
    curves = {k: v for k, v in make_curves(DEPTH, 7).items() if k != "SW"}
    path = las_writer(folder / "no_sw.las", "15/9-T-6", DEPTH, curves)
    capsys.readouterr()
    assert _predict(run, path, folder / "no_sw.csv") == 2
    err = capsys.readouterr().err
    assert "curve 'SW' not found in well '15/9-T-6'" in err and "no_sw.las" in err


def test_a_csv_in_feet_says_so_in_its_header_and_is_refused_or_converted(model, make_curves, capsys):
    run, folder = model
    curves = make_curves(DEPTH, 3)
    table = pd.DataFrame({"DEPTH_FT": DEPTH / 0.3048, **{k: v for k, (_, v) in curves.items()}})
    feet = folder / "ft.csv"
    table.to_csv(feet, index=False)
    capsys.readouterr()
    assert _predict(run, feet, folder / "ft_pred.csv") == 2
    assert "ft.csv: depth is in ft but the model was trained with depth positions in m" in capsys.readouterr().err
    assert _predict(run, feet, folder / "ft_pred.csv", "--depth-unit", "m") == 0
    metres = folder / "m_table.csv"
    table.rename(columns={"DEPTH_FT": "DEPTH"}).assign(DEPTH=DEPTH).to_csv(metres, index=False)
    assert _predict(run, metres, folder / "m_pred.csv") == 0
    a, b = pd.read_csv(folder / "m_pred.csv"), pd.read_csv(folder / "ft_pred.csv")
    np.testing.assert_allclose(b["KLOGH_PRED_LOG10"], a["KLOGH_PRED_LOG10"], rtol=1e-6, atol=1e-7)
    from glassformer.data import read_well

    back = read_well(folder / "ft_pred.csv")                   # the output says feet as the input did
    assert back.depth_unit == "ft" and list(pd.read_csv(folder / "ft_pred.csv").columns)[0] == "DEPTH_FT"
    np.testing.assert_allclose(back.depth, DEPTH / 0.3048, rtol=1e-8)      # 9 significant digits in a CSV


def test_out_of_range_counts_are_over_the_predicted_depths_only(model, las_writer, make_curves, capsys):
    run, folder = model
    curves = make_curves(DEPTH, 8)
    vsh, sw = curves["VSH"][1].copy(), curves["SW"][1].copy()
    vsh[:50] = 0.99                                  # out of range, but SW is missing there: never predicted
    sw[:50] = np.nan
    curves["VSH"], curves["SW"] = ("V/V", vsh), ("V/V", sw)
    path = las_writer(folder / "gap.las", "15/9-T-7", DEPTH, curves)
    capsys.readouterr()
    assert _predict(run, path, folder / "gap.csv") == 0
    out = capsys.readouterr().out
    flag = pd.read_csv(folder / "gap.csv")["KLOGH_OOR"].to_numpy()
    assert np.isnan(flag[:50]).all()
    n = int(np.nansum(flag))
    assert f"{n} of 350 predicted depths have inputs outside the training range" in out
    by_curve = dict(item.rsplit(" ", 1) for item in out.split("flag curve KLOGH_OOR): ")[-1].split("\n")[0].split(", ")
                    if item) if "KLOGH_OOR): " in out else {}
    assert n < 50 and all(int(v) <= n for v in by_curve.values()), (n, by_curve)   # the 50 VSH values not predicted


def test_an_interval_with_nothing_to_predict_is_refused(model, las_writer, make_curves, capsys):
    run, folder = model
    curves = make_curves(DEPTH, 9)
    sw = curves["SW"][1].copy()
    sw[:100] = np.nan
    curves["SW"] = ("V/V", sw)
    path = las_writer(folder / "no_sw_top.las", "15/9-T-8", DEPTH, curves)
    capsys.readouterr()
    assert _predict(run, path, folder / "top.csv", "--depth", "1000:1005") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ("no_sw_top.las: no depth of 1000-1005 m has every input (PHIF, VSH, SW) present; "
                              "nothing to predict (SW missing throughout)") in err[0], err
    assert not (folder / "top.csv").exists()


def test_an_alias_absent_from_the_well_is_not_passed_over_in_silence(model, las_writer, make_curves, capsys):
    run, folder = model
    renamed = las_writer(folder / "phie_only.las", "15/9-T-9", DEPTH, make_curves(DEPTH, 10, porosity="PHIE"))
    capsys.readouterr()
    assert _predict(run, renamed, folder / "phie_only.csv", "--alias", "PHIF=PHI") == 0
    assert ("input PHIF read from curve PHIE (a default alias: the alias given, PHI, is not in this well)"
            in capsys.readouterr().out)
