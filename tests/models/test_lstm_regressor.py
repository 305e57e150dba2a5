"""LSTMRegressor: the regressor's surface (fit/predict/score/save/load/params), NaN-masked loss with a
finite-difference check of its gradient, and learning on a lag problem."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import LSTMRegressor, SequenceRegressor
from glassformer.errors import ModelFileError, NotReadyError, ShapeError
from glassformer.train.losses import MSELoss


def _lag_data(n=96, L=8, seed=0):
    """Target at depth t = 2 x input at depth t + 1 (the last depth repeats itself): needs the deeper neighbour."""
    x = np.random.default_rng(seed).uniform(0.0, 1.0, size=(n, L, 1))
    y = 2.0 * np.concatenate([x[:, 1:], x[:, -1:]], axis=1)
    return x, y


def _built(n_features=1, **kw) -> LSTMRegressor:
    m = LSTMRegressor(**kw)
    m.build_network(n_features)
    return m


def _eval_forward(m, X):
    """The (possibly untrained) network's output as predict computes it: eval mode, no caches."""
    net = m.network_
    was_training = net.training
    net.eval()
    try:
        with net.no_cache():
            return net.forward(X)
    finally:
        net.train(was_training)


def test_parameter_names_sizes_and_params_roundtrip():
    m = _built(3, hidden_size=5)
    names = list(m.network_.state_dict())
    assert names[:4] == ["lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0"]
    assert "lstm.weight_ih_l0_reverse" in names and names[-2:] == ["head.weight", "head.bias"]
    # 2 directions x (4H x 3 + 4H x H + 2 x 4H) + head (1 x 2H + 1) with H = 5
    assert m.network_.num_parameters() == 2 * (20 * 3 + 20 * 5 + 40) + 11
    assert _built(3, hidden_size=5, bidirectional=False).network_.num_parameters() == 200 + 6
    p = m.get_params()
    assert p["bidirectional"] is True and p["hidden_size"] == 5
    m.set_params(hidden_size=2)
    m.build_network(3)
    assert m.network_.head.weight.shape == (1, 4) and m.hidden_size == 2
    with pytest.raises(ValueError, match="Invalid parameter 'd_model'"):
        m.set_params(d_model=4)


def test_same_seed_same_model_and_input_checks():
    a, b = _built(random_state=3), _built(random_state=3)
    for (k, v), w in zip(a.network_.state_dict().items(), b.network_.state_dict().values()):
        np.testing.assert_array_equal(v, w, err_msg=k)
    a.set_params(epochs=1, validation_fraction=None).fit(np.zeros((2, 5, 1)), np.zeros((2, 5, 1)))
    with pytest.raises(ShapeError, match="n_features_in_=1"):
        a.predict(np.zeros((2, 5, 2)))
    with pytest.raises(ShapeError, match="y must have shape"):
        a.fit(np.zeros((2, 5, 1)), np.zeros((2, 4, 1)))


def test_masked_loss_and_its_gradient_match_finite_differences():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3, 5, 2))
    Y = rng.normal(size=(3, 5, 1))
    Y[0, 1, 0] = Y[2, 4, 0] = np.nan                  # gaps in the target
    m = _built(2, hidden_size=3, num_layers=2, random_state=0)
    net, mse = m.network_, MSELoss()
    ok = ~np.isnan(Y)

    def masked_loss():
        pred = _eval_forward(m, X)
        return float(np.sum((pred[ok] - Y[ok]) ** 2) / ok.sum())

    net.zero_grad()
    loss = mse.forward(net(X), Y)                      # the training step's loss and backward
    net.backward(mse.backward())
    assert loss == pytest.approx(masked_loss(), rel=1e-12)
    eps = 1e-6
    worst = 0.0
    for name, p in net.named_parameters():
        for idx in [(0,) * p.data.ndim, tuple(s - 1 for s in p.data.shape)]:
            old = p.data[idx]
            p.data[idx] = old + eps
            up = masked_loss()
            p.data[idx] = old - eps
            down = masked_loss()
            p.data[idx] = old
            fd = (up - down) / (2 * eps)
            worst = max(worst, abs(fd - p.grad[idx]) / max(1e-8, abs(fd) + abs(p.grad[idx])))
    assert worst <= 1e-6


def test_bidirectional_lstm_learns_the_next_depth_and_a_causal_one_cannot():
    x, y = _lag_data()
    kw = dict(hidden_size=6, lr=2e-2, epochs=60, batch_size=32, random_state=0)
    bi = LSTMRegressor(**kw).fit(x, y)
    causal = LSTMRegressor(bidirectional=False, **kw).fit(x, y)
    h = bi.history_.train_loss
    assert h[-1] < 0.05 * h[0]                        # the loss falls by more than 20x
    assert bi.score(x, y) > 0.9
    # y_t = 2 x_{t+1} is independent of x_1..x_t: a top-down recurrence can only predict the mean
    assert causal.score(x, y) < 0.25


def test_nan_targets_fit_and_validation_split():
    x, y = _lag_data(n=40, L=6)
    y[::3, 2] = np.nan
    m = LSTMRegressor(hidden_size=4, epochs=5, validation_fraction=0.25, early_stopping_patience=2, random_state=1)
    m.fit(x, y)
    assert len(m.history_) >= 1 and np.isfinite(m.history_.train_loss).all()
    assert np.isfinite(m.history_.val_loss).all()
    pred = m.predict(x)
    assert pred.shape == y.shape and np.isfinite(pred).all()
    assert np.isfinite(m.score(x, y))
    # positions are accepted (the transformer's signature) and ignored
    np.testing.assert_array_equal(m.predict(x, np.arange(6.0)), pred)


def test_save_load_roundtrip_and_kind(tmp_path):
    x, y = _lag_data(n=20, L=5)
    m = LSTMRegressor(hidden_size=3, num_layers=2, epochs=3, random_state=2).fit(x, y)
    m.save(tmp_path / "lstm", extra={"note": "test"})
    back = LSTMRegressor.load(tmp_path / "lstm")
    np.testing.assert_array_equal(back.predict(x), m.predict(x))
    assert back.get_params() == m.get_params() and back.is_fitted_
    assert back.history_.train_loss == pytest.approx(m.history_.train_loss)
    assert back.extra_ == {"note": "test"}
    with pytest.raises(ModelFileError, match="exists|overwrite"):
        m.save(tmp_path / "lstm")
    SequenceRegressor.chapter_model(epochs=1).fit(x, y).save(tmp_path / "tf")
    with pytest.raises(ModelFileError, match="lstm_regressor"):
        LSTMRegressor.load(tmp_path / "tf")
    assert "LSTMRegressor(" in repr(back) and "parameters, fitted" in repr(back)


def test_predict_and_score_refuse_an_unfitted_model(tmp_path):
    x, y = _lag_data(n=6, L=4)
    m = _built(hidden_size=2, epochs=1, random_state=0, validation_fraction=None)
    for call in (lambda: m.predict(x), lambda: m.score(x, y)):
        with pytest.raises(NotReadyError, match=r"LSTMRegressor\.(predict|score): the model is not fitted.*forward\(\)"):
            call()
    assert _eval_forward(m, x).shape == y.shape            # forward still inspects the untrained model
    m.fit(x, y)
    np.testing.assert_allclose(m.predict(x), _eval_forward(m, x), rtol=1e-12, atol=1e-15)
    m.save(tmp_path / "run" / "model")
    np.testing.assert_array_equal(LSTMRegressor.load(tmp_path / "run").predict(x), m.predict(x))
