"""The comparison (transformer, LSTM, porosity-permeability transform, training mean) and
the run folders of every demo (report.html in each).

Data: Volve field data set, courtesy of Equinor and the Volve licence partners (see
../shared/data/real/README.md for the full attribution).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from glassformer import LSTMRegressor
from glassformer.cli import main
from glassformer.wells import summarise_runs
from glassformer.wells import seed_list

F11B = "15_9-F11B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS"
MODELS = {"transformer", "LSTM", "porosity-permeability transform", "training mean"}
TREES = {"random forest", "random forest + context", "gradient boosting", "gradient boosting + context"}
BLEND = "transformer/boosting blend"


def test_seed_list():
    assert seed_list(1) == [42]
    assert seed_list(3) == [42, 0, 1]
    assert seed_list(3, first=0) == [0, 1, 2]


def test_summarise_runs_mean_and_sample_sd():
    def run(seed, rmse, secs):
        m = {"rmse": rmse, "mae": rmse / 2, "r2": 1 - rmse, "n": 10}
        return {"seed": seed, "metrics": {"test": {"net": m}}, "parameters": {"net": 7}, "seconds": {"net": secs}}

    out = summarise_runs([run(1, 0.2, 1.0), run(2, 0.4, 3.0)], "test")
    row = out["table"]["net"]
    assert row["rmse"] == pytest.approx(0.3) and row["rmse_sd"] == pytest.approx(math.sqrt(0.02))
    assert row["mae"] == pytest.approx(0.15) and row["r2"] == pytest.approx(0.7)
    assert row["train_s"] == pytest.approx(2.0) and row["train_s_sd"] == pytest.approx(math.sqrt(2.0))
    assert row["parameters"] == 7 and row["n"] == 10
    assert out["per_seed"]["net"]["rmse"] == [0.2, 0.4]
    assert summarise_runs([run(1, 0.2, 1.0)], "test")["table"]["net"]["rmse_sd"] is None


def test_compare_command_on_a_real_volve_well(shared_data, tmp_path):
    out = tmp_path / "cmp"
    rc = main(["compare", "--data", str(shared_data / "real" / F11B), "--inputs", "PHIF", "VSH", "SW",
               "--target", "KLOGH", "--log-target", "--train-depth", "3351.6:3500", "--test-depth", "3500:3560",
               "--window", "16", "--epochs", "2", "--hidden-size", "4", "--seeds", "2", "--out", str(out)])
    assert rc == 0
    metrics = json.loads((out / "metrics.json").read_text())
    comp = metrics["comparison"]
    assert comp["seeds"] == [42, 0] and set(comp["table"]) == MODELS | TREES | {BLEND}
    for name, row in comp["table"].items():
        for key in ("rmse", "mae", "r2", "train_s"):
            assert isinstance(row[key], float) and math.isfinite(row[key]), (name, key)
        assert isinstance(row["parameters"], int) and row["parameters"] >= 1
        assert row["n"] == 600                      # 3500.1 .. 3560.0 m at 0.1 m
    assert comp["table"]["porosity-permeability transform"]["parameters"] == 2
    assert comp["table"]["LSTM"]["parameters"] == 2 * (16 * 3 + 16 * 4 + 32) + 9
    # two seeds: the networks have a spread, the deterministic baselines none
    assert comp["table"]["LSTM"]["rmse_sd"] > 0 and comp["table"]["training mean"]["rmse_sd"] == 0
    assert set(metrics["baselines"]) == (MODELS | TREES | {BLEND}) - {"transformer"}
    for name in ("report.html", "figures/prediction_vs_depth.png", "model/model.npz", "model_lstm/model.npz"):
        assert (out / name).is_file(), name
    html = (out / "report.html").read_text()
    assert "comparison" in html and "LSTM" in html and "Equinor" in html
    import pandas as pd

    rows = pd.read_csv(out / "predictions.csv")
    lstm = LSTMRegressor.load(out / "model_lstm")
    assert lstm.get_params()["random_state"] == 42 and "lstm_log10_mD" in rows.columns
    test = rows[rows["split"] == "test"]
    assert np.isfinite(test["lstm_log10_mD"]).mean() > 0.9


def test_compare_needs_data_or_demo(tmp_path, capsys):
    assert main(["compare", "--out", str(tmp_path / "x")]) == 2
    assert "--data" in capsys.readouterr().err


def test_every_demo_run_folder_has_a_report(shared_data, tmp_path, monkeypatch):
    """Small budgets (a few epochs) of all four demos: each run folder ends with report.html."""
    from glassformer.demos import neighbor, porosity, real_wells, synthetic_wells

    porosity.run(tmp_path / "porosity", epochs=30, lstm_epochs=10)
    neighbor.run(tmp_path / "neighbor", epochs=1, lstm_epochs=1)
    synthetic_wells.run(tmp_path / "synthetic", epochs=1, n_wells=10, seeds=(42,))
    monkeypatch.setenv("GLASSFORMER_DATA", str(shared_data))
    real_wells.run(tmp_path / "real", epochs=1, window=16)
    folders = [tmp_path / n for n in ("porosity", "neighbor", "synthetic", "real", "real/f11b-depth-split",
                                      "real/across-wells")]
    for folder in folders:
        assert (folder / "report.html").is_file(), folder
    for demo in ("porosity", "neighbor"):
        figs = {p.stem for p in (tmp_path / demo / "figures").glob("*.png")}
        assert {"tracks", "crossplot", "positional_encoding", "embeddings", "qkv", "attention", "value_vs_output",
                "stages", "loss", "prediction_vs_depth"} <= figs, (demo, figs)
    assert "prediction_panels" in {p.stem for p in (tmp_path / "neighbor" / "figures").glob("*.png")}
    assert "ablation" in {p.stem for p in (tmp_path / "neighbor" / "figures").glob("*.png")}
    m1 = json.loads((tmp_path / "porosity" / "metrics.json").read_text())
    assert set(m1["comparison"]["table"]) == MODELS and "training interval" in m1["comparison"]["split"]
    assert len(m1["forecast_mD"]["lstm_forecast_window_alone"]) == 7


@pytest.mark.parametrize("seeds", [[42], [42, 0]])
def test_comparison_table_keeps_columns_apart_for_any_magnitude(seeds):
    from glassformer.wells import format_comparison_table

    big = {"rmse": 3.3e24, "mae": -1.25e124, "r2": -1.0e49, "train_s": 12345.678, "parameters": 1234567,
           "rmse_sd": 1.5e23, "mae_sd": 2.5e123, "r2_sd": 1e48, "n": 10}
    small = {"rmse": 0.12345, "mae": 0.5, "r2": 0.98765, "train_s": 0.5, "parameters": 2,
             "rmse_sd": 0.0, "mae_sd": None, "r2_sd": float("nan"), "n": 10}
    metrics = {"title": "t", "comparison": {"seeds": seeds, "table": {"transformer": big, "mean": small}}}
    lines = format_comparison_table(metrics, "mD").splitlines()
    values = lines[2].split()
    spread = len(seeds) > 1
    expect = ["transformer", "3.3e+24", *(["±", "1.5e+23"] if spread else []), "-1.25e+124",
              *(["±", "2.5e+123"] if spread else []), "-1e+49", *(["±", "1e+48"] if spread else []),
              "1234567", "12345.68"]
    assert values == expect
    assert lines[3].split() == ["mean", "0.1235", *(["±", "0"] if spread else []), "0.5",
                                *(["±", "-"] if spread else []), "0.9877", *(["±", "-"] if spread else []),
                                "2", "0.50"]


@pytest.fixture(scope="module")
def small_well(tmp_path_factory):
    import pandas as pd

    rng = np.random.default_rng(3)
    depth = 2000 + 0.1 * np.arange(400)
    phi = 0.2 + 0.08 * np.sin(depth / 3) + 0.02 * rng.standard_normal(400)
    path = tmp_path_factory.mktemp("well") / "small.csv"
    pd.DataFrame({"DEPTH": depth, "PHIF": phi, "VSH": 0.3 - 0.5 * (phi - 0.2), "KLOGH": 10 ** (12 * phi - 1)}
                 ).to_csv(path, index=False)
    return path


def _compare_args(well, out, *extra, train="2000:2025", test="2025:2035"):
    return ["compare", "--data", str(well), "--inputs", "PHIF", "VSH", "--target", "KLOGH", "--train-depth", train,
            "--test-depth", test, "--window", "16", "--epochs", "1", "--hidden-size", "2", "--out", str(out), *extra]


@pytest.mark.parametrize("extra, train, test, message", [
    ((), "2000:2025", "2020:2035", r"--test-depth 2020:2035 overlaps --train-depth 2000:2025 in small: 51 depth "
                                   r"samples \(2020 to 2025 m\)"),
    ((), "2000:2025", "2010:2020", r"--test-depth 2010:2020 lies inside --train-depth 2000:2025"),
    (("--inputs", "PHIF", "PHIF"), "2000:2025", "2025:2035", r"--inputs lists PHIF more than once"),
    (("--positional", "wavelengths"), "2000:2025", "2025:2035", r"--positional wavelengths needs --wavelengths"),
    (("--positional", "foo"), "2000:2025", "2025:2035", r"Invalid value for '--positional': 'foo' is not one of .*'rotary'"),
    (("--jobs", "2"), "2000:2025", "2025:2035", r"one seed .* leaves nothing to share out: add --seeds N"),
])
def test_compare_refuses_bad_splits_and_options_before_writing(small_well, tmp_path, capsys, extra, train, test,
                                                                message):
    import re

    args = _compare_args(small_well, tmp_path / "cmp", train=train, test=test)
    if extra[:1] == ("--inputs",):
        i = args.index("--inputs")
        args = args[:i] + list(extra) + args[i + 3:]
    else:
        args += list(extra)
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(message, err[0]), err
    assert not (tmp_path / "cmp").exists()                      # refused before the folder is created


def test_compare_demo_refuses_positional_options(tmp_path, capsys):
    assert main(["compare", "--demo", "porosity", "--positional", "rotary", "--out", str(tmp_path / "c")]) == 2
    assert "--positional / --wavelengths apply to --data runs" in capsys.readouterr().err


def test_compare_with_wavelengths_sets_d_model(small_well, tmp_path, capsys):
    from glassformer.wells import WellModel

    out = tmp_path / "cmp"
    assert main(_compare_args(small_well, out, "--positional", "wavelengths", "--wavelengths", "4", "16", "64")) == 0
    capsys.readouterr()
    model = WellModel.load(out).model_
    params = model.get_params()
    assert params["positional"] == "wavelengths" and params["d_model"] == 6 and params["d_ff"] is None
    assert model.network_.encoder.layers[0].linear1.out_features == 12          # d_ff None: 2 x d_model
    assert list(params["positional_options"]["wavelengths"]) == [4.0, 16.0, 64.0]
    comp = json.loads((out / "metrics.json").read_text())["comparison"]
    assert comp["table"]["transformer"]["n"] == 100              # 2025.1 .. 2035 m: 2025 m stays in training
