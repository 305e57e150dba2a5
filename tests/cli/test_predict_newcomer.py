"""A newcomer's CSV wells through the command line: the depth unit stated with --unit DEPTH=ft or written in
--depth-column, a --use name in any case, the train summary's predict command naming the real run folder, and
a cross-validation folder given to predict told apart from a folder without a model."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main
from glassformer.data import read_csv, read_wells, state_units
from glassformer.errors import DepthError
from glassformer.wells.predictor import canonical_model_name

TINY = ["--epochs", "1", "--d-model", "4", "--heads", "1", "--no-progress", "--checkpoint-every", "100",
        "--window", "8", "--inputs", "Por", "--target", "Perm"]


def _well(path, n, seed, depth_header="DEPTH", top=5000.0):
    """A CSV well at 0.5 (ft) spacing whose depth header says no unit; porosity in %, permeability in mD."""
    rng = np.random.default_rng(seed)
    depth = top + 0.5 * np.arange(n)
    phi = 0.16 + 0.06 * np.sin(depth / 3.4) + 0.01 * rng.standard_normal(n)
    k = 10 ** (12 * phi - 0.8 + 0.1 * rng.standard_normal(n))
    pd.DataFrame({depth_header: depth, "Por (%)": 100 * phi, "Perm (mD)": k}).to_csv(path, index=False)
    return path


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    return err


def test_the_depth_unit_is_stated_by_unit_or_by_the_depth_column(tmp_path):
    plain = _well(tmp_path / "a.csv", 20, 0)
    named = _well(tmp_path / "b.csv", 20, 1, depth_header="Depth")
    assert read_csv(plain).depth_unit == "m"                              # a plain DEPTH cannot say
    assert read_wells(plain, stated_units={"DEPTH": "ft"})[0].depth_unit == "ft"
    assert read_wells(named, stated_units={"DEPTH": "ft"})[0].depth_unit == "ft"     # DEPTH means the depth
    log = read_wells(named, stated_units={"Depth": "ft", "Por": "%"})[0]
    assert log.depth_unit == "ft" and log.units["POR"] == "%"
    np.testing.assert_array_equal(log.depth, 5000.0 + 0.5 * np.arange(20))      # stated, never converted
    assert read_csv(named, depth_column="Depth (ft)").depth_unit == "ft"
    assert read_csv(named, depth_column="Depth [m]").depth_unit == "m"
    with pytest.raises(DepthError, match="a depth unit must be m or ft"):
        state_units(read_csv(plain), {"DEPTH": "%"})
    with pytest.raises(DepthError, match="neither metres"):
        read_csv(named, depth_column="Depth (s)")
    with pytest.raises(DepthError, match="names ft, but depth_unit='m'"):
        read_csv(named, depth_column="Depth (ft)", depth_unit="m")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One tiny run trained on a.csv with --unit DEPTH=ft and tested on b.csv (whose depth header is Depth)."""
    folder = tmp_path_factory.mktemp("newcomer")
    a, b = _well(folder / "a.csv", 160, 1), _well(folder / "b.csv", 120, 2, depth_header="Depth", top=5200.0)
    out = folder / "run"
    assert main(["train", "--data", str(a), "--test-data", str(b), "--unit", "DEPTH=ft", *TINY,
                 "--out", str(out)]) == 0
    return folder, out


def test_unit_depth_reaches_every_well_of_train(run):
    _, out = run
    cfg = json.loads((out / "config.json").read_text())
    assert [w["depth_unit"] for w in cfg["train_wells"] + cfg["test_wells"]] == ["ft", "ft"]
    assert cfg["well_model"]["training_data"]["depth_unit"] == "ft"


def test_depth_column_with_a_unit_and_unit_of_the_depth_column_in_train(tmp_path, capsys):
    b = _well(tmp_path / "b.csv", 120, 2, depth_header="Depth")
    for i, option in enumerate((["--depth-column", "Depth (ft)"], ["--unit", "Depth=ft"])):
        out = tmp_path / f"r{i}"
        assert main(["train", "--data", str(b), *option, *TINY, "--out", str(out)]) == 0
        cfg = json.loads((out / "config.json").read_text())
        assert cfg["train_wells"][0]["depth_unit"] == "ft"
    capsys.readouterr()
    assert main(["train", "--data", str(b), "--unit", "DEPTH=%", *TINY, "--out", str(tmp_path / "bad")]) == 2
    assert _one_line(capsys) == ("glassformer: error: --unit DEPTH=%: a depth unit must be m or ft (the depth of "
                                 f"well 'b' ({b}) is DEPTH)")
    assert not (tmp_path / "bad").exists()


def test_cv_takes_the_depth_unit_too(tmp_path):
    wells = [_well(tmp_path / f"w{i}.csv", 120, i, top=5000.0 + 200 * i) for i in range(3)]
    options = [a for a in TINY if a not in ("--checkpoint-every", "100")]
    assert main(["cv", *[a for w in wells for a in ("--data", str(w))], "--unit", "DEPTH=ft", "--folds", "3",
                 *options, "--out", str(tmp_path / "cv")]) == 0
    cfg = json.loads((tmp_path / "cv" / "config.json").read_text())
    assert [(w["name"], w["depth_unit"]) for w in cfg["wells"]] == [("w0", "ft"), ("w1", "ft"), ("w2", "ft")]


def test_predict_takes_the_depth_unit_from_unit_or_depth_column(run, capsys):
    folder, out = run
    b = folder / "b.csv"
    capsys.readouterr()
    assert main(["predict", "--model", str(out), "--data", str(b), "--out", str(folder / "m.csv")]) == 0
    said = capsys.readouterr()
    assert "b.csv is sampled every 1.64 ft, the model was trained on samples every 0.5 ft" in said.err
    assert pd.read_csv(folder / "m.csv", comment="#").columns[0] == "DEPTH"
    for name, option in (("u.csv", ["--unit", "DEPTH=ft"]), ("d.csv", ["--depth-column", "Depth (ft)"])):
        assert main(["predict", "--model", str(out), "--data", str(b), *option, "--out", str(folder / name)]) == 0
        assert "sampled every" not in capsys.readouterr().err
        table = pd.read_csv(folder / name, comment="#")
        assert table.columns[0] == "DEPTH_FT"
        np.testing.assert_array_equal(table["DEPTH_FT"], 5200.0 + 0.5 * np.arange(120))


def test_use_names_any_case_and_spacing(run, capsys):
    folder, out = run
    names = ["transformer", "gradient boosting", "gradient boosting + context", "transformer/boosting blend"]
    assert canonical_model_name("  Gradient   BOOSTING + Context ", names) == "gradient boosting + context"
    assert canonical_model_name("Transformer/Boosting Blend", names) == "transformer/boosting blend"
    assert canonical_model_name("TRANSFORMER", names) == "transformer"
    assert canonical_model_name(None, names) is None
    b = folder / "b.csv"
    assert main(["predict", "--model", str(out), "--data", str(b), "--unit", "DEPTH=ft", "--use",
                 "gradient boosting", "--out", str(folder / "g1.csv")]) == 0
    assert main(["predict", "--model", str(out), "--data", str(b), "--unit", "DEPTH=ft", "--use",
                 " Gradient  Boosting ", "--out", str(folder / "g2.csv")]) == 0
    assert "model gradient boosting," in capsys.readouterr().out
    pd.testing.assert_frame_equal(pd.read_csv(folder / "g1.csv", comment="#"),
                                  pd.read_csv(folder / "g2.csv", comment="#"))
    assert main(["predict", "--model", str(out), "--data", str(b), "--use", "gradient boostin",
                 "--out", str(folder / "g3.csv")]) == 2
    assert "has no such model" in _one_line(capsys)


def test_the_summary_names_the_run_folder_in_its_predict_command(tmp_path, capsys):
    a = _well(tmp_path / "a.csv", 160, 1)
    out = tmp_path / "my runs" / "first"
    capsys.readouterr()
    assert main(["train", "--data", str(a), "--unit", "DEPTH=ft", *TINY, "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "this run's folder" not in said
    assert f"glassformer predict --model '{out}' --data WELL" in said
    metrics = json.loads((out / "metrics.json").read_text())
    assert f"--model '{out}'" in metrics["recommendation"]["text"]


def test_predict_on_a_cv_folder_says_cv_keeps_no_model(tmp_path, capsys):
    cv, other = tmp_path / "cv", tmp_path / "other"
    cv.mkdir()
    other.mkdir()
    (cv / "config.json").write_text(json.dumps({"command": "cv", "title": "Blind-well cross-validation"}))
    well = _well(tmp_path / "w.csv", 20, 0)
    capsys.readouterr()
    assert main(["predict", "--model", str(cv), "--data", str(well), "--out", str(tmp_path / "p.csv")]) == 2
    line = _one_line(capsys)
    assert "no model found" in line and "a cross-validation run (glassformer cv)" in line
    assert "keeps no fitted model" in line and "glassformer train" in line
    assert main(["predict", "--model", str(other), "--data", str(well), "--out", str(tmp_path / "p.csv")]) == 2
    line = _one_line(capsys)
    assert "no model found" in line and "cross-validation" not in line
