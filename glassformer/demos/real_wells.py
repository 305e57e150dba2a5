"""Real Volve wells (Equinor): permeability KLOGH from PHIF, VSH and SW along depth.

Two experiments, each in its own sub-folder of the run folder, the harder one first:

* ``across-wells`` -- a blind well: train on 15/9-F-11 B and 15/9-F-1 B (whole logs), test on all
  of 15/9-F-1 A, which no model sees in training;
* ``f11b-depth-split`` -- one well, 15/9-F-11 B: train on 3351.6-4300 m, forecast 4300-4744.8 m
  (an easier test: neighbouring intervals of one well are alike).

Inputs PHIF, VSH, SW (v/v); target log10 KLOGH (KLOGH is in mD in these files, so the log10 is
taken here, floor 0.001 mD -- the files' own minimum).  Scaling is fitted on the training part
only; windows of 32 samples (3.2 m at 0.1 m) never cross gaps; positions are the sample index
inside the window.  RMSE and MAE are in log10 mD.  The settings were fixed before looking at the
test intervals; nothing is tuned on them.  Each experiment compares the transformer with a
bidirectional LSTM (same windows, scaling, loop and seed), the porosity-permeability transform and
the training mean; one seed by default (``seeds=(42, 0, 1)`` for the spread, about 3x the time).  KLOGH is itself computed from logs by a
petrophysicist, so part of what any model learns here is that interpretation's transform.
"""

from __future__ import annotations

from pathlib import Path

from ..data.volve import ATTRIBUTION, F11B_FORECAST_M, F11B_TRAIN_M, read_volve
from ..models import LSTMRegressor, SequenceRegressor, run_config_defaults
from ..report import write_report
from ..reporting import say
from ..runs import write_json
from ..wells import WellModel, run_well_experiment

INPUTS = ["PHIF", "VSH", "SW"]
TARGET = "KLOGH"


def _well_model(epochs: int, window: int, lstm: bool = True) -> WellModel:
    return WellModel(INPUTS, TARGET, window=window, model=SequenceRegressor(epochs=epochs),
                     lstm=LSTMRegressor(epochs=epochs) if lstm else None)


def run(out="glassformer_runs/real-wells", *, epochs: int = 40, window: int = 32, root=None, seeds=(42,),
        lstm: bool = True) -> dict:
    """Run both Volve experiments, the blind well first; returns ``{"across-wells": metrics, "f11b-depth-split": metrics}``."""
    out = Path(out)
    f11b = read_volve("F-11B", root)
    f1b = read_volve("F-1B", root)
    f1a = read_volve("F-1A", root)
    step = float(f11b.depth[1] - f11b.depth[0])
    results = {}
    say("Real wells, experiment 1: a blind well, 15/9-F-1 A (trained on 15/9-F-11 B + 15/9-F-1 B)")
    results["across-wells"] = run_well_experiment(
        out / "across-wells", [f11b, f1b], [f1a], _well_model(epochs, window, lstm), seeds=seeds,
        title="Blind well 15/9-F-1 A (trained on 15/9-F-11 B and 15/9-F-1 B)", attribution=ATTRIBUTION,
        config={"demo": "real-wells", "experiment": "across-wells"})
    say("Real wells, experiment 2: 15/9-F-11 B depth split, train 3351.6-4300 m, forecast 4300-4744.8 m")
    train = f11b.interval(*F11B_TRAIN_M)
    test = f11b.interval(F11B_FORECAST_M[0] + step / 2, F11B_FORECAST_M[1])   # 4300.0 m belongs to training
    results["f11b-depth-split"] = run_well_experiment(
        out / "f11b-depth-split", [train], [test], _well_model(epochs, window, lstm), seeds=seeds,
        title="15/9-F-11 B depth split (easier: neighbouring intervals are alike)",
        attribution=ATTRIBUTION, boundary=F11B_TRAIN_M[1],
        config={"demo": "real-wells", "experiment": "f11b-depth-split", "train_m": F11B_TRAIN_M,
                "forecast_m": F11B_FORECAST_M})
    # The parent folder gets both comparison tables and a report linking nothing external.
    write_json(out / "metrics.json", {
        "title": "Real Volve wells: a blind well, then a depth split",
        "units": {"rmse": "log10 mD", "mae": "log10 mD", "r2": "dimensionless", "rmse_sd": "log10 mD",
                  "mae_sd": "log10 mD", "train_s": "s", "train_s_sd": "s"},
        "note": "Test-split tables of the two experiments; each sub-folder holds its own report.html and figures.",
        **{name: r["comparison"]["table"] for name, r in results.items()},
        "seeds": list(seeds), "attribution": ATTRIBUTION})
    write_report(out, run_config_defaults())
    say(ATTRIBUTION)
    return results
