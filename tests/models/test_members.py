"""Members trained side by side are bit for bit the models fitted alone: parameters, losses, early
stopping and predictions; what cannot be stacked is refused with a message."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import InputError
from glassformer.models import LSTMRegressor, SequenceRegressor
from glassformer.models.members import fit_members, stack_members

SEEDS = (42, 0, 1)


def _data(n=60, seq=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, seq, 3))
    y = np.sin(3 * X[..., :1]) + 0.1 * rng.standard_normal((n, seq, 1))
    y[4, :3] = np.nan                                    # gaps
    y[9] = np.nan                                        # a window without targets
    return X, y


def _assert_same(alone, together):
    for a, b in zip(alone, together):
        for (name, u), v in zip(a.network_.state_dict().items(), b.network_.state_dict().values()):
            np.testing.assert_array_equal(u, v, err_msg=name)
        assert a.history_.train_loss == b.history_.train_loss
        assert a.history_.val_loss == b.history_.val_loss
        assert (a.history_.stop_reason, a.history_.best_epoch) == (b.history_.stop_reason, b.history_.best_epoch)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_members_side_by_side_equal_the_models_fitted_alone(dtype):
    X, y = _data()
    kw = dict(d_model=8, num_heads=2, epochs=12, batch_size=16, early_stopping_patience=2, dtype=dtype)
    alone = [SequenceRegressor(**kw, random_state=s).fit(X, y) for s in SEEDS]
    together = fit_members([SequenceRegressor(**kw, random_state=s) for s in SEEDS], X, y)
    _assert_same(alone, together)
    assert len({len(m.history_.train_loss) for m in alone}) > 1          # the members stopped at different epochs
    for a, b in zip(alone, together):
        np.testing.assert_array_equal(a.predict(X), b.predict(X))
        assert b.is_fitted_


def test_given_validation_windows_depth_positions_and_clipping_chapter_style():
    X, y = _data(seed=1)
    depth = 1000.0 + 0.1 * np.arange(8 * 70).reshape(70, 8)[:60]            # per-window positions, m
    kw = dict(d_model=4, num_heads=1, positional="sinusoidal", epochs=3, batch_size=None, grad_clip=0.5,
              optimizer="sgd", lr=0.05, attn_out_proj=False, norm_first=True, activation="gelu")
    fit_kw = dict(X_val=X[:10], y_val=y[:10], positions_val=depth[:10])
    alone = [SequenceRegressor(**kw, random_state=s).fit(X, y, depth, **fit_kw) for s in SEEDS[:2]]
    together = fit_members([SequenceRegressor(**kw, random_state=s) for s in SEEDS[:2]], X, y, depth, **fit_kw)
    _assert_same(alone, together)


def test_stacked_parameters_are_the_members_rows():
    nets = [SequenceRegressor(d_model=8, num_heads=2, random_state=s).build_network(3, 1) for s in SEEDS]
    before = [net.state_dict() for net in nets]
    stacked = stack_members(nets)
    for (name, p), rows in zip(stacked.named_parameters(), zip(*[net.parameters() for net in nets])):
        assert p.shape == (3,) + rows[0].shape
        for k, q in enumerate(rows):
            assert np.shares_memory(p.data, q.data) and np.shares_memory(p.grad, q.grad)
            np.testing.assert_array_equal(p.data[k], before[k][name])


def test_what_cannot_be_stacked_is_refused():
    X, y = _data()
    with pytest.raises(InputError, match="differ only in random_state"):
        fit_members([SequenceRegressor(d_model=8, random_state=0), SequenceRegressor(d_model=4, random_state=1)], X, y)
    with pytest.raises(InputError, match="dropout=0"):
        fit_members([SequenceRegressor(d_model=8, dropout=0.1, random_state=s) for s in SEEDS], X, y)
    with pytest.raises(InputError, match="only SequenceRegressor"):
        fit_members([LSTMRegressor(), LSTMRegressor()], X, y)
    with pytest.raises(InputError, match="no models"):
        fit_members([], X, y)


def test_members_with_reference_kernels_run_the_reference_and_equal_the_models_fitted_alone(monkeypatch):
    X, y = _data(n=24)
    kw = dict(d_model=4, num_heads=2, epochs=3, batch_size=8, early_stopping_patience=None, kernels="reference")
    alone = [SequenceRegressor(**kw, random_state=s).fit(X, y) for s in SEEDS[:2]]
    from glassformer.nn import functional

    def broken(*args, **kwargs):
        raise AssertionError("a fast kernel ran")
    for name in ("linear", "linear_backward", "layer_norm", "scaled_dot_product_attention"):
        monkeypatch.setattr(functional, name, broken)
    together = fit_members([SequenceRegressor(**kw, random_state=s) for s in SEEDS[:2]], X, y)
    for a, b in zip(alone, together):
        np.testing.assert_allclose(b.history_.train_loss, a.history_.train_loss, rtol=1e-12)
        for (name, u), v in zip(a.network_.state_dict().items(), b.network_.state_dict().values()):
            np.testing.assert_allclose(v, u, rtol=1e-12, atol=1e-14, err_msg=name)
