"""Choosing the wavelengths of the positional encoding by validation.

The chapter (Pyrcz 2024, "How do we specify positional embeddings?") lists four ways to pick the wavelengths of
the fixed encoding ``p = [sin(2*pi*t/lambda_j), cos(2*pi*t/lambda_j)]``: prior knowledge (layer
thicknesses, correlation ranges), a geometric schedule from short to long, tuning on validation
data, or learning them.  This module implements the second and third:

* :func:`geometric_wavelengths` -- a geometric schedule, to build candidate sets;
* :func:`select_wavelengths` -- the chapter's "validation-based selection": one
  :class:`~glassformer.models.SequenceRegressor` per candidate set, trained on the training
  interval only and scored on a validation interval; returns the table and the best candidate.

The caller passes training and validation data only.  A test interval must stay out of the
selection; evaluate the chosen wavelengths on it once, afterwards.
"""

from __future__ import annotations

import inspect
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ._validation import as_float_array, check_ndim
from .wells.evaluation import regression_metrics
from .errors import DivergenceError, InputError, ShapeError
from .models import SequenceRegressor

__all__ = ["SelectionResult", "geometric_wavelengths", "select_wavelengths"]

#: Metrics :func:`select_wavelengths` can rank by, and whether lower is better.
METRICS = {"rmse": True, "mae": True, "r2": False}

# Set per candidate by select_wavelengths; a value in model_params would be silently replaced.
_RESERVED = ("d_model", "positional", "positional_options", "random_state",
             "warm_start")


def geometric_wavelengths(shortest: float, longest: float, n_pairs: int) -> list:
    """``n_pairs`` wavelengths in geometric progression from ``shortest`` to ``longest`` (both included).

    ``lambda_j = shortest * (longest / shortest) ** (j / (n_pairs - 1))`` for ``j = 0 .. n_pairs-1``
    (the chapter's "How do we specify positional embeddings?", suggestion 2: cover short to long
    scales).  The standard sinusoidal encoding (Vaswani et al., 2017, sec. 3.5) is this schedule
    from ``2*pi`` to ``2*pi * 10000 ** ((d_model - 2) / d_model)``.

    Parameters
    ----------
    shortest, longest : float
        Wavelengths in position units (samples or metres), ``0 < shortest <= longest``.
    n_pairs : int
        Number of wavelengths (each becomes a sine/cosine pair, so ``d_model = 2 * n_pairs``).
        ``n_pairs = 1`` gives ``[shortest]``.

    Returns
    -------
    list of float, ascending; the end points are exactly ``shortest`` and ``longest``.

    Raises
    ------
    InputError
        Non-positive or non-finite wavelengths, ``shortest > longest``, or ``n_pairs < 1``.
    """
    where = "geometric_wavelengths"
    for name, v in (("shortest", shortest), ("longest", longest)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not (math.isfinite(v) and v > 0):
            raise InputError(f"{where}: {name} must be a positive finite number (position units), got {v!r}")
    if shortest > longest:
        raise InputError(f"{where}: shortest ({shortest!r}) must not exceed longest ({longest!r})")
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, (int, np.integer)) or n_pairs < 1:
        raise InputError(f"{where}: n_pairs must be an integer >= 1, got {n_pairs!r}")
    n = int(n_pairs)
    if n == 1:
        return [float(shortest)]
    out = (float(shortest) * (float(longest) / float(shortest)) ** (np.arange(n) / (n - 1))).tolist()
    out[0], out[-1] = float(shortest), float(longest)   # exact end points despite rounding
    return out


@dataclass
class SelectionResult:
    """What :func:`select_wavelengths` found.

    Attributes
    ----------
    table : list of dict
        One row per candidate, in the order given: ``wavelengths`` (list of float), ``d_model``,
        ``rmse``, ``mae``, ``r2`` (validation, mean over seeds), ``rmse_sd``, ``mae_sd``, ``r2_sd``
        (population standard deviation over seeds; 0 for one seed), ``n`` (scored validation
        values), ``train_time_s`` (total over seeds), ``error`` (None, or why the candidate has
        no score, e.g. training diverged).
    best : list of float
        The wavelengths with the best validation ``metric``.
    best_index : int
        Its index in ``table`` (and in the candidates).
    metric : str
        "rmse", "mae" (lower is better) or "r2" (higher is better).
    seeds : tuple of int
    """

    table: list
    best: list
    best_index: int
    metric: str = "rmse"
    seeds: tuple = field(default=(0,))

    def ranking(self) -> list:
        """Candidate indices from best to worst (ties keep the given order; unscored ones last)."""
        return _ranking([row[self.metric] for row in self.table], self.metric)

    def to_dict(self) -> dict:
        """A JSON-ready dict (non-finite numbers become None)."""
        return _json_ready({"metric": self.metric, "seeds": list(self.seeds), "best": list(self.best),
                            "best_index": self.best_index, "ranking": self.ranking(),
                            "table": [dict(r) for r in self.table]})

    def __repr__(self) -> str:
        lines = [f"SelectionResult(metric={self.metric!r}, seeds={list(self.seeds)}, "
                 f"best_index={self.best_index}, best={_fmt_lams(self.best)})",
                 f"  {'#':>2}  {'wavelengths':<28} {'rmse':>10} {'mae':>10} {'r2':>8} {'rmse_sd':>9} {'time_s':>7}"]
        for i, r in enumerate(self.table):
            mark = "*" if i == self.best_index else " "
            lines.append(f"{mark} {i:>2}  {_fmt_lams(r['wavelengths']):<28} {r['rmse']:>10.4g} {r['mae']:>10.4g} "
                         f"{r['r2']:>8.4f} {r['rmse_sd']:>9.3g} {r['train_time_s']:>7.2f}"
                         + (f"  ({r['error']})" if r.get("error") else ""))
        return "\n".join(lines)


def select_wavelengths(candidates, X_train, y_train, X_val, y_val, *, positions_train=None, positions_val=None,
                       model_params=None, metric: str = "rmse", seeds=(0,)) -> SelectionResult:
    """Pick the positional wavelengths that predict a validation interval best (the chapter's suggestion 3).

    For each candidate set ``lambda = [lambda_1, ..., lambda_m]`` a
    :class:`~glassformer.models.SequenceRegressor` with ``positional="wavelengths"`` and
    ``d_model = 2 m`` (a sine and a cosine per wavelength) is trained on the training windows only,
    once per seed (``random_state = seed``), and scored on the validation windows with
    :func:`glassformer.baselines.regression_metrics` (RMSE, MAE, R², NaN targets skipped).  Scores
    are averaged over seeds; the best mean ``metric`` wins, ties going to the earlier candidate.

    Pass training and validation data only: the test interval must play no part in choosing the
    wavelengths.  Scale inputs and targets beforehand with scalers fitted on the training interval;
    metrics are in the units of ``y_val``.

    Parameters
    ----------
    candidates : sequence of sequences of float
        Wavelength sets, in position units (the unit of the positions: sample index or metres).
        Sets may differ in length (``d_model`` follows).
    X_train : array (n_train, seq, n_features)
    y_train : array (n_train, seq) or (n_train, seq, n_targets)
        NaN = missing (masked out of the loss).
    X_val : array (n_val, seq_val, n_features)
    y_val : array (n_val, seq_val) or (n_val, seq_val, n_targets)
    positions_train : array (seq,) or (n_train, seq), optional
        Position of every sample (e.g. depth in m, or the sample's index along the well).  Default
        ``1 .. seq`` for every window (the chapter's), which makes only the position *inside* the
        window visible; pass absolute positions when the pattern is tied to depth.
    positions_val : array (seq_val,) or (n_val, seq_val), optional
        As ``positions_train``; default ``1 .. seq_val``.
    model_params : dict, optional
        Other :class:`SequenceRegressor` arguments (``num_heads``, ``d_ff``, ``optimizer``, ``lr``,
        ``epochs``, ...) on top of the chapter's model (:meth:`SequenceRegressor.chapter_model`:
        one head, post-norm, no output projection, full-batch SGD).  ``d_model``, ``positional``,
        ``positional_options``, ``random_state`` and ``warm_start`` are set here and may not be
        given.
    metric : {"rmse", "mae", "r2"}, default "rmse"
        Selection criterion: lowest RMSE or MAE, or highest R².
    seeds : sequence of int, default (0,)
        Initialisation seeds; each candidate is trained once per seed.

    Returns
    -------
    SelectionResult
        ``table`` (one row per candidate), ``best``, ``best_index``.  A candidate whose training
        diverges gets NaN scores and its ``error`` set; it ranks last.

    Raises
    ------
    InputError
        Empty ``candidates`` or a candidate with a non-positive, non-finite or no wavelength
        (the message names ``candidates[i]``); a reserved or unknown key in ``model_params``;
        ``num_heads`` not dividing some ``d_model``; an unknown ``metric``; empty or non-integer
        ``seeds``; NaN/inf inputs; no observed target in ``y_train`` or ``y_val``.
    ShapeError
        ``X``, ``y`` or positions of the wrong rank or mismatched shapes (named in the message).
    DivergenceError
        If training diverges for every candidate.
    """
    where = "select_wavelengths"
    cands = _check_candidates(candidates, where)
    if metric not in METRICS:
        raise InputError(f"{where}: metric must be one of {sorted(METRICS)}, got {metric!r}")
    seeds = _check_seeds(seeds, where)
    Xtr, Ytr, ptr = _check_split(X_train, y_train, positions_train, "X_train", "y_train", "positions_train", where)
    Xv, Yv, pv = _check_split(X_val, y_val, positions_val, "X_val", "y_val", "positions_val", where)
    if Xv.shape[2] != Xtr.shape[2]:
        raise ShapeError(f"{where}: X_val has {Xv.shape[2]} feature(s) on its last axis but X_train has "
                         f"{Xtr.shape[2]} (shapes {Xv.shape} vs {Xtr.shape})")
    if Yv.shape[2] != Ytr.shape[2]:
        raise ShapeError(f"{where}: y_val has {Yv.shape[2]} target(s) per sample but y_train has {Ytr.shape[2]}")
    params = _check_model_params(model_params, cands, where)

    table = [_evaluate(lam, params, seeds, (Xtr, Ytr, ptr), (Xv, Yv, pv)) for lam in cands]
    order = _ranking([row[metric] for row in table], metric)
    best_index = order[0]
    if not np.isfinite(table[best_index][metric]):
        errors = "; ".join(f"candidates[{i}]: {r['error']}" for i, r in enumerate(table) if r["error"])
        raise DivergenceError(f"{where}: no candidate could be scored ({errors or 'no finite ' + metric})")
    return SelectionResult(table=table, best=list(table[best_index]["wavelengths"]), best_index=best_index,
                           metric=metric, seeds=seeds)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
def _evaluate(lam: list, params: dict, seeds: tuple, train: tuple, val: tuple) -> dict:
    """Train one candidate per seed on ``train`` and score it on ``val``; one table row."""
    Xtr, Ytr, ptr = train
    Xv, Yv, pv = val
    scores, seconds, error = [], 0.0, None
    for seed in seeds:
        model = SequenceRegressor.chapter_model(**params, d_model=2 * len(lam), positional="wavelengths",
                                                positional_options={"wavelengths": list(lam)}, random_state=seed)
        start = time.perf_counter()
        try:
            model.fit(Xtr, Ytr, ptr)
        except DivergenceError as exc:     # one bad candidate must not end the sweep
            error = f"seed {seed}: {exc}"
            break
        finally:
            seconds += time.perf_counter() - start
        pred = model.predict(Xv, pv)
        if not np.isfinite(pred).all():
            error = f"seed {seed}: non-finite validation predictions"
            break
        scores.append(regression_metrics(Yv, pred))
    row = {"wavelengths": [float(v) for v in lam], "d_model": 2 * len(lam)}
    for key in ("rmse", "mae", "r2"):
        vals = np.array([s[key] for s in scores]) if error is None else np.array([np.nan])
        row[key] = float(np.mean(vals))
        row[f"{key}_sd"] = float(np.std(vals))
    row["n"] = int(scores[0]["n"]) if error is None else 0
    row["train_time_s"] = float(seconds)
    row["error"] = error
    return row


def _ranking(values, metric: str) -> list:
    """Indices from best to worst; a stable sort keeps ties in the given order, NaN goes last."""
    v = np.asarray(values, dtype=np.float64)
    key = v if METRICS[metric] else -v
    key = np.where(np.isfinite(key), key, np.inf)
    return [int(i) for i in np.argsort(key, kind="stable")]


def _check_candidates(candidates, where: str) -> list:
    if isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__len__"):
        raise InputError(f"{where}: candidates must be a list of wavelength lists, got {type(candidates).__name__}")
    if len(candidates) == 0:
        raise InputError(f"{where}: candidates is empty; give at least one list of wavelengths, e.g. [[8.0, 64.0]]")
    out = []
    for i, cand in enumerate(candidates):
        name = f"candidates[{i}]"
        lam = as_float_array(cand, name, where, dtype=np.float64)
        if lam.ndim != 1:
            raise ShapeError(f"{where}: {name} must be a flat list of wavelengths, got shape {lam.shape}")
        if np.any(lam <= 0):
            raise InputError(f"{where}: {name} holds a non-positive wavelength ({lam.tolist()}); "
                             "wavelengths are lengths in position units and must be > 0")
        out.append(lam.tolist())
    return out


def _check_seeds(seeds, where: str) -> tuple:
    try:
        seeds = tuple(seeds)
    except TypeError:
        raise InputError(f"{where}: seeds must be a sequence of integers, got {seeds!r}") from None
    if not seeds:
        raise InputError(f"{where}: seeds is empty; give at least one, e.g. (0,)")
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise InputError(f"{where}: seeds must be non-negative integers, got {s!r}")
    return tuple(int(s) for s in seeds)


def _check_split(X, y, positions, xname: str, yname: str, pname: str, where: str):
    """Validate one split; returns ``X (n, seq, f)``, ``y (n, seq, t)`` and positions (or None)."""
    X = as_float_array(X, xname, where)
    check_ndim(X, (3,), xname, where, layout="(batch, seq, n_features)")
    y = as_float_array(y, yname, where, dtype=X.dtype, allow_nan=True)
    if y.ndim == 2:
        y = y[..., None]
    if y.ndim != 3 or y.shape[:2] != X.shape[:2]:
        raise ShapeError(f"{where}: {yname} must have shape (batch, seq) = {X.shape[:2]} or (batch, seq, n_targets) "
                         f"to match {xname} {X.shape}, got {np.shape(y)}")
    if not np.isfinite(y).any():
        raise InputError(f"{where}: {yname} has no observed (non-NaN) target")
    if positions is not None:
        p = as_float_array(positions, pname, where, dtype=np.float64)
        if not ((p.ndim == 1 and p.shape[0] == X.shape[1]) or (p.ndim == 2 and p.shape == X.shape[:2])):
            raise ShapeError(f"{where}: {pname} must have shape (seq,) = ({X.shape[1]},) or (batch, seq) = "
                             f"{X.shape[:2]} to match {xname}, got {p.shape}")
        positions = p
    return X, y, positions


def _check_model_params(model_params, cands: list, where: str) -> dict:
    params = dict(model_params or {})
    reserved = sorted(set(params) & set(_RESERVED))
    if reserved:
        raise InputError(f"{where}: model_params may not set {reserved}; they are set per candidate "
                         "(d_model = 2 * len(wavelengths), positional='wavelengths', random_state from seeds)")
    valid = set(inspect.signature(SequenceRegressor.__init__).parameters) - {"self"}
    unknown = sorted(set(params) - valid)
    if unknown:
        raise InputError(f"{where}: model_params has unknown key(s) {unknown}; valid: {sorted(valid - set(_RESERVED))}")
    heads = params.get("num_heads", 1)
    for i, lam in enumerate(cands):
        if isinstance(heads, (int, np.integer)) and heads > 0 and (2 * len(lam)) % heads:
            raise InputError(f"{where}: candidates[{i}] has {len(lam)} wavelength(s), so d_model = {2 * len(lam)}, "
                             f"which num_heads={heads} does not divide")
    return params


def _fmt_lams(lams) -> str:
    return "[" + ", ".join(f"{v:.4g}" for v in lams) + "]"


def _json_ready(obj):
    if isinstance(obj, dict):
        return {str(k): _json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_ready(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj
