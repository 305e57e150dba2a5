"""Early stopping without leakage: contiguous depth blocks (or held-out wells), never random overlapping windows."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data import WellLog
from glassformer.models import LSTMRegressor, SequenceRegressor
from glassformer.wells import WellModel, choose_validation, deepest_blocks


def _well(name, n, seed, top=1000.0):
    rng = np.random.default_rng(seed)
    depth = top + 0.5 * np.arange(n)
    phi = 0.2 + 0.05 * np.sin(depth / 2) + 0.01 * rng.standard_normal(n)
    return WellLog(name=name, depth=depth, curves={"PHIF": phi, "VSH": 0.5 - phi, "KLOGH": 10 ** (12 * phi - 1)})


def test_the_deepest_block_is_contiguous_disjoint_and_at_least_two_windows():
    g = _well("A", 200, 0)
    (fit,), (val,), (block,) = deepest_blocks([g], 0.1, 8)
    np.testing.assert_array_equal(fit.depth, g.depth[:180])
    np.testing.assert_array_equal(val.depth, g.depth[180:])         # the deepest 20 samples, below every fit sample
    assert block == {"well": "A", "top": g.depth[180], "base": g.depth[-1], "depth_unit": "m", "samples": 20,
                     "of_samples": 200, "share": 0.1}
    (fit,), (val,), _ = deepest_blocks([g], 0.05, 8)                  # 10 samples < 2 windows: 16 held out
    assert len(val) == 16 and len(fit) == 184
    short = _well("S", 20, 1)                                        # two windows (16) > a quarter: one window
    (fit,), (val,), (block,) = deepest_blocks([short], 0.1, 8)
    assert len(val) == 8 and len(fit) == 12 and block["share"] == 0.4
    shorter = _well("S", 12, 1)
    fit, val, blocks = deepest_blocks([shorter], 0.1, 8)             # 8 held out would leave 4 < 8: none
    assert fit == [shorter] and val == [] and blocks == []


def test_choose_validation_says_which():
    a, b = _well("A", 200, 0), _well("B", 120, 1, 2000.0)
    _, val, how = choose_validation([a], [b])
    assert val == [b] and how["method"] == "the validation wells given"
    _, val, how = choose_validation([a], [], "none")
    assert val == [] and how["method"].startswith("none")
    _, val, how = choose_validation([a, b], [], "deepest", 0.1, 8)
    assert [v.name for v in val] == ["A", "B"] and how["method"].startswith("the deepest 10 % of each training")
    many = [_well(f"W{i}", 200, i) for i in range(8)]                  # a sentence names 6 blocks, counts the rest
    _, val, how = choose_validation(many, [], "deepest", 0.1, 8)
    assert len(val) == 8 and len(how["blocks"]) == 8
    assert "W5 1090-1099.5 m" in how["method"] and "W6" not in how["method"]
    assert how["method"].endswith("; and 2 more wells' blocks alike)")


def test_the_networks_validate_on_the_blocks_not_on_random_windows():
    a, b = _well("A", 200, 0), _well("B", 120, 1, 2000.0)
    wm = WellModel(["PHIF", "VSH"], "KLOGH", window=8, model=SequenceRegressor(epochs=2, d_model=8),
                   lstm=LSTMRegressor(epochs=2, hidden_size=2), tree_baselines=False).fit([a, b])
    # A keeps 180 samples, B 104: (180 - 8) // 4 + 1 + (104 - 8) // 4 + 1 windows at stride 4
    assert wm.n_train_windows_ == 44 + 25
    assert wm.model_.validation_fraction is None and wm.lstm_.validation_fraction is None
    assert np.isfinite(wm.model_.history_.val_loss).all() and np.isfinite(wm.lstm_.history_.val_loss).all()
    assert wm.validation_["n_windows"] == (20 - 8) // 4 + 1 + (16 - 8) // 4 + 1
    assert [blk["well"] for blk in wm.validation_["blocks"]] == ["A", "B"]
    # the scaler and the baselines still see the whole training intervals
    assert wm.x_scaler_.data_max_[0] == pytest.approx(max(a.curve("PHIF").max(), b.curve("PHIF").max()))
    assert wm.baselines_["training mean"].n_ == 320
    none = WellModel(["PHIF", "VSH"], "KLOGH", window=8, model=SequenceRegressor(epochs=2, d_model=8),
                     tree_baselines=False, validation="none").fit([a, b])
    assert np.isnan(none.model_.history_.val_loss).all() and none.n_train_windows_ == 49 + 29
