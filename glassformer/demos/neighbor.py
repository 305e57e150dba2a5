"""Demonstration 2: the next depth -- a target that depends on the deeper neighbour, learned through attention.

The chapter's set-up (Pyrcz 2024, "Transformers"): 1,000 sequences of 7 porosities
``phi ~ U(0.05, 0.35)`` with target ``y_i = 2 phi_{i+1} + noise`` (last position ``2 phi_7``), noise
sd 0.01, seed 42 (:func:`glassformer.data.synthetic.neighbor_dataset`); 80/20 split by sequence with
``default_rng(42).permutation``; the chapter's model and initialisation; mini-batches of 32
shuffled by ``default_rng(42).permutation`` each epoch; plain SGD, lr 0.3, 1,000 epochs, float64.
Reproduces the chapter's printed mean batch MSE at epochs 20, 500 and 1,000 (:data:`CHAPTER_MSE`);
its held-out test MSE (evaluation mode, mean over the 200 test sequences) is stored beside them
(:func:`glassformer.selftest.published.demonstration_2`).

It then measures what the chapter only proposes: the learned attention's weight on key ``i+1`` for
query ``i`` (the superdiagonal) against every other entry, and an ablation that replaces the
learned attention weights by uniform weights (1/7) or the identity (each depth attends to itself)
on the held-out sequences.

The comparison: a bidirectional LSTM (hidden size 4 per direction, 233 parameters against the
transformer's 237; Adam, lr 0.01, mini-batches of 32, 100 epochs, seed 42) on the same split; its
held-out MSE sits beside the transformer's and the baselines'.  A bidirectional recurrence reads the
next depth directly, so this task does not need attention to be solved.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from .. import plots
from ..data.synthetic import neighbor_dataset, split_by_sequence
from ..models import LSTMRegressor, SequenceRegressor, run_config_defaults
from ..report import write_report
from ..reporting import say
from ..runs import prepare_run_dir, write_csv, write_figures, write_json, write_trace_figures
from ..selftest.published import demonstration_2
from ..train import PrintLoss
from ..wells import PorosityPermeabilityTransform, TrainingMean, regression_metrics

#: The LSTM of the comparison (about the transformer's size).
LSTM_PARAMS = dict(hidden_size=4, bidirectional=True, optimizer="adam", lr=1e-2, batch_size=32, epochs=100,
                   grad_clip=1.0, early_stopping_patience=None, validation_fraction=None, random_state=42)

POSITIONS = np.arange(1, 8, dtype=np.float64)

#: The chapter's printed mean batch MSE at these (1-based) epochs, ``{epoch: MSE}`` (stored once, in
#: glassformer/selftest/published.json).
CHAPTER_MSE = demonstration_2()["printed_mean_batch_mse"]


def prepare_data():
    """``X_train (800, 7, 1), y_train, X_test (200, 7, 1), y_test`` exactly as the chapter builds them."""
    X, y = neighbor_dataset(n_sequences=1000, seq_length=7, noise_std=0.01, seed=42)
    tr, te = split_by_sequence(len(X), 0.8, seed=42)
    return X[tr], y[tr], X[te], y[te]


def train(epochs: int = 1000, *, print_every: int | None = 20, progress: bool = False):
    """Train the chapter's model on the chapter's split; returns ``(model, X_train, y_train, X_test, y_test)``."""
    Xtr, ytr, Xte, yte = prepare_data()
    model = SequenceRegressor.chapter_model(epochs=epochs, batch_size=32, lr=0.3, progress=progress)
    cbs = [PrintLoss(print_every, "Epoch {epoch1:4d}/{epochs} | Mean batch MSE: {loss:.6f}", offset=1, echo=say)] \
        if print_every else []
    model.fit(Xtr, ytr, POSITIONS, callbacks=cbs)
    return model, Xtr, ytr, Xte, yte


def attention_summary(A: np.ndarray) -> dict:
    """Mean weight on the superdiagonal (query i -> key i+1) vs. all other entries of ``A (L, L)``."""
    L = A.shape[-1]
    sup = np.eye(L, k=1, dtype=bool)
    return {"superdiagonal_mean": float(A[..., sup].mean()), "elsewhere_mean": float(A[..., ~sup].mean()),
            "superdiagonal_is_row_max": int(np.sum(np.argmax(A[:-1], axis=-1) == np.arange(1, L))),
            "rows_checked": L - 1}


def ablation(model, X, y) -> dict:
    """Held-out MSE with the learned attention, uniform weights (1/L) and the identity."""
    L = X.shape[1]
    mse = lambda p: float(np.mean((p - y) ** 2))  # noqa: E731
    return {"learned": mse(model.predict(X, POSITIONS)),
            "uniform": mse(model.predict_with_attention(X, POSITIONS, np.full((L, L), 1.0 / L))),
            "identity": mse(model.predict_with_attention(X, POSITIONS, np.eye(L)))}


def run(out="glassformer_runs/neighbor", *, epochs: int = 1000, lstm_epochs: int | None = None, report: bool = True) -> dict:
    """Run demonstration 2 and write its run folder; returns the metrics dict."""
    out = prepare_run_dir(out)
    say("Demonstration 2, the next depth: target = 2 x porosity at the next depth; 800 train / 200 test sequences")
    t0 = time.perf_counter()
    model, Xtr, ytr, Xte, yte = train(epochs)
    tf_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    lstm = LSTMRegressor(**dict(LSTM_PARAMS, **({"epochs": lstm_epochs} if lstm_epochs else {}))).fit(Xtr, ytr)
    lstm_seconds = time.perf_counter() - t0
    lstm_pred = lstm.predict(Xte)
    say(f"LSTM (bidirectional, {lstm.network_.num_parameters()} parameters) held-out MSE: "
        f"{float(np.mean((lstm_pred - yte) ** 2)):.6f}")
    pred = model.predict(Xte, POSITIONS)
    test_mse = float(np.mean((pred - yte) ** 2))
    say(f"Held-out test MSE (eval mode, 200 sequences): {test_mse:.6f}")
    tr = model.trace(Xte, POSITIONS)
    A_mean = tr["layers.0.A"][:, 0].mean(axis=0)
    summ = attention_summary(A_mean)
    say(f"Learned attention (mean over test sequences): weight on key i+1 = {summ['superdiagonal_mean']:.3f}, "
        f"elsewhere = {summ['elsewhere_mean']:.3f}; key i+1 is the largest weight in "
        f"{summ['superdiagonal_is_row_max']}/{summ['rows_checked']} rows")
    abl = ablation(model, Xte, yte)
    say("Ablation on the held-out sequences (MSE): " +
        ", ".join(f"{k} {v:.6f}" for k, v in abl.items()))
    # Baselines: a same-depth linear transform of porosity (no context) and the training mean.
    ppt = PorosityPermeabilityTransform().fit_log10(Xtr.ravel(), ytr.ravel())
    mean = TrainingMean().fit(None, ytr)
    preds = {"transformer": pred, "LSTM": lstm_pred,
             "same-depth linear transform": ppt.predict_log10(Xte.ravel()).reshape(yte.shape),
             "training mean": np.full_like(yte, mean.mean_)}
    metrics = _metrics(model, lstm, preds, yte, test_mse, {"transformer": tf_seconds, "LSTM": lstm_seconds},
                       summ, A_mean, abl)
    model.save(Path(out) / "model", overwrite=True)
    lstm.save(Path(out) / "model_lstm", overwrite=True)
    write_json(Path(out) / "config.json", {"demo": "neighbor", "chapter_section": "Second Transformer Demonstration",
                                           "model": model.get_params(), "data": {"n_sequences": 1000,
                                           "seq_length": 7, "noise_std": 0.01, "seed": 42, "split": "80/20"}})
    write_json(Path(out) / "metrics.json", metrics)
    n, L = Xte.shape[:2]
    rows = pd.DataFrame({"test_sequence": np.repeat(np.arange(n), L), "position": np.tile(POSITIONS, n),
                         "porosity": Xte.ravel(), "target": yte.ravel(), "prediction": pred.ravel(),
                         "lstm_prediction": lstm_pred.ravel()})
    write_csv(Path(out) / "predictions.csv", rows)
    _figures(out, model, preds, Xte, yte, A_mean, abl)
    write_trace_figures(out, tr, POSITIONS, sequences=(0, 1, 2), depth_unit="sample index")
    if report:
        write_report(out, run_config_defaults())
    say(f"Wrote {out}")
    return metrics


def _metrics(model, lstm, preds: dict, yte, test_mse: float, seconds: dict, summ: dict, A_mean, abl: dict) -> dict:
    """metrics.json: the printed losses, held-out metrics of every model, attention and ablation."""
    flat_t = yte.ravel()
    scores = {name: regression_metrics(flat_t, p.ravel()) for name, p in preds.items()}
    params = {"transformer": model.network_.num_parameters(), "LSTM": lstm.network_.num_parameters(),
              "same-depth linear transform": 2, "training mean": 1}
    return {
        "title": "Demonstration 2: the next depth",
        "units": {"mse": "target units (2 x porosity, v/v)", "rmse": "target units", "mae": "target units"},
        "printed_mean_batch_mse": {str(e): model.history_.train_loss[e - 1] for e in CHAPTER_MSE
                                   if e <= len(model.history_)},
        "test_mse": test_mse,
        "model": scores["transformer"],
        "baselines": {k: v for k, v in scores.items() if k != "transformer"},
        "comparison": {"split": "held-out test sequences (200)", "seeds": [42], "table": {
            name: {**scores[name], "parameters": params[name], **({"train_s": seconds[name]} if name in seconds
                                                                   else {})} for name in preds}},
        "attention": {**summ, "mean_matrix": A_mean},
        "ablation_mse": abl,
        "learned_beats_ablations": bool(abl["learned"] < min(abl["uniform"], abl["identity"])),
    }


def _figures(out, model, preds: dict, Xte, yte, A_mean, abl: dict) -> None:
    """The standard run figures for test sequence 0, the ablation bars, tracks and prediction panels."""
    unit = "sample index"
    pred = preds["transformer"]
    write_figures(out, history=model.history_, depth=POSITIONS, observed=yte[0, :, 0],
                  predictions={"transformer": pred[0, :, 0], "LSTM": preds["LSTM"][0, :, 0],
                               "same-depth transform": preds["same-depth linear transform"][0, :, 0],
                               "training mean": preds["training mean"][0, :, 0]},
                  quantity="Target 2 x porosity(next depth)", unit="v/v", porosity=Xte.ravel(),
                  permeability=yte.ravel(), log_perm=False, attention=A_mean, attention_depths=POSITIONS,
                  depth_unit=unit, title="Demo 2 (test sequence 0):",
                  attention_title="Demo 2: attention weights (layer 0, head 0), mean over 200 test sequences",
                  extra={"ablation": lambda: plots.plot_ablation(abl, metric="MSE", unit="(v/v)²",
                                                                 title="Attention ablation, 200 held-out sequences"),
                         "tracks": lambda: plots.plot_log_tracks(
                             POSITIONS, {"porosity": Xte[0, :, 0], "target 2 x porosity(next)": yte[0, :, 0],
                                         "transformer prediction": pred[0, :, 0]},
                             units={"porosity": "fraction, v/v", "target 2 x porosity(next)": "v/v",
                                    "transformer prediction": "v/v"}, depth_unit=unit),
                         "prediction_panels": lambda: plots.plot_prediction_panels(
                             POSITIONS, yte[..., 0], pred[..., 0], inputs=Xte[..., 0],
                             quantity="Target", unit="v/v", depth_unit=unit,
                             title="Held-out sequences: target (2 x next porosity) and transformer prediction")})
