"""Tree-ensemble baselines on depth-context features: the regressors practitioners use today.

Each depth sample becomes one row of features: the input logs at that depth and at the
``context`` samples above and below it (so a tree sees the neighbourhood a window gives the
transformer), NaN beyond the ends of the log or where a log is missing.  scikit-learn's
random forest (Breiman, 2001) and histogram gradient boosting (Friedman, 2001; LightGBM's
binning, Ke et al., 2017) both accept NaN features.  Their settings are fixed here, not tuned on
the data: 300 trees with at least 3 samples per leaf; 300 boosting iterations of learning rate
0.05 with at least 10 samples per leaf.  Both run on one thread: on trees this small, OpenMP's
threads cost more than they give (20 s instead of 0.8 s on a busy two-core machine).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from threadpoolctl import threadpool_limits

__all__ = ["CONTEXT", "context_features", "fit_tree_baselines", "predict_tree_baselines", "TREE_NAMES"]

#: Samples on either side of a depth whose inputs are its features (0.6 m at a half-foot step).
CONTEXT = 4

TREE_NAMES = ("random forest", "gradient boosting")


def context_features(log, inputs, context: int = CONTEXT) -> np.ndarray:
    """Inputs at each depth and its ``context`` neighbours either side: ``(n_samples, n_inputs * (2 context + 1))``.

    Column ``j * n_inputs + i`` holds input ``i`` at offset ``j - context`` samples (NaN off the log).
    """
    X = log.matrix(list(inputs)).astype(np.float64)                       # (n, n_inputs)
    n = X.shape[0]
    cols = []
    for offset in range(-context, context + 1):
        shifted = np.full_like(X, np.nan)                                  # (n, n_inputs)
        src = slice(max(0, offset), n + min(0, offset))
        dst = slice(max(0, -offset), n - max(0, offset))
        shifted[dst] = X[src]
        cols.append(shifted)
    return np.concatenate(cols, axis=1)                                    # (n, n_inputs * (2c + 1))


def _regressors(seed: int) -> dict:
    return {TREE_NAMES[0]: RandomForestRegressor(n_estimators=300, min_samples_leaf=3, random_state=seed, n_jobs=1),
            TREE_NAMES[1]: HistGradientBoostingRegressor(max_iter=300, learning_rate=0.05, min_samples_leaf=10,
                                                         random_state=seed)}


def fit_tree_baselines(features: np.ndarray, y: np.ndarray, seed: int = 42) -> dict:
    """Fit both tree ensembles on the rows with a target and a complete centre sample.

    Parameters
    ----------
    features : (n_samples, n_features) from :func:`context_features`
    y : (n_samples,) target in model units; NaN rows are left out.

    Returns
    -------
    dict name -> fitted regressor (:data:`TREE_NAMES`), and ``"seconds"`` -> dict of fit times.
    """
    ok = np.isfinite(y) & np.isfinite(features).any(axis=1)
    fitted, seconds = {}, {}
    for name, reg in _regressors(seed).items():
        t0 = time.perf_counter()
        with threadpool_limits(1):          # OpenMP threads on a few small trees cost more than they give
            fitted[name] = reg.fit(features[ok], y[ok])
        seconds[name] = time.perf_counter() - t0
    return {"models": fitted, "seconds": seconds}


def predict_tree_baselines(fitted: dict, features: np.ndarray, valid: np.ndarray) -> dict:
    """Each tree ensemble's prediction per sample, ``(n_samples,)``, NaN where ``valid`` is False."""
    out = {}
    for name, reg in fitted["models"].items():
        pred = np.full(features.shape[0], np.nan)
        if valid.any():
            with threadpool_limits(1):
                pred[valid] = reg.predict(features[valid])
        out[name] = pred
    return out
