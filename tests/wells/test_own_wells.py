"""A petrophysicist's own wells through train and predict: CSV and Excel wells with units in their headers,
every well checked as predict checks one, fractions outside [0, 1], a 100-sample well said to be small data,
resampling onto the model's step, and an output LAS that keeps the well's curves."""

from __future__ import annotations

import json

import lasio
import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main
from glassformer.data import WellLog
from glassformer.wells import WellModel
from glassformer.wells.resample import interpolate_onto, regular_depths, resample_log
from glassformer.wells.splits import MIN_TRAINING_WINDOWS

TINY = ["--epochs", "1", "--d-model", "4", "--heads", "1", "--no-progress", "--checkpoint-every", "100"]


def _teaching_well(path, n=100, seed=0, *, headers=("Depth (m)", "Por (%)", "Perm (mD)"), scale=100.0, top=1500.0):
    """A well as published for teaching: 0.25 m spacing, porosity in % (``scale`` 100), permeability in mD."""
    rng = np.random.default_rng(seed)
    depth = top + 0.25 * np.arange(n)
    phi = 0.16 + 0.06 * np.sin(depth / 1.7) + 0.01 * rng.standard_normal(n)          # fraction
    k = 10 ** (12 * phi - 0.8 + 0.1 * rng.standard_normal(n))                          # mD
    pd.DataFrame({headers[0]: depth, headers[1]: scale * phi, headers[2]: k}).to_csv(path, index=False)
    return path


def _train(data, out, *extra, inputs=("Por",), target="Perm", window="8"):
    return main(["train", *[a for d in data for a in ("--data", str(d))], "--inputs", *inputs, "--target", target,
                 "--window", window, "--out", str(out), *TINY, *extra])


def test_units_in_headers_reach_the_model_the_checks_and_the_axis_labels(tmp_path, monkeypatch, capsys):
    import glassformer.plots as plots

    seen = {}
    real = plots.plot_crossplot

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(plots, "plot_crossplot", spy)
    a = _teaching_well(tmp_path / "a.csv", 160, 1)
    b = _teaching_well(tmp_path / "b.csv", 120, 2, headers=("Depth [m]", "Por [%]", "Perm [mD]"), top=1600.0)
    out = tmp_path / "run"
    assert _train([a], out, "--test-data", str(b), inputs=("Por (%)",), target="Perm (mD)") == 0
    cfg = json.loads((out / "config.json").read_text())
    record = cfg["well_model"]["training_data"]
    assert cfg["well_model"]["inputs"] == ["POR"] and cfg["well_model"]["target"] == "PERM"
    assert record["inputs"]["POR"]["unit"] == "%" and record["inputs"]["POR"]["kind"] == "percent"
    assert record["target"] == {"name": "PERM", "unit": "mD"}
    assert seen["porosity_unit"] == "%"                                # the crossplot says %, not v/v
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["units"]["rmse"] == "mD"
    # a v/v well given to this % model (refused before) is converted to %, and predict says so
    vv = _teaching_well(tmp_path / "vv.csv", 80, 3, headers=("DEPTH_M", "POR_V/V", "PERM_MD"), scale=1.0)
    pct = _teaching_well(tmp_path / "pct.csv", 80, 3)                   # the same well in %
    capsys.readouterr()
    assert main(["predict", "--model", str(out), "--data", str(vv), "--out", str(tmp_path / "p.csv")]) == 0
    said = capsys.readouterr()
    assert "vv.csv: POR converted from v/v to % (x 100) to match the model" in said.out + said.err
    assert main(["predict", "--model", str(out), "--data", str(pct), "--out", str(tmp_path / "q.csv")]) == 0
    np.testing.assert_allclose(pd.read_csv(tmp_path / "p.csv")["PERM_PRED"], pd.read_csv(tmp_path / "q.csv")["PERM_PRED"],
                               rtol=1e-6)


def test_the_same_wells_as_excel_sheets(tmp_path):
    a = pd.read_csv(_teaching_well(tmp_path / "a.csv", 160, 1))
    b = pd.read_csv(_teaching_well(tmp_path / "b.csv", 120, 2, top=1600.0))
    book = tmp_path / "wells.xlsx"
    with pd.ExcelWriter(book, engine="openpyxl") as writer:
        a.to_excel(writer, sheet_name="A", index=False)
        b.to_excel(writer, sheet_name="B", index=False)
    from_csv, from_xlsx = tmp_path / "csv_run", tmp_path / "xlsx_run"
    assert _train([tmp_path / "a.csv"], from_csv, "--test-data", str(tmp_path / "b.csv")) == 0
    assert _train([book], from_xlsx, "--sheet", "A", "--test-data", str(tmp_path / "b.csv")) == 0
    m_csv = json.loads((from_csv / "metrics.json").read_text())
    m_xlsx = json.loads((from_xlsx / "metrics.json").read_text())
    assert m_xlsx["test"]["porosity-permeability transform"]["rmse"] == pytest.approx(
        m_csv["test"]["porosity-permeability transform"]["rmse"], rel=1e-12)
    assert json.loads((from_xlsx / "config.json").read_text())["train_wells"][0]["name"] == "A"
    both = tmp_path / "both_run"                                        # without --sheet: every sheet a well
    assert _train([book], both) == 0
    assert [w["name"] for w in json.loads((both / "config.json").read_text())["train_wells"]] == ["A", "B"]


def test_a_percent_test_well_in_train_is_converted(tmp_path, las_writer, make_curves, capsys):
    depth = 1000 + 0.5 * np.arange(120)
    train = las_writer(tmp_path / "t.las", "T-1", depth, make_curves(depth, 1))
    test = las_writer(tmp_path / "pct.las", "T-2", depth, make_curves(depth, 2, percent=True))
    same = las_writer(tmp_path / "vv.las", "T-2", depth, make_curves(depth, 2))          # the same well in V/V

    def run(well, out):
        return main(["train", "--data", str(train), "--test-data", str(well), "--inputs", "PHIF", "VSH", "--target",
                     "KLOGH", "--window", "8", "--out", str(out), *TINY])

    capsys.readouterr()
    assert run(test, tmp_path / "run") == 0                            # was refused: % and V/V are converted
    said = capsys.readouterr()
    assert "pct.las: PHIF converted from % to V/V (/ 100) to match the training wells" in said.out + said.err
    assert run(same, tmp_path / "same") == 0
    got, want = (json.loads((tmp_path / r / "metrics.json").read_text())["test"] for r in ("run", "same"))
    for method in want:
        assert got[method]["rmse"] == pytest.approx(want[method]["rmse"], rel=1e-3), method   # LAS rounding


def test_unitless_percent_and_fraction_wells_are_refused_and_headers_fix_it(tmp_path, capsys):
    pct = _teaching_well(tmp_path / "pct_nounit.csv", 160, 1, headers=("Depth (m)", "Por", "Perm (mD)"))
    frac = _teaching_well(tmp_path / "nounits.csv", 120, 2, headers=("Depth (m)", "Por", "Perm (mD)"), scale=1.0,
                          top=1600.0)
    capsys.readouterr()
    assert _train([pct], tmp_path / "run", "--test-data", str(frac)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "curve POR differs by a factor of about 100 between wells" in err[0]
    assert f"POR (v/v) in {frac}, POR (%) in {pct}" in err[0] and not (tmp_path / "run").exists()
    # the fix the message gives: units in the headers -> trained, the test well converted to %
    for path in (pct, frac):
        table = pd.read_csv(path)
        table.rename(columns={"Por": "Por (%)" if path == pct else "Por (v/v)"}).to_csv(path, index=False)
    assert _train([pct], tmp_path / "run", "--test-data", str(frac)) == 0
    said = capsys.readouterr()
    assert f"{frac}: POR converted from v/v to % (x 100) to match the training wells" in said.out + said.err
    # predict: a unitless % model given the unitless fraction well is refused, naming the working commands
    bare = _teaching_well(tmp_path / "bare.csv", 120, 2, headers=("Depth (m)", "Por", "Perm (mD)"), scale=1.0)
    unitless = _teaching_well(tmp_path / "u.csv", 160, 1, headers=("Depth (m)", "Por", "Perm (mD)"))
    assert _train([unitless], tmp_path / "u_run") == 0
    capsys.readouterr()
    assert main(["predict", "--model", str(tmp_path / "u_run"), "--data", str(bare), "--out",
                 str(tmp_path / "b.csv")]) == 2
    assert ("retrain with the unit stated (--unit POR=%, or a header POR (%)), then predict with --unit POR=v/v"
            in capsys.readouterr().err)
    assert _train([unitless], tmp_path / "pct_run", "--unit", "POR=%") == 0
    assert main(["predict", "--model", str(tmp_path / "pct_run"), "--data", str(bare), "--unit", "POR=v/v", "--out",
                 str(tmp_path / "b.csv")]) == 0


def test_a_fraction_labelled_well_in_percent_is_refused_and_unit_fixes_it(tmp_path, capsys):
    wrong = _teaching_well(tmp_path / "w.csv", 120, 4, headers=("Depth (m)", "Por (v/v)", "Perm (mD)"))
    capsys.readouterr()
    assert _train([wrong], tmp_path / "run") == 2
    err = capsys.readouterr().err
    phi = pd.read_csv(wrong)["Por (v/v)"].to_numpy()
    bad = int(((phi > 1.05) | (phi < -0.05)).sum())
    assert bad > 100 and phi.max() > 20
    assert (f"w.csv: curve POR is in v/v (a fraction, 0 to 1) but {bad} of {phi.size} samples lie outside [0, 1] "
            f"(range {phi.min():.4g} to {phi.max():.4g}); it looks like percent") in err
    assert "--unit POR=%" in err
    assert _train([wrong], tmp_path / "run", "--unit", "POR=%") == 0
    cfg = json.loads((tmp_path / "run" / "config.json").read_text())
    assert cfg["well_model"]["training_data"]["inputs"]["POR"]["unit"] == "%"


def test_predict_refuses_a_fraction_labelled_well_in_percent(tmp_path, las_writer, make_curves, capsys):
    depth = 1000 + 0.5 * np.arange(120)
    train = las_writer(tmp_path / "t.las", "T-1", depth, make_curves(depth, 1))
    out = tmp_path / "run"
    assert main(["train", "--data", str(train), "--inputs", "PHIF", "VSH", "--target", "KLOGH", "--window", "8",
                 "--out", str(out), *TINY]) == 0
    curves = make_curves(depth, 2)
    curves["PHIF"] = ("V/V", 100 * curves["PHIF"][1])                   # labelled v/v, written in %
    wrong = las_writer(tmp_path / "wrong.las", "T-2", depth, curves)
    capsys.readouterr()
    assert main(["predict", "--model", str(out), "--data", str(wrong), "--out", str(tmp_path / "p.las")]) == 2
    assert "wrong.las: curve PHIF is in V/V (a fraction, 0 to 1) but 120 of 120 samples" in capsys.readouterr().err
    assert not (tmp_path / "p.las").exists()


def test_a_100_sample_well_is_said_to_be_small_data(tmp_path, capsys):
    well = _teaching_well(tmp_path / "short.csv", 100, 5)
    out = tmp_path / "run"
    capsys.readouterr()
    assert _train([well], out, window="32") == 0
    said = capsys.readouterr()
    # the block: one window (32 samples), not two (64), because two would take more than a quarter
    depth = 1500.0 + 0.25 * np.arange(100)
    cfg = json.loads((out / "config.json").read_text())
    (block,) = cfg["validation"]["blocks"]
    assert (block["samples"], block["of_samples"], block["top"], block["base"]) == (32, 100, depth[68], depth[99])
    assert f"{depth[68]:g}-{depth[99]:g} m, 32 of 100 samples (32 %)" in cfg["validation"]["method"]
    # the windows: 68 fit samples, half-window stride 16 gives 3; the stride is shortened to give 8
    stride = (68 - 32) // (MIN_TRAINING_WINDOWS - 1)
    n_windows = len(range(0, 68 - 32 + 1, stride))
    assert (stride, n_windows) == (5, 8)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["training"]["n_train_windows"] == n_windows
    text = ("small data: the validation block of short takes 32 of its 100 samples (32 %, "
            f"{depth[68]:g}-{depth[99]:g} m), more than a quarter, so the networks fit on 68")
    assert f"warning: {text}" in said.out
    assert text in " ".join(cfg["validation"]["small_data"])
    assert "stride between training windows is 5 samples instead of half a window (16)" in metrics["note"]
    assert "Small data: the validation block of short takes 32 of its 100 samples" in (out / "report.html").read_text()


def test_cv_says_each_folds_small_data_in_its_summary(tmp_path, capsys):
    wells = [_teaching_well(tmp_path / f"w{i}.csv", 100, i, top=1500.0 + 100 * i) for i in range(3)]
    capsys.readouterr()
    assert main(["cv", *[a for w in wells for a in ("--data", str(w))], "--inputs", "Por", "--target", "Perm",
                 "--window", "32", "--out", str(tmp_path / "cv"), *TINY[:-2]]) == 0
    said = capsys.readouterr().out
    # held out w0: the training wells w1, w2 each give one 32-sample block of their 100 samples
    for held, trained in (("w0", ("w1", "w2")), ("w1", ("w0", "w2")), ("w2", ("w0", "w1"))):
        for name in trained:
            assert f"warning: held out {held}: small data: the validation block of {name} takes 32 of its 100" in said


def test_resampling_a_linear_log_round_trips():
    depth = 2000.0 + 0.1524 * np.arange(50)                            # half-foot samples, in m
    log = WellLog(name="L", depth=depth, curves={"GR": 3.0 * depth - 5000.0, "PHIF": 0.001 * (depth - 2000)})
    grid = resample_log(log, 0.1)
    # 49 x 0.1524 = 7.4676 m: 75 whole steps of 0.1 m, then the file's last depth
    np.testing.assert_allclose(grid.depth[:-1], regular_depths(2000.0, depth[-1], 0.1))
    assert len(grid) == 76 and grid.depth[-1] == depth[-1]
    np.testing.assert_allclose(grid.curve("GR"), 3.0 * grid.depth - 5000.0, rtol=0, atol=1e-9)   # linear is exact
    back = interpolate_onto(grid.depth, grid.curve("GR"), depth)
    np.testing.assert_allclose(back, log.curve("GR"), rtol=0, atol=1e-9)   # every depth of the file, the last too
    assert np.isnan(interpolate_onto(grid.depth, grid.curve("GR"), [1999.9, depth[-1] + 0.01])).all()   # never extrapolated
    whole = resample_log(WellLog(name="W", depth=2000.0 + 0.2 * np.arange(11), curves={"GR": np.arange(11.0)}), 0.1)
    assert len(whole) == 21 and whole.depth[-1] == 2002.0               # a whole number of steps: nothing appended
    gap = log.curve("PHIF").copy()
    gap[20] = np.nan
    filled = interpolate_onto(depth, gap, grid.depth)
    near = (grid.depth > depth[19]) & (grid.depth < depth[21])
    assert near.any() and np.isnan(filled[near]).all()                 # a gap is not bridged
    assert np.isfinite(filled[grid.depth < depth[19]]).all()


@pytest.fixture(scope="module")
def model(tmp_path_factory, las_writer, make_curves):
    folder = tmp_path_factory.mktemp("own")
    depth = 1000 + 0.1 * np.arange(400)
    train = las_writer(folder / "t.las", "T-1", depth, make_curves(depth, 1))
    assert main(["train", "--data", str(train), "--inputs", "PHIF", "VSH", "--target", "KLOGH", "--window", "8",
                 "--out", str(folder / "run"), *TINY]) == 0
    return folder / "run", folder


def test_predict_resample_puts_the_prediction_back_on_the_files_depths(model, las_writer, make_curves, capsys):
    run, folder = model
    depth = 1000 + 0.1524 * np.arange(200)
    curves = make_curves(depth, 3)
    well = las_writer(folder / "halffoot.las", "T-3", depth, curves)
    capsys.readouterr()
    assert main(["predict", "--model", str(run), "--data", str(well), "--out", str(folder / "plain.las")]) == 0
    assert "sampled every 0.1524 m, the model was trained on samples every 0.1 m" in capsys.readouterr().err
    plain = lasio.read(str(folder / "plain.las"))
    assert "sampled every 0.1524 m" in plain.other                      # the warning is in the file too
    assert "of 200 predicted depths have inputs outside the training range" in plain.other
    assert main(["predict", "--model", str(run), "--data", str(well), "--out", str(folder / "res.las"),
                 "--resample"]) == 0
    said = capsys.readouterr()
    assert "resampled from a step of 0.1524 to the model's 0.1 m" in said.out
    assert "sampled every" not in said.err                              # resampled: the step no longer differs
    res = lasio.read(str(folder / "res.las"))
    np.testing.assert_allclose(res.index, depth, atol=1e-6)            # the file's own depths
    assert "resampled from a step of 0.1524" in res.other and "sampled every" not in res.other
    assert np.isfinite(res["KLOGH_PRED"][-1])                           # the file's last depth is predicted
    # the same: the model's prediction on the 0.1 m grid, interpolated back by hand
    from glassformer.data import read_well
    from glassformer.wells import WellModel

    wm = WellModel.load(run / "model")
    grid = resample_log(read_well(well), 0.1)
    expect = interpolate_onto(grid.depth, 10 ** wm.predict_log(grid) if wm.log_target else wm.predict_log(grid),
                              depth)
    np.testing.assert_allclose(res["KLOGH_PRED"], expect, rtol=1e-6, equal_nan=True)


def test_the_output_las_keeps_every_curve_of_the_well(model, las_writer, make_curves):
    run, folder = model
    depth = 1000 + 0.1 * np.arange(150)
    curves = {**make_curves(depth, 4), "GR": ("GAPI", 60 + 10 * np.sin(depth))}
    well = las_writer(folder / "full.las", "T-4", depth, curves)
    assert main(["predict", "--model", str(run), "--data", str(well), "--out", str(folder / "full_pred.las")]) == 0
    las = lasio.read(str(folder / "full_pred.las"))
    assert [c.mnemonic for c in las.curves] == ["DEPT", "PHIF", "VSH", "SW", "KLOGH", "GR", "KLOGH_PRED", "KLOGH_OOR"]
    for m, (unit, values) in curves.items():
        np.testing.assert_allclose(las[m], values, atol=1e-6)
        assert las.curves[m].unit == unit
    assert las.curves["KLOGH_PRED"].unit == "mD"                         # the target file's unit (MD: millidarcy)
    assert main(["predict", "--model", str(run), "--data", str(well), "--out", str(folder / "inputs_pred.las"),
                 "--keep", "inputs"]) == 0
    only = lasio.read(str(folder / "inputs_pred.las"))
    assert [c.mnemonic for c in only.curves] == ["DEPT", "PHIF", "VSH", "KLOGH_PRED", "KLOGH_OOR"]


# ----------------------------------------------------------------------------- a newcomer's slips, refused or said
def test_a_percent_header_over_fractions_is_refused_in_train_and_predict(tmp_path, capsys):
    fractions = _teaching_well(tmp_path / "f.csv", 120, 6, scale=1.0)          # "Por (%)" over 0.06-0.26
    capsys.readouterr()
    assert _train([fractions], tmp_path / "run") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"glassformer: error: {fractions}: curve POR is in % (percent, 0 to "
                                               "100), but all 120 of its values lie in [0, 1]")
    assert err[0].endswith("it looks like a fraction; convert it to percent (x 100), or state its unit with --unit "
                           "POR=v/v if it is a fraction")
    assert not (tmp_path / "run").exists()
    # a model trained on percent, given the same fractions without a unit: refused, nothing written
    assert _train([_teaching_well(tmp_path / "p.csv", 120, 7)], tmp_path / "pct") == 0
    bare = _teaching_well(tmp_path / "bare.csv", 120, 6, headers=("Depth (m)", "Por", "Perm (mD)"), scale=1.0)
    capsys.readouterr()
    assert main(["predict", "--model", str(tmp_path / "pct"), "--data", str(bare), "--out",
                 str(tmp_path / "bare_pred.csv")]) == 2
    assert (f"{bare}: curve POR has no unit and the model was trained on % (percent), but all 120 of its values lie in "
            "[0, 1]") in capsys.readouterr().err
    assert not (tmp_path / "bare_pred.csv").exists()
    # its suggestion works: the fraction stated with --unit is converted to the model's %, and said
    assert main(["predict", "--model", str(tmp_path / "pct"), "--data", str(bare), "--unit", "POR=v/v", "--out",
                 str(tmp_path / "bare_pred.csv")]) == 0
    said = capsys.readouterr()
    assert f"{bare}: POR converted from v/v to % (x 100) to match the model" in said.out + said.err
    # the same well in percent without a unit: predicted, and the unit taken from the model is said
    unlabelled = _teaching_well(tmp_path / "u.csv", 120, 6, headers=("Depth (m)", "Por", "Perm (mD)"))
    assert main(["predict", "--model", str(tmp_path / "pct"), "--data", str(unlabelled), "--out",
                 str(tmp_path / "u_pred.csv")]) == 0
    assert (f"warning: {unlabelled}: no unit in the file for POR; taken to be the units the model was trained on "
            "(POR in %); --unit CURVE=UNIT states them") in capsys.readouterr().err


def test_scores_without_a_test_well_or_interval_are_said_to_be_in_sample(tmp_path, capsys):
    well = _teaching_well(tmp_path / "w.csv", 160, 8)
    capsys.readouterr()
    assert _train([well], tmp_path / "run") == 0
    said = capsys.readouterr().out
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["comparison"]["split"] == "training interval (in-sample)"
    assert metrics["verdict"].startswith("On the training interval (in-sample) ")
    assert "glassformer train -- training interval (in-sample), RMSE/MAE in mD" in said
    assert "test split" not in said and "test split" not in metrics["comparison"]["note"]
    report = (tmp_path / "run" / "report.html").read_text()
    assert "On the training interval (in-sample)" in report and "Test split" not in report


def test_a_test_interval_inside_a_single_wells_whole_log_suggests_train_depth(tmp_path, capsys):
    well = _teaching_well(tmp_path / "w.csv", 160, 8)                          # 1500 to 1539.75 m
    capsys.readouterr()
    assert _train([well], tmp_path / "run", "--test-depth", "1530:1539.75") == 2
    err = capsys.readouterr().err
    assert "--test-depth 1530:1539.75 lies inside the whole valid log 1500:1539.75 in w; give --train-depth so that " \
           "the intervals do not overlap, e.g. --train-depth w=1500:1530 --test-depth w=1530:1539.75" in err
    assert _train([well], tmp_path / "run", "--train-depth", "w=1500:1530", "--test-depth", "w=1530:1539.75") == 0


def test_unit_is_checked_and_written_in_its_usual_spelling(tmp_path, capsys):
    well = _teaching_well(tmp_path / "w.csv", 160, 8, headers=("Depth (m)", "Por", "Perm (mD)"))
    capsys.readouterr()
    assert _train([well], tmp_path / "bad", "--unit", "POR=furlongs") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("glassformer: error: --unit POR=furlongs: unknown unit 'furlongs'; "
                                               "accepted: %, v/v, unitless, m, ft, mD")
    assert _train([well], tmp_path / "run", "--unit", "POR=percent") == 0
    assert WellModel.load(tmp_path / "run").training_data_["inputs"]["POR"]["unit"] == "%"


def test_a_target_that_is_not_permeability_keeps_its_unit_on_the_crossplot_and_in_cv_tables(tmp_path, monkeypatch,
                                                                                             capsys):
    import glassformer.plots as plots

    seen = []
    real = plots.plot_crossplot

    def spy(*args, **kwargs):
        ax = real(*args, **kwargs)
        seen.append(ax.get_ylabel())
        return ax

    monkeypatch.setattr(plots, "plot_crossplot", spy)
    headers = ("Depth (m)", "Por (%)", "Rhob (g/cc)")
    wells = [_teaching_well(tmp_path / f"w{i}.csv", 100, i, headers=headers, top=1500.0 + 100 * i) for i in range(3)]
    assert _train(wells[:1], tmp_path / "run", target="Rhob") == 0
    assert seen == ["RHOB (g/cc, log scale)"]                            # not "Permeability (mD)"
    capsys.readouterr()
    assert main(["cv", *[a for w in wells for a in ("--data", str(w))], "--inputs", "Por", "--target", "Rhob",
                 "--window", "8", "--out", str(tmp_path / "cv"), *TINY[:-2]]) == 0
    said = capsys.readouterr().out
    assert "RMSE/MAE in g/cc" in said and "RMSE per held-out well (g/cc)" in said and "mD" not in said
    assert json.loads((tmp_path / "cv" / "metrics.json").read_text())["units"]["rmse"] == "g/cc"


def test_a_misspelled_input_gets_did_you_mean(tmp_path, las_writer, make_curves, capsys):
    depth = 1000 + 0.5 * np.arange(120)
    well = las_writer(tmp_path / "t.las", "T-1", depth, make_curves(depth, 1))
    capsys.readouterr()
    rc = main(["train", "--data", str(well), "--inputs", "PHI", "VSH", "--target", "KLOGH", "--window", "8",
               "--out", str(tmp_path / "run"), *TINY])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "curve 'PHI' not found in well 'T-1'" in err[0]
    assert "(did you mean PHIF?); available: DEPT, PHIF, VSH, SW, KLOGH" in err[0]


def test_units_taken_from_the_model_are_written_into_a_las_output_only(model, make_curves, tmp_path):
    run, _ = model
    depth = 1000.0 + 0.1 * np.arange(400)
    curves = {k: v for k, (_, v) in make_curves(depth, 5).items()}
    well = tmp_path / "bare.csv"
    pd.DataFrame({"DEPTH": depth, **curves}).to_csv(well, index=False)             # no units at all
    for suffix in ("las", "csv"):
        assert main(["predict", "--model", str(run), "--data", str(well), "--out", str(tmp_path / f"p.{suffix}")]) == 0
    said = "no unit in the file for PHIF, VSH; taken to be the units the model was trained on (PHIF in V/V"
    assert said in " ".join(lasio.read(str(tmp_path / "p.las")).other.split())
    assert not (tmp_path / "p.csv").read_text().startswith("#")                       # a plain table


def _constant_perm_well(path, n, seed, perm):
    """A teaching well whose permeability column is ``perm`` (a scalar, or an array) at every depth."""
    _teaching_well(path, n, seed)
    table = pd.read_csv(path)
    table["Perm (mD)"] = perm
    table.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("how", ["train", "cv", "ensemble"])
def test_a_constant_target_is_refused_before_training(tmp_path, capsys, how):
    a = _constant_perm_well(tmp_path / "ca.csv", 120, 1, 50.0)
    b = _constant_perm_well(tmp_path / "cb.csv", 120, 2, 50.0)
    test = _teaching_well(tmp_path / "t.csv", 80, 3)
    capsys.readouterr()
    if how == "cv":
        code = main(["cv", "--data", str(a), "--data", str(b), "--inputs", "Por", "--target", "Perm", "--window", "8",
                     "--out", str(tmp_path / "run"), *TINY[:-2]])
    else:
        code = _train([a, b], tmp_path / "run", "--test-data", str(test), "--log-target",
                      *(["--ensemble", "2"] if how == "ensemble" else []))
    assert code == 2
    err = capsys.readouterr().err
    assert "target curve PERM is constant over the training wells (" in err and "log10 PERM is 1.699" not in err
    assert "it is 50 at all" in err and "train on wells where it varies" in err
    named = [str(w) in err for w in (a, b)]
    assert all(named) if how != "cv" else any(named)               # cv: the first fold's training well
    assert not (tmp_path / "run" / "metrics.json").exists()


def test_a_target_all_at_or_below_the_log_floor_is_refused(tmp_path, capsys):
    floor = _constant_perm_well(tmp_path / "f.csv", 120, 1, np.linspace(0.0, 0.001, 120))   # 0 .. the floor
    capsys.readouterr()
    assert _train([floor], tmp_path / "run", "--log-target") == 2
    err = capsys.readouterr().err
    assert (f"target curve PERM is constant over the training wells ({floor}): every value lies at or below the "
            "0.001 mD floor of --log-target (range 0 to 0.001), so log10 PERM is -3 everywhere") in err
    # without --log-target the same values vary, and the well trains
    assert _train([floor], tmp_path / "raw") == 0


def test_a_well_shorter_than_the_window_is_predicted_with_a_warning_in_predict_and_train(tmp_path, capsys):
    a = _teaching_well(tmp_path / "a.csv", 160, 1)
    short = _teaching_well(tmp_path / "short.csv", 6, 2, top=1600.0)                  # 6 samples, window 8
    expected = (f"{short}: 6 samples at 1600-1601.25 m, fewer than the model's window of 8: the transformer sees "
                "shorter windows than it was trained on; its values there are less reliable than the tree models'")
    # train --test-data: printed and recorded in metrics.json's note (under the report's headline)
    assert _train([a], tmp_path / "run", "--test-data", str(short)) == 0
    said = capsys.readouterr()
    assert f"warning: {expected}" in said.out + said.err
    assert expected + "." in json.loads((tmp_path / "run" / "metrics.json").read_text())["note"]
    # predict: still predicted, and the warning is in the summary and the CSV's notes
    out = tmp_path / "p.csv"
    assert main(["predict", "--model", str(tmp_path / "run"), "--data", str(short), "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert "6 of 6 depths predicted" in said.out + said.err and f"warning: {expected}" in said.out + said.err
    assert f"# glassformer predict: {expected}" in out.read_text().splitlines()
    assert np.isfinite(pd.read_csv(out, comment="#")["PERM_PRED"]).all()


def test_predict_refuses_a_unitless_percent_porosity_for_a_fraction_model(tmp_path, capsys):
    vv = _teaching_well(tmp_path / "vv.csv", 160, 1, headers=("Depth (m)", "Por (v/v)", "Perm (mD)"), scale=1.0)
    assert _train([vv], tmp_path / "run") == 0
    bare = _teaching_well(tmp_path / "bare.csv", 80, 2, headers=("Depth (m)", "Por", "Perm (mD)"))   # % with no unit
    phi = pd.read_csv(bare)["Por"].to_numpy()
    capsys.readouterr()
    out = tmp_path / "x.csv"
    assert main(["predict", "--model", str(tmp_path / "run"), "--data", str(bare), "--out", str(out)]) == 2
    assert (f"{bare}: curve POR has no unit and looks like percent (median {np.median(phi):.4g}, range "
            f"{phi.min():.4g} to {phi.max():.4g}), but the model was trained on v/v (a fraction, 0 to 1); pass "
            "--unit POR=% to convert it, or convert the file's POR to v/v") in capsys.readouterr().err
    assert not out.exists()
    # the fix the message gives: --unit POR=% converts it, as a % header would
    assert main(["predict", "--model", str(tmp_path / "run"), "--data", str(bare), "--unit", "POR=%",
                 "--out", str(out)]) == 0
    assert "bare.csv: POR converted from % to v/v (/ 100) to match the model" in "".join(capsys.readouterr())
