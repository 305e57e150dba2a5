"""`glassformer train` / `compare` on several wells: per-well intervals, a manifest, per-well metrics, every
well named in tables, figures and outputs, and the curves used written to the config."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main
from glassformer.wells import TREE_BASELINE_NAMES
from glassformer.wells.baselines import BLEND

DEPTH_A = 1000.0 + 0.5 * np.arange(240)        # 1000 .. 1119.5 m
DEPTH_B = 2000.0 + 0.5 * np.arange(160)        # 2000 .. 2079.5 m
TINY = ["--inputs", "PHIF", "VSH", "SW", "--target", "KLOGH", "--log-target", "--window", "8", "--epochs", "1",
        "--d-model", "4", "--heads", "1", "--no-progress"]


@pytest.fixture(scope="module")
def wells(tmp_path_factory, las_writer, make_curves):
    folder = tmp_path_factory.mktemp("wells")
    return folder, {
        "a": las_writer(folder / "well_a.las", "15/9-A-1", DEPTH_A, seed=1),
        "b": las_writer(folder / "well_b.las", "15/9-B-2", DEPTH_B, seed=2),
        "c": las_writer(folder / "well_c.las", "15/9-C-3", DEPTH_B + 1000, make_curves(DEPTH_B + 1000, 3,
                                                                                       porosity="PHIE")),
        "d": las_writer(folder / "well_d.las", "15/9-D-4", DEPTH_A + 3000, seed=4),
    }


def test_train_with_per_well_intervals_and_two_test_wells(wells, capsys):
    folder, w = wells
    out = folder / "run"
    assert main(["train", "--data", str(w["a"]), "--data", str(w["b"]), "--train-depth", "A-1=1010:1100",
                 "--train-depth", "well_b=2005:2070", "--test-data", str(w["c"]), "--test-data", str(w["d"]),
                 "--alias", "PHIF=PHIE", "--out", str(out), *TINY]) == 0
    text = capsys.readouterr().out
    assert "RMSE per well" in text and "15/9-C-3" in text and "15/9-D-4" in text
    assert "note: well 15/9-C-3: PHIF read from curve PHIE" in text
    assert "On the test split" in text
    cfg = json.loads((out / "config.json").read_text())
    assert [(g["name"], g["top"], g["base"]) for g in cfg["train_wells"]] == [("15/9-A-1", 1010.0, 1100.0),
                                                                            ("15/9-B-2", 2005.0, 2070.0)]
    assert [g["name"] for g in cfg["test_wells"]] == ["15/9-C-3", "15/9-D-4"]
    assert cfg["curves_used"]["15/9-C-3"]["PHIF"] == "PHIE" and cfg["aliases"] == ["PHIF=PHIE"]
    assert cfg["validation"]["method"].startswith("the deepest 10 % of each training interval")
    assert [b["well"] for b in cfg["validation"]["blocks"]] == ["15/9-A-1", "15/9-B-2"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["per_well"]) == {"15/9-C-3", "15/9-D-4"}
    models = {"transformer", *TREE_BASELINE_NAMES, "porosity-permeability transform", "training mean", BLEND}
    for well, per in metrics["per_well"].items():
        assert set(per) == models and per["transformer"]["n"] == {"15/9-C-3": 160, "15/9-D-4": 240}[well]
    pooled = metrics["test"]["transformer"]
    assert pooled["n"] == 400
    # the pooled RMSE is the per-well RMSEs combined by their counts
    per = metrics["per_well"]
    combined = np.sqrt((per["15/9-C-3"]["transformer"]["rmse"] ** 2 * 160 + per["15/9-D-4"]["transformer"]["rmse"] ** 2
                        * 240) / 400)
    assert pooled["rmse"] == pytest.approx(combined, rel=1e-9)
    rows = pd.read_csv(out / "predictions.csv")
    assert set(rows["well"]) == {"15/9-A-1", "15/9-B-2", "15/9-C-3", "15/9-D-4"}
    for name in ("prediction_vs_depth.png", "prediction_vs_depth_15_9_D_4.png"):
        assert (out / "figures" / name).is_file(), name
    assert "15/9-D-4" in (out / "report.html").read_text()


def test_train_from_a_manifest_with_train_val_and_test_roles(wells, tmp_path):
    folder, w = wells
    manifest = tmp_path / "wells.csv"
    manifest.write_text("file,well,role,top,base\n"
                        f"{w['a']},A,train,1000,1080\n"
                        f"{w['a']},A,test,1080,1119.5\n"
                        f"{w['b']},B,val,,\n"
                        f"{w['d']},D,test,,\n")
    out = tmp_path / "run"
    assert main(["train", "--manifest", str(manifest), "--out", str(out), *TINY]) == 0
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["validation"]["method"] == "the validation wells given"
    assert [(g["name"], g["top"], g["base"]) for g in cfg["validation_wells"]] == [("B", 2000.0, 2079.5)]
    assert [(g["name"], g["top"]) for g in cfg["test_wells"]] == [("A", 1080.5), ("D", 4000.0)]
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["per_well"]) == {"A", "D"}
    from glassformer.wells import WellModel

    saved = WellModel.load(out)
    assert saved.validation_["blocks"][0]["well"] == "B" and saved.training_data_["inputs"]["PHIF"]["unit"] == "V/V"


def test_compare_with_an_alias_records_the_curves_used(wells, tmp_path):
    folder, w = wells
    out = tmp_path / "cmp"
    assert main(["compare", "--data", str(w["c"]), "--alias", "PHIF=PHIE", "--train-depth", "3000:3060",
                 "--test-depth", "3060:3079.5", "--inputs", "PHIF", "VSH", "SW", "--target", "KLOGH", "--log-target",
                 "--window", "8", "--epochs", "1", "--hidden-size", "2", "--out", str(out)]) == 0
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["curves_used"] == {"15/9-C-3": {"PHIF": "PHIE", "VSH": "VSH", "SW": "SW", "KLOGH": "KLOGH"}}
    assert cfg["aliases"] == ["PHIF=PHIE"]
    table = json.loads((out / "metrics.json").read_text())["comparison"]["table"]
    assert set(table) == {"transformer", "LSTM", *TREE_BASELINE_NAMES, "porosity-permeability transform", "training mean",
                          BLEND}
