"""Is an interval worth using: its width, its interval score, a quantile baseline, and a sharper calibration.

Coverage alone rewards width: an interval from -inf to +inf covers everything.  The
**interval score** of a central (1 - alpha) interval ``[l, u]`` at an observed ``y``
(Gneiting and Raftery, 2007, section 6.2)::

    S(l, u; y) = (u - l) + (2 / alpha) (l - y) 1{y < l} + (2 / alpha) (y - u) 1{y > u}

is the width plus a penalty for every miss, proportional to how far it missed; lower is better,
and it is proper: its expectation is smallest for the true P10 and P90 (alpha = 0.2).  Widths
and scores are in the model's units (decades of mD for a logged permeability).

Calibrations of an ensemble's interval (each split-conformal, fitted on validation values only;
:class:`~glassformer.wells.intervals.ConformalScale` holds them):

* ``normalised`` -- ``mean ± q sd``, q the conformal quantile of ``|y - mean| / sd``
  (Papadopoulos, Gammerman and Vovk, 2008): the width follows the members' spread;
* ``absolute`` -- ``mean ± q``, q the quantile of ``|y - mean|`` (Lei et al., 2018): one width;
* ``cqr`` -- conformalized quantile regression on the ensemble's own Gaussian P10/P90
  (Romano, Patterson and Candès, 2019): ``[P10 - q, P90 + q]``, q the quantile of
  ``max(P10 - y, y - P90)``;
* ``floored`` -- ``mean ± q (sd + b)``, q the quantile of ``|y - mean| / (sd + b)``, with ``b``
  the median spread over the training data: the spread still widens the interval where the
  members disagree, but a tiny spread no longer makes a near-zero width (the normalised
  score's failure when the members agree far more than they are accurate).

:func:`choose_calibration` keeps the one with the lowest interval score in a cross-conformal
check on the validation values (contiguous folds in depth order: calibrate on the others,
score the held-out fold), so the choice never looks at test data.

The **quantile baseline** (:func:`quantile_baseline`) is scikit-learn's
``HistGradientBoostingRegressor(loss="quantile")`` at 0.1, 0.5 and 0.9 on the same features as
the tree baselines, fitted on the training values and conformalized by CQR on the same
validation values as the ensemble.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from .._validation import as_float_array
from ..errors import InputError, ShapeError
from .intervals import NOMINAL, ConformalScale, interval_coverage

__all__ = ["CALIBRATIONS", "QUANTILE_BASELINE", "choose_calibration", "conformal_quantile", "interval_score",
           "interval_summary", "quantile_baseline", "summaries_by_group"]

#: The calibrations :func:`choose_calibration` compares, in the order tried (ties go to the first).
CALIBRATIONS = ("normalised", "absolute", "cqr", "floored")

#: Name of the quantile gradient boosting baseline in tables.
QUANTILE_BASELINE = "quantile gradient boosting (CQR)"


def _arrays(where, **named):
    arrs = {k: as_float_array(v, k, where, dtype=np.float64, allow_nan=True) for k, v in named.items()}
    shapes = {a.shape for a in arrs.values()}
    if len(shapes) != 1:
        raise ShapeError(f"{where}: " + ", ".join(f"{k} {a.shape}" for k, a in arrs.items()) + " must have one shape")
    return arrs.values()


def interval_score(y, lower, upper, alpha: float = 1 - NOMINAL) -> np.ndarray:
    """Interval score of the central ``(1 - alpha)`` interval ``[lower, upper]`` per value (Gneiting and Raftery, 2007).

    Parameters
    ----------
    y, lower, upper : arrays of one shape (model units; NaN gives NaN)
    alpha : float in (0, 1), default 0.2 (the P10-P90 interval)

    Returns
    -------
    array like ``y``: ``(u - l) + (2/alpha)(l - y) 1{y < l} + (2/alpha)(y - u) 1{y > u}``.

    Raises
    ------
    InputError
        ``alpha`` outside (0, 1).
    ShapeError
        The shapes differ.
    """
    if not 0 < alpha < 1:
        raise InputError(f"interval_score: alpha must lie in (0, 1), got {alpha!r}")
    y, lo, hi = _arrays("interval_score", y=y, lower=lower, upper=upper)
    below = np.where(y < lo, lo - y, 0.0)                      # (n,) how far under the lower bound
    above = np.where(y > hi, y - hi, 0.0)                      # (n,) how far over the upper bound
    score = (hi - lo) + (2.0 / alpha) * (below + above)
    return np.where(np.isfinite(y), score, np.nan)             # no observation: no score


def interval_summary(y, lower, upper, alpha: float = 1 - NOMINAL) -> dict:
    """Coverage, mean width and mean interval score where ``y`` and both bounds exist.

    Returns
    -------
    dict
        :func:`~glassformer.wells.intervals.interval_coverage`'s entries plus ``interval_score``
        (NaN when no value is usable).
    """
    out = interval_coverage(y, lower, upper)
    s = interval_score(y, lower, upper, alpha)
    ok = np.isfinite(s)
    out["interval_score"] = float(s[ok].mean()) if ok.any() else float("nan")
    return out


def conformal_quantile(scores, coverage: float = NOMINAL) -> float:
    """The ``ceil((n + 1) coverage)``-th smallest score (split-conformal; Lei et al., 2018).

    Raises
    ------
    InputError
        Too few scores for that rank (fewer than ``ceil(coverage / (1 - coverage))``).
    """
    s = np.sort(np.asarray(scores, dtype=np.float64)[np.isfinite(scores)])
    k = math.ceil((s.size + 1) * coverage)
    if k > s.size:
        raise InputError(f"{s.size} calibration value(s) are too few for {coverage:.0%} coverage "
                         f"(at least {math.ceil(coverage / (1 - coverage))} needed)")
    return float(s[k - 1])


def choose_calibration(y, mean, sd, *, floor: float, coverage: float = NOMINAL, folds: int = 5,
                       methods=CALIBRATIONS) -> tuple:
    """The calibration with the lowest cross-conformal interval score on validation values.

    Parameters
    ----------
    y, mean, sd : (n,) validation targets and the ensemble's mean and spread there, in depth
        order (NaN skipped).
    floor : the ``floored`` method's ``b`` (e.g. the median spread over the training data).
    folds : contiguous folds; each is scored by intervals calibrated on the others.

    Returns
    -------
    (name, scores)
        ``scores``: method -> mean interval score over the folds' values.

    Raises
    ------
    InputError
        Too few values for ``folds`` folds of a calibration each (see :func:`conformal_quantile`).
    """
    y, mean, sd = _arrays("choose_calibration", y=y, mean=mean, sd=sd)
    ok = np.isfinite(y) & np.isfinite(mean) & np.isfinite(sd)
    y, mean, sd = y[ok], mean[ok], sd[ok]
    parts = np.array_split(np.arange(y.size), folds)           # contiguous: neighbours stay together
    scores = {}
    for method in methods:
        total = 0.0
        for held in parts:
            rest = np.setdiff1d(np.arange(y.size), held)
            cal = ConformalScale(coverage, score=method, floor=floor).fit(y[rest], mean[rest], sd[rest])
            lo, hi = cal.interval(mean[held], sd[held])
            total += float(interval_score(y[held], lo, hi, 1 - coverage).sum())
        scores[method] = total / y.size
    return min(methods, key=lambda m: scores[m]), scores


def quantile_baseline(features, y, train, calibration, *, seed: int = 42, coverage: float = NOMINAL) -> dict:
    """Quantile gradient boosting at P10/P50/P90, conformalized by CQR (Romano et al., 2019).

    Parameters
    ----------
    features : (n_samples, n_features), NaN rows are not predicted.
    y : (n_samples,) target in model units, NaN where there is none.
    train, calibration : bool (n_samples,) -- the values it is fitted on and calibrated on.
    seed : the boosting's ``random_state``.

    Returns
    -------
    dict
        ``"P10", "P50", "P90"`` (calibrated, ``(n_samples,)``), ``"P10_raw", "P90_raw"`` (the
        boosting's own quantiles), ``"correction"`` (the CQR quantile ``q``, model units),
        ``"n_calibration"``.

    Notes
    -----
    ``HistGradientBoostingRegressor(loss="quantile", quantile=p)`` with scikit-learn's other
    defaults; quantile crossing is removed by sorting the three predictions per sample.
    """
    X = np.asarray(features, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    rows = np.isfinite(X).all(axis=1)                          # (n_samples,)
    fit = train & rows & np.isfinite(y)
    q = np.full((3, len(y)), np.nan)                           # (3, n_samples) P10, P50, P90
    for i, p in enumerate((0.5 - coverage / 2, 0.5, 0.5 + coverage / 2)):
        model = HistGradientBoostingRegressor(loss="quantile", quantile=p, random_state=seed)
        q[i, rows] = model.fit(X[fit], y[fit]).predict(X[rows])
    q[:, rows] = np.sort(q[:, rows], axis=0)                   # no crossing
    cal = calibration & rows & np.isfinite(y)
    correction = conformal_quantile(np.maximum(q[0, cal] - y[cal], y[cal] - q[2, cal]), coverage)
    return {"P10": q[0] - correction, "P50": q[1], "P90": q[2] + correction, "P10_raw": q[0], "P90_raw": q[2],
            "correction": correction, "n_calibration": int(cal.sum())}


def summaries_by_group(y, lower, upper, groups, alpha: float = 1 - NOMINAL) -> dict:
    """:func:`interval_summary` per group label (``groups``: (n,) labels, None or "" for no group)."""
    groups = np.asarray(groups, dtype=object)
    labels = [g for g in dict.fromkeys(groups.tolist()) if g not in (None, "")]
    y = np.asarray(y, dtype=np.float64)
    return {str(g): interval_summary(np.where(groups == g, y, np.nan), lower, upper, alpha) for g in labels}
