"""P10/P50/P90 from an ensemble's spread, their measured coverage, and split-conformal calibration.

A deep ensemble (Lakshminarayanan, Pritzel and Blundell, 2017) of K networks trained from
different seeds gives K predictions per depth.  Read as a Gaussian with the members' mean ``m``
and sample standard deviation ``s`` (ddof 1), the quantile of probability ``p`` is
``m + z_p * c * s`` with ``z_p`` the standard normal quantile (``z_0.9 = 1.2816``) and ``c`` a
scale factor: 1 before calibration.  P10 <= P50 <= P90 holds by construction (``s >= 0``), and
P50 is the ensemble mean.

Members trained on the same data agree far more than they are accurate: the spread measures
only how much the fit depends on the seed, so an uncalibrated P10-P90 interval covers much less
than 80 % of held-out values.  :class:`ConformalScale` fixes ``c`` on validation data by
split-conformal prediction with the normalised score ``|y - m| / s`` (Papadopoulos, Gammerman
and Vovk, 2008; Lei, G'Sell, Rinaldo, Tibshirani and Wasserman, 2018): ``c * z`` is the
``ceil((n + 1) * coverage)``-th smallest of the n validation scores.  When validation and test
values are exchangeable, the calibrated interval covers at least ``coverage`` of them on
average.  Neighbouring depths of one well are not exchangeable (they share beds), so the
guarantee is approximate there; :func:`interval_coverage` measures what it achieves.

All values are in the model's units (log10 mD for a logged permeability).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from .._validation import as_float_array
from ..errors import InputError, NotReadyError, ShapeError

__all__ = ["ConformalScale", "NOMINAL", "coverage_curve", "ensemble_quantiles", "interval_coverage",
           "normal_quantile"]

#: Nominal coverage of the P10-P90 interval.
NOMINAL = 0.8

#: Nonconformity scores :class:`ConformalScale` knows, with the words its description uses.
SCORES = {"normalised": "normalised score |y - mean| / sd", "absolute": "absolute score |y - mean|",
          "cqr": "CQR score on the ensemble's Gaussian quantiles, max(P10 - y, y - P90)",
          "floored": "normalised score with a floor, |y - mean| / (sd + floor)"}

#: Smallest spread used as a divisor (the members may agree exactly where the inputs are constant).
_TINY = 1e-12


def normal_quantile(p) -> np.ndarray:
    """Standard normal quantile ``z_p`` (``normal_quantile(0.9) = 1.2816``), elementwise for p in (0, 1)."""
    p = np.asarray(p, dtype=np.float64)
    if ((p <= 0) | (p >= 1)).any():
        raise InputError(f"probabilities must lie strictly between 0 and 1, got {p.tolist()}")
    return norm.ppf(p)


def _members(predictions, where: str) -> np.ndarray:
    arr = as_float_array(predictions, "predictions", where, dtype=np.float64, allow_nan=True)
    if arr.ndim != 2 or arr.shape[0] < 2:
        raise ShapeError(f"{where}: predictions must be (n_members >= 2, n_depths), got shape {arr.shape}")
    return arr


def ensemble_quantiles(predictions, probs=(0.1, 0.5, 0.9), scale: float = 1.0) -> dict:
    """Gaussian quantiles of an ensemble's predictions per depth.

    Parameters
    ----------
    predictions : array (n_members, n_depths)
        One row per member, NaN where a member has no prediction.
    probs : sequence of float in (0, 1)
        Probabilities; the keys of the result are ``"P10"`` etc. (``round(100 p)``).
    scale : float > 0
        Factor ``c`` on the spread (1: uncalibrated; :attr:`ConformalScale.scale_` after calibration).

    Returns
    -------
    dict
        ``{"mean": (n,), "sd": (n,), "P10": (n,), ...}``; NaN wherever a member is NaN.

    Raises
    ------
    ShapeError
        Fewer than two members (no spread).
    InputError
        A probability outside (0, 1) or a scale that is not a finite positive number.
    """
    arr = _members(predictions, "ensemble_quantiles")
    _check_scale(scale)
    mean = arr.mean(axis=0)                                    # (n_depths,)
    sd = arr.std(axis=0, ddof=1)                               # (n_depths,)
    out = {"mean": mean, "sd": sd}
    for p, z in zip(probs, np.atleast_1d(normal_quantile(list(probs)))):
        out[f"P{round(100 * p)}"] = mean + z * scale * sd
    return out


def _check_scale(scale) -> float:
    if not (isinstance(scale, (int, float, np.floating)) and math.isfinite(scale) and scale > 0):
        raise InputError(f"scale must be a finite number > 0, got {scale!r}")
    return float(scale)


def interval_coverage(y, lower, upper) -> dict:
    """Share of observed values inside ``[lower, upper]``, over the depths where all three exist.

    Parameters
    ----------
    y, lower, upper : arrays of one shape
        Observed values and interval bounds (NaN: no value there, skipped).

    Returns
    -------
    dict
        ``{"coverage": float, "n": int, "below": int, "above": int, "mean_width": float}``;
        ``coverage`` is NaN when ``n`` is 0.  Its binomial standard error is
        ``sqrt(coverage (1 - coverage) / n)`` for independent values.

    Raises
    ------
    ShapeError
        The shapes differ.
    """
    where = "interval_coverage"
    y, lo, hi = (as_float_array(v, name, where, dtype=np.float64, allow_nan=True)
                 for v, name in ((y, "y"), (lower, "lower"), (upper, "upper")))
    if not (y.shape == lo.shape == hi.shape):
        raise ShapeError(f"{where}: y {y.shape}, lower {lo.shape} and upper {hi.shape} must have one shape")
    ok = np.isfinite(y) & np.isfinite(lo) & np.isfinite(hi)
    n = int(ok.sum())
    below, above = int((y[ok] < lo[ok]).sum()), int((y[ok] > hi[ok]).sum())
    return {"coverage": (n - below - above) / n if n else float("nan"), "n": n, "below": below, "above": above,
            "mean_width": float(np.mean(hi[ok] - lo[ok])) if n else float("nan")}


def coverage_curve(y, mean, sd, levels=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9), scale: float = 1.0) -> dict:
    """Coverage of the central Gaussian intervals ``mean ± z_((1+L)/2) * scale * sd`` at each nominal level L.

    Returns ``{"nominal": [...], "empirical": [...], "n": int}``; a calibrated ensemble lies on
    the diagonal.
    """
    _check_scale(scale)
    levels = [float(v) for v in levels]
    y, mean, sd = (np.asarray(v, dtype=np.float64) for v in (y, mean, sd))
    empirical, n = [], 0
    for level, z in zip(levels, np.atleast_1d(normal_quantile([(1 + v) / 2 for v in levels]))):
        c = interval_coverage(y, mean - z * scale * sd, mean + z * scale * sd)
        empirical.append(c["coverage"])
        n = c["n"]
    return {"nominal": levels, "empirical": empirical, "n": n}


class ConformalScale:
    """Split-conformal scale factor for the ensemble interval ``mean ± z * scale_ * sd``.

    Parameters
    ----------
    coverage : float in (0, 1), default 0.8
        Target coverage of the central interval (0.8: P10-P90).
    score : {"normalised", "absolute", "cqr", "floored"}, default "normalised"
        The nonconformity score (see :mod:`glassformer.wells.uncertainty`): ``|y - mean| / sd``,
        ``|y - mean|``, ``max(mean - z sd - y, y - mean - z sd)`` or ``|y - mean| / (sd + floor)``.
    floor : float >= 0, default 0
        The ``floored`` score's addition to the spread (model units).

    Attributes
    ----------
    scale_ : float
        ``quantile_ / z``: with the normalised score, the factor on the spread (the calibrated
        P10/P90 are ``mean ∓ z_0.9 * scale_ * sd``); :meth:`interval` holds every score's bounds.
    n_ : int
        Calibration values used.
    quantile_ : float
        The ``ceil((n + 1) * coverage)``-th smallest normalised score ``|y - mean| / sd``.

    Notes
    -----
    Split-conformal prediction with a normalised nonconformity score (Papadopoulos, Gammerman and
    Vovk, 2008; Lei et al., 2018, section 5.2): the interval's half-width is the score quantile
    times the local spread, so depths where the members disagree get wider intervals.  Spreads
    below 1e-12 are raised to it before dividing.

    Raises
    ------
    InputError
        ``coverage`` outside (0, 1); fewer calibration values than ``ceil(coverage / (1 - coverage))``
        (4 for 80 %), since the finite-sample quantile is then infinite.
    """

    def __init__(self, coverage: float = NOMINAL, score: str = "normalised", floor: float = 0.0):
        self.coverage = coverage
        self.score = score
        self.floor = floor

    def _scores(self, y, mean, sd) -> np.ndarray:
        """Nonconformity scores of the method ``score`` (see :mod:`glassformer.wells.uncertainty`)."""
        z = float(normal_quantile(0.5 + self.coverage / 2))
        if self.score == "normalised":
            return np.abs(y - mean) / np.maximum(sd, _TINY)
        if self.score == "absolute":
            return np.abs(y - mean)
        if self.score == "cqr":
            return np.maximum(mean - z * sd - y, y - mean - z * sd)
        return np.abs(y - mean) / np.maximum(sd + self.floor, _TINY)     # floored

    def fit(self, y, mean, sd) -> "ConformalScale":
        """Fit on calibration values ``y`` and the ensemble's ``mean`` and ``sd`` there (any shape, NaN skipped)."""
        where = "ConformalScale.fit"
        if not (isinstance(self.coverage, (int, float)) and 0 < self.coverage < 1):
            raise InputError(f"{where}: coverage must lie in (0, 1), got {self.coverage!r}")
        y, mean, sd = (as_float_array(v, n, where, dtype=np.float64, allow_nan=True)
                       for v, n in ((y, "y"), (mean, "mean"), (sd, "sd")))
        if not (y.shape == mean.shape == sd.shape):
            raise ShapeError(f"{where}: y {y.shape}, mean {mean.shape} and sd {sd.shape} must have one shape")
        if self.score not in SCORES:
            raise InputError(f"{where}: score must be one of {', '.join(SCORES)}, got {self.score!r}")
        if not (math.isfinite(float(self.floor)) and self.floor >= 0):
            raise InputError(f"{where}: floor must be a finite number >= 0, got {self.floor!r}")
        ok = np.isfinite(y) & np.isfinite(mean) & np.isfinite(sd)
        scores = np.sort(self._scores(y[ok], mean[ok], sd[ok]))   # (n,)
        n = scores.size
        k = math.ceil((n + 1) * self.coverage)               # rank of the finite-sample quantile
        if k > n:
            raise InputError(f"{where}: {n} calibration value(s) are too few for {self.coverage:.0%} coverage "
                             f"(at least {math.ceil(self.coverage / (1 - self.coverage))} needed)")
        self.quantile_ = float(scores[k - 1])
        z = float(normal_quantile(0.5 + self.coverage / 2))
        self.scale_ = max(self.quantile_ / z, _TINY)
        self.n_ = int(n)
        return self

    def interval(self, mean, sd) -> tuple:
        """``(lower, upper)`` of the calibrated interval, arrays like ``mean``."""
        if not hasattr(self, "scale_"):
            raise NotReadyError("ConformalScale.interval: call fit() first")
        mean, sd = np.asarray(mean, dtype=np.float64), np.asarray(sd, dtype=np.float64)
        z = float(normal_quantile(0.5 + self.coverage / 2))
        half = {"normalised": lambda: self.quantile_ * np.maximum(sd, _TINY),
                "absolute": lambda: np.full_like(sd, self.quantile_),
                "cqr": lambda: z * sd + self.quantile_,
                "floored": lambda: self.quantile_ * np.maximum(sd + self.floor, _TINY)}[self.score]()
        return mean - half, mean + half

    def to_dict(self) -> dict:
        """``{"method", "coverage", "scale", "quantile", "n"}`` (JSON-able)."""
        return {"method": f"split-conformal, {SCORES[self.score]}", "score": self.score, "floor": float(self.floor),
                "coverage": float(self.coverage), "scale": getattr(self, "scale_", None),
                "quantile": getattr(self, "quantile_", None), "n": getattr(self, "n_", None)}

    @classmethod
    def from_dict(cls, d: dict) -> "ConformalScale":
        out = cls(d["coverage"], d.get("score", "normalised"), float(d.get("floor", 0.0)))
        out.scale_, out.quantile_, out.n_ = float(d["scale"]), float(d["quantile"]), int(d["n"])
        return out

    def __repr__(self) -> str:
        fitted = f", scale_={self.scale_:.4g}, n_={self.n_}" if hasattr(self, "scale_") else ""
        return f"ConformalScale(coverage={self.coverage}{fitted})"
