"""The chapter's printed numbers (Pyrcz 2024, "Transformers"), reproduced by the library model.

Demonstration 1 (seven depths): full-batch gradient descent through all 30,000 epochs (every
printed MSE to six decimals, and the printed training permeabilities to one decimal).
Demonstration 2 (the next depth): all 1,000 epochs of shuffled mini-batches (mean batch MSE at
epochs 20, 500 and 1,000), then glassformer's measured held-out MSE, learned attention on the next
depth and the ablation.  Every number is read from glassformer/selftest/published.json.
"""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.demos import neighbor, porosity
from glassformer.selftest.published import demonstration_1, demonstration_2


def test_demonstration_1_printed_mse_and_permeabilities_through_epoch_30000():
    chapter = demonstration_1()
    printed = []
    model, x, y, xf, xs, ys = porosity.train(epochs=30000, print_every=2000, echo=printed.append)
    assert printed == [f"Epoch {e:5d} | MSE: {v:.6f}" for e, v in chapter["printed_mse"].items()]
    losses = model.history_.train_loss
    for epoch, value in chapter["printed_mse"].items():
        assert round(losses[epoch], 6) == value, epoch
    # Both forecast schemes produce one permeability per forecast depth, in mD.
    f = porosity.forecasts(model, x, xf, ys)
    assert [f"{k:.1f}" for k in f["train"]] == [f"{k:.1f}" for k in chapter["printed_training_permeability_mD"]]
    assert f["forecast_alone"].shape == (7,) and f["window14"].shape == (14,)
    assert not np.allclose(f["window14"][7:], f["forecast_alone"])   # the schemes differ
    # The chapter's forecast listing prints the 14-depth window's outputs at depths 1-7 (under the
    # labels of depths 8-14): the same seven numbers to its one decimal.
    assert [f"{k:.1f}" for k in f["window14"][:7]] == [f"{k:.1f}" for k in chapter["printed_forecast_listing_mD"]]


def test_demonstration_2_printed_mse_attention_and_ablation():
    chapter = demonstration_2()
    printed = []
    model, Xtr, ytr, Xte, yte = neighbor.train(epochs=1000, print_every=20, echo=printed.append)
    hist = model.history_.train_loss
    for epoch, value in chapter["printed_mean_batch_mse"].items():
        assert round(hist[epoch - 1], 6) == value, epoch
    mse = chapter["printed_mean_batch_mse"]
    assert printed[0] == f"Epoch   20/1000 | Mean batch MSE: {mse[20]:.6f}"
    assert printed[-1] == f"Epoch 1000/1000 | Mean batch MSE: {mse[1000]:.6f}"
    test_mse = float(np.mean((model.predict(Xte, neighbor.POSITIONS) - yte) ** 2))
    assert round(test_mse, 6) == chapter["held_out_mse"]
    A = model.trace(Xte, neighbor.POSITIONS)["layers.0.A"][:, 0].mean(axis=0)
    s = neighbor.attention_summary(A)
    assert s["superdiagonal_mean"] > 3 * s["elsewhere_mean"]
    assert s["superdiagonal_is_row_max"] >= 4
    assert round(s["superdiagonal_mean"], 3) == chapter["attention_next_depth_weight"]
    assert round(s["elsewhere_mean"], 3) == chapter["attention_elsewhere_weight"]
    abl = neighbor.ablation(model, Xte, yte)
    assert abl["learned"] == pytest.approx(test_mse)
    assert abl["learned"] < abl["uniform"] and abl["learned"] < abl["identity"]
    assert {k: round(abl[k], 6) for k in ("uniform", "identity")} == chapter["ablation_mse"]
