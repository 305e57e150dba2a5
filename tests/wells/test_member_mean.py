"""The transformer of a blind-well fold as the mean of members from their own seeds (``glassformer cv --members``).

The mean is recomputed here from well models fitted alone, one per seed (``with_seed(wm, s).fit``), and
the fold's transformer and blend scores from those predictions with plain NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data import WellLog
from glassformer.errors import InputError
from glassformer.models import SequenceRegressor
from glassformer.wells import WellModel, with_seed
from glassformer.wells.cv import cv_tasks, run_fold
from glassformer.wells.seed_order import member_seed_blocks
from glassformer.wells.member_fit import fit_member_mean
from glassformer.wells.member_mean import MemberMean


def _well(name, seed, n=300):
    rng = np.random.default_rng(seed)
    depth = 1500 + 0.15 * np.arange(n)
    phi = 0.16 + 0.05 * np.sin(depth / 2.3) + 0.01 * rng.standard_normal(n)
    return WellLog(name=name, depth=depth, curves={"PHIF": phi, "VSH": np.clip(0.4 - phi, 0, 1),
                                                   "KLOGH": 10 ** (10 * phi - 0.5 + 0.1 * rng.standard_normal(n))},
                   units={"PHIF": "V/V", "VSH": "V/V", "KLOGH": "mD"})


def _wm(**kw):
    return WellModel(["PHIF", "VSH"], "KLOGH", window=16, **kw,
                     model=SequenceRegressor(d_model=8, num_heads=2, epochs=3, batch_size=8, dtype="float64"))


def _rmse(y, p):
    ok = np.isfinite(y) & np.isfinite(p)
    return float(np.sqrt(np.mean((y[ok] - p[ok]) ** 2)))


def test_member_seeds_are_disjoint_blocks_of_the_seed_list():
    assert member_seed_blocks([42, 0, 1], 5) == {42: [42, 0, 1, 2, 3], 0: [4, 5, 6, 7, 8], 1: [9, 10, 11, 12, 13]}
    assert member_seed_blocks([42], 3) == {42: [42, 0, 1]}                  # train --ensemble 3's seeds
    assert member_seed_blocks([42, 0], 1) == {42: [42], 0: [0]}
    tasks = cv_tasks([_well("A", 1, 60), _well("B", 2, 60)], {}, [42, 0], members=2)
    assert [(t["fold"], t["seed"], t["members"]) for t in tasks] == \
        [(1, 42, [42, 0]), (1, 0, [1, 2]), (2, 42, [42, 0]), (2, 0, [1, 2])]


def test_member_mean_is_the_mean_of_well_models_fitted_alone():
    train, blind = [_well("15/9-A", 1), _well("15/9-B", 2)], _well("15/9-C", 3)
    seeds = [42, 0, 1]
    host = with_seed(_wm(tree_baselines=False), 42).fit(train)
    own = host.model_                                      # member 0: kept, not trained again
    mean = fit_member_mean(host, train, seeds)
    assert isinstance(mean, MemberMean) and mean.seeds == seeds and mean.members[0] is own
    alone = [with_seed(_wm(tree_baselines=False), s).fit(train) for s in seeds]
    x, positions = _first_window(host, blind)
    for member, single in zip(mean.members, alone):       # each member is the well model fitted alone with its seed
        np.testing.assert_array_equal(member.predict(x, positions), single.model_.predict(x, positions))
    expected = np.mean([m.predict_log(blind) for m in alone], axis=0)          # (3, n) -> (n,)
    host.model_ = mean
    got = host.predict_log(blind)
    assert np.isfinite(got).all() and np.ptp(expected) > 0.1
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert mean.num_parameters() == 3 * alone[1].model_.network_.num_parameters()
    assert host.parameter_counts()["transformer"] == mean.num_parameters()


def test_two_members_and_the_first_seed_checked():
    train, blind = [_well("15/9-A", 1), _well("15/9-B", 2)], _well("15/9-C", 3)
    host = with_seed(_wm(tree_baselines=False), 7).fit(train)
    pair = fit_member_mean(host, train, [7, 3])            # one member beside the host's: fitted alone
    second = with_seed(_wm(tree_baselines=False), 3).fit(train)
    x, positions = _first_window(host, blind)
    np.testing.assert_array_equal(pair.members[1].predict(x, positions), second.model_.predict(x, positions))
    with pytest.raises(InputError, match="first of at least 2 seeds"):
        fit_member_mean(host, train, [8, 3])               # the host's transformer drew from 7, not 8
    with pytest.raises(InputError, match="first of at least 2 seeds"):
        fit_member_mean(host, train, [7])


def _first_window(wm, log):
    x, _, pos, _ = next(iter(wm.windows(log, stride=8, with_target=False, pad_last=True)))
    return x, pos[0]


def test_a_fold_scores_the_members_mean_and_blends_it():
    wells = [_well("15/9-A", 1), _well("15/9-B", 2), _well("15/9-C", 3)]
    task = cv_tasks(wells, _wm().spec(), [42], members=3)[2]                 # hold out 15/9-C
    assert task["test"][0]["name"] == "15/9-C" and task["members"] == [42, 0, 1]
    result = run_fold(task)
    train, blind = wells[:2], wells[2]
    alone = [with_seed(_wm(), s).fit(train) for s in task["members"]]
    mean = np.mean([m.predict_log(blind) for m in alone], axis=0)
    boosting = alone[0].predict_all(blind, ["gradient boosting"])["gradient boosting"]
    y = np.log10(np.maximum(blind.curve("KLOGH"), 1e-3))
    scores = result["fold_metrics"]
    assert abs(scores["transformer"]["rmse"] - _rmse(y, mean)) <= 1e-9
    assert abs(scores["transformer/boosting blend"]["rmse"] - _rmse(y, 0.5 * mean + 0.5 * boosting)) <= 1e-9
    single = run_fold({**task, "members": [42]})["fold_metrics"]["transformer"]["rmse"]
    assert abs(single - _rmse(y, alone[0].predict_log(blind))) <= 1e-9 and abs(single - _rmse(y, mean)) > 1e-6
