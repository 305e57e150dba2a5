"""The tree-ensemble baselines: depth-context features computed by hand, fits that skip gaps, fixed seeds."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import InputError, NotReadyError
from glassformer.wells import TREE_BASELINE_NAMES, TreeBaseline, rolling_context
from glassformer.wells.tree_baselines import ENSEMBLE_SETTINGS, tree_baselines


def test_context_features_by_hand_never_cross_a_gap():
    x = np.array([1.0, 2.0, 4.0, np.nan, 10.0, 20.0])
    F = rolling_context(x[:, None], 3)
    assert F.shape == (6, 3)
    np.testing.assert_array_equal(F[:, 0][[0, 1, 2, 4, 5]], x[[0, 1, 2, 4, 5]])
    # centred windows of 3, cut at the ends of each gap-free run (1, 2, 4) and (10, 20)
    np.testing.assert_allclose(F[[0, 1, 2, 4, 5], 1], [1.5, 7 / 3, 3.0, 15.0, 15.0])
    sd = [np.std([1, 2]), np.std([1, 2, 4]), np.std([2, 4]), np.std([10, 20]), np.std([10, 20])]
    np.testing.assert_allclose(F[[0, 1, 2, 4, 5], 2], sd)
    assert np.isnan(F[3]).all()                        # the gap row: no features, no prediction


def test_context_features_of_several_inputs_and_bad_arguments():
    X = np.column_stack([np.arange(5.0), 10 * np.arange(5.0)])
    F = rolling_context(X, 5)
    assert F.shape == (5, 6)
    np.testing.assert_allclose(F[2, 2:4], [2.0, 20.0])             # the full window's means
    np.testing.assert_allclose(F[2, 4:], [np.std(np.arange(5.0)), np.std(10 * np.arange(5.0))])
    with pytest.raises(InputError, match="window"):
        rolling_context(X, 0)
    with pytest.raises(InputError, match=r"\(n_samples, n_inputs\)"):
        rolling_context(np.arange(4.0), 3)


def _well(seed, n=300):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    y = np.where(X[:, 0] > 0.5, 2.0, -1.0) + 0.5 * X[:, 1]
    return X, y


def test_tree_baselines_learn_a_step_and_skip_missing_rows():
    X, y = _well(0)
    X[5, 0], y[7] = np.nan, np.nan
    for ensemble in ENSEMBLE_SETTINGS:
        tb = TreeBaseline(ensemble, random_state=0).fit([(X, y)])
        assert tb.n_ == len(y) - 2
        Xt, yt = _well(1)
        pred = tb.predict(Xt)
        assert np.sqrt(np.mean((pred - yt) ** 2)) < 0.15, ensemble
        Xt[3, 1] = np.nan
        assert np.isnan(tb.predict(Xt)[3]) and np.isfinite(tb.predict(Xt)[[2, 4]]).all()
        assert isinstance(tb.num_leaves(), int) and tb.num_leaves() > 10


def test_seeds_fix_the_result_and_context_adds_features():
    X, y = _well(2)
    a = TreeBaseline("random forest", 9, random_state=3).fit([(X, y)])
    b = TreeBaseline("random forest", 9, random_state=3).fit([(X, y)])
    c = TreeBaseline("random forest", 9, random_state=4).fit([(X, y)])
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert not np.array_equal(a.predict(X), c.predict(X))
    assert a.estimator_.n_features_in_ == 6 and a.name == "random forest + context"
    assert list(tree_baselines(16)) == list(TREE_BASELINE_NAMES)
    with pytest.raises(NotReadyError):
        TreeBaseline().predict(X)
    with pytest.raises(InputError, match="no training sample"):
        TreeBaseline().fit([(X, np.full(len(y), np.nan))])
    with pytest.raises(InputError, match="ensemble must be one of"):
        TreeBaseline("svm").fit([(X, y)])


def test_the_settings_are_written_as_the_scikit_learn_calls():
    from glassformer.wells.tree_baselines import ensemble_settings_text

    text = ensemble_settings_text()
    assert text["random forest"] == ("RandomForestRegressor(n_estimators=100, min_samples_leaf=5, "
                                     "max_features=0.3333333333333333)")
    assert text["gradient boosting"].startswith("HistGradientBoostingRegressor(max_iter=100, learning_rate=0.1,")
