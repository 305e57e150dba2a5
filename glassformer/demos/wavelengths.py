"""Choosing positional wavelengths by validation (the chapter's "How do we specify positional embeddings?").

The chapter (Pyrcz 2024) suggests picking the wavelengths of ``[sin(2*pi*z/lambda), cos(2*pi*z/lambda)]`` from
prior knowledge, a geometric schedule, or by comparing candidates on validation data.  This demo
does the comparison on a problem whose answer is known:

* four synthetic wells (:func:`glassformer.data.synthetic.synthetic_wells`, seed 13, 400 samples
  at 0.5 m) with a constructed *cyclic overprint* added to log10 permeability:
  ``1.0 * sin(2*pi*z / 5 m)`` decades (alternating cementation in 5 m cycles; ``z`` = depth in m);
* inputs PHI and VSH (min-max scaled on the training interval), target log10 k (log10 mD),
  windows of 16 samples (8 m), positions = depth in metres;
* each well split along depth: top 60 % training, next 20 % validation, last 20 % test.

Every candidate is trained on the training interval and scored on the validation interval
(:func:`glassformer.selection.select_wavelengths`, two seeds).  The test interval is used once,
after the choice, for the selected wavelengths and for the chapter's default ``[2*pi, 200*pi]``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..data.scaling import MinMaxScaler
from ..data.synthetic import synthetic_wells
from ..data.windows import make_windows
from ..models import SequenceRegressor, run_config_defaults
from ..nn.positional import CHAPTER_WAVELENGTHS
from ..selection import geometric_wavelengths, select_wavelengths
from ..runs import prepare_run_dir, write_figures, write_json
from ..wells import regression_metrics
from ..report import write_report
from ..reporting import say

CYCLE_M = 5.0          # period of the constructed overprint (m): the "right" wavelength
CYCLE_DECADES = 1.0    # its amplitude (log10 mD)
WINDOW = 16
STRIDE = 4
FRACTIONS = (0.6, 0.2, 0.2)
INPUTS = ("PHI", "VSH")
SEEDS = (0, 1)
MODEL_PARAMS = dict(optimizer="adam", lr=0.01, epochs=300, d_ff=16)


def candidates() -> dict:
    """Named candidate wavelength sets (metres): the chapter's, the standard schedule, a geometric one,
    prior knowledge of the cycle, and long wavelengths only (a smooth function of depth)."""
    return {
        "seed [2pi, 200pi]": list(CHAPTER_WAVELENGTHS),
        "standard sinusoidal (base 10000)": geometric_wavelengths(2 * np.pi, 2 * np.pi * 10000 ** 0.75, 4),
        "geometric 2-64 m": geometric_wavelengths(2.0, 64.0, 4),
        "prior: 5 m cycle + longer": [CYCLE_M, 20.0, 100.0, 1000.0],
        "long 1-8 km": [1000.0, 2000.0, 4000.0, 8000.0],
    }


def prepare_data(n_wells: int = 4):
    """Windows ``(X, y, depth)`` of the training, validation and test intervals (dict by split)."""
    logs = synthetic_wells(n_wells=n_wells, n_samples=400, step_m=0.5, seed=13)
    cuts = np.cumsum((0,) + FRACTIONS)
    parts = {"train": [], "validation": [], "test": []}
    raw = []
    for log in logs:
        z = log.depth
        X = log.matrix(list(INPUTS))
        y = np.log10(log.curve("PERM")) + CYCLE_DECADES * np.sin(2 * np.pi * z / CYCLE_M)
        bounds = np.rint(cuts * len(z)).astype(int)
        for name, a, b in zip(parts, bounds[:-1], bounds[1:]):
            raw.append((name, X[a:b], y[a:b], z[a:b]))
    scaler = MinMaxScaler().fit(np.concatenate([X for name, X, _, _ in raw if name == "train"]))
    for name, X, y, z in raw:
        # overlapping windows to train; non-overlapping ones to score each sample once
        w = make_windows(scaler.transform(X), y, z, window=WINDOW, stride=STRIDE if name == "train" else WINDOW)
        parts[name].append((w.x, w.y, w.positions))
    return {k: tuple(np.concatenate([p[i] for p in v]) for i in range(3)) for k, v in parts.items()}


def _test_metrics(wavelengths, data, model_params: dict, seed: int) -> dict:
    Xtr, ytr, ztr = data["train"]
    Xte, yte, zte = data["test"]
    model = SequenceRegressor.chapter_model(d_model=2 * len(wavelengths), positional="wavelengths",
                                            positional_options={"wavelengths": list(wavelengths)},
                                            random_state=seed, **model_params).fit(Xtr, ytr, ztr)
    return regression_metrics(yte, model.predict(Xte, zte))


def _figure(result, names):
    rmse = np.array([r["rmse"] for r in result.table])
    sd = np.array([r["rmse_sd"] for r in result.table])
    ax = Figure(figsize=(1.6 * len(names) + 2.5, 4.4), layout="constrained").add_subplot()
    colours = ["tab:green" if i == result.best_index else "0.65" for i in range(len(names))]
    bars = ax.bar(range(len(names)), rmse, yerr=sd, capsize=4, color=colours, edgecolor="black", linewidth=0.6)
    ax.bar_label(bars, labels=[f"{v:.3g}" for v in rmse], padding=2, fontsize=9)
    ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
    ax.set_ylabel("Validation RMSE (log10 mD, lower is better)")
    ax.set_xlabel("Candidate wavelengths (m)")
    ax.set_ylim(0, float(np.nanmax(rmse + sd)) * 1.2)
    ax.grid(alpha=0.3, axis="y")
    ax.set_axisbelow(True)
    ax.set_title(f"Wavelength selection: mean over seeds {list(result.seeds)}, error bar = sd")
    return ax


def run(out="glassformer_runs/wavelengths", *, n_wells: int = 4, epochs: int = 300,
        seeds=SEEDS) -> dict:
    """Compare the candidate wavelength sets on the validation interval and write the run folder.

    Writes ``metrics.json`` (the validation table, the ranking, test metrics of the selected set and
    of the chapter's default), ``config.json`` and ``figures/wavelength_selection.png``; returns the
    metrics.  ``n_wells``, ``epochs`` and ``seeds`` shrink the run (tests); the defaults take about
    20 s of CPU.
    """
    out = prepare_run_dir(out)
    seeds = tuple(seeds)
    model_params = dict(MODEL_PARAMS, epochs=int(epochs))
    say(f"Wavelength selection: synthetic wells with a {CYCLE_M:g} m cyclic overprint, positions = depth (m)")
    data = prepare_data(n_wells)
    cands = candidates()
    names = list(cands)
    Xtr, ytr, ztr = data["train"]
    Xv, yv, zv = data["validation"]
    result = select_wavelengths(list(cands.values()), Xtr, ytr, Xv, yv, positions_train=ztr, positions_val=zv,
                                model_params=model_params, seeds=seeds)
    say(repr(result))
    best_name = names[result.best_index]
    say(f"Selected: {best_name} {result.best}; scoring it and the chapter's default once on the test interval")
    test = {best_name: _test_metrics(result.best, data, model_params, seeds[0])}
    if result.best_index != 0:
        test[names[0]] = _test_metrics(cands[names[0]], data, model_params, seeds[0])
    for name, m in test.items():
        say(f"  test {name}: RMSE {m['rmse']:.4f}, MAE {m['mae']:.4f}, R2 {m['r2']:.4f} (log10 mD)")
    table = [dict(name=n, **row) for n, row in zip(names, result.to_dict()["table"])]
    metrics = {"title": "Positional wavelengths chosen by validation", "units": "log10 mD",
               "metric": result.metric, "selected": best_name, "selected_wavelengths_m": result.best,
               "true_cycle_m": CYCLE_M, "validation_table": table, "ranking": [names[i] for i in result.ranking()],
               "test_after_selection": test}
    write_json(Path(out) / "metrics.json", metrics)
    write_json(Path(out) / "config.json", {
        "demo": "wavelengths", "chapter_section": "How do we specify positional embeddings?",
        "candidates_m": cands, "model": model_params, "seeds": list(seeds),
        "data": {"generator": "synthetic_wells", "n_wells": n_wells, "n_samples": 400, "step_m": 0.5, "seed": 13,
                 "inputs": list(INPUTS), "target": f"log10 PERM + {CYCLE_DECADES} sin(2 pi z / {CYCLE_M} m)",
                 "window": WINDOW, "stride_train": STRIDE, "split_fractions": list(FRACTIONS),
                 "positions": "depth (m)"}})
    write_figures(out, extra={"wavelength_selection": lambda: _figure(result, names)})
    write_report(out, run_config_defaults())
    say(f"Wrote {out}")
    return metrics
