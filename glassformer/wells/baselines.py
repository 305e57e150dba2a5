"""The baselines every well-log result is reported beside, and their one registry.

* :class:`PorosityPermeabilityTransform` -- the field's poro-perm transform: a straight line
  fitted by least squares to ``log10 k`` against porosity, i.e. ``k = 10 ** (a + b * phi)``
  (the semi-log porosity-permeability crossplot of core analysis);
* :class:`TrainingMean` -- predicts the mean of the training target everywhere.

Gaps (NaN) are skipped, never filled; the regression itself is scikit-learn's ``LinearRegression``.

The registry (:func:`make_baselines`) holds one definition per name -- the transform, the mean and
the tree ensembles with and without depth context (:mod:`glassformer.wells.tree_baselines`) -- so
a name means the same model in every table.  Every entry fits on the training wells
(``fit(parts)``, one ``(X (n, n_inputs), y (n,))`` pair per well, target in model units), predicts
a log (``predict(X) -> (n,)``), says its definition (``describe()``) and saves itself without
pickle (``save(folder) -> record``, :func:`load_baseline`).  The blend
(:data:`BLEND`, :func:`blend`) averages the transformer and the gradient boosting with weights
fixed before any data were seen.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.linear_model import LinearRegression

from .._validation import as_float_array
from ..errors import InputError, ModelFileError, NotReadyError, ShapeError
from .tree_baselines import TreeBaseline, tree_baselines

__all__ = ["BLEND", "BLEND_WEIGHTS", "MEAN", "MeanBaseline", "PorosityPermeabilityTransform", "TRANSFORM",
           "TrainingMean", "TransformBaseline", "blend", "blend_description", "load_baseline", "make_baselines"]

#: Names of the simple baselines in tables.
TRANSFORM = "porosity-permeability transform"
MEAN = "training mean"
#: The blend's name, and its weights, fixed a priori (never fitted, never chosen on test data).
BLEND = "transformer/boosting blend"
BLEND_WEIGHTS = {"transformer": 0.5, "gradient boosting": 0.5}


def _column(X, feature: int, name: str, where: str) -> np.ndarray:
    """Return ``X`` (n,) as is, or column ``feature`` of ``X`` (n, n_features), as float64 (NaN kept)."""
    arr = as_float_array(X, name, where, dtype=np.float64, allow_nan=True)
    if arr.ndim == 1:
        return arr
    if arr.ndim != 2:
        raise ShapeError(f"{where}: {name} must be (n,) or (n, n_features), got shape {arr.shape}")
    if not -arr.shape[1] <= feature < arr.shape[1]:
        raise InputError(f"{where}: porosity_feature={feature} is out of range for {name} "
                         f"with {arr.shape[1]} columns (shape {arr.shape})")
    return arr[:, feature]


def _pair(x: np.ndarray, y, where: str) -> np.ndarray:
    y = as_float_array(y, "target", where, dtype=np.float64, allow_nan=True)
    if y.shape != x.shape:
        raise ShapeError(f"{where}: target must have shape {x.shape} (one value per porosity), got {y.shape}")
    return y


class PorosityPermeabilityTransform:
    """The field's porosity-permeability transform: ``log10 k = intercept_ + slope_ * porosity``.

    Fitted by ordinary least squares (scikit-learn's ``LinearRegression``) on the rows where both
    porosity and permeability are present; NaN rows are ignored.

    Parameters
    ----------
    porosity_feature : int, default 0
        Column of ``X`` holding porosity when ``X`` is a 2-D feature matrix ``(n, n_features)``;
        ignored for a 1-D ``X``.
    floor_mD : float > 0, optional
        Permeabilities below this value (including zeros) are raised to it before ``log10``.
        With the default ``None`` a permeability ``<= 0`` is refused (``log10`` is undefined), so
        a floor is an explicit choice.  On the Volve CPI logs, ``KLOGH`` bottoms out at 0.001 mD
        in the F-wells and is 0 on many rows of 15/9-19 A; 0.001 mD is the natural floor there.

    Attributes
    ----------
    slope_ : float
        log10(mD) per porosity unit (per v/v if porosity is a fraction, per % if in %).
    intercept_ : float
        log10(mD) at zero porosity.
    n_ : int
        Number of rows used in the fit.

    Raises
    ------
    InputError
        Non-positive permeability without ``floor_mD``; fewer than two usable rows, or porosity
        constant over them; inf values; ``predict`` before ``fit`` raises :class:`NotReadyError`.
    """

    def __init__(self, porosity_feature: int = 0, floor_mD: float | None = None):
        if floor_mD is not None and not (np.isfinite(floor_mD) and floor_mD > 0):
            raise InputError(f"PorosityPermeabilityTransform: floor_mD must be a positive number "
                             f"(mD) or None, got {floor_mD!r}")
        self.porosity_feature = int(porosity_feature)
        self.floor_mD = None if floor_mD is None else float(floor_mD)

    def fit(self, porosity, permeability_mD) -> "PorosityPermeabilityTransform":
        """Fit on permeability in mD; returns self.

        Parameters
        ----------
        porosity : array (n,) or (n, n_features)
            Porosity (fraction or %; the slope is in log10 mD per that unit).
        permeability_mD : array (n,)
            Permeability in mD; NaN rows are skipped.
        """
        where = "PorosityPermeabilityTransform.fit"
        phi = _column(porosity, self.porosity_feature, "porosity", where)
        k = _pair(phi, permeability_mD, where)
        present = ~np.isnan(k)
        if self.floor_mD is None:
            bad = present & (k <= 0)
            if bad.any():
                first = int(np.argmax(bad))
                raise InputError(
                    f"{where}: permeability_mD has {int(bad.sum())} value(s) <= 0 (first at row {first}: "
                    f"{k[first]!r}); log10 is undefined there: pass floor_mD (e.g. 0.001) to clip them"
                )
            logk = np.full_like(k, np.nan)
            logk[present] = np.log10(k[present])
        else:
            logk = np.log10(np.maximum(k, self.floor_mD))   # NaN stays NaN
        return self._fit(phi, logk, where)

    def fit_log10(self, porosity, log10_permeability) -> "PorosityPermeabilityTransform":
        """Fit on a target that is already ``log10(k / mD)`` (no floor applied); returns self."""
        where = "PorosityPermeabilityTransform.fit_log10"
        phi = _column(porosity, self.porosity_feature, "porosity", where)
        return self._fit(phi, _pair(phi, log10_permeability, where), where)

    def _fit(self, phi: np.ndarray, logk: np.ndarray, where: str):
        use = ~(np.isnan(phi) | np.isnan(logk))
        n = int(use.sum())
        if n < 2:
            raise InputError(f"{where}: need at least 2 rows with both porosity and permeability, got {n}")
        if np.ptp(phi[use]) == 0:
            raise InputError(f"{where}: porosity is constant ({phi[use][0]!r}) over the {n} usable rows; "
                             "the slope is undefined")
        reg = LinearRegression().fit(phi[use, None], logk[use])
        self.slope_ = float(reg.coef_[0])
        self.intercept_ = float(reg.intercept_)
        self.n_ = n
        return self

    def predict_log10(self, porosity) -> np.ndarray:
        """Predicted ``log10(k / mD)``, shape (n,); NaN where porosity is NaN."""
        where = "PorosityPermeabilityTransform.predict_log10"
        if not hasattr(self, "slope_"):
            raise NotReadyError(f"{where}: call fit() or fit_log10() first")
        phi = _column(porosity, self.porosity_feature, "porosity", where)
        return self.intercept_ + self.slope_ * phi

    def predict(self, porosity) -> np.ndarray:
        """Predicted permeability in mD, shape (n,); NaN where porosity is NaN."""
        return 10.0 ** self.predict_log10(porosity)

    def __repr__(self) -> str:
        fitted = ""
        if hasattr(self, "slope_"):
            fitted = f", slope_={self.slope_:.6g}, intercept_={self.intercept_:.6g}"
        return f"PorosityPermeabilityTransform(porosity_feature={self.porosity_feature}, floor_mD={self.floor_mD}{fitted})"


class TrainingMean:
    """Predicts the mean of the training target (NaN ignored) at every position.

    Whatever space the target is given in is the space of the mean: pass ``log10 k`` to get
    the mean log-permeability (the geometric mean of k), ``k`` for the arithmetic mean.

    Attributes
    ----------
    mean_ : float
    n_ : int
        Number of non-NaN training values.
    """

    def fit(self, X, y) -> "TrainingMean":
        """Fit on ``y`` (any shape, NaN ignored); ``X`` is accepted for a uniform interface and unused."""
        where = "TrainingMean.fit"
        y = as_float_array(y, "y", where, dtype=np.float64, allow_nan=True)
        present = ~np.isnan(y)
        if not present.any():
            raise InputError(f"{where}: y has no non-NaN value (shape {y.shape})")
        self.mean_ = float(y[present].mean())
        self.n_ = int(present.sum())
        return self

    def predict(self, X) -> np.ndarray:
        """Return ``mean_`` repeated ``len(X)`` times: ``X`` (n,) or (n, n_features) -> (n,)."""
        if not hasattr(self, "mean_"):
            raise NotReadyError("TrainingMean.predict: call fit() first")
        n = np.shape(X)[0] if np.ndim(X) else 0
        if n == 0:
            raise InputError(f"TrainingMean.predict: X must have at least one row, got shape {np.shape(X)}")
        return np.full(n, self.mean_)

    def __repr__(self) -> str:
        return f"TrainingMean(mean_={self.mean_:.6g})" if hasattr(self, "mean_") else "TrainingMean()"


# --- the registry: one definition per name ---------------------------------------------------------
def _stack(parts) -> tuple[np.ndarray, np.ndarray]:
    """``(X (n, n_inputs), y (n,))`` of ``[(X_i, y_i), ...]`` concatenated over wells."""
    X = np.concatenate([np.asarray(x, dtype=np.float64) for x, _ in parts])
    return X, np.concatenate([np.asarray(t, dtype=np.float64) for _, t in parts])


class TransformBaseline:
    """The porosity-permeability transform on the first input, as a well baseline of the registry.

    Parameters
    ----------
    log_target : bool, default True
        The target is already ``log10 k`` (fit the line to it); else permeability in mD, floored
        at ``floor_mD`` before ``log10``, and predictions are in mD.
    floor_mD : float, default 1e-3
    """

    name = TRANSFORM

    def __init__(self, log_target: bool = True, floor_mD: float = 1e-3):
        self.log_target = log_target
        self.floor_mD = floor_mD

    def describe(self) -> str:
        floor = "" if self.log_target else f", permeability floored at {self.floor_mD:g} mD"
        return ("log10 k = intercept + slope * porosity (the first input), least squares on every training "
                "sample with both (scikit-learn LinearRegression)" + floor)

    def fit(self, parts) -> "TransformBaseline":
        X, y = _stack(parts)
        ppt = PorosityPermeabilityTransform()
        ppt = ppt.fit_log10(X, y) if self.log_target else PorosityPermeabilityTransform(floor_mD=self.floor_mD).fit(X, y)
        self.slope_, self.intercept_, self.n_ = ppt.slope_, ppt.intercept_, ppt.n_
        return self

    def predict(self, X) -> np.ndarray:
        """log10 mD (mD without ``log_target``) per row of ``X (n, n_inputs)``; NaN where porosity is NaN."""
        if not hasattr(self, "slope_"):
            raise NotReadyError(f"{self.name}: call fit() first")
        logk = self.intercept_ + self.slope_ * _column(X, 0, "porosity", self.name)
        return logk if self.log_target else 10.0 ** logk

    def save(self, folder) -> dict:
        return {"kind": "transform", "log_target": bool(self.log_target), "floor_mD": float(self.floor_mD),
                "slope": self.slope_, "intercept": self.intercept_, "n": getattr(self, "n_", None)}

    @classmethod
    def load(cls, record: dict, folder=None) -> "TransformBaseline":
        b = cls(record["log_target"], record["floor_mD"])
        b.slope_, b.intercept_, b.n_ = float(record["slope"]), float(record["intercept"]), record.get("n")
        return b


class MeanBaseline:
    """The training mean (:class:`TrainingMean`) of the target in model units, as a well baseline."""

    name = MEAN

    def describe(self) -> str:
        return "the mean of the training target (in model units: log10 mD for a logged permeability)"

    def fit(self, parts) -> "MeanBaseline":
        _, y = _stack(parts)
        mean = TrainingMean().fit(None, y)
        self.mean_, self.n_ = mean.mean_, mean.n_
        return self

    def predict(self, X) -> np.ndarray:
        if not hasattr(self, "mean_"):
            raise NotReadyError(f"{self.name}: call fit() first")
        return np.full(len(X), self.mean_)

    def save(self, folder) -> dict:
        return {"kind": "mean", "mean": self.mean_, "n": getattr(self, "n_", None)}

    @classmethod
    def load(cls, record: dict, folder=None) -> "MeanBaseline":
        b = cls()
        b.mean_, b.n_ = float(record["mean"]), record.get("n")
        return b


_KINDS = {"tree": TreeBaseline, "transform": TransformBaseline, "mean": MeanBaseline}


def make_baselines(window: int, *, log_target: bool = True, floor_mD: float = 1e-3, random_state: int = 42,
                   trees: bool = True) -> dict:
    """The unfitted baselines, name -> baseline, in table order: the tree ensembles (when ``trees``), then
    the porosity-permeability transform and the training mean.

    ``window`` is the depth context of the ``+ context`` trees (the transformer's window, samples).
    """
    out = dict(tree_baselines(window, random_state=random_state)) if trees else {}
    out[TRANSFORM] = TransformBaseline(log_target, floor_mD)
    out[MEAN] = MeanBaseline()
    return out


def load_baseline(record: dict, folder):
    """The fitted baseline a ``save(folder)`` record describes.

    Raises
    ------
    ModelFileError
        An unknown kind, a missing field, or a file that cannot be read safely.
    """
    kind = _KINDS.get(record.get("kind")) if isinstance(record, dict) else None
    if kind is None:
        raise ModelFileError(f"{folder}: a baseline record of unknown kind ({record!r:.80})")
    try:
        return kind.load(record, Path(folder))
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{folder}: a damaged {record.get('kind')} baseline record ({exc})") from None


def blend_description() -> str:
    """What the blend is, in words (its weights are fixed a priori)."""
    parts = " and ".join(f"{100 * w:g} % {name}" for name, w in BLEND_WEIGHTS.items())
    return (f"the average of the transformer and the gradient boosting ({parts}); the weights were fixed a priori, "
            "before any data were seen, and are never fitted")


def blend(predictions: dict) -> np.ndarray | None:
    """The blend of ``predictions`` (name -> (n,) array, same units), or None when a member is absent.

    NaN where either member is NaN.
    """
    if any(name not in predictions for name in BLEND_WEIGHTS):
        return None
    return sum(w * np.asarray(predictions[name], dtype=np.float64) for name, w in BLEND_WEIGHTS.items())
