"""glassformer.nn.reductions: the row-vector broadcast over many short rows against NumPy's own."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.nn import functional as F
from glassformer.nn.reductions import TILE_MIN_ROWS, with_row_vector


@pytest.mark.parametrize("shape", [(64, 32, 16), (2048, 48), (3264, 3), (1030, 16), (8, 7, 4), (1024, 300)])
@pytest.mark.parametrize("op", [np.add, np.multiply])
def test_row_vector_broadcast_is_bitwise_numpys(shape, op):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    vec = rng.standard_normal(shape[-1]).astype(np.float32)
    expected = op(x, vec)
    got = with_row_vector(op, x, vec)
    assert got.shape == x.shape and got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)
    out = np.empty_like(x)
    assert with_row_vector(op, x, vec, out=out) is out
    np.testing.assert_array_equal(out, expected)
    inplace = x.copy()
    with_row_vector(op, inplace, vec, out=inplace)
    np.testing.assert_array_equal(inplace, expected)


def test_row_vector_broadcast_on_a_strided_view_takes_numpys_path():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((TILE_MIN_ROWS * 2, 32))[:, :16]         # not C-contiguous
    vec = rng.standard_normal(16)
    np.testing.assert_array_equal(with_row_vector(np.add, x, vec), x + vec)


def test_linear_and_layer_norm_on_many_rows_equal_the_plain_formula():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((128, 32, 16))
    W, b = rng.standard_normal((48, 16)), rng.standard_normal(48)
    np.testing.assert_array_equal(F.linear(x, W, b), (x.reshape(-1, 16) @ W.T + b).reshape(128, 32, 48))
    w, c = rng.standard_normal(16), rng.standard_normal(16)
    y, xhat, rstd = F.layer_norm(x, w, c, 1e-5)
    np.testing.assert_array_equal(y, xhat * w + c)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5) * w + c, rtol=1e-12, atol=1e-12)
