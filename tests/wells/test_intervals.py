"""P10/P50/P90 from an ensemble, coverage, and split-conformal calibration, on cases with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from glassformer.errors import InputError, ShapeError
from glassformer.wells import ConformalScale, coverage_curve, ensemble_quantiles, interval_coverage

Z90 = 1.2815515655446004          # standard normal quantile of 0.9 (tables; scipy agrees to 1e-16)


def _inside_normal(half_width: float) -> float:
    """P(|Z| <= half_width) for a standard normal Z, from the error function."""
    return math.erf(half_width / math.sqrt(2.0))


def test_quantiles_of_two_members_by_hand():
    preds = np.array([[0.0, 1.0, 5.0],
                      [2.0, 3.0, 5.0]])
    q = ensemble_quantiles(preds)
    sd = math.sqrt(2.0)                                    # sample sd (ddof 1) of {0, 2}
    np.testing.assert_allclose(q["mean"], [1.0, 2.0, 5.0])
    np.testing.assert_allclose(q["sd"], [sd, sd, 0.0])
    np.testing.assert_allclose(q["P10"], [1 - Z90 * sd, 2 - Z90 * sd, 5.0], rtol=1e-12)
    np.testing.assert_allclose(q["P90"], [1 + Z90 * sd, 2 + Z90 * sd, 5.0], rtol=1e-12)
    np.testing.assert_allclose(q["P50"], q["mean"], atol=1e-15)
    wide = ensemble_quantiles(preds, scale=3.0)
    np.testing.assert_allclose(wide["P90"] - wide["P50"], 3 * (q["P90"] - q["P50"]), rtol=1e-12)


def test_quantiles_are_ordered_everywhere_and_nan_where_a_member_is():
    rng = np.random.default_rng(0)
    preds = rng.normal(size=(5, 1000)) * rng.uniform(0, 3, size=1000)
    preds[2, 7] = np.nan
    q = ensemble_quantiles(preds, scale=2.5)
    ok = np.isfinite(q["P50"])
    assert ok.sum() == 999 and not ok[7]
    assert (q["P10"][ok] <= q["P50"][ok]).all() and (q["P50"][ok] <= q["P90"][ok]).all()


def test_quantiles_refuse_one_member_and_bad_scale():
    with pytest.raises(ShapeError, match="n_members >= 2"):
        ensemble_quantiles(np.zeros((1, 4)))
    with pytest.raises(InputError, match="scale"):
        ensemble_quantiles(np.zeros((2, 4)), scale=0.0)


def test_interval_coverage_by_hand():
    c = interval_coverage([0.0, 1.0, 2.0, 3.0, np.nan], [0.5, 0, 0, 0, 0], [1, 1, 1, 1, 1])
    assert (c["n"], c["below"], c["above"]) == (4, 1, 2)
    assert c["coverage"] == 0.25
    assert c["mean_width"] == pytest.approx((0.5 + 1 + 1 + 1) / 4)


def test_coverage_of_gaussian_noise_is_the_normal_probability():
    """y ~ N(0, 1) around a mean of 0: P10-P90 with sd 1 covers 80 %; with sd 0.5 it covers
    P(|Z| <= 0.5 * 1.2816) = 2 Phi(0.6408) - 1 = 47.8 % (Phi(0.6408) = 0.7392 from tables)."""
    rng = np.random.default_rng(1)
    n = 200_000
    y = rng.standard_normal(n)
    zero, tol = np.zeros(n), 4 * math.sqrt(0.25 / n)                   # 4 binomial standard errors
    for sd, expected in ((1.0, 0.8), (0.5, _inside_normal(0.5 * Z90))):
        q = ensemble_quantiles(np.stack([zero - sd / math.sqrt(2) * 1, zero + sd / math.sqrt(2)]))
        assert q["sd"][0] == pytest.approx(sd)
        got = interval_coverage(y, q["P10"], q["P90"])["coverage"]
        assert abs(got - expected) < tol, (sd, got, expected)
    assert _inside_normal(0.5 * Z90) == pytest.approx(2 * 0.7392 - 1, abs=2e-4)


def test_coverage_curve_lies_on_the_diagonal_for_a_calibrated_gaussian():
    rng = np.random.default_rng(2)
    n = 100_000
    sd = rng.uniform(0.2, 2.0, n)
    y = 3.0 + sd * rng.standard_normal(n)
    curve = coverage_curve(y, np.full(n, 3.0), sd)
    np.testing.assert_allclose(curve["empirical"], curve["nominal"], atol=4 * math.sqrt(0.25 / n))
    assert curve["n"] == n


def test_conformal_scale_recovers_an_underestimated_spread():
    """The ensemble's sd is 3 times too small: calibration finds a scale near 3 and the calibrated
    interval covers 80 % of fresh data (before: P(|Z| <= 1.2816 / 3) = 33.1 %)."""
    rng = np.random.default_rng(3)
    sd_cal = rng.uniform(0.5, 1.5, 5000)                               # heteroscedastic: each depth its own spread
    cal = ConformalScale(0.8).fit(3 * sd_cal * rng.standard_normal(5000), np.zeros(5000), sd_cal)
    assert cal.scale_ == pytest.approx(3.0, rel=0.05)
    n = 100_000
    sd = rng.uniform(0.5, 1.5, n)
    y = 3 * sd * rng.standard_normal(n)
    tol = 4 * math.sqrt(0.25 / n)
    before = interval_coverage(y, -Z90 * sd, Z90 * sd)["coverage"]
    assert abs(before - _inside_normal(Z90 / 3)) < tol
    lo, hi = cal.interval(np.zeros(n), sd)
    after = interval_coverage(y, lo, hi)["coverage"]
    # the scale is itself estimated from 5000 values: allow its sampling error as well (~1 %)
    assert abs(after - 0.8) < 0.02, after
    q = ensemble_quantiles(np.stack([-sd / math.sqrt(2), sd / math.sqrt(2)]), scale=cal.scale_)
    np.testing.assert_allclose(q["P90"], hi, rtol=1e-12)


def test_conformal_quantile_is_the_finite_sample_rank_by_hand():
    """Scores 1..9 (n = 9), 80 %: rank ceil(10 * 0.8) = 8, so the quantile is 8."""
    cal = ConformalScale(0.8).fit(np.arange(1.0, 10.0), np.zeros(9), np.ones(9))
    assert cal.quantile_ == 8.0 and cal.n_ == 9
    assert cal.scale_ == pytest.approx(8.0 / Z90)


def test_conformal_coverage_averages_rank_over_n_plus_one():
    """For exchangeable scores the probability that a new value falls inside is exactly
    ceil((n + 1) 0.8) / (n + 1): with n = 20 calibration values, 17 / 21 = 0.8095 (the naive
    rank ceil(n 0.8) = 16 would give 16 / 21 = 0.762)."""
    rng = np.random.default_rng(4)
    trials, n = 20_000, 20
    hits = 0
    for _ in range(trials):
        y = rng.standard_normal(n + 1)
        cal = ConformalScale(0.8).fit(y[:n], np.zeros(n), np.ones(n))
        lo, hi = cal.interval(np.zeros(1), np.ones(1))
        hits += bool(lo[0] <= y[n] <= hi[0])
    assert abs(hits / trials - 17 / 21) < 4 * math.sqrt(0.81 * 0.19 / trials)


def test_conformal_refuses_too_few_values_and_bad_coverage():
    with pytest.raises(InputError, match="too few"):
        ConformalScale(0.8).fit([1.0, 2.0, 3.0], [0.0] * 3, [1.0] * 3)
    with pytest.raises(InputError, match="coverage"):
        ConformalScale(1.5).fit(np.arange(10.0), np.zeros(10), np.ones(10))
    with pytest.raises(ShapeError):
        ConformalScale().fit(np.arange(10.0), np.zeros(9), np.ones(10))


def test_conformal_round_trips_through_its_dict():
    cal = ConformalScale(0.8).fit(np.arange(1.0, 10.0), np.zeros(9), np.ones(9))
    back = ConformalScale.from_dict(cal.to_dict())
    assert (back.scale_, back.quantile_, back.n_, back.coverage) == (cal.scale_, cal.quantile_, cal.n_, 0.8)
