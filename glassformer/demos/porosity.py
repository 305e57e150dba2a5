"""Demonstration 1: seven depths -- permeability from porosity at 7 depths, forecast at depths 8-14.

The chapter's data (Pyrcz 2024, "Transformers"): porosity 13, 11, 9, 9, 10, 8, 7 % and
permeability 122, 110, 67, 55, 72, 40, 45 mD at depths 1-7 m; porosity 7.5, 9.3, 9.1, 8.5, 7.3, 7.8,
7.5 % at depths 8-14 m, where permeability is unknown.  Min-max scaling is fitted on depths 1-7
only.  The model is the chapter's (``SequenceRegressor.chapter_model()``: d_model 4, one head, d_ff
16, post-norm, positional encoding ``[sin t, cos t, sin t/100, cos t/100]`` at t = depth in m, the
chapter's initialisation) trained by full-batch gradient descent, lr 0.01, 30,000 epochs.  The
printed MSE reproduces the chapter's to six decimals at every printed epoch (:data:`CHAPTER_MSE`).

Two forecasting schemes are reported, each line labelled with its own depth and porosity:

* **forecast window alone** -- depths 8-14 form one 7-long window at positions 8..14, the same
  length the model was trained on (consistent with training);
* **one 14-position window** -- depths 1-14 in one window, as the chapter's code does; the
  forecast outputs then depend on the training depths through attention, and the
  training-interval outputs change when the forecast depths are appended.

Seven points and ~200 parameters: a training MSE of ~0 is memorisation, not skill, and there is no
observed permeability at depths 8-14 to score the forecast against.

The comparison: a bidirectional LSTM of about the same size (hidden size 4 per direction, 233
parameters against the transformer's 237; Adam, lr 0.01, full batch, 3,000 epochs -- plain SGD at
lr 0.01 barely moves an LSTM in 30,000 epochs), the porosity-permeability transform and the training
mean are fitted on the same 7 scaled points with the same seed(s).  Their table is the fit on the
training interval, the only place with truth; their forecasts at depths 8-14 are listed, unscored.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from .. import plots
from ..data.scaling import MinMaxScaler
from ..models import LSTMRegressor, SequenceRegressor, run_config_defaults
from ..report import write_report
from ..reporting import say
from ..runs import prepare_run_dir, write_csv, write_figures, write_json, write_trace_figures
from ..selftest.published import demonstration_1
from ..train import PrintLoss
from ..wells import (PorosityPermeabilityTransform, TrainingMean, format_comparison_table, regression_metrics,
                     summarise_runs)

#: The LSTM of the comparison: the transformer's size (233 vs 237 parameters), bidirectional.
LSTM_PARAMS = dict(hidden_size=4, bidirectional=True, optimizer="adam", lr=1e-2, batch_size=None, epochs=3000,
                   grad_clip=1.0, early_stopping_patience=None, validation_fraction=None)
#: Depth intervals shaded on the figures (m): samples 1-7 train, 8-14 forecast.
INTERVALS = {"train": (0.5, 7.5), "forecast": (7.5, 14.5)}

DEPTH = np.arange(1, 8, dtype=np.float64)                                  # m
POROSITY = np.array([13.0, 11.0, 9.0, 9.0, 10.0, 8.0, 7.0])                # %
PERMEABILITY = np.array([122.0, 110.0, 67.0, 55.0, 72.0, 40.0, 45.0])      # mD
DEPTH_FORECAST = np.arange(8, 15, dtype=np.float64)                        # m
POROSITY_FORECAST = np.array([7.5, 9.3, 9.1, 8.5, 7.3, 7.8, 7.5])          # %

#: The chapter's printed MSE (six decimals) at these epochs, ``{epoch: MSE}`` (stored once, in
#: glassformer/selftest/published.json).
CHAPTER_MSE = demonstration_1()["printed_mse"]


def prepare_data():
    """Scaled arrays: ``x (1, 7, 1)``, ``y (1, 7, 1)``, ``x_forecast (1, 7, 1)`` and the two scalers."""
    xs = MinMaxScaler().fit(POROSITY[:, None])
    ys = MinMaxScaler().fit(PERMEABILITY[:, None])
    x = xs.transform(POROSITY[:, None])[None]
    y = ys.transform(PERMEABILITY[:, None])[None]
    xf = xs.transform(POROSITY_FORECAST[:, None])[None]
    return x, y, xf, xs, ys


def train(epochs: int = 30000, *, print_every: int | None = 2000, random_state: int = 42) -> tuple:
    """Train the chapter's model; returns ``(model, x, y, x_forecast, x_scaler, y_scaler)``.

    The loss every ``print_every`` epochs is reported (:func:`glassformer.reporting.say`)."""
    x, y, xf, xs, ys = prepare_data()
    model = SequenceRegressor.chapter_model(epochs=epochs, random_state=random_state)
    cbs = [PrintLoss(print_every, "Epoch {epoch:5d} | MSE: {loss:.6f}", echo=say)] if print_every else []
    model.fit(x, y, DEPTH, callbacks=cbs)
    return model, x, y, xf, xs, ys


def forecasts(model, x, xf, ys) -> dict:
    """Permeability (mD) at the training and forecast depths under both schemes."""
    to_mD = lambda a: ys.inverse_transform(a.reshape(-1, 1))[:, 0]  # noqa: E731
    train_fit = to_mD(model.predict(x, DEPTH))
    alone = to_mD(model.predict(xf, DEPTH_FORECAST))
    both = to_mD(model.predict(np.concatenate([x, xf], axis=1), np.concatenate([DEPTH, DEPTH_FORECAST])))
    return {"train": train_fit, "forecast_alone": alone, "window14": both}


def train_lstm(x, y, *, random_state: int = 42, epochs: int | None = None) -> LSTMRegressor:
    """The comparison's LSTM (:data:`LSTM_PARAMS`) fitted on the same 7 scaled points."""
    params = dict(LSTM_PARAMS, random_state=random_state)
    if epochs is not None:
        params["epochs"] = epochs
    return LSTMRegressor(**params).fit(x, y)


def compare(x, y, xf, ys, *, seeds=(42,), epochs: int = 30000, lstm_epochs: int | None = None,
            first=None) -> tuple:
    """Fit every model once per seed on the 7 training depths.

    Returns ``(runs, models)``: the per-seed records for :func:`~glassformer.wells.summarise_runs`
    (split ``"train"``: the training interval) and the first seed's fitted ``{"transformer", "LSTM"}``.
    ``first``: an already trained transformer for ``seeds[0]`` (with its fit time in ``first.fit_s_``).
    """
    to_mD = lambda a: ys.inverse_transform(a.reshape(-1, 1))[:, 0]  # noqa: E731
    runs, models = [], None
    for i, seed in enumerate(seeds):
        seconds = {}
        if i == 0 and first is not None:
            tf, seconds["transformer"] = first, first.fit_s_
        else:
            t0 = time.perf_counter()
            tf = SequenceRegressor.chapter_model(epochs=epochs, random_state=seed).fit(x, y, DEPTH)
            seconds["transformer"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        lstm = train_lstm(x, y, random_state=seed, epochs=lstm_epochs)
        seconds["LSTM"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        ppt = PorosityPermeabilityTransform().fit(POROSITY, PERMEABILITY)
        seconds["porosity-permeability transform"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        mean = TrainingMean().fit(None, PERMEABILITY)
        seconds["training mean"] = time.perf_counter() - t0
        preds = {"transformer": to_mD(tf.predict(x, DEPTH)), "LSTM": to_mD(lstm.predict(x)),
                 "porosity-permeability transform": ppt.predict(POROSITY), "training mean": mean.predict(POROSITY)}
        runs.append({"seed": seed, "metrics": {"train": {k: regression_metrics(PERMEABILITY, v)
                                                         for k, v in preds.items()}},
                     "parameters": {"transformer": tf.network_.num_parameters(), "LSTM": lstm.network_.num_parameters(),
                                    "porosity-permeability transform": 2, "training mean": 1},
                     "seconds": seconds,
                     "forecast_mD": {"transformer": to_mD(tf.predict(xf, DEPTH_FORECAST)),
                                     "LSTM": to_mD(lstm.predict(xf))}})
        if len(seeds) > 1:
            say(f"  seed {seed}: training-interval RMSE (mD) " + ", ".join(
                f"{k} {v['rmse']:.2f}" for k, v in runs[-1]["metrics"]["train"].items()))
        if i == 0:
            models = {"transformer": tf, "LSTM": lstm}
    return runs, models


def run(out="glassformer_runs/porosity", *, epochs: int = 30000, seeds=(42,), lstm_epochs: int | None = None,
        report: bool = True) -> dict:
    """Run demonstration 1 and the comparison; write its run folder (with report.html) and return the metrics.

    ``seeds``: the first is the published run (42 reproduces the chapter's printed MSE); more seeds
    retrain every model and report mean ± sd on the training interval.
    """
    seeds = [int(s) for s in seeds]
    out = prepare_run_dir(out)
    say("Demonstration 1, seven depths: porosity -> permeability at depths 1-7 m, forecast 8-14 m")
    t0 = time.perf_counter()
    model, x, y, xf, xs, ys = train(epochs, random_state=seeds[0])
    model.fit_s_ = time.perf_counter() - t0
    f = forecasts(model, x, xf, ys)
    _say_forecasts(f)
    # The comparison on the same 7 points (fit quality only: no truth exists at depths 8-14).
    runs, fitted = compare(x, y, xf, ys, seeds=seeds, epochs=epochs, lstm_epochs=lstm_epochs, first=model)
    to_mD = lambda a: ys.inverse_transform(a.reshape(-1, 1))[:, 0]  # noqa: E731
    lstm = fitted["LSTM"]
    f["lstm"], f["lstm_forecast"] = to_mD(lstm.predict(x)), to_mD(lstm.predict(xf))
    baselines = {"transform": PorosityPermeabilityTransform().fit(POROSITY, PERMEABILITY),
                 "mean": TrainingMean().fit(None, PERMEABILITY)}
    metrics = _metrics(model, f, baselines, runs, seeds)
    model.save(Path(out) / "model", overwrite=True)
    lstm.save(Path(out) / "model_lstm", overwrite=True)
    write_json(Path(out) / "config.json", {"demo": "porosity", "chapter_section": "Transformer Demonstration #1",
                                           "model": model.get_params(), "lstm": lstm.get_params(), "seeds": seeds,
                                           "positions": "depth (m), 1..14",
                                           "scaling": {"porosity": xs.to_dict(), "permeability": ys.to_dict()}})
    write_json(Path(out) / "metrics.json", metrics)
    rows = _rows(f, baselines)
    write_csv(Path(out) / "predictions.csv", rows)
    _figures(out, model, rows, f, np.concatenate([x, xf], axis=1), y)
    say(format_comparison_table(metrics, "mD"))
    if report:
        write_report(out, run_config_defaults())
    say(f"Wrote {out}")
    return metrics


def _say_forecasts(f: dict) -> None:
    """The fit at depths 1-7 and both forecasting schemes at depths 8-14, each line with its own depth."""
    say("Training interval (observed vs predicted, mD):")
    for d, phi, k, kh in zip(DEPTH, POROSITY, PERMEABILITY, f["train"]):
        say(f"  depth {d:4.0f} m | porosity {phi:4.1f} % | observed {k:6.1f} | predicted {kh:6.1f}")
    say("Forecast, scheme A -- the forecast window alone (depths 8-14 at positions 8..14, 7-long like training):")
    for d, phi, kh in zip(DEPTH_FORECAST, POROSITY_FORECAST, f["forecast_alone"]):
        say(f"  depth {d:4.0f} m | porosity {phi:4.1f} % | predicted permeability {kh:6.1f} mD")
    say("Forecast, scheme B -- all 14 depths in one window (the chapter's code; attention mixes in depths 1-7):")
    for d, phi, kh in zip(DEPTH_FORECAST, POROSITY_FORECAST, f["window14"][7:]):
        say(f"  depth {d:4.0f} m | porosity {phi:4.1f} % | predicted permeability {kh:6.1f} mD")
    shift = np.max(np.abs(f["window14"][:7] - f["train"]))
    say(f"  (scheme B changes the training-depth outputs by up to {shift:.1f} mD: at depths 1-7 it gives "
        + ", ".join(f"{v:.1f}" for v in f["window14"][:7])
        + " mD -- the seven values the chapter's listing prints under the labels of depths 8-14)")


def _metrics(model, f: dict, baselines: dict, runs: list, seeds: list) -> dict:
    ppt, mean = baselines["transform"], baselines["mean"]
    summary = summarise_runs(runs, "train")
    hist = model.history_
    metrics = {
        "title": "Demonstration 1: seven depths",
        "units": {"rmse": "mD", "mae": "mD", "r2": "dimensionless", "mse_scaled": "min-max scaled permeability",
                  "rmse_sd": "mD", "mae_sd": "mD", "train_s": "s", "train_s_sd": "s"},
        "note": ("Metrics are on the 7 training depths (no observed permeability exists at depths 8-14). "
                 "A near-zero training error of a ~200-parameter model on 7 points is memorisation, not skill."),
        "printed_mse": {str(e): hist.train_loss[e] for e in CHAPTER_MSE if e < len(hist)},
        "model": regression_metrics(PERMEABILITY, f["train"]),
        "baselines": {"LSTM": regression_metrics(PERMEABILITY, f["lstm"]),
                      "porosity-permeability transform": regression_metrics(PERMEABILITY, ppt.predict(POROSITY)),
                      "training mean": regression_metrics(PERMEABILITY, mean.predict(POROSITY))},
        "comparison": {"split": "training interval (depths 1-7 m; depths 8-14 have no truth)", "seeds": seeds,
                       "table": summary["table"], "per_seed": summary["per_seed"],
                       "note": ("Fit on the 7 training depths, mean over seeds (sample sd beside it, none for one "
                                "seed). Both networks can memorise 7 points: a lower training error here is not "
                                "evidence of a better forecast. train_s is the fit time in s on this machine.")},
        "forecast_mD": {"depth_m": DEPTH_FORECAST, "porosity_percent": POROSITY_FORECAST,
                        "scheme_A_forecast_window_alone": f["forecast_alone"],
                        "scheme_B_one_14_position_window": f["window14"][7:],
                        "lstm_forecast_window_alone": f["lstm_forecast"],
                        "porosity_permeability_transform": ppt.predict(POROSITY_FORECAST),
                        "training_mean": np.full(7, mean.mean_)},
    }
    if len(seeds) > 1:
        # No truth at depths 8-14, but the seeds' disagreement there is measurable: it is what the
        # training error (0 for every seed) hides.
        metrics["forecast_across_seeds_mD"] = {
            name: {"depth_m": DEPTH_FORECAST,
                   "mean": np.mean([r["forecast_mD"][name] for r in runs], axis=0),
                   "sd": np.std([r["forecast_mD"][name] for r in runs], axis=0, ddof=1)}
            for name in ("transformer", "LSTM")}
        for name, v in metrics["forecast_across_seeds_mD"].items():
            say(f"  {name} forecast at depths 8-14, sd across seeds (mD): "
                + ", ".join(f"{x:.1f}" for x in v["sd"]))
    return metrics


def _rows(f: dict, baselines: dict):
    """predictions.csv: one row per depth 1-14, one column per model and scheme."""
    return pd.DataFrame({
        "depth_m": np.concatenate([DEPTH, DEPTH_FORECAST]),
        "interval": ["train"] * 7 + ["forecast"] * 7,
        "porosity_percent": np.concatenate([POROSITY, POROSITY_FORECAST]),
        "permeability_observed_mD": np.concatenate([PERMEABILITY, np.full(7, np.nan)]),
        "transformer_own_window_mD": np.concatenate([f["train"], f["forecast_alone"]]),
        "transformer_14_window_mD": f["window14"],
        "lstm_own_window_mD": np.concatenate([f["lstm"], f["lstm_forecast"]]),
        "poro_perm_transform_mD": baselines["transform"].predict(np.concatenate([POROSITY, POROSITY_FORECAST])),
        "training_mean_mD": np.full(14, baselines["mean"].mean_),
    })


def _figures(out, model, rows, f: dict, x_all, y) -> None:
    """The standard run figures, the tracks, the scaled cross-plot and the look inside the model."""
    depth_all = np.concatenate([DEPTH, DEPTH_FORECAST])
    phi_all = np.concatenate([POROSITY, POROSITY_FORECAST])
    observed = np.concatenate([PERMEABILITY, np.full(7, np.nan)])
    tr = model.trace(x_all, depth_all)
    own = rows["transformer_own_window_mD"].to_numpy()
    write_figures(out, history=model.history_, depth=depth_all, observed=observed,
                  predictions={"transformer A: own 7-depth windows": own,
                               "transformer B: one 14-depth window": f["window14"],
                               "LSTM (own 7-depth windows)": rows["lstm_own_window_mD"].to_numpy(),
                               "poro-perm transform": rows["poro_perm_transform_mD"].to_numpy(),
                               "training mean": rows["training_mean_mD"].to_numpy()},
                  boundary=7.5, quantity="Permeability", unit="mD", porosity=phi_all,
                  permeability=np.concatenate([PERMEABILITY, f["forecast_alone"]]),
                  crossplot_labels=[f"{d:g}" for d in depth_all], porosity_unit="%",
                  attention=tr["layers.0.A"][0, 0], attention_depths=depth_all, title="Demo 1:",
                  extra={
                      "tracks": lambda: plots.plot_log_tracks(
                          depth_all, {"porosity": phi_all, "permeability (observed)": observed,
                                      "permeability (transformer A)": own},
                          units={"porosity": "%", "permeability (observed)": "mD",
                                 "permeability (transformer A)": "mD"},
                          intervals=INTERVALS, porosity_unit="%"),
                      "crossplot_normalised": lambda: plots.plot_crossplot(
                          x_all[0, :, 0], np.concatenate([y[0, :, 0], np.full(7, np.nan)]), normalised=True,
                          labels=[f"{d:g}" for d in depth_all],
                          title="Cross-plot min-max scaled on depths 1-7 (what the model sees)"),
                  })
    write_trace_figures(out, tr, depth_all, intervals=INTERVALS, sequences=(0,))
