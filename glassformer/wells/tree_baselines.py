"""The tree ensembles practitioners use on well logs today, as baselines on the same inputs.

Random forests (Breiman, 2001) and histogram gradient boosting (Friedman, 2001; scikit-learn's
``HistGradientBoostingRegressor``, after LightGBM, Ke et al., 2017) are the usual per-depth
regressors in log-to-log prediction (gradient boosting led the FORCE 2020 lithology competition).
Each is fitted twice:

* on the input logs at one depth (what the porosity-permeability transform sees, plus the
  other inputs);
* with depth context: each input's rolling mean and standard deviation over the transformer's
  window of ``T`` samples, centred, computed inside the gap-free runs of one well, so that a
  tree sees the same stretch of log as a window model (Bestagini, Lipari and Tubaro, 2017 gave
  gradient boosting features of neighbouring depths for facies classification).

The settings are fixed here, before any test data are looked at, and are not tuned:

=====================  =========================================================================
ensemble               settings (scikit-learn 1.x)
=====================  =========================================================================
random forest          100 trees, at least 5 samples per leaf, a third of the features tried at each
                       split (Breiman's p/3 for regression, the default of R's randomForest)
gradient boosting      100 boosting iterations, learning rate 0.1, 31 leaves, at least 20 samples
                       per leaf, no early stopping (its random 10 % hold-out would validate on
                       neighbours of training depths)
=====================  =========================================================================

Samples where an input or the target is missing are left out of the fit (never filled); the
prediction is NaN where an input is missing.  Fits run on ``n_jobs`` threads (default 1: the
same numbers on any machine, and no oversubscription of a shared one).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import ensemble as sk
from threadpoolctl import threadpool_limits

from ..data.windows import contiguous_runs
from ..errors import InputError, ModelFileError, NotReadyError
from ..io import atomic_write_bytes

__all__ = ["ENSEMBLE_SETTINGS", "NEIGHBOURS", "TREE_BASELINE_NAMES", "TreeBaseline", "context_features",
           "ensemble_settings_text", "rolling_context", "tree_baselines"]

#: The fixed settings of each ensemble (scikit-learn estimator name, keyword arguments).
ENSEMBLE_SETTINGS = {
    "random forest": ("RandomForestRegressor", {"n_estimators": 100, "min_samples_leaf": 5, "max_features": 1 / 3}),
    "gradient boosting": ("HistGradientBoostingRegressor", {"max_iter": 100, "learning_rate": 0.1,
                                                            "max_leaf_nodes": 31, "min_samples_leaf": 20,
                                                            "early_stopping": False}),
}

#: The types a saved tree ensemble may hold beyond those skops trusts by default: the fitted trees of
#: each ensemble.  Anything else in a file is refused (skops never unpickles).
TRUSTED_TYPES = ["sklearn.tree._tree.Tree", "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor"]


def ensemble_settings_text() -> dict:
    """Each ensemble's fixed settings as the scikit-learn call, for a run's config.json.

    ``{"random forest": "RandomForestRegressor(n_estimators=100, ...)", "gradient boosting": ...}``
    """
    return {name: f"{cls}({', '.join(f'{k}={v!r}' for k, v in kw.items())})"
            for name, (cls, kw) in ENSEMBLE_SETTINGS.items()}


#: The four tree baselines, in table order.
TREE_BASELINE_NAMES = ("random forest", "random forest + context", "gradient boosting", "gradient boosting + context")


def rolling_context(X, window: int) -> np.ndarray:
    """The inputs with their rolling mean and standard deviation over ``window`` samples.

    Parameters
    ----------
    X : array (n_samples, n_inputs)
        The input logs of one well along depth; NaN where missing.
    window : int >= 1
        Samples per window (the transformer's ``T``), centred on each depth; near the ends of a
        gap-free run the window is cut to the samples the run has.

    Returns
    -------
    ndarray (n_samples, 3 * n_inputs)
        ``[X, rolling mean, rolling standard deviation (population, ddof 0)]``; NaN on every
        row where an input is missing.  Windows never reach across a gap, so a feature never
        mixes two runs of a well (or two wells: call this once per well).
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"rolling_context: X must be (n_samples, n_inputs), got shape {X.shape}")
    if isinstance(window, bool) or int(window) != window or window < 1:
        raise InputError(f"rolling_context: window must be a positive integer, got {window!r}")
    n, k = X.shape
    out = np.full((n, 3 * k), np.nan)
    for a, b in contiguous_runs(np.isfinite(X).all(axis=1)):
        rolling = pd.DataFrame(X[a:b]).rolling(int(window), center=True, min_periods=1)
        out[a:b, :k] = X[a:b]
        out[a:b, k:2 * k] = rolling.mean().to_numpy()
        out[a:b, 2 * k:] = np.sqrt(np.maximum(rolling.var(ddof=0).to_numpy(), 0.0))  # round-off can dip below 0
    return out


#: Samples on either side of a depth whose inputs :func:`context_features` adds (0.6 m at a half-foot step).
NEIGHBOURS = 4


def context_features(log, inputs, context: int = NEIGHBOURS) -> np.ndarray:
    """Inputs at each depth and its ``context`` neighbours either side: ``(n_samples, n_inputs * (2 context + 1))``.

    Column ``j * n_inputs + i`` holds input ``i`` at offset ``j - context`` samples (NaN off the log).
    The features of the core run's quantile baseline (the registry's trees use :func:`rolling_context`).
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


class TreeBaseline:
    """A random forest or gradient-boosting regressor on the input logs, with or without depth context.

    Parameters
    ----------
    ensemble : {"random forest", "gradient boosting"}
    context_window : int or None
        Add each input's rolling mean and sd over this many samples (:func:`rolling_context`);
        None: the inputs at each depth only.
    random_state : int, default 42
    n_jobs : int, default 1
        Threads of the fit and prediction.

    Attributes
    ----------
    estimator_ : the fitted scikit-learn regressor
    n_ : int
        Training samples used (every input and the target present).
    """

    def __init__(self, ensemble: str = "random forest", context_window: int | None = None, random_state: int = 42,
                 n_jobs: int = 1):
        self.ensemble = ensemble
        self.context_window = context_window
        self.random_state = random_state
        self.n_jobs = n_jobs

    @property
    def name(self) -> str:
        """The baseline's name in tables: e.g. ``"random forest + context"``."""
        return self.ensemble + (" + context" if self.context_window else "")

    def features(self, X) -> np.ndarray:
        """Features of one well's inputs ``X (n, n_inputs)``: ``X`` itself, or with its context."""
        X = np.asarray(X, dtype=np.float64)
        return rolling_context(X, self.context_window) if self.context_window else X

    def _make(self):
        if self.ensemble not in ENSEMBLE_SETTINGS:
            raise InputError(f"TreeBaseline: ensemble must be one of {', '.join(ENSEMBLE_SETTINGS)}, "
                             f"got {self.ensemble!r}")
        cls, kwargs = ENSEMBLE_SETTINGS[self.ensemble]
        extra = {"n_jobs": self.n_jobs} if cls == "RandomForestRegressor" else {}
        return getattr(sk, cls)(**kwargs, **extra, random_state=self.random_state)

    def fit(self, parts) -> "TreeBaseline":
        """Fit on ``parts``: ``[(X (n_i, n_inputs), y (n_i,)), ...]``, one pair per well (or interval).

        Raises
        ------
        InputError
            No sample has every feature and the target.
        """
        F = [self.features(X) for X, _ in parts]
        y = np.concatenate([np.asarray(t, dtype=np.float64) for _, t in parts])
        F = np.concatenate(F)
        use = np.isfinite(F).all(axis=1) & np.isfinite(y)
        if not use.any():
            raise InputError(f"{self.name}: no training sample has every input and the target")
        with threadpool_limits(limits=self.n_jobs):
            self.estimator_ = self._make().fit(F[use], y[use])
        self.n_ = int(use.sum())
        return self

    def predict(self, X) -> np.ndarray:
        """Prediction per sample of one well's inputs ``X (n, n_inputs)`` -> (n,); NaN where an input is missing."""
        if not hasattr(self, "estimator_"):
            raise NotReadyError(f"{self.name}: call fit() first")
        F = self.features(X)
        out = np.full(len(F), np.nan)
        ok = np.isfinite(F).all(axis=1)
        if ok.any():
            with threadpool_limits(limits=self.n_jobs):
                out[ok] = self.estimator_.predict(F[ok])
        return out

    def describe(self) -> str:
        """The definition behind the name: the scikit-learn call and, with context, its features (the seed is a
        run's, recorded with the run, not part of the definition)."""
        text = ensemble_settings_text()[self.ensemble]
        if self.context_window:
            text += (f" on each input with its rolling mean and sd over {self.context_window} samples "
                     "(centred, inside gap-free runs)")
        return text

    def save(self, folder) -> dict:
        """Write the fitted ensemble to ``folder/<name>.<digest>.skops`` (skops, no pickle); returns its JSON record.

        The file is named by its content (the first 12 hex digits of its SHA-256), so a new save never
        replaces the file an earlier, still valid ``model.json`` points to.
        """
        if not hasattr(self, "estimator_"):
            raise NotReadyError(f"{self.name}: call fit() first")
        import skops.io  # here, not at the top: skops.io imports torch when installed; glassformer never does on import

        data = skops.io.dumps(self.estimator_)
        digest = hashlib.sha256(data).hexdigest()
        file = f"{self.name.replace(' + ', '_').replace(' ', '_')}.{digest[:12]}.skops"
        Path(folder).mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(Path(folder) / file, data)
        return {"kind": "tree", "ensemble": self.ensemble, "context_window": self.context_window,
                "random_state": self.random_state, "n": self.n_, "file": file, "sha256": digest}

    @classmethod
    def load(cls, record: dict, folder) -> "TreeBaseline":
        """The baseline :meth:`save` wrote; only :data:`TRUSTED_TYPES` beyond skops' own are accepted.

        Raises
        ------
        ModelFileError
            The file is missing, unreadable, or holds a type that is not trusted.
        """
        import skops.io  # here, not at the top: skops.io imports torch when installed; glassformer never does on import

        path = Path(folder) / record["file"]
        tb = cls(record["ensemble"], record["context_window"], random_state=record["random_state"])
        try:
            data = path.read_bytes()
            if record.get("sha256") and hashlib.sha256(data).hexdigest() != record["sha256"]:
                raise ModelFileError(f"{path}: its content is not what was saved (checksum differs); refused, "
                                     "nothing was loaded")
            untrusted = [t for t in skops.io.get_untrusted_types(data=data) if t not in TRUSTED_TYPES]
            if untrusted:
                raise ModelFileError(f"{path}: holds types that are not trusted ({', '.join(untrusted)}); "
                                     "refused, nothing was loaded")
            tb.estimator_ = skops.io.loads(data, trusted=TRUSTED_TYPES)
        except ModelFileError:
            raise
        except Exception as exc:                     # skops raises many kinds on a damaged file
            raise ModelFileError(f"{path}: not a readable {tb.name} ({type(exc).__name__}: {exc})") from None
        expected = getattr(sk, ENSEMBLE_SETTINGS[tb.ensemble][0])
        if not isinstance(tb.estimator_, expected):
            raise ModelFileError(f"{path}: holds a {type(tb.estimator_).__name__}, not a {expected.__name__}")
        tb.n_ = int(record.get("n", 0))
        return tb

    def num_leaves(self) -> int:
        """Fitted values (leaves) over all trees: the ensemble's counterpart of a network's parameters."""
        est = self.estimator_
        if hasattr(est, "estimators_"):
            return int(sum(t.tree_.n_leaves for t in est.estimators_))
        # HistGradientBoostingRegressor keeps its trees as predictor objects, one list per iteration.
        return int(sum(p.get_n_leaf_nodes() for it in getattr(est, "_predictors", []) for p in it))

    def __repr__(self) -> str:
        return (f"TreeBaseline(ensemble={self.ensemble!r}, context_window={self.context_window}, "
                f"random_state={self.random_state})")


def tree_baselines(window: int, random_state: int = 42, n_jobs: int = 1) -> dict:
    """The four unfitted tree baselines of :data:`TREE_BASELINE_NAMES` for windows of ``window`` samples."""
    out = {}
    for ensemble in ENSEMBLE_SETTINGS:
        for context in (None, int(window)):
            tb = TreeBaseline(ensemble, context, random_state=random_state, n_jobs=n_jobs)
            out[tb.name] = tb
    return {name: out[name] for name in TREE_BASELINE_NAMES}
