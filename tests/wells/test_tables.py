"""What the CLI prints about several wells: per-well tables, and the sentence that says when a baseline wins."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glassformer.wells import format_per_well_table, metrics_by_well, verdict


def test_verdict_says_in_words_when_a_baseline_wins():
    table = {"transformer": {"rmse": 0.80}, "LSTM": {"rmse": 0.85}, "gradient boosting": {"rmse": 0.74},
             "random forest": {"rmse": 0.7421}, "training mean": {"rmse": 2.0}}
    assert verdict(table, "log10 mD", "blind wells") == (
        "On blind wells 2 baselines have a lower RMSE than the transformer (0.800 log10 mD): gradient boosting "
        "0.740, random forest 0.742. A baseline is better here.")
    blended = {**table, "transformer/boosting blend": {"rmse": 0.76}}        # the blend holds the transformer
    assert verdict(blended, "log10 mD", "blind wells").startswith("On blind wells 3 models have a lower RMSE")
    assert verdict(blended, "log10 mD", "blind wells").endswith("0.760. Another model is better here.")
    only_blend = {"transformer": {"rmse": 0.80}, "transformer/boosting blend": {"rmse": 0.76},
                  "training mean": {"rmse": 2.0}}
    assert verdict(only_blend, "log10 mD", "the test split") == (
        "On the test split the transformer/boosting blend has a lower RMSE than the transformer (0.800 log10 mD): "
        "transformer/boosting blend 0.760. Another model is better here.")
    table["transformer"]["rmse"] = 0.5
    assert verdict(table, "mD", "the test split") == (
        "On the test split the transformer has the lowest RMSE, 0.500 mD; the best baseline, the gradient boosting, "
        "has 0.740.")
    assert verdict({**table, "transformer/boosting blend": {"rmse": 0.6}}, "mD", "the test split").endswith(
        "; the best other model, the transformer/boosting blend, has 0.600.")
    table["transformer"]["rmse"] = None
    assert verdict(table, "mD", "the test split") == "The transformer has no RMSE on the test split."


def test_per_well_table_names_every_well():
    per = {"15/9-F-1 A": {"transformer": {"rmse": 0.81}, "gradient boosting": {"rmse": 0.74}},
           "15/9-F-1 B": {"transformer": {"rmse": 0.9}, "gradient boosting": {"rmse": None}}}
    lines = format_per_well_table(per, "log10 mD").splitlines()
    assert lines[0] == "RMSE per well (log10 mD)"
    assert lines[1].split() == ["model", "15/9-F-1", "A", "15/9-F-1", "B"]
    assert lines[2].split() == ["transformer", "0.81", "0.9"] and lines[3].split() == ["gradient", "boosting", "0.74", "-"]


def test_metrics_by_well_scores_each_well_on_its_own_depths():
    class WM:
        log_target, target_name = True, "K"

    rows = pd.DataFrame({"well": ["a"] * 3 + ["b"] * 2, "K_observed_log10_mD": [0.0, 1.0, 2.0, 5.0, np.nan],
                         "transformer_log10_mD": [0.5, 1.0, 2.5, 4.0, 1.0]})
    out = metrics_by_well(rows, WM(), ["transformer"])
    assert out["a"]["transformer"]["rmse"] == pytest.approx(np.sqrt(0.5 / 3)) and out["a"]["transformer"]["n"] == 3
    assert out["b"]["transformer"] == {"rmse": None, "mae": None, "r2": None, "n": 1}   # one pair: no metrics


def test_a_network_recommended_on_the_block_it_stopped_early_on_points_to_blind_wells():
    from glassformer.wells.recommend import recommendation

    net = recommendation({"transformer": 0.64, "training mean": 0.668, "random forest": 0.93}, "the deepest 10 %")
    assert net["model"] == "transformer" and net["text"].startswith(
        "Recommended model: the transformer, with the lowest RMSE on the validation data (0.640 log10 mD; next, "
        "the training mean with 0.668); validation: the deepest 10 %, which no model was fitted on for this choice "
        "(the networks stopped early on it, so their scores there lean optimistic).")
    assert net["text"].endswith("check the choice on wells no model was tuned on: glassformer cv --recommend.")
    trees = recommendation({"transformer": 0.9, "random forest": 0.5}, "the deepest 10 %")
    assert trees["model"] == "random forest" and "cv --recommend" not in trees["text"]
