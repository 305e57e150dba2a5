"""Dropout: inverted scaling, fresh and reproducible masks, identity in evaluation mode."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import InputError, NotReadyError
from glassformer.nn import Dropout


# --------------------------------------------------------------------------- Dropout
def test_dropout_inverted_scaling_and_fresh_masks():
    d = Dropout(0.25, rng=0)
    x = np.ones((200, 100))
    y1 = d(x)
    vals = np.unique(y1)
    np.testing.assert_allclose(vals, [0.0, 1 / 0.75])
    assert abs((y1 == 0).mean() - 0.25) < 0.01
    assert abs(y1.mean() - 1.0) < 0.02                # inverted scaling keeps the expectation
    g = d.backward(np.full_like(x, 2.0))
    np.testing.assert_array_equal(g, 2.0 * y1)        # same mask in backward
    y2 = d(x)
    assert not np.array_equal(y1, y2)                 # a new mask per call
    np.testing.assert_array_equal(Dropout(0.25, rng=0)(x), y1)   # reproducible from the seed


def test_dropout_identity_in_eval_and_p0():
    x = np.random.default_rng(1).standard_normal((3, 4))
    d = Dropout(0.5, rng=0).eval()
    np.testing.assert_array_equal(d(x), x)
    np.testing.assert_array_equal(d.backward(x), x)
    d0 = Dropout(0.0, rng=0)
    np.testing.assert_array_equal(d0(x), x)
    with pytest.raises(InputError):
        Dropout(1.0)
    with pytest.raises(NotReadyError):
        Dropout(0.1).backward(x)
