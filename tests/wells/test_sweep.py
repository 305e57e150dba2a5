"""The settings sweep in the library: the grid, the choice on validation logs only, the test score of
the chosen setting beside the baselines, and the figure.

Data: four synthetic wells (glassformer.data.synthetic_wells, 200 samples each): two train, one
validates, one tests.  Fits are tiny (1 epoch); what is checked is the bookkeeping, not skill.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from glassformer.data import synthetic_wells
from glassformer.errors import InputError
from glassformer.models import SequenceRegressor
from glassformer.wells import TREE_BASELINE_NAMES, WellModel, evaluate_split
from glassformer.wells.baselines import BLEND
from glassformer.wells.sweep import (GRID_KEYS, _verdict, finish_sweep, format_sweep_table, run_sweep, setting_grid,
                                     setting_label)
from glassformer.wells.sweep import setting_folder


def _grid(**kw):
    base = {"d_model": [8], "num_heads": [2], "num_layers": [1], "window": [16], "lr": [3e-3]}
    return {**base, **kw}


def test_the_grid_is_every_combination_in_order_with_impossible_ones_skipped():
    settings, skipped = setting_grid(_grid(d_model=[4, 6], num_heads=[1, 4], lr=[1e-3, 1e-2]))
    assert [(s["d_model"], s["num_heads"], s["lr"]) for s in settings] == [
        (4, 1, 1e-3), (4, 1, 1e-2), (4, 4, 1e-3), (4, 4, 1e-2), (6, 1, 1e-3), (6, 1, 1e-2)]
    assert [(s["d_model"], s["num_heads"]) for s, _ in skipped] == [(6, 4), (6, 4)]
    assert skipped[0][1] == "d_model 6 is not divisible by num_heads 4"
    assert setting_label(settings[0]) == "d_model 4, heads 1, layers 1, window 16, lr 0.001"
    assert setting_folder(settings[0]) == "d4_h1_l1_w16_lr0.001"
    assert setting_grid(_grid(window=[16, 16, 8]))[0] == setting_grid(_grid(window=[16, 8]))[0]   # repeats once


@pytest.mark.parametrize("grid, message", [
    (_grid(dropout=[0.1]), r"unknown grid setting\(s\) \['dropout'\]"),
    (_grid(window=[]), "give at least one value of window"),
    (_grid(window=[1]), "window values must be integers >= 2"),
    (_grid(d_model=[8.5]), "d_model values must be integers >= 1"),
    (_grid(lr=[0.0]), "lr values must be finite numbers > 0"),
    (_grid(lr=[math.nan]), "lr values must be finite numbers > 0"),
    (_grid(d_model=[6], num_heads=[4]), r"no setting of the grid can be built \(d_model 6 is not divisible"),
])
def test_bad_grids_are_refused(grid, message):
    with pytest.raises(InputError, match=message):
        setting_grid(grid)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    wells = synthetic_wells(n_wells=4, n_samples=200, seed=5)
    train, val, test = wells[:2], wells[2:3], wells[3:]
    wm = WellModel(["PHI", "VSH"], "PERM", window=16,
                   model=SequenceRegressor(epochs=1, random_state=3, batch_size=16))
    out = tmp_path_factory.mktemp("sweep") / "run"
    result = run_sweep(out, train, val, wm, _grid(d_model=[4, 8], lr=[1e-3, 3e-2]))
    metrics = finish_sweep(out, result, test)
    return out, result, metrics, test


def test_the_lowest_validation_rmse_is_chosen(swept):
    out, result, metrics, _ = swept
    rows = result["rows"]
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    best = int(np.argmin([r["val_rmse"] for r in rows]))
    assert result["chosen"] == best and [r["chosen"] for r in rows] == [i == best for i in range(4)]
    assert metrics["selection"]["split"] == "validation"
    assert metrics["selection"]["chosen"] == rows[best]["setting"]
    table = pd.read_csv(out / "sweep.csv")
    assert table["setting"].tolist() == [r["setting"] for r in rows]
    np.testing.assert_allclose(table["val_rmse"], [r["val_rmse"] for r in rows], rtol=1e-5)
    for r in rows:                                   # every setting's model is kept, with its own width
        folder = out / "settings" / setting_folder({k: r[k] for k in GRID_KEYS}) / "model"
        assert WellModel.load(folder).model_.get_params()["d_model"] == r["d_model"]


def test_the_validation_rmse_is_the_models_rmse_on_the_validation_logs(swept):
    from glassformer.wells.seeds import load_fitted

    out, result, _, _ = swept
    val = synthetic_wells(n_wells=4, n_samples=200, seed=5)[2:3]
    for r in result["rows"]:
        _, m = evaluate_split(load_fitted(r["model_dir"]), val, "validation")
        assert m["transformer"]["rmse"] == pytest.approx(r["val_rmse"], rel=1e-12)


def test_the_chosen_setting_is_scored_once_on_test_beside_the_baselines(swept):
    out, result, metrics, test = swept
    chosen = WellModel.load(out / "model")            # the copy of the chosen setting's model
    assert chosen.model_.get_params()["d_model"] == result["rows"][result["chosen"]]["d_model"]
    rows, expected = evaluate_split(chosen, test, "test")
    assert metrics["test"] == expected
    # every baseline the chosen setting was fitted with is saved and scored (the tree ensembles were dropped by
    # WellModel.load before its specification was saved whole), and the blend beside them
    assert set(metrics["baselines"]) == {*TREE_BASELINE_NAMES, "porosity-permeability transform", "training mean",
                                         BLEND}
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["test"]["transformer"]["rmse"] == pytest.approx(expected["transformer"]["rmse"])
    assert len(pd.read_csv(out / "predictions.csv")) == len(rows) == 200
    text = format_sweep_table(metrics)
    assert text.count("\n* ") == 1 and "test split, scored once" in text and metrics["verdict"] in text


def test_the_figure_is_written(swept):
    out, *_ = swept
    assert (out / "figures" / "sweep.png").stat().st_size > 10_000


def test_the_verdict_says_in_words_when_a_baseline_wins():
    m = {"rmse": 0.5, "mae": 0.4, "r2": 0.5, "n": 10}
    test = {"transformer": m, "porosity-permeability transform": dict(m, rmse=0.4), "training mean": dict(m, rmse=0.9)}
    assert _verdict(test) == ("the porosity-permeability transform beats the chosen transformer on test "
                              "(RMSE 0.4 against 0.5)")
    test["porosity-permeability transform"]["rmse"] = 0.6
    assert _verdict(test) == "the chosen transformer has the lowest test RMSE of all models"
