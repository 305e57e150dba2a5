"""The speed paths keep the maths and the error checks: input checks at the entry point only,
BLAS row sums, and the softmax without the max shift for moderate scores."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import InputError
from glassformer.nn import LayerNorm, Linear, TransformerEncoder, TransformerEncoderLayer
from glassformer.nn.attention import masked_softmax
from glassformer.nn.reductions import lead_sum, row_sum


def test_children_skip_checks_and_standalone_modules_keep_them():
    layer = TransformerEncoderLayer(8, 2, 16, dropout=0.0, rng=0)
    stack = TransformerEncoder(layer, 2)
    assert layer.check_inputs and stack.check_inputs
    assert not stack.layers[0].check_inputs and not stack.layers[0].linear1.check_inputs
    x = np.random.default_rng(0).standard_normal((2, 5, 8))
    x[1, 3, 2] = np.nan
    for module in (stack, layer, Linear(8, 3, rng=0), LayerNorm(8)):
        with pytest.raises(InputError, match="non-finite"):
            module.forward(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_and_lead_sums_equal_numpy(dtype):
    x = np.random.default_rng(1).standard_normal((3, 4, 5, 7)).astype(dtype)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    assert row_sum(x).dtype == dtype and lead_sum(x).dtype == dtype
    np.testing.assert_allclose(row_sum(x), x.sum(axis=-1, keepdims=True), rtol=tol, atol=tol)
    np.testing.assert_allclose(lead_sum(x), x.reshape(-1, 7).sum(axis=0), rtol=tol, atol=tol)
    view = x[:, ::2]                      # non-contiguous input
    np.testing.assert_allclose(row_sum(view), view.sum(axis=-1, keepdims=True), rtol=tol, atol=tol)


def _reference_softmax(s, allowed):
    s = np.where(allowed, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(allowed, np.exp(s - m), 0.0)
    d = e.sum(axis=-1, keepdims=True)
    return e / np.where(d == 0, 1.0, d)


@pytest.mark.parametrize("scale", [1.0, 50.0, 1e4])      # inside and outside the no-shift range
def test_masked_softmax_matches_the_shifted_formula(scale):
    rng = np.random.default_rng(2)
    s = rng.standard_normal((2, 3, 4, 6)) * scale
    allowed = rng.random((2, 3, 4, 6)) > 0.3
    allowed[0, 0, 1] = False                               # a fully blocked row
    expected = _reference_softmax(s, allowed)
    got = masked_softmax(s.copy(), allowed)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)
    assert np.all(got[0, 0, 1] == 0.0)
    np.testing.assert_allclose(masked_softmax(s.copy(), None), _reference_softmax(s, np.ones_like(allowed)),
                               rtol=1e-12, atol=1e-300)
