"""Demonstration 1 of seed 000: permeability from porosity at 7 depths, forecast at depths 8-14.

Data (seed 000): porosity 13, 11, 9, 9, 10, 8, 7 % and permeability 122, 110, 67, 55, 72, 40,
45 mD at depths 1-7 m; porosity 7.5, 9.3, 9.1, 8.5, 7.3, 7.8, 7.5 % at depths 8-14 m, where
permeability is unknown.  Min-max scaling is fitted on depths 1-7 only.  The model is the seed's
(``SequenceRegressor()`` defaults: d_model 4, one head, d_ff 16, post-norm, positional encoding
``[sin t, cos t, sin t/100, cos t/100]`` at t = depth in m, seed initialisation) trained by
full-batch gradient descent, lr 0.01, 30,000 epochs.  The printed MSE reproduces the seed:
0.151969 (epoch 0), 0.006728 (2,000), ..., 0.000011 (14,000).

Two forecasting schemes are reported, each line labelled with its own depth and porosity:

* **forecast window alone** -- depths 8-14 form one 7-long window at positions 8..14, the same
  length the model was trained on (consistent with training);
* **one 14-position window** -- depths 1-14 in one window, as the seed's code does; the forecast
  outputs then depend on the training depths through attention, and the training-interval
  outputs change when the forecast depths are appended.

Seven points and ~200 parameters: a training MSE of ~0 is memorisation, not skill, and there is no
observed permeability at depths 8-14 to score the forecast against.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from ..baselines import PorosityPermeabilityTransform, TrainingMean, regression_metrics
from ..data.scaling import MinMaxScaler
from ..models import SequenceRegressor
from ..training import PrintLoss
from .common import prepare_run_dir, write_csv, write_figures, write_json

DEPTH = np.arange(1, 8, dtype=np.float64)                                  # m
POROSITY = np.array([13.0, 11.0, 9.0, 9.0, 10.0, 8.0, 7.0])                # %
PERMEABILITY = np.array([122.0, 110.0, 67.0, 55.0, 72.0, 40.0, 45.0])      # mD
DEPTH_FORECAST = np.arange(8, 15, dtype=np.float64)                        # m
POROSITY_FORECAST = np.array([7.5, 9.3, 9.1, 8.5, 7.3, 7.8, 7.5])          # %

#: Seed 000's printed MSE (six decimals) at these epochs.
SEED_MSE = {0: 0.151969, 2000: 0.006728, 4000: 0.005706, 6000: 0.004918, 8000: 0.003601,
            10000: 0.001420, 12000: 0.000189, 14000: 0.000011}


def prepare_data():
    """Scaled arrays: ``x (1, 7, 1)``, ``y (1, 7, 1)``, ``x_forecast (1, 7, 1)`` and the two scalers."""
    xs = MinMaxScaler().fit(POROSITY[:, None])
    ys = MinMaxScaler().fit(PERMEABILITY[:, None])
    x = xs.transform(POROSITY[:, None])[None]
    y = ys.transform(PERMEABILITY[:, None])[None]
    xf = xs.transform(POROSITY_FORECAST[:, None])[None]
    return x, y, xf, xs, ys


def train(epochs: int = 30000, *, print_every: int | None = 2000, echo: Callable = print) -> tuple:
    """Train the seed's model; returns ``(model, x, y, x_forecast, x_scaler, y_scaler)``."""
    x, y, xf, xs, ys = prepare_data()
    model = SequenceRegressor(epochs=epochs)
    cbs = [PrintLoss(print_every, "Epoch {epoch:5d} | MSE: {loss:.6f}", echo=echo)] if print_every else []
    model.fit(x, y, DEPTH, callbacks=cbs)
    return model, x, y, xf, xs, ys


def forecasts(model, x, xf, ys) -> dict:
    """Permeability (mD) at the training and forecast depths under both schemes."""
    to_mD = lambda a: ys.inverse_transform(a.reshape(-1, 1))[:, 0]  # noqa: E731
    train_fit = to_mD(model.predict(x, DEPTH))
    alone = to_mD(model.predict(xf, DEPTH_FORECAST))
    both = to_mD(model.predict(np.concatenate([x, xf], axis=1), np.concatenate([DEPTH, DEPTH_FORECAST])))
    return {"train": train_fit, "forecast_alone": alone, "window14": both}


def run(out="glassformer_runs/porosity", *, epochs: int = 30000, echo: Callable = print) -> dict:
    """Run demonstration 1 and write its run folder; returns the metrics dict."""
    import pandas as pd

    out = prepare_run_dir(out)
    echo("Demonstration 1 (seed 000): porosity -> permeability at depths 1-7 m, forecast 8-14 m")
    model, x, y, xf, xs, ys = train(epochs, echo=echo)
    f = forecasts(model, x, xf, ys)
    echo("Training interval (observed vs predicted, mD):")
    for d, phi, k, kh in zip(DEPTH, POROSITY, PERMEABILITY, f["train"]):
        echo(f"  depth {d:4.0f} m | porosity {phi:4.1f} % | observed {k:6.1f} | predicted {kh:6.1f}")
    echo("Forecast, scheme A -- the forecast window alone (depths 8-14 at positions 8..14, 7-long like training):")
    for d, phi, kh in zip(DEPTH_FORECAST, POROSITY_FORECAST, f["forecast_alone"]):
        echo(f"  depth {d:4.0f} m | porosity {phi:4.1f} % | predicted permeability {kh:6.1f} mD")
    echo("Forecast, scheme B -- all 14 depths in one window (the seed's code; attention mixes in depths 1-7):")
    for d, phi, kh in zip(DEPTH_FORECAST, POROSITY_FORECAST, f["window14"][7:]):
        echo(f"  depth {d:4.0f} m | porosity {phi:4.1f} % | predicted permeability {kh:6.1f} mD")
    shift = np.max(np.abs(f["window14"][:7] - f["train"]))
    echo(f"  (scheme B changes the training-depth outputs by up to {shift:.1f} mD: at depths 1-7 it gives "
         + ", ".join(f"{v:.1f}" for v in f["window14"][:7])
         + " mD -- the seven values the seed prints mislabelled as depths 8-14)")

    # Baselines on the same 7 points (fit quality only: no truth exists at depths 8-14).
    ppt = PorosityPermeabilityTransform().fit(POROSITY, PERMEABILITY)
    mean = TrainingMean().fit(None, PERMEABILITY)
    hist = model.history_
    metrics = {
        "title": "Demonstration 1 (seed 000)",
        "units": {"rmse": "mD", "mae": "mD", "r2": "dimensionless", "mse_scaled": "min-max scaled permeability"},
        "note": ("Metrics are on the 7 training depths (no observed permeability exists at depths 8-14). "
                 "A near-zero training error of a ~200-parameter model on 7 points is memorisation, not skill."),
        "printed_mse": {str(e): hist.train_loss[e] for e in SEED_MSE if e < len(hist)},
        "model": regression_metrics(PERMEABILITY, f["train"]),
        "baselines": {"porosity-permeability transform": regression_metrics(PERMEABILITY, ppt.predict(POROSITY)),
                      "training mean": regression_metrics(PERMEABILITY, mean.predict(POROSITY))},
        "forecast_mD": {"depth_m": DEPTH_FORECAST, "porosity_percent": POROSITY_FORECAST,
                        "scheme_A_forecast_window_alone": f["forecast_alone"],
                        "scheme_B_one_14_position_window": f["window14"][7:],
                        "porosity_permeability_transform": ppt.predict(POROSITY_FORECAST)},
    }
    model.save(Path(out) / "model", overwrite=True)
    write_json(Path(out) / "config.json", {"demo": "porosity", "seed_section": "Transformer Demonstration #1",
                                           "model": model.get_params(), "positions": "depth (m), 1..14",
                                           "scaling": {"porosity": xs.to_dict(), "permeability": ys.to_dict()}})
    write_json(Path(out) / "metrics.json", metrics)
    rows = pd.DataFrame({
        "depth_m": np.concatenate([DEPTH, DEPTH_FORECAST]),
        "interval": ["train"] * 7 + ["forecast"] * 7,
        "porosity_percent": np.concatenate([POROSITY, POROSITY_FORECAST]),
        "permeability_observed_mD": np.concatenate([PERMEABILITY, np.full(7, np.nan)]),
        "transformer_own_window_mD": np.concatenate([f["train"], f["forecast_alone"]]),
        "transformer_14_window_mD": f["window14"],
        "poro_perm_transform_mD": ppt.predict(np.concatenate([POROSITY, POROSITY_FORECAST])),
    })
    write_csv(Path(out) / "predictions.csv", rows)
    depth_all = np.concatenate([DEPTH, DEPTH_FORECAST])
    tr = model.trace(np.concatenate([x, xf], axis=1), depth_all)
    write_figures(out, history=hist, depth=depth_all,
                  observed=np.concatenate([PERMEABILITY, np.full(7, np.nan)]),
                  predictions={"A: own 7-depth windows": rows["transformer_own_window_mD"].to_numpy(),
                               "B: one 14-depth window": f["window14"],
                               "poro-perm transform": rows["poro_perm_transform_mD"].to_numpy()},
                  boundary=7.5, quantity="Permeability", unit="mD",
                  porosity=np.concatenate([POROSITY, POROSITY_FORECAST]),
                  permeability=np.concatenate([PERMEABILITY, f["forecast_alone"]]),
                  crossplot_labels=[f"{d:g}" for d in depth_all], porosity_unit="%",
                  attention=tr["layers.0.A"][0, 0], attention_depths=depth_all, title="Demo 1:")
    echo(f"Wrote {out}")
    return metrics
