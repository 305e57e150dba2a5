"""One preparation for every ensemble path: members trained side by side, members trained one by one on an
engine, and well models fitted alone with the same seeds give the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data import WellLog
from glassformer.models import SequenceRegressor
from glassformer.wells import WellModel, fit_ensemble, with_seed

SEEDS = [42, 0, 1]


def _well(name, seed, n=360):
    rng = np.random.default_rng(seed)
    depth = 2000 + 0.15 * np.arange(n)
    phi = 0.17 + 0.06 * np.sin(depth / 1.9) + 0.01 * rng.standard_normal(n)
    phi[-n // 8:] -= 0.05                                   # the deepest samples tighter: outside the rest's range
    return WellLog(name=name, depth=depth, curves={"PHIF": phi, "VSH": np.clip(0.42 - phi, 0, 1),
                                                   "KLOGH": 10 ** (11 * phi - 0.7 + 0.1 * rng.standard_normal(n))},
                   units={"PHIF": "V/V", "VSH": "V/V", "KLOGH": "mD"})


def _wm():
    return WellModel(["PHIF", "VSH"], "KLOGH", window=16,
                     model=SequenceRegressor(d_model=8, num_heads=2, epochs=3, batch_size=8, dtype="float64"))


def _max_rel(a, b):
    return float(np.nanmax(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    """The same 3-member ensemble on two training wells, without validation logs (the deepest blocks)."""
    train = [_well("15/9-A", 1), _well("15/9-B", 2)]
    root = tmp_path_factory.mktemp("paths")
    separate = fit_ensemble(_wm(), train, folder=root / "separate", seeds=SEEDS)
    together = fit_ensemble(_wm(), train, folder=root / "together", seeds=SEEDS, batched=True)
    return train, separate, together


def test_batched_and_separate_members_give_the_same_numbers(paths):
    """Side by side each member makes the BLAS calls it makes alone (one GEMM per member), so the numbers are the
    same bit for bit; the relative bound first gives a readable size when they are not."""
    train, separate, together = paths
    blind = _well("15/9-C", 3)
    a, b = together.predict_members(blind), separate.predict_members(blind)     # (3, n)
    assert a.shape == (3, len(blind)) and np.isfinite(a).all()
    assert _max_rel(a, b) <= 1e-10
    np.testing.assert_array_equal(a, b)
    qa, qb = together.predict_quantiles(blind, calibrated=False), separate.predict_quantiles(blind, calibrated=False)
    for key in ("P10", "P50", "P90"):
        assert _max_rel(qa[key], qb[key]) <= 1e-10
        np.testing.assert_array_equal(qa[key], qb[key])
    for m, n in zip(together.members, separate.members):
        np.testing.assert_array_equal(m.x_scaler_.data_min_, n.x_scaler_.data_min_)
        np.testing.assert_array_equal(m.y_scaler_.mean_, n.y_scaler_.mean_)
    def trained(ens):                                                   # all but the time it took
        return [{k: v for k, v in m["training"].items() if k != "seconds"} for m in ens.info["members"]]
    assert trained(together) == trained(separate)


def test_members_are_the_well_models_fitted_alone_with_their_seeds(paths):
    """Member k is ``with_seed(wm, seed_k).fit(train)``: the same scalers (fitted on the whole training wells,
    validation blocks included), the same deepest blocks for early stopping, the same windows."""
    train, separate, together = paths
    blind = _well("15/9-C", 3)
    for seed, member, side in zip(SEEDS, separate.members, together.members):
        alone = with_seed(_wm(), seed).fit(train)
        np.testing.assert_array_equal(member.x_scaler_.data_min_, alone.x_scaler_.data_min_)
        np.testing.assert_array_equal(member.x_scaler_.data_max_, alone.x_scaler_.data_max_)
        np.testing.assert_array_equal(member.y_scaler_.mean_, alone.y_scaler_.mean_)
        assert member.n_train_windows_ == alone.n_train_windows_
        assert member.model_.history_.val_loss == alone.model_.history_.val_loss
        expected = alone.predict_log(blind)
        assert _max_rel(member.predict_log(blind), expected) <= 1e-10
        assert _max_rel(side.predict_log(blind), expected) <= 1e-10


def test_validation_wells_given_members_equal_well_models_fitted_alone(tmp_path):
    """With a held-out validation well, the validation windows are the well model's (half a window apart)."""
    train, val = [_well("15/9-A", 1)], [_well("15/9-V", 4, n=70)]
    ens = fit_ensemble(_wm(), train, val, folder=tmp_path / "e", seeds=SEEDS[:2], batched=True, calibrate=False)
    blind = _well("15/9-C", 3)
    for seed, member in zip(SEEDS, ens.members):
        alone = with_seed(_wm(), seed).fit(train, val_logs=val)
        assert member.model_.history_.val_loss == alone.model_.history_.val_loss
        assert _max_rel(member.predict_log(blind), alone.predict_log(blind)) <= 1e-10
