"""FourierMixing (FNet): finite differences, values against an explicit DFT, token mixing, dtype."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import gradcheck
from glassformer.errors import InputError, NotReadyError
from glassformer.nn import FourierMixing


# --------------------------------------------------------------------------- FourierMixing
@pytest.mark.parametrize("mode", ["2d", "seq"])
def test_fourier_gradcheck(mode):
    rng = np.random.default_rng(5)
    rep = gradcheck(FourierMixing(mode), (rng.standard_normal((2, 5, 3)),))
    assert rep.max_error <= 1e-6, str(rep)


def _dft(n):
    j = np.arange(n)
    return np.exp(-2j * np.pi * np.outer(j, j) / n)


def test_fourier_values_against_explicit_dft():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 5, 3))
    fm2 = FourierMixing("2d")
    assert fm2.num_parameters() == 0
    np.testing.assert_allclose(fm2(x), np.real(_dft(5) @ x @ _dft(3)), atol=1e-12)
    np.testing.assert_allclose(FourierMixing("seq")(x), np.real(_dft(5) @ x), atol=1e-12)
    # a hand value: one token [1, 0, 0] at position 0 spreads to every token
    e = np.zeros((1, 4, 3))
    e[0, 0, 0] = 1.0
    np.testing.assert_allclose(fm2(e), np.ones((1, 4, 3)), atol=1e-15)


def test_fourier_mixes_tokens_without_scores_and_keeps_dtype():
    x = np.random.default_rng(7).standard_normal((1, 6, 4)).astype(np.float32)
    fm = FourierMixing()
    y = fm(x)
    assert y.shape == x.shape and y.dtype == np.float32
    x2 = x.copy()
    x2[0, 3] += 1.0
    diff = np.abs(fm(x2) - y).max(axis=-1)[0]
    assert np.all(diff[[0, 1, 2, 4, 5]] > 1e-6)
    with pytest.raises(InputError):
        FourierMixing("3d")
    with pytest.raises(NotReadyError):
        FourierMixing().backward(x)
