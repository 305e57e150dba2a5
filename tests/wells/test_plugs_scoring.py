"""Baselines at core depths and metrics at plug depths only, against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from glassformer.data import PlugTable, WellLog
from glassformer.wells import WellModel, prepare_cored_well, split_plugs
from glassformer.wells.plugs_scoring import baseline_predictions, score_roles
from glassformer.wells.ensemble import prepare
from glassformer.wells.tree_baselines import TREE_BASELINE_NAMES, context_features


def test_scores_use_only_the_plugs_of_the_role():
    y = np.array([np.nan, 1.0, 2.0, np.nan, 4.0, 5.0])
    preds = {"a": np.array([9.0, 1.0, 1.0, 9.0, 2.0, 5.0]), "b": np.array([0.0, 2.0, 2.0, 0.0, 4.0, np.nan])}
    masks = {"test": np.array([0, 1, 1, 0, 0, 0], bool), "train": np.array([0, 0, 0, 0, 1, 1], bool)}
    s = score_roles(y, preds, masks)
    assert s["test"]["a"]["rmse"] == pytest.approx(math.sqrt(0.5))      # errors 0 and 1 at the two test plugs
    assert s["test"]["b"]["rmse"] == pytest.approx(math.sqrt(0.5))
    assert s["test"]["a"]["n"] == 2
    # b has no prediction at the last training plug: both models are scored on the one plug left
    assert s["train"]["a"]["n"] == s["train"]["b"]["n"] == 1 and s["train"]["a"]["rmse"] is None


def test_context_features_by_hand():
    log = WellLog(name="C", depth=np.arange(5.0), curves={"A": np.arange(5.0), "B": 10 + np.arange(5.0)})
    F = context_features(log, ["A", "B"], context=1)
    nan = np.nan
    expected = np.array([[nan, nan, 0, 10, 1, 11], [0, 10, 1, 11, 2, 12], [1, 11, 2, 12, 3, 13],
                         [2, 12, 3, 13, 4, 14], [3, 13, 4, 14, nan, nan]])
    np.testing.assert_array_equal(F, expected)


def _case():
    """Plugs whose core permeability follows log10 k = 10 phi_core - 1 exactly, on a log whose PHIF
    is in percent (so the core transform must convert it)."""
    depth = 200.0 + 0.5 * np.arange(60)
    phi = 0.15 + 0.05 * np.sin(depth)
    log = WellLog(name="P", depth=depth, curves={"PHIF": 100 * phi, "VSH": 0.5 - phi, "KLOGH": np.r_[0.0, 10 ** (
        6 * phi[1:])]}, units={"PHIF": "%", "VSH": "V/V", "KLOGH": "mD"})
    at = np.array([2, 4, 6, 8, 20, 22, 24, 26, 40, 42, 44, 46, 50, 52, 54, 56])
    phi_core = 0.1 + 0.01 * np.arange(at.size)
    core = PlugTable(depth=depth[at], porosity=phi_core, permeability=10 ** (10 * phi_core - 1),
                     run=np.repeat([1, 2, 3, 4], 4).astype(object),
                     columns={"depth": "DEPTH", "run": "RUN", "porosity": "CPOR", "permeability": "CKHL"})
    cw = prepare_cored_well(log, core, shifts=None)
    split = split_plugs(cw, ["PHIF", "VSH"])
    wm, *_ = prepare(WellModel(["PHIF", "VSH"], "CKHL", window=8), [split.log_for(cw, "train")])
    return cw, split, wm, phi, at, phi_core


def test_core_transform_is_fitted_on_core_pairs_and_applied_to_log_porosity_as_a_fraction():
    cw, split, wm, phi, at, phi_core = _case()
    preds, seconds, notes = baseline_predictions(cw, split, wm, log_perm_curve="KLOGH")
    np.testing.assert_allclose(preds["core poro-perm transform"], 10 * phi - 1, atol=1e-9)
    assert notes == []
    logk = 10 * phi_core - 1
    train = np.r_[logk[0:4], logk[8:12]]                          # cores 1 and 3 train by default
    np.testing.assert_allclose(preds["training mean"], train.mean())
    expected_klogh = np.r_[-3.0, 6 * phi[1:]]                     # KLOGH 0 mD -> the 0.001 mD floor
    np.testing.assert_allclose(preds["KLOGH (log-derived)"], expected_klogh, atol=1e-12)
    assert set(preds) == {*TREE_BASELINE_NAMES, "core poro-perm transform",     # the registry's four trees
                          "log poro-perm transform", "KLOGH (log-derived)", "training mean"}
    assert all(np.isfinite(v).all() for v in preds.values())


def test_a_missing_log_permeability_curve_is_said_not_invented():
    cw, split, wm, *_ = _case()
    preds, _, notes = baseline_predictions(cw, split, wm, log_perm_curve="KLOGV")
    assert "KLOGV (log-derived)" not in preds
    assert notes == ["the log has no KLOGV: no log-derived permeability to compare with"]
