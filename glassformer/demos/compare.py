"""Transformer vs. LSTM vs. the field's transform vs. the training mean, on identical splits (issue 6).

Seed 000 builds its transformer as the successor of an LSTM and promises to compare the two on the
same training and forecast intervals, warning that transformers are not guaranteed to win with
little data.  Here both networks are trained by the same :class:`~glassformer.training.Trainer` on
the same windows, scaling, split and seeds, beside the porosity-permeability transform (linear
regression of log10 k on porosity) and the training mean:

* :func:`compare_wells` -- the user's wells (``glassformer compare --data ...``);
* :func:`compare_demo` -- demonstration 1 (7 + 7 depths), the 100 synthetic wells, or both Volve
  splits (``glassformer compare --demo ...``).

Each run folder's ``metrics.json["comparison"]`` holds the table (RMSE, MAE, R², parameter count,
fit time in s; mean and sample sd over seeds), ``figures/prediction_vs_depth.png`` all predictions
against depth, and ``report.html`` everything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import DepthError, InputError
from .common import WellPipeline, run_well_experiment

__all__ = ["COMPARE_DEMOS", "compare_demo", "compare_wells", "forecast_logs", "load_split", "seed_list"]

COMPARE_DEMOS = ("porosity", "synthetic-wells", "real-wells")


def seed_list(n: int, first: int = 42) -> list:
    """``n`` seeds: ``first`` (the demos' published seed), then 0, 1, 2, ... (skipping ``first``).

    Raises
    ------
    InputError
        If ``n < 1``.
    """
    if int(n) < 1:
        raise InputError(f"--seeds must be >= 1, got {n}")
    rest = [s for s in range(int(n) + 1) if s != first]
    return [int(first)] + rest[:int(n) - 1]


def load_split(data: Sequence, train_depth: tuple, test_depth: tuple | None = None, test_data: Sequence = (), *,
               labels: tuple | None = None):
    """Read wells and cut them into training and test logs, as ``glassformer train`` does.

    Parameters
    ----------
    data : paths of LAS/CSV wells holding the training interval ``train_depth = (top, base)``
        (file depth unit).
    test_depth : (top, base), optional
        Forecast interval: of the same wells (a depth shared with ``train_depth``'s base stays in
        training), or of ``test_data`` when given.
    test_data : paths of separate test wells (whole logs, or their ``test_depth``).
    labels : (train, test) texts naming the intervals in errors (see :func:`forecast_logs`).

    Returns
    -------
    (train_logs, test_logs, boundary)
        ``boundary`` is the train/forecast depth for the figures (None across wells).  With no test
        interval at all the test logs are the training logs (the caller should say so).

    Raises
    ------
    DepthError
        If ``test_depth`` overlaps ``train_depth`` in a well by more than one shared boundary sample
        (which stays in training), or lies inside it.
    """
    from ..data import read_well

    top, base = train_depth
    logs = [read_well(p) for p in data]
    train_logs = [g.interval(top, base) for g in logs]
    test_logs, boundary = forecast_logs(logs, train_depth, test_depth, [read_well(p) for p in test_data],
                                        labels=labels)
    return train_logs, (test_logs or train_logs), boundary


def forecast_logs(logs, train_depth: tuple, test_depth: tuple | None = None, test_wells: Sequence = (), *,
                  labels: tuple | None = None):
    """The test logs and figure boundary for ``logs`` trained on ``train_depth = (top, base)``.

    Parameters
    ----------
    logs : WellLog list holding the training interval.
    test_depth : (top, base), optional
        Forecast interval: of ``logs`` (a depth shared with ``train_depth``'s base stays in training),
        or of ``test_wells`` when given.
    test_wells : WellLog list of separate test wells (whole logs, or their ``test_depth``).
    labels : (train, test) texts naming the intervals in the error message, e.g.
        ``("--train-depth 3351.6:4300", "--test-depth 4200:4400")``; default ``"the training
        interval top:base"``, ``"test interval top:base"``.

    Returns
    -------
    (test_logs, boundary)
        ``test_logs`` is empty when there is no test interval and no test well; ``boundary`` is the
        train/forecast depth for the figures (None across wells).

    Raises
    ------
    DepthError
        If ``test_depth`` overlaps ``train_depth`` in a well by more than one shared boundary sample
        (which stays in training), or lies inside it.
    """
    top, base = train_depth
    test_logs, boundary = [], None
    if test_depth and not test_wells:
        ttop, tbase = test_depth
        train_text, test_text = labels or (f"the training interval {top:g}:{base:g}",
                                           f"test interval {ttop:g}:{tbase:g}")
        for g in logs:
            test_logs.append(_forecast_part(g, (top, base), (ttop, tbase), train_text, test_text))
        boundary = base if ttop >= top else top
    for g in test_wells:
        test_logs.append(g.interval(*test_depth) if test_depth else g)
    return test_logs, boundary


def _forecast_part(g, train_depth: tuple, test_depth: tuple, train_text: str, test_text: str):
    """The test interval of well ``g``: disjoint from the training interval but for one boundary sample.

    A single depth sample in both intervals (the issue's split 3351.6-4300 / 4300-4744.8 m shares
    4300 m) stays in training and is dropped from the test log.  Any larger overlap would score the
    model on samples it was trained on.

    Raises
    ------
    DepthError
        The intervals share more than one sample of ``g``, or the test interval holds nothing else.
    """
    (top, base), (ttop, tbase) = train_depth, test_depth
    d = g.depth
    tol = 1e-6 * max(1.0, float(np.max(np.abs(d))))       # as WellLog.interval: decimal round-off in typed bounds
    in_train = (d >= top - tol) & (d <= base + tol)
    in_test = (d >= ttop - tol) & (d <= tbase + tol)
    shared = d[in_train & in_test]
    u = g.depth_unit
    if in_test.any() and not (in_test & ~in_train).any():
        raise DepthError(f"{test_text} lies inside {train_text} in {g.name}")
    if shared.size > 1 or (shared.size == 1 and ttop < top and tbase > base):
        raise DepthError(f"{test_text} overlaps {train_text} in {g.name}: {shared.size} depth samples "
                         f"({shared[0]:g} to {shared[-1]:g} {u}) would be both trained on and tested; the "
                         f"intervals may share at most their boundary depth (e.g. test "
                         f"{f'{base:g}:{tbase:g}' if tbase > base else f'{ttop:g}:{top:g}'} {u})")
    if shared.size == 1:                 # the shared boundary sample stays in training
        if ttop >= top:
            ttop = float(d[d > shared[0] + tol][0])
        else:
            tbase = float(d[d < shared[0] - tol][-1])
    return g.interval(ttop, tbase)


def compare_wells(out, train_logs, test_logs, *, inputs, target, log_target: bool = True, window: int = 32,
                  stride: int | None = None, epochs: int = 30, seeds=(42,), hidden_size: int = 16,
                  boundary=None, attribution: str | None = None, config: dict | None = None,
                  overwrite: bool = True, positional: str = "sinusoidal", positional_options: dict | None = None,
                  progress: bool = False, echo: Callable = print) -> dict:
    """Train the well transformer and the bidirectional LSTM on the same windows, once per seed.

    The transformer is :data:`~glassformer.demos.synthetic_wells.WELL_MODEL` (``glassformer
    train``'s defaults) with ``positional`` / ``positional_options`` (positions are sample indices
    1..T; for ``"wavelengths"`` d_model becomes 2 x the number of wavelengths and d_ff 2 x d_model),
    the LSTM :data:`~glassformer.demos.synthetic_wells.WELL_LSTM` with ``hidden_size``; both get
    ``epochs`` (maximum; early stopping on 10% of the windows).  Returns the metrics written to
    ``out/metrics.json``.
    """
    from .synthetic_wells import WELL_LSTM, WELL_MODEL

    model = dict(WELL_MODEL, epochs=epochs, progress=progress, positional=positional,
                 positional_options=dict(positional_options or {}))
    if positional == "wavelengths" and "wavelengths" in model["positional_options"]:
        model["d_model"] = 2 * len(model["positional_options"]["wavelengths"])
        model["d_ff"] = 2 * model["d_model"]
    from ..models import SequenceRegressor

    SequenceRegressor(**model, n_features=len(list(inputs)))   # bad model options fail before ``out`` is created
    pipe = WellPipeline(list(inputs), target, log_target=log_target, window=window, stride=stride,
                        positions="index", model_params=model,
                        lstm_params=dict(WELL_LSTM, epochs=epochs, hidden_size=hidden_size, progress=progress))
    cfg = {"command": "compare", "epochs": epochs, "seeds": list(seeds)}
    cfg.update(config or {})
    return run_well_experiment(out, train_logs, test_logs, pipe, title="glassformer compare", echo=echo,
                               boundary=boundary, attribution=attribution, overwrite=overwrite, seeds=seeds,
                               config=cfg)


def compare_demo(name: str, out, *, seeds=None, epochs: int | None = None, echo: Callable = print) -> dict:
    """Run the comparison of one demonstration into ``out``.

    ``name``: ``"porosity"`` (training-interval fit, forecasts listed; 3 seeds by default),
    ``"synthetic-wells"`` (3 seeds by default) or ``"real-wells"`` (both Volve splits, one seed by
    default).  ``seeds``: a list of seeds or None; ``epochs``: the transformer's epochs (None = the
    demo's own).

    Raises
    ------
    InputError
        For an unknown name.
    """
    from . import porosity, real_wells, synthetic_wells

    if name not in COMPARE_DEMOS:
        raise InputError(f"unknown comparison demo {name!r}; choose from {', '.join(COMPARE_DEMOS)}")
    kw = {} if epochs is None else {"epochs": int(epochs)}
    if name == "porosity":
        return porosity.run(Path(out), seeds=seeds or seed_list(3), echo=echo, **kw)
    if name == "synthetic-wells":
        return synthetic_wells.run(Path(out), seeds=seeds or seed_list(3), echo=echo, **kw)
    return real_wells.run(Path(out), seeds=seeds or seed_list(1), echo=echo, **kw)
