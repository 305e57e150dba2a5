"""Every fitted model of a run exportable without pickle: ``predict --use NAME`` equals the run's own
predictions of that model, ``--all`` writes each under its name, a tampered file is refused; the blend
recomputed independently; the model the run recommends."""

from __future__ import annotations

import json
import pickle

import lasio
import numpy as np
import pandas as pd
import pytest
import skops.io

from glassformer.cli import main
from glassformer.errors import ModelFileError
from glassformer.wells import WellModel
from glassformer.wells.baselines import BLEND, BLEND_WEIGHTS
from glassformer.wells.evaluation import COLUMN
from glassformer.wells.tree_baselines import TreeBaseline

DEPTH = 1000.0 + 0.5 * np.arange(200)
TINY = ["--inputs", "PHIF", "VSH", "SW", "--target", "KLOGH", "--log-target", "--window", "8", "--epochs", "2",
        "--no-progress"]


@pytest.fixture(scope="module")
def run(tmp_path_factory, las_writer):
    """A compare run (transformer, LSTM, every baseline, the blend) trained on one well, tested on another."""
    root = tmp_path_factory.mktemp("export")
    train = las_writer(root / "train.las", "15/9-T-1", DEPTH, seed=1)
    test = las_writer(root / "test.las", "15/9-T-2", DEPTH + 500, seed=2)
    val = las_writer(root / "val.las", "15/9-T-3", DEPTH + 900, seed=3)
    out = root / "run"
    assert main(["compare", "--data", str(train), "--test-data", str(test), "--hidden-size", "2", "--out", str(out),
                 *TINY]) == 0
    return root, out, train, test, val


def _own(out, split="test"):
    rows = pd.read_csv(out / "predictions.csv")
    return rows[rows["split"] == split].set_index("depth")


def test_predict_use_equals_the_runs_own_predictions_for_every_model(run, capsys):
    root, out, _, test, _ = run
    table = json.loads((out / "metrics.json").read_text())["comparison"]["table"]
    assert {"transformer", "LSTM", "random forest", "gradient boosting + context", BLEND} <= set(table)
    own = _own(out)
    for name in table:
        dest = root / f"use_{COLUMN[name]}.csv"
        assert main(["predict", "--model", str(out), "--data", str(test), "--out", str(dest), "--use", name,
                     "--overwrite"]) == 0, name
        assert f"model {name}" in capsys.readouterr().out
        got = pd.read_csv(dest).set_index("DEPTH")["KLOGH_PRED_LOG10"]
        expected = own[f"{COLUMN[name]}_log10_mD"]
        np.testing.assert_allclose(got.loc[expected.index].to_numpy(), expected.to_numpy(), rtol=1e-5, atol=1e-6,
                                   equal_nan=True, err_msg=name)   # predictions.csv keeps 6 digits
        assert np.isfinite(got.to_numpy()).sum() > 100, name


def test_predict_all_writes_each_model_under_its_name(run):
    root, out, _, test, _ = run
    dest = root / "all.las"
    assert main(["predict", "--model", str(out), "--data", str(test), "--out", str(dest), "--all"]) == 0
    las = lasio.read(dest)
    own = _own(out)
    for name in json.loads((out / "metrics.json").read_text())["comparison"]["table"]:
        curve = las.curves[f"KLOGH_PRED_{COLUMN[name].upper()}_LOG10"]
        assert name in curve.descr, (name, curve.descr)
        np.testing.assert_allclose(pd.Series(curve.data, index=las.index).loc[own.index].to_numpy(),
                                   own[f"{COLUMN[name]}_log10_mD"].to_numpy(), rtol=1e-5, equal_nan=True)
    assert "KLOGH_PRED" in las.curves.keys()         # the default prediction (the transformer) stays


def test_an_unknown_model_name_is_refused_with_the_names_there_are(run, capsys):
    root, out, _, test, _ = run
    assert main(["predict", "--model", str(out), "--data", str(test), "--out", str(root / "x.csv"),
                 "--use", "xgboost"]) == 2
    err = capsys.readouterr().err
    assert "'xgboost'" in err and "gradient boosting" in err and BLEND in err


def test_the_blend_is_the_fixed_average_of_an_independently_refitted_gradient_boosting(run):
    from sklearn.ensemble import HistGradientBoostingRegressor

    _, out, train, _, _ = run
    assert BLEND_WEIGHTS == {"transformer": 0.5, "gradient boosting": 0.5}
    from glassformer.data import read_well

    well = read_well(train)
    X = well.matrix(["PHIF", "VSH", "SW"])
    y = np.log10(np.maximum(well.curve("KLOGH"), 1e-3))
    gbm = HistGradientBoostingRegressor(max_iter=100, learning_rate=0.1, max_leaf_nodes=31, min_samples_leaf=20,
                                        early_stopping=False, random_state=42).fit(X, y)
    test_rows = _own(out)
    mine = 0.5 * test_rows["transformer_log10_mD"].to_numpy() + 0.5 * gbm.predict(
        test_rows[["PHIF", "VSH", "SW"]].to_numpy())
    np.testing.assert_allclose(test_rows[f"{COLUMN[BLEND]}_log10_mD"].to_numpy(), mine, rtol=1e-5, atol=1e-6)
    truth = test_rows["KLOGH_observed_log10_mD"].to_numpy()
    rmse = float(np.sqrt(np.mean((mine - truth) ** 2)))
    table = json.loads((out / "metrics.json").read_text())["comparison"]["table"]
    assert table[BLEND]["rmse"] == pytest.approx(rmse, rel=1e-5)
    cfg = json.loads((out / "config.json").read_text())
    assert "fixed a priori" in cfg["baselines"][BLEND] and "50 %" in cfg["baselines"][BLEND]


def test_loading_every_model_never_unpickles(run, monkeypatch):
    _, out, _, test, _ = run

    def refuse(*args, **kwargs):
        raise AssertionError("pickle was used to load a model")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    wm = WellModel.load(out)
    from glassformer.data import read_well

    preds = wm.predict_all(read_well(test))
    assert set(preds) == set(wm.model_names()) and all(np.isfinite(p).any() for p in preds.values())


def test_a_tampered_tree_file_is_refused(run, tmp_path, capsys):
    import shutil

    _, out, _, test, _ = run
    copy = tmp_path / "run"
    shutil.copytree(out, copy)
    (file,) = (copy / "model").glob("gradient_boosting.*.skops")
    data = bytearray(file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    file.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="checksum differs"):
        WellModel.load(copy)
    assert main(["predict", "--model", str(copy), "--data", str(test), "--out", str(tmp_path / "p.csv")]) == 2
    assert file.name in capsys.readouterr().err


class Untrusted:
    """Stands for any object a forged file could carry."""

    def __init__(self):
        self.payload = "anything"


def test_a_file_holding_an_untrusted_type_is_refused_before_anything_is_built(tmp_path):
    (tmp_path / "random_forest.skops").write_bytes(skops.io.dumps(Untrusted()))
    record = {"kind": "tree", "ensemble": "random forest", "context_window": None, "random_state": 0, "n": 1,
              "file": "random_forest.skops"}                      # no checksum: the type check alone must refuse
    with pytest.raises(ModelFileError, match="not trusted.*Untrusted"):
        TreeBaseline.load(record, tmp_path)


def test_the_run_recommends_the_model_of_lowest_validation_rmse(run):
    _, out, train, _, _ = run
    metrics = json.loads((out / "metrics.json").read_text())
    rec = metrics["recommendation"]
    assert rec["model"] == min(rec["validation_rmse"], key=rec["validation_rmse"].get)
    assert f"Recommended model: the {rec['model']}" in rec["text"] and "--use" in rec["text"]
    # the training mean, refitted without the deepest 10 % of the training well, scored on that block by hand
    from glassformer.data import read_well

    y = np.log10(np.maximum(read_well(train).curve("KLOGH"), 1e-3))
    fit, block = y[:180], y[180:]                     # 200 samples: the deepest 20 are the validation block
    assert rec["validation_rmse"]["training mean"] == pytest.approx(np.sqrt(np.mean((block - fit.mean()) ** 2)))


def test_an_ensemble_run_exports_its_trees_and_its_blend(run, capsys):
    root, _, train, test, val = run
    out = root / "ensemble"
    assert main(["train", "--data", str(train), "--validation-data", str(val), "--test-data", str(test),
                 "--ensemble", "2", "--d-model", "4", "--heads", "1", "--out", str(out), *TINY]) == 0
    rec = json.loads((out / "metrics.json").read_text())["recommendation"]
    assert rec["model"] == min(rec["validation_rmse"], key=rec["validation_rmse"].get)
    assert "15/9-T-3" in rec["validation"] and BLEND in rec["validation_rmse"]
    own = _own(out)
    for name, column in (("transformer", "transformer_P50"), ("gradient boosting", "gradient_boosting"),
                         (BLEND, COLUMN[BLEND])):
        dest = root / f"ens_{column}.csv"
        assert main(["predict", "--model", str(out), "--data", str(test), "--out", str(dest), "--use", name,
                     "--overwrite"]) == 0, name
        got = pd.read_csv(dest).set_index("DEPTH")["KLOGH_PRED_LOG10"]
        np.testing.assert_allclose(got.loc[own.index].to_numpy(), own[f"{column}_log10_mD"].to_numpy(), rtol=1e-5,
                                   atol=1e-6, equal_nan=True, err_msg=name)


def test_a_second_save_keeps_only_the_files_its_model_json_names(run, tmp_path):
    _, out, train, _, _ = run
    from glassformer.data import read_well

    wm = WellModel.load(out)
    wm.save(tmp_path / "model")
    first = sorted(p.name for p in (tmp_path / "model").glob("*.skops"))
    assert len(first) == 4
    wm.fit_baselines([read_well(train).interval(1000.0, 1060.0)])      # other trees, other files
    wm.save(tmp_path / "model")
    second = sorted(p.name for p in (tmp_path / "model").glob("*.skops"))
    assert len(second) == 4 and not set(first) & set(second)
    back = WellModel.load(tmp_path / "model")
    X = read_well(train).matrix(["PHIF", "VSH", "SW"])
    np.testing.assert_array_equal(back.baselines_["random forest"].predict(X), wm.baselines_["random forest"].predict(X))
