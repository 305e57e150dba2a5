"""Seed 000's published numbers, reproduced by the library model (issue 3, "Tests that must exist").

Demonstration 1: full-batch gradient descent through epoch 14,000 (the printed MSE to six
decimals).  Demonstration 2: all 1,000 epochs of shuffled mini-batches (mean batch MSE at epochs
20, 500 and 1,000), the held-out test MSE, the learned attention lag and the ablation.
"""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.demos import neighbor, porosity


def test_demo1_printed_mse_through_epoch_14000():
    printed = []
    model, x, y, xf, xs, ys = porosity.train(epochs=14001, print_every=2000, echo=printed.append)
    assert printed == [f"Epoch {e:5d} | MSE: {v:.6f}" for e, v in porosity.SEED_MSE.items()]
    losses = model.history_.train_loss
    for epoch, value in porosity.SEED_MSE.items():
        assert round(losses[epoch], 6) == value, epoch
    # Both forecast schemes produce one permeability per forecast depth, in mD.
    f = porosity.forecasts(model, x, xf, ys)
    assert f["forecast_alone"].shape == (7,) and f["window14"].shape == (14,)
    assert not np.allclose(f["window14"][7:], f["forecast_alone"])   # the schemes differ


def test_demo2_seed_numbers_attention_and_ablation():
    printed = []
    model, Xtr, ytr, Xte, yte = neighbor.train(epochs=1000, print_every=20, echo=printed.append)
    hist = model.history_.train_loss
    for epoch, value in neighbor.SEED_MSE.items():
        assert round(hist[epoch - 1], 6) == value, epoch
    assert printed[0] == "Epoch   20/1000 | Mean batch MSE: 0.029887"
    assert printed[-1] == "Epoch 1000/1000 | Mean batch MSE: 0.004423"
    test_mse = float(np.mean((model.predict(Xte, neighbor.POSITIONS) - yte) ** 2))
    assert round(test_mse, 6) == neighbor.SEED_TEST_MSE
    A = model.trace(Xte, neighbor.POSITIONS)["layers.0.A"][:, 0].mean(axis=0)
    s = neighbor.attention_summary(A)
    assert s["superdiagonal_mean"] > 3 * s["elsewhere_mean"]
    assert s["superdiagonal_is_row_max"] >= 4
    abl = neighbor.ablation(model, Xte, yte)
    assert abl["learned"] == pytest.approx(test_mse)
    assert abl["learned"] < abl["uniform"] and abl["learned"] < abl["identity"]
