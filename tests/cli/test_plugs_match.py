"""``glassformer core-match`` on its own (synthetic runs with known shifts; 15/9-19 A's first three cores at
the driller's depth), ``train --core --shifts FILE`` reading it back, the default roles with three cores,
and ``--ensemble`` validating on the deepest block when no validation data are named."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main

STEP = 0.1524
SHIFTS = {1: 1.3, 2: -0.7, 3: 0.25}               # three runs, known shifts (m, + = deeper)
PUBLISHED = {1: 1.6, 2: 0.2, 3: 0.6}               # 15/9-19 A: DEPTH - OrigDepth of cores 1-3


def _bedded(root, seed=3):
    """Bedded porosity seen through a 0.5 m tool every half foot, and three cored runs of it."""
    rng = np.random.default_rng(seed)
    fine = np.arange(2000.0, 2120.0, 0.01)
    tops = 2000.0 + np.cumsum(rng.exponential(0.4, 400))
    porosity = np.clip(rng.normal(0.18, 0.06, 400), 0.01, 0.35)[np.searchsorted(tops, fine)]
    sigma = 0.5 / 2.355 / 0.01
    kernel = np.exp(-0.5 * (np.arange(-4 * sigma, 4 * sigma + 1) / sigma) ** 2)
    seen = np.convolve(porosity, kernel / kernel.sum(), mode="same")
    depth = np.arange(2005.0, 2115.0, STEP)
    phif = np.interp(depth, fine, seen) + rng.normal(0.0, 0.005, depth.size)
    pd.DataFrame({"DEPTH": depth, "PHIF": phif}).to_csv(root / "well.csv", index=False)
    rows, top = [], 2015.0
    for run, shift in SHIFTS.items():
        z = top + np.cumsum(rng.uniform(0.04, 0.5, 120))
        z = z[z < top + 20.0]
        rows += [{"DEPTH": d, "CORE_NO": run, "CPOR": 100 * np.interp(d + shift, fine, porosity)} for d in z]
        top += 22.0
    pd.DataFrame(rows).to_csv(root / "core.csv", index=False)
    return root


def test_core_match_recovers_three_known_shifts_and_writes_curves_and_figures(tmp_path):
    root = _bedded(tmp_path)
    out = tmp_path / "match"
    assert main(["core-match", "--data", str(root / "well.csv"), "--core", str(root / "core.csv"),
                 "--core-porosity-unit", "%", "--out", str(out)]) == 0
    doc = json.loads((out / "shifts.json").read_text())
    assert set(doc["shifts"]) == {"1", "2", "3"}
    for run, shift in SHIFTS.items():
        assert abs(doc["shifts"][str(run)] - shift) <= STEP, (run, doc["shifts"])
    assert [r["status"] for r in doc["runs"]] == ["estimated"] * 3
    curves = pd.read_csv(out / "correlations.csv")
    assert list(curves.columns) == ["shift", "run 1", "run 2", "run 3"]
    np.testing.assert_allclose(curves["shift"].iloc[[0, -1]], [-52 * STEP / 4, 52 * STEP / 4])
    for r in doc["runs"]:                               # the file's curve peaks at the written shift
        best = curves["shift"][curves[f"run {r['run']}"].idxmax()]
        assert best == pytest.approx(r["shift"]) and curves[f"run {r['run']}"].max() == pytest.approx(r["correlation"])
    for name in ("depth_match", "core_on_log"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 10_000


def test_core_match_on_19a_first_three_cores_at_the_drillers_depth(shared_data, tmp_path):
    table = pd.read_csv(shared_data / "real" / "15_9-19A-CORE.csv")
    table[table["CORE_NO"].isin([1, 2, 3])].to_csv(tmp_path / "core3.csv", index=False)
    out = tmp_path / "match19a"
    assert main(["core-match", "--data", str(shared_data / "real" / "15_9-19_A_CPI.las"), "--core",
                 str(tmp_path / "core3.csv"), "--core-depth", "OrigDepth", "--core-porosity-unit", "%",
                 "--out", str(out)]) == 0
    doc = json.loads((out / "shifts.json").read_text())
    assert set(doc["shifts"]) == {"1", "2", "3"}
    for run, published in PUBLISHED.items():            # as the whole table gives: +1.79, +0.08, +0.65
        assert abs(doc["shifts"][str(run)] - published) <= 0.2, (run, doc["shifts"])
    assert doc["shifts"]["1"] == pytest.approx(1.791, abs=0.02)


def _three_core_files(root):
    rng = np.random.default_rng(5)
    depth = 1000 + 0.2 * np.arange(300)
    phi = 0.17 + 0.06 * np.sin(depth / 1.7) + 0.01 * rng.standard_normal(300)
    pd.DataFrame({"DEPTH": depth, "PHIF": phi, "VSH": 0.45 - phi, "SW": 0.3 + phi,
                  "KLOGH": 10 ** (11 * phi - 0.8)}).to_csv(root / "well.csv", index=False)
    plugs = np.concatenate([top + 0.3 * np.arange(20) for top in (1005.0, 1020.0, 1035.0)])
    core_phi = np.interp(plugs, depth, phi)
    pd.DataFrame({"DEPTH": plugs, "CORE_NO": np.repeat([1, 2, 3], 20), "CPOR": 100 * core_phi,
                  "CKHL": 10 ** (12 * core_phi - 1 + 0.1 * rng.standard_normal(60))}).to_csv(root / "core.csv",
                                                                                          index=False)
    return root


def test_train_with_three_cores_holds_out_blocks_and_reads_the_shifts_file(tmp_path):
    root = _three_core_files(tmp_path)
    match = tmp_path / "match"
    assert main(["core-match", "--data", str(root / "well.csv"), "--core", str(root / "core.csv"),
                 "--core-porosity-unit", "%", "--min-plugs", "10", "--out", str(match)]) == 0
    written = json.loads((match / "shifts.json").read_text())["shifts"]
    out = tmp_path / "run"
    assert main(["train", "--data", str(root / "well.csv"), "--core", str(root / "core.csv"), "--core-porosity-unit",
                 "%", "--inputs", "PHIF", "VSH", "SW", "--log-target", "--shifts", str(match / "shifts.json"),
                 "--window", "16", "--epochs", "2", "--d-model", "8", "--no-progress", "--ensemble", "2",
                 "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    used = {r["run"]: r["shift"] for r in metrics["depth_shifts"]["runs"]}
    assert used == pytest.approx(written)
    # three cores: train 1, test 2, train 3; the deepest 20 % (4 of 20 plugs) of cores 1 and 3 validate
    assert metrics["split"]["plugs"] == {"train": 32, "validation": 8, "test": 20}
    assert metrics["split"]["cores"] == {"train": ["1", "3"], "validation": ["1", "3"], "test": ["2"]}
    assert "deepest 20 %" in metrics["split"]["rule"]
    rows = pd.read_csv(out / "predictions.csv")
    val = rows[rows["role"] == "validation"]
    for run in (1, 3):                                 # the validation plugs lie below the run's training plugs
        train_depths = rows[(rows["role"] == "train") & (rows["core_run"] == run)]["depth"]
        assert val[val["core_run"] == run]["depth"].min() > train_depths.max()


def test_shift_options_contradicting_each_other_are_refused(tmp_path, capsys):
    root = _three_core_files(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps({"shifts": {"1": 0.1}}))
    assert main(["train", "--data", str(root / "well.csv"), "--core", str(root / "core.csv"), "--core-porosity-unit",
                 "%", "--inputs", "PHIF", "--shifts", str(tmp_path / "s.json"), "--depth-shift", "1=0.2",
                 "--out", str(tmp_path / "run")]) == 2
    assert "contradict each other" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{\"runs\": []}")
    assert main(["train", "--data", str(root / "well.csv"), "--core", str(root / "core.csv"), "--core-porosity-unit",
                 "%", "--inputs", "PHIF", "--shifts", str(tmp_path / "bad.json"), "--out", str(tmp_path / "run")]) == 2
    assert "not a shifts file written by glassformer core-match" in capsys.readouterr().err


def test_ensemble_without_validation_data_validates_on_the_deepest_block(tmp_path):
    root = _three_core_files(tmp_path)
    blind = pd.read_csv(root / "well.csv")
    blind["DEPTH"] += 500
    blind.to_csv(tmp_path / "blind.csv", index=False)
    out = tmp_path / "ens"
    assert main(["train", "--data", str(root / "well.csv"), "--inputs", "PHIF", "VSH", "--target", "KLOGH",
                 "--log-target", "--test-data", str(tmp_path / "blind.csv"), "--window", "16", "--epochs", "2",
                 "--d-model", "8", "--no-progress", "--ensemble", "2", "--out", str(out)]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["validation"].startswith("the deepest 10 % of each training interval")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["coverage"]["transformer"]["calibration"]["n"] == 32     # 2 windows of 16: 10 % is too few
