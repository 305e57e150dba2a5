"""Cross-validation folds over whole wells, and the tables made from the folds' results."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data import WellLog
from glassformer.errors import InputError
from glassformer.wells.cv import cv_folds, cv_tasks, log_from_item, log_to_item, summarise_folds


def _logs(sizes):
    return [WellLog(name=f"W{i}", depth=np.arange(float(n)), curves={"X": np.ones(n)}) for i, n in enumerate(sizes)]


def test_leave_one_well_out_and_grouped_k_fold_never_split_a_well():
    logs = _logs([50, 10, 30, 20, 40])
    assert cv_folds(logs) == [([1, 2, 3, 4], [0]), ([0, 2, 3, 4], [1]), ([0, 1, 3, 4], [2]), ([0, 1, 2, 4], [3]),
                              ([0, 1, 2, 3], [4])]
    folds = cv_folds(logs, 2)
    assert len(folds) == 2
    assert sorted(w for _, test in folds for w in test) == [0, 1, 2, 3, 4]       # each well held out once
    for train, test in folds:
        assert not set(train) & set(test) and set(train) | set(test) == set(range(5))
    sizes = sorted(sum([50, 10, 30, 20, 40][w] for w in test) for _, test in folds)
    assert sizes == [70, 80]                       # GroupKFold balances the folds by samples
    with pytest.raises(InputError, match="at least 2 wells"):
        cv_folds(logs[:1])
    with pytest.raises(InputError, match="--folds must be between 2 and the number of wells"):
        cv_folds(logs, 6)


def test_tasks_carry_plain_data_per_fold_and_seed():
    logs = _logs([5, 6, 7])
    tasks = cv_tasks(logs, {"window": 4}, [42, 0])
    assert [(t["fold"], t["seed"]) for t in tasks] == [(1, 42), (1, 0), (2, 42), (2, 0), (3, 42), (3, 0)]
    assert [d["name"] for d in tasks[2]["test"]] == ["W1"] and [d["name"] for d in tasks[2]["train"]] == ["W0", "W2"]
    back = log_from_item(log_to_item(logs[2]))
    np.testing.assert_array_equal(back.depth, logs[2].depth)
    assert back.name == "W2"


def _result(fold, seed, well, rmse_a, rmse_b, n):
    per = {"A": {"rmse": rmse_a, "mae": rmse_a / 2, "r2": 0.5, "n": n},
           "B": {"rmse": rmse_b, "mae": rmse_b / 2, "r2": 0.1, "n": n}}
    t = np.arange(n, dtype=float)
    return {"fold": fold, "seed": seed, "train_wells": ["other"], "test_wells": [well], "per_well": {well: per},
            "fold_metrics": per, "parameters": {"A": 10, "B": 2}, "seconds": {"A": 1.0, "B": 0.5},
            "validation": {"method": "m"}, "epochs": {"A": 3},
            "rows": {"fold": [fold] * n, "well": [well] * n, "depth": t, "Y_observed_mD": t,
                     "A_mD": t + rmse_a, "B_mD": t - rmse_b}}


def test_summary_mean_and_sd_across_folds_records_and_pooled_metrics():
    results = [_result(1, 42, "P", 1.0, 2.0, 4), _result(1, 0, "P", 3.0, 2.0, 4), _result(2, 42, "Q", 2.0, 4.0, 6),
               _result(2, 0, "Q", 2.0, 4.0, 6)]
    s = summarise_folds(results, target_col="Y_observed_mD", unit_suffix="mD")
    # fold means over seeds: A 2.0 (P) and 2.0 (Q); B 2.0 and 4.0
    assert s["table"]["A"]["rmse"] == pytest.approx(2.0) and s["table"]["A"]["rmse_sd"] == pytest.approx(0.0)
    assert s["table"]["B"]["rmse"] == pytest.approx(3.0) and s["table"]["B"]["rmse_sd"] == pytest.approx(np.sqrt(2))
    assert s["table"]["A"]["n"] == 10 and s["table"]["A"]["parameters"] == 10
    recs = {(r["fold"], r["well"], r["model"]): r for r in s["records"]}
    assert len(recs) == 4 and recs[(1, "P", "A")]["rmse"] == 2.0 and recs[(1, "P", "A")]["rmse_per_seed"] == [1, 3]
    assert s["per_well_rmse"] == {"P": {"A": 2.0, "B": 2.0}, "Q": {"A": 2.0, "B": 4.0}}
    # pooled over every held-out depth: A is off by a constant per seed (1 or 3 on P, 2 on Q)
    rmse_42 = np.sqrt((4 * 1 + 6 * 4) / 10)
    rmse_0 = np.sqrt((4 * 9 + 6 * 4) / 10)
    assert s["pooled"]["A"]["rmse"] == pytest.approx((rmse_42 + rmse_0) / 2) and s["pooled"]["A"]["n"] == 10
    assert [f["test_wells"] for f in s["folds"]] == [["P"], ["Q"]]
