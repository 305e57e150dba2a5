"""FeedForward: finite differences, hand values, row locality, the kernel and PyTorch's names."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import gradcheck
from glassformer.nn import FeedForward, get_activation
from glassformer.nn.activation import ACTIVATIONS


# --------------------------------------------------------------------------- FeedForward
@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh"])
def test_feedforward_gradcheck(activation):
    rng = np.random.default_rng(2)
    ff = FeedForward(4, 7, activation=activation, rng=0)
    assert list(ff.state_dict()) == ["linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"]
    rep = gradcheck(ff, (rng.standard_normal((2, 3, 4)),))
    assert rep.max_error <= 1e-6, str(rep)


def test_feedforward_hand_values_and_row_locality():
    ff = FeedForward(2, 3, rng=0)
    ff.linear1.weight.data[...] = [[1, 0], [0, 1], [1, -1]]
    ff.linear1.bias.data[...] = [0, -1, 0]
    ff.linear2.weight.data[...] = [[1, 1, 1], [0, 2, -1]]
    ff.linear2.bias.data[...] = [0.5, 0]
    x = np.array([[2.0, 3.0], [-1.0, 0.5]])
    # row 0: hidden relu([2, 2, -1]) = [2, 2, 0] -> [4.5, 4]; row 1: relu([-1, -0.5, -1.5]) = 0 -> [0.5, 0]
    np.testing.assert_allclose(ff(x), [[4.5, 4.0], [0.5, 0.0]])
    x2 = x.copy()
    x2[1] += 10.0
    y1, y2 = ff(x), ff(x2)
    np.testing.assert_array_equal(y1[0], y2[0])        # row-local
    assert not np.allclose(y1[1], y2[1])


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_feedforward_is_the_composition_of_the_kernels_with_dropout(activation):
    rng = np.random.default_rng(3)
    ff = FeedForward(4, 6, dropout=0.5, activation=activation, rng=1)
    x = rng.standard_normal((2, 3, 4))
    out = ff(x)
    keep = ff.dropout._cache["scale"]                      # the mask of this forward
    G = get_activation(activation)(x @ ff.linear1.weight.data.T + ff.linear1.bias.data)
    np.testing.assert_allclose(ff.hidden(), G, atol=1e-13)
    np.testing.assert_allclose(out, (G * keep) @ ff.linear2.weight.data.T + ff.linear2.bias.data, atol=1e-13)
    assert set(np.unique(keep)) <= {0.0, 2.0}
