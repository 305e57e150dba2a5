"""Small trained window regressors and their windows for the PyTorch round-trip tests."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import LSTMRegressor, SequenceRegressor

SEQ, N_FEATURES = 9, 2


@pytest.fixture(scope="session")
def windows():
    """``X (16, 9, 2)`` in [0, 1], ``y (16, 9, 2)`` a non-linear function of neighbouring inputs with gaps,
    and per-window depths (m): irregular steps, a different top per window."""
    rng = np.random.default_rng(7)
    X = rng.random((16, SEQ, N_FEATURES))
    y = np.stack([np.roll(X[..., 0], -1, axis=1) ** 2 + X[..., 1], np.sin(3 * X.sum(-1))], axis=-1)
    y[3, 2:4, 0] = np.nan                                           # gaps are masked out of the loss
    depth = 2500.0 + np.cumsum(rng.uniform(0.1, 0.2, (16, SEQ)), axis=1) + 7.0 * np.arange(16)[:, None]
    return X, y, depth


@pytest.fixture(scope="session")
def fitted(windows):
    """``fitted(**options)`` -> a SequenceRegressor trained for two epochs (``lstm=True``: an LSTMRegressor)."""
    X, y, _ = windows

    def fit(lstm=False, positions=None, **options):
        if lstm:
            return LSTMRegressor(epochs=2, batch_size=4, hidden_size=5, **options).fit(X, y)
        settings = dict(dict(d_model=8, num_heads=2, epochs=2, batch_size=4, validation_fraction=None), **options)
        return SequenceRegressor(**settings).fit(X, y, positions)

    return fit
