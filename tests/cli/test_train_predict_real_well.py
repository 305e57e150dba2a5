"""End to end: `glassformer train` on a real Volve well for a few epochs, then `predict` (CSV, LAS).

Data: Volve field data set, courtesy of Equinor and the Volve licence partners (see
../shared/data/real/README.md for the full attribution).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main

F11B = "15_9-F11B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS"
F1A = "15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS"


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory, request):
    data = request.getfixturevalue("shared_data") / "real"
    out = tmp_path_factory.mktemp("cli") / "run"
    rc = main(["train", "--data", str(data / F11B), "--inputs", "PHIF", "VSH", "SW", "--target", "KLOGH",
               "--log-target", "--train-depth", "3351.6:3700", "--test-depth", "3700:3800", "--window", "16",
               "--epochs", "2", "--out", str(out), "--no-progress"])
    assert rc == 0
    return out, data


def test_train_writes_a_complete_run_folder(trained_run):
    out, _ = trained_run
    for name in ("config.json", "metrics.json", "predictions.csv", "model/model.npz", "model/model.json",
                 "figures/loss.png", "figures/prediction_vs_depth.png", "figures/crossplot.png",
                 "figures/attention.png"):
        assert (out / name).is_file(), name
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["units"]["rmse"] == "log10 mD"
    for name, m in [("transformer", metrics["model"]), *metrics["baselines"].items()]:
        for key in ("rmse", "mae", "r2"):
            assert isinstance(m[key], float) and math.isfinite(m[key]), (name, key)
        assert m["n"] == 1000                  # 3700.1 .. 3800.0 m at 0.1 m: the 3700 m sample stays in training
    assert set(metrics["baselines"]) == {"porosity-permeability transform", "training mean", "random forest",
                                         "random forest + context", "gradient boosting", "gradient boosting + context",
                                         "transformer/boosting blend"}
    assert "Equinor" in metrics["attribution"]
    rows = pd.read_csv(out / "predictions.csv")
    test = rows[rows["split"] == "test"]
    assert test["depth"].min() > 3700 and test["depth"].max() == pytest.approx(3800.0)
    assert rows[rows["split"] == "train"]["depth"].max() == pytest.approx(3700.0)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["well_model"]["inputs"] == ["PHIF", "VSH", "SW"] and cfg["well_model"]["window"] == 16
    # scaling fitted on the training interval only
    train_phi = rows[rows["split"] == "train"]["PHIF"]
    assert cfg["well_model"]["x_scaler"]["data_max_"][0] == pytest.approx(train_phi.max())


def test_predict_csv_and_las(trained_run, tmp_path):
    import lasio

    out, data = trained_run
    csv = tmp_path / "pred.csv"
    assert main(["predict", "--model", str(out), "--data", str(data / F1A), "--out", str(csv)]) == 0
    df = pd.read_csv(csv)
    assert list(df.columns) == ["DEPTH", "KLOGH_PRED_LOG10", "KLOGH_PRED", "KLOGH_OOR"]
    assert len(df) == 3240 and df["KLOGH_PRED"].notna().sum() == 2281
    np.testing.assert_allclose(df["KLOGH_PRED"].dropna(), 10 ** df["KLOGH_PRED_LOG10"].dropna(), rtol=1e-5)
    las_path = tmp_path / "pred.las"
    assert main(["predict", "--model", str(out / "model"), "--data", str(data / F1A), "--out", str(las_path)]) == 0
    las = lasio.read(str(las_path))
    assert "KLOGH_PRED" in las.keys() and las.curves["KLOGH_PRED"].unit == "mD"
    np.testing.assert_allclose(las["KLOGH_PRED"], df["KLOGH_PRED"], rtol=1e-4, equal_nan=True)


def test_user_errors_exit_2_with_a_message(trained_run, tmp_path, capsys):
    _, data = trained_run
    base = ["train", "--data", str(data / F11B), "--inputs", "PHIF", "--target", "KLOGH", "--epochs", "1"]
    assert main(base + ["--train-depth", "3700-3800", "--out", str(tmp_path / "a")]) == 2
    assert "TOP:BASE" in capsys.readouterr().err
    assert main(base[:4] + ["NOPE"] + base[5:] + ["--train-depth", "3400:3500", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "NOPE" in err and "available" in err and "PHIF" in err
    assert main(base + ["--train-depth", "3400:3500", "--out", str(trained_run[0])]) == 2
    assert "--overwrite" in capsys.readouterr().err


def test_help_documents_units_and_defaults(capsys):
    with pytest.raises(SystemExit):
        from glassformer.cli import cli

        cli.main(["train", "--help"], standalone_mode=True)
    text = capsys.readouterr().out
    assert "log10" in text and "default: 32" in text and "TOP:BASE" in text


def test_demo_help_lists_every_demo(capsys):
    from glassformer.cli import cli

    with pytest.raises(SystemExit):
        cli.main(["demo", "--help"], standalone_mode=True)
    text = capsys.readouterr().out
    for name in ("porosity", "neighbor", "synthetic-wells", "real-wells", "--out"):
        assert name in text
