"""The comparison on a demonstration's data: ``glassformer compare --demo NAME``.

The chapter (Pyrcz 2024) builds its transformer as the successor of an LSTM and warns that
transformers are not guaranteed to win with little data.  :func:`compare_demo` retrains every
model of a demonstration once per seed -- demonstration 1 (7 + 7 depths), the 100 synthetic
wells, or both Volve splits -- with the transformer and a bidirectional LSTM on the same windows,
scaling, split, loop and seeds, beside the porosity-permeability transform and the training mean.
(:func:`glassformer.wells.compare_wells` does the same on the user's wells.)

Each run folder's ``metrics.json["comparison"]`` holds the table (RMSE, MAE, R², parameter count,
fit time in s; mean and sample sd over seeds), ``figures/prediction_vs_depth.png`` all predictions
against depth, and ``report.html`` everything.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..wells import seed_list
from .porosity import run as run_porosity
from .real_wells import run as run_real_wells
from .synthetic_wells import run as run_synthetic_wells

__all__ = ["COMPARE_DEMOS", "compare_demo"]

COMPARE_DEMOS = ("porosity", "synthetic-wells", "real-wells")


def compare_demo(name: str, out, *, seeds=None, epochs: int | None = None) -> dict:
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
    if name not in COMPARE_DEMOS:
        raise InputError(f"unknown comparison demo {name!r}; choose from {', '.join(COMPARE_DEMOS)}")
    kw = {} if epochs is None else {"epochs": int(epochs)}
    if name == "porosity":
        return run_porosity(Path(out), seeds=seeds or seed_list(3), **kw)
    if name == "synthetic-wells":
        return run_synthetic_wells(Path(out), seeds=seeds or seed_list(3), **kw)
    return run_real_wells(Path(out), seeds=seeds or seed_list(1), **kw)
