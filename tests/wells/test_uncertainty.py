"""Interval width and score on hand-computed cases, the conformal scores, the choice between them, and the
conformalized quantile gradient boosting baseline recomputed independently (and by MAPIE where installed)."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import InputError, ShapeError
from glassformer.wells import ConformalScale, DeepEnsemble
from glassformer.wells.uncertainty import (choose_calibration, conformal_quantile, interval_score, interval_summary,
                                           quantile_baseline, summaries_by_group)

Z90 = 1.2815515655446004


def test_interval_score_and_width_by_hand():
    # alpha 0.2: a miss costs 10 x its distance.  Rows: inside (width 2); 1 above (2 + 10); 1 below
    # (1 + 10); 4 above (1 + 40); no observation (skipped).
    y = np.array([0.0, 2.0, -1.0, 5.0, np.nan])
    lo = np.array([-1.0, -1.0, 0.0, 0.0, 0.0])
    hi = np.array([1.0, 1.0, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(interval_score(y, lo, hi, 0.2), [2.0, 12.0, 11.0, 41.0, np.nan])
    s = interval_summary(y, lo, hi)
    assert s["n"] == 4 and s["coverage"] == 0.25 and (s["below"], s["above"]) == (1, 2)
    assert s["mean_width"] == pytest.approx(1.5) and s["interval_score"] == pytest.approx(66 / 4)
    # alpha 0.5 halves nothing but the penalty: 2/0.5 = 4 per unit missed
    np.testing.assert_allclose(interval_score(y[:4], lo[:4], hi[:4], 0.5), [2.0, 6.0, 5.0, 17.0])


def test_interval_score_refuses_bad_alpha_and_shapes():
    with pytest.raises(InputError, match="alpha"):
        interval_score([0.0], [0.0], [1.0], 1.0)
    with pytest.raises(ShapeError):
        interval_score([0.0, 1.0], [0.0], [1.0])


def test_summaries_by_group_split_the_values():
    y = np.array([0.0, 3.0, 0.5, np.nan])
    out = summaries_by_group(y, np.zeros(4), np.ones(4), ["a", "a", "b", None])
    assert list(out) == ["a", "b"]
    assert (out["a"]["n"], out["a"]["coverage"], out["b"]["coverage"]) == (2, 0.5, 1.0)
    assert out["a"]["interval_score"] == pytest.approx((1 + 1 + 10 * 2) / 2)


def test_conformal_quantile_rank_by_hand():
    assert conformal_quantile(np.arange(1.0, 10.0), 0.8) == 8.0           # ceil(10 * 0.8) = 8th of 9
    with pytest.raises(InputError, match="too few"):
        conformal_quantile([1.0, 2.0, 3.0], 0.8)


@pytest.mark.parametrize("score, half", [
    ("normalised", lambda q, sd: q * sd), ("absolute", lambda q, sd: q + 0 * sd),
    ("cqr", lambda q, sd: Z90 * sd + q), ("floored", lambda q, sd: q * (sd + 0.5))])
def test_each_score_by_hand(score, half):
    y = np.array([0.0, 1.0, -2.0, 4.0, 0.5, -0.5, 3.0, 1.5, -1.0])
    mean = np.zeros(9)
    sd = np.array([1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0])
    scores = {"normalised": np.abs(y) / sd, "absolute": np.abs(y), "cqr": np.abs(y) - Z90 * sd,
              "floored": np.abs(y) / (sd + 0.5)}[score]
    cal = ConformalScale(0.8, score, floor=0.5).fit(y, mean, sd)
    assert cal.quantile_ == pytest.approx(np.sort(scores)[7])               # the 8th of 9
    lo, hi = cal.interval(mean, sd)
    np.testing.assert_allclose(hi, half(cal.quantile_, sd), rtol=1e-12)
    np.testing.assert_allclose(lo, -hi, rtol=1e-12)
    back = ConformalScale.from_dict(cal.to_dict())
    np.testing.assert_allclose(back.interval(mean, sd), (lo, hi))
    with pytest.raises(InputError, match="score must be one of"):
        ConformalScale(0.8, "nope").fit(y, mean, sd)


def test_choose_calibration_follows_the_evidence():
    rng = np.random.default_rng(0)
    n = 400
    sd = rng.uniform(0.01, 1.0, n)
    mean = np.zeros(n)
    # errors proportional to the spread: a score that follows the spread is the sharp one (CQR on
    # Gaussian quantiles that are already right needs a correction near 0, so it ties with normalised)
    chosen, scores = choose_calibration(sd * rng.standard_normal(n), mean, sd, floor=float(np.median(sd)))
    assert chosen in ("normalised", "cqr") and scores["normalised"] < 0.85 * scores["absolute"]
    # errors of one size whatever the spread: dividing by a tiny spread makes huge intervals
    chosen, scores = choose_calibration(rng.standard_normal(n), mean, sd, floor=float(np.median(sd)))
    assert chosen in ("absolute", "cqr", "floored") and scores["normalised"] > 1.2 * scores["absolute"]


class _Member:
    """Stands in for a fitted WellModel: predict_log returns fixed values."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)

    def predict_log(self, log):
        return self.values


def test_an_ensemble_calibrated_by_another_score_predicts_its_bounds():
    ens = DeepEnsemble([_Member([0.0, 1.0, 2.0]), _Member([2.0, 1.0, 4.0])])
    ens.calibration = ConformalScale(0.8, "absolute").fit(np.arange(9.0), np.zeros(9), np.ones(9))   # q = 7
    q = ens.predict_quantiles(None)
    np.testing.assert_allclose(q["P10"], [-6.0, -6.0, -4.0])
    np.testing.assert_allclose(q["P90"], [8.0, 8.0, 10.0])
    np.testing.assert_allclose(q["P50"], [1.0, 1.0, 3.0])
    raw = ens.predict_quantiles(None, calibrated=False)                     # the members' own spread
    np.testing.assert_allclose(raw["P90"] - raw["mean"], Z90 * np.sqrt([2.0, 0.0, 2.0]), rtol=1e-12)


def _regression(seed=1, n=600):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 2))
    y = 2 * X[:, 0] + (0.2 + X[:, 1]) * rng.standard_normal(n)            # noise growing with the 2nd feature
    part = np.arange(n) % 3
    return X, y, part == 0, part == 1, part == 2


def test_quantile_baseline_is_cqr_on_quantile_boosting_recomputed_independently():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y, train, cal, test = _regression()
    out = quantile_baseline(X, y, train, cal, seed=3)
    q = {p: HistGradientBoostingRegressor(loss="quantile", quantile=p, random_state=3).fit(X[train], y[train]).predict(X)
         for p in (0.1, 0.5, 0.9)}
    lo, mid, hi = np.sort(np.stack([q[0.1], q[0.5], q[0.9]]), axis=0)
    scores = np.sort(np.maximum(lo[cal] - y[cal], y[cal] - hi[cal]))
    k = int(np.ceil((cal.sum() + 1) * 0.8))
    assert out["correction"] == pytest.approx(scores[k - 1])
    np.testing.assert_allclose(out["P10"], lo - scores[k - 1])
    np.testing.assert_allclose(out["P90"], hi + scores[k - 1])
    np.testing.assert_allclose(out["P50"], mid)
    covered = interval_summary(y[test], out["P10"][test], out["P90"][test])["coverage"]
    assert 0.74 <= covered <= 0.86                                         # exchangeable data: near 80 %


def test_quantile_baseline_agrees_with_mapie():
    mapie = pytest.importorskip("mapie.regression")
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(2)                                         # one feature: no quantile crossing,
    X = rng.uniform(0, 1, (600, 1))                                        # which MAPIE would not sort away
    y = 4 * X[:, 0] + (1 + X[:, 0]) * rng.standard_normal(600)
    train, cal, test = (np.arange(600) % 3 == k for k in range(3))
    out = quantile_baseline(X, y, train, cal, seed=0)
    models = [HistGradientBoostingRegressor(loss="quantile", quantile=p, random_state=0).fit(X[train], y[train])
              for p in (0.1, 0.9, 0.5)]
    assert (models[0].predict(X) <= models[2].predict(X)).all() and (models[2].predict(X) <= models[1].predict(X)).all()
    cqr = mapie.ConformalizedQuantileRegressor(models, confidence_level=0.8, prefit=True).conformalize(X[cal], y[cal])
    _, bounds = cqr.predict_interval(X[test], symmetric_correction=True)    # (n_test, 2, 1); one q both sides
    np.testing.assert_allclose(out["P10"][test], bounds[:, 0, 0], atol=1e-9)
    np.testing.assert_allclose(out["P90"][test], bounds[:, 1, 0], atol=1e-9)
