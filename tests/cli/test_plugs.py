"""``glassformer train --core`` / ``--ensemble`` and ``predict`` with P10/P50/P90, end to end and on bad input.

Every bad core option or core table reaches the command line as exit status 2 and one line on
stderr that names the column, rows, cores or option at fault.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main
from glassformer.data import read_well

TINY = ["--window", "16", "--epochs", "2", "--d-model", "8", "--no-progress", "--ensemble", "2"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A 60 m well at 0.2 m with PHIF, VSH, SW, KLOGH, and four cores of 10 plugs on its porosity."""
    root = tmp_path_factory.mktemp("core_cli")
    rng = np.random.default_rng(5)
    depth = 1000 + 0.2 * np.arange(300)
    phi = 0.17 + 0.06 * np.sin(depth / 1.7) + 0.01 * rng.standard_normal(300)
    well = pd.DataFrame({"DEPTH": depth, "PHIF": phi, "VSH": 0.45 - phi, "SW": 0.3 + phi,
                         "KLOGH": 10 ** (11 * phi - 0.8)})
    well.to_csv(root / "well.csv", index=False)
    plugs = np.concatenate([top + 0.3 * np.arange(10) for top in (1005.0, 1018.0, 1031.0, 1044.0)])
    core_phi = np.interp(plugs, depth, phi)
    core = pd.DataFrame({"DEPTH": plugs, "CORE_NO": np.repeat([1, 2, 3, 4], 10), "CPOR": 100 * core_phi,
                         "CKHL": 10 ** (12 * core_phi - 1 + 0.1 * rng.standard_normal(40))})
    core.to_csv(root / "core.csv", index=False)
    blind = well.copy()
    blind["DEPTH"] += 500
    blind.to_csv(root / "blind.csv", index=False)
    return root


def _core_args(files, out, *extra):
    return ["train", "--data", str(files / "well.csv"), "--core", str(files / "core.csv"), "--core-porosity-unit",
            "%", "--inputs", "PHIF", "VSH", "SW", "--log-target", "--out", str(out), *TINY, *extra]


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and lines[0].startswith("glassformer: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def core_run(files, tmp_path_factory):
    out = tmp_path_factory.mktemp("core_run") / "run"
    assert main(_core_args(files, out)) == 0
    return out


def test_core_run_folder_holds_the_comparison_and_the_coverage(core_run):
    metrics = json.loads((core_run / "metrics.json").read_text())
    comp = metrics["comparison"]
    assert comp["split"] == "held-out core 2 (10 plugs)"
    assert list(comp["table"])[:1] == ["transformer"] and "KLOGH (log-derived)" in comp["table"]
    assert all(r["n"] == 10 for r in comp["table"].values())
    cov = metrics["coverage"]["transformer"]
    assert cov["nominal"] == 0.8 and cov["calibration"]["n"] == 10                 # validation core 4
    for when in ("before", "after"):
        c = cov["test"][when]
        assert c["n"] == 10 and c["coverage"] == (10 - c["below"] - c["above"]) / 10
    assert cov["validation"]["after"]["coverage"] >= 0.8                         # by construction
    intervals = metrics["interval_scores"]["test"]                                       # width and score beside coverage
    assert "quantile gradient boosting (CQR)" in intervals
    chosen = metrics["calibration_choice"]["transformer"]["chosen"]
    assert cov["calibration"]["score"] == chosen and f"transformer, {chosen} (chosen)" in intervals
    rows = pd.read_csv(core_run / "predictions.csv")
    test = rows["role"] == "test"
    y = rows.loc[test, "CKHL_observed_log10_mD"].to_numpy()
    for name, column in (("quantile gradient boosting (CQR)", "quantile_gradient_boosting_cqr"),
                         (f"transformer, {chosen} (chosen)", "transformer")):
        lo, hi = (rows.loc[test, f"{column}_{k}_log10_mD"].to_numpy() for k in ("P10", "P90"))
        miss = 10 * (np.clip(lo - y, 0, None) + np.clip(y - hi, 0, None))        # 2 / alpha per unit missed
        assert intervals[name]["interval_score"] == pytest.approx(np.mean(hi - lo + miss), rel=1e-4)  # CSV digits
        assert intervals[name]["mean_width"] == pytest.approx(np.mean(hi - lo), rel=1e-4)
    assert set(metrics["coverage_by_core"]["quantile gradient boosting (CQR)"]) == {"core 2 (test)",
                                                                                   "core 4 (validation)"}
    assert sum(z["n"] for z in metrics["coverage_by_zone"]["quantile gradient boosting (CQR)"].values()) == 20
    assert metrics["verdict"] and metrics["selected"]["model"] == "transformer"
    assert metrics["split"]["cores"] == {"train": ["1", "3"], "validation": ["4"], "test": ["2"]}
    for name in ("interval_vs_depth", "coverage", "depth_match", "core_on_log", "loss"):
        assert (core_run / "figures" / f"{name}.png").is_file()
    assert (core_run / "ensemble" / "ensemble.json").is_file() and (core_run / "report.html").is_file()
    rows = pd.read_csv(core_run / "predictions.csv")
    assert (rows["role"].fillna("").value_counts().to_dict()
            == {"": 260, "train": 20, "validation": 10, "test": 10})


@pytest.mark.parametrize("suffix", [".las", ".csv"])
def test_predict_writes_ordered_p10_p50_p90(files, core_run, tmp_path, suffix, capsys):
    out = tmp_path / f"pred{suffix}"
    assert main(["predict", "--model", str(core_run), "--data", str(files / "well.csv"), "--out", str(out)]) == 0
    pred = read_well(out)
    for name in ("CKHL_P10", "CKHL_P50", "CKHL_P90", "CKHL_P10_LOG10", "CKHL_P50_LOG10", "CKHL_P90_LOG10"):
        assert name in pred.curves, pred.mnemonics
    p10, p50, p90 = (pred.curve(f"CKHL_{k}_LOG10") for k in ("P10", "P50", "P90"))
    assert np.isfinite(p50).all()
    assert (p10 <= p50).all() and (p50 <= p90).all() and (p10 < p90).any()
    np.testing.assert_allclose(pred.curve("CKHL_P50"), 10 ** p50, rtol=1e-6)
    np.testing.assert_allclose(pred.curve("CKHL_PRED_LOG10"), p50, rtol=1e-9)      # the prediction is the P50


def test_log_target_ensemble_on_a_blind_well(files, tmp_path):
    out = tmp_path / "ens"
    args = ["train", "--data", str(files / "well.csv"), "--inputs", "PHIF", "VSH", "--target", "KLOGH",
            "--log-target", "--train-depth", "1000:1059.8", "--validation-depth", "1048:1059.8", "--test-data",
            str(files / "blind.csv"), "--out", str(out), *TINY]
    assert main(args) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["comparison"]["split"] == "test wells blind (300 depths)"
    cov = metrics["coverage"]["transformer"]
    assert cov["calibration"]["n"] == 60 and cov["test"]["after"]["n"] == 300
    after = cov["test"]["after"]                              # the score is the width plus the misses' penalty
    assert after["interval_score"] >= after["mean_width"] > 0
    assert (after["interval_score"] > after["mean_width"]) == (after["coverage"] < 1)
    rows = pd.read_csv(out / "predictions.csv")
    assert (rows["transformer_P10_log10_mD"] <= rows["transformer_P90_log10_mD"]).all()
    assert (out / "figures" / "interval_vs_depth.png").is_file()
    parallel = tmp_path / "ens_jobs"                                 # members on two worker processes
    assert main([*args[:args.index("--out")], "--out", str(parallel), *TINY, "--jobs", "2"]) == 0
    on_workers = pd.read_csv(parallel / "predictions.csv")
    pd.testing.assert_frame_equal(on_workers, rows)                  # each member as a serial run trains it


def test_an_ensemble_without_validation_data_names_the_deepest_blocks(files, tmp_path):
    out = tmp_path / "ens"
    assert main(["train", "--data", str(files / "well.csv"), "--inputs", "PHIF", "VSH", "--target", "KLOGH",
                 "--log-target", "--train-depth", "1000:1059.8", "--test-data", str(files / "blind.csv"),
                 "--out", str(out), *TINY]) == 0
    text = json.loads((out / "metrics.json").read_text())["recommendation"]["text"]
    assert "validation: the validation data well 1053.6-1059.8 m, which no model was fitted on" in text, text


def test_jobs_without_an_ensemble_is_refused(files, tmp_path, capsys):
    args = ["train", "--data", str(files / "well.csv"), "--inputs", "PHIF", "--target", "KLOGH", "--jobs", "2",
            "--out", str(tmp_path / "run")]
    assert main(args) == 2
    assert "--jobs and --scheduler run the members of an ensemble" in _one_error_line(capsys)


@pytest.mark.parametrize("extra, message", [
    (["--core-depth", "NOPE"], "depth column 'NOPE' not found; columns: DEPTH, CORE_NO, CPOR, CKHL"),
    (["--core-target", "KHOR"], "permeability column 'KHOR' not found; columns: DEPTH, CORE_NO, CPOR, CKHL"),
    (["--test-cores", "9", "--validation-cores", "1"],
     "test core(s) 9 not in the core table; its cores are 1, 2, 3, 4"),
    (["--test-cores", "2"], "give the validation cores"),
    (["--depth-shift", "1:0.5"], "--depth-shift must be RUN=SHIFT"),
    (["--depth-shift", "8=0.5"], "depth shifts given for unknown run(s) 8"),
    (["--target", "KLOGH"], "--target is not used with --core"),
])
def test_bad_core_options_are_one_line_errors(files, tmp_path, capsys, extra, message):
    assert main(_core_args(files, tmp_path / "run", *extra)) == 2
    assert message in _one_error_line(capsys)
    assert not (tmp_path / "run").exists()                     # nothing written before the inputs are valid


def _bad_core(tmp_path, files, change) -> str:
    core = pd.read_csv(files / "core.csv", dtype=str)
    change(core)
    path = tmp_path / "bad_core.csv"
    core.to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize("change, message", [
    (lambda c: c.__setitem__("CKHL", c["CKHL"].where(c.index != 3, "-5")), "negative permeability in column 'CKHL' "
                                                                             "at lines 5"),
    (lambda c: c.__setitem__("CKHL", c["CKHL"].where(c.index != 6, "tight")), "column 'CKHL' holds non-numeric "
                                                                                "values at line 8 ('tight')"),
    (lambda c: c.__setitem__("DEPTH", (c["DEPTH"].astype(float) + 900).astype(str)), "no plug lies within 0.1 m of a "
                                                                                      "sample"),
])
def test_bad_core_tables_are_one_line_errors(files, tmp_path, capsys, change, message):
    bad = _bad_core(tmp_path, files, change)
    args = _core_args(files, tmp_path / "run", "--no-depth-match")
    args[args.index("--core") + 1] = bad
    assert main(args) == 2
    assert message in _one_error_line(capsys)


def test_core_porosity_unit_must_be_stated(files, tmp_path, capsys):
    args = _core_args(files, tmp_path / "run")
    i = args.index("--core-porosity-unit")
    del args[i:i + 2]
    assert main(args) == 2
    assert "state the porosity unit of column 'CPOR' as '%' or 'v/v' (its largest value is" in _one_error_line(capsys)


@pytest.mark.parametrize("args, message", [
    (["--test-cores", "2"], "--test-cores is used only with --core"),
    (["--validation-depth", "1040:1050"], "--validation-depth is used only with --core or --ensemble"),
])
def test_core_options_without_core_are_one_line_errors(files, tmp_path, capsys, args, message):
    base = ["train", "--data", str(files / "well.csv"), "--inputs", "PHIF", "--target", "KLOGH", "--train-depth",
            "1000:1040", "--test-depth", "1040:1059.8", "--out", str(tmp_path / "r"), "--window", "16", "--epochs",
            "1", "--no-progress"]
    assert main(base + args) == 2
    assert message in _one_error_line(capsys)


def test_one_cored_well_at_a_time(files, tmp_path, capsys):
    args = _core_args(files, tmp_path / "run")
    args[args.index("--data") + 1:args.index("--data") + 1] = [str(files / "well.csv"), "--data"]
    assert main(args) == 2
    assert "give the cored well as one --data file (got 2)" in _one_error_line(capsys)
