"""gradcheck's contraction cannot collide with the user's data, and a nearly zero gradient is flagged.

The reported false failure: LayerNorm inputs drawn with ``default_rng(0)`` while the contraction R
was drawn from ``default_rng(0)`` too -- R equals the input, a direction LayerNorm removes, so
dL/dx is nearly zero and the rounding of the central differences alone gave a relative error of
1.85e-5 (``ok()`` False) on a correct backward.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from glassformer import gradcheck
from glassformer.gradcheck import GradcheckWarning, contraction_rng
from glassformer.nn import LayerNorm, Linear, MultiheadAttention


def _x():
    return np.random.default_rng(0).standard_normal((2, 7, 4))       # the chapter's window: 7 depths, d_model 4


def test_the_reported_false_failure_reproduces_with_the_old_contraction_and_warns():
    with pytest.warns(GradcheckWarning, match=r"gradient of input\[0\] is nearly zero"):
        report = gradcheck(LayerNorm(4), (_x(),), rng=0)              # the old default: R = default_rng(0) = x
    assert report.errors["input[0]"] == pytest.approx(1.85e-5, rel=0.01) and not report.ok()


def test_the_default_contraction_passes_the_same_check_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", GradcheckWarning)
        report = gradcheck(LayerNorm(4), (_x(),))
    assert report.ok(1e-8) and report.errors["input[0]"] < 1e-8
    assert gradcheck(LayerNorm(4), (_x(),)).errors == report.errors        # reproducible


def test_no_integer_seed_gives_the_contraction():
    R = contraction_rng().standard_normal(64)
    for seed in range(2000):
        assert not np.allclose(np.random.default_rng(seed).standard_normal(64), R)
    for child in np.random.SeedSequence(0).spawn(4):                   # nor a spawned child of a user's seed
        assert not np.allclose(np.random.default_rng(child).standard_normal(64), R)
    g = np.random.default_rng(7)
    assert contraction_rng(g) is g                                     # rng= a Generator: that one


def test_exact_zero_gradients_are_an_answer_and_do_not_warn():
    mha = MultiheadAttention(4, 2, rng=1)
    x = np.random.default_rng(2).standard_normal((1, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", GradcheckWarning)
        with mha.override_weights(np.full((3, 3), 1 / 3)):             # dq = dk = 0 exactly
            report = gradcheck(mha, (x, x.copy(), x.copy()), kwargs={"need_weights": False})
    assert report.errors["input[0]"] == 0.0 and report.ok()


def test_a_tiny_but_correct_gradient_is_flagged():
    lin = Linear(3, 2, rng=0)
    lin.weight.data *= 1e-12                                           # dL/dx = R W: ~1e-12, below the rounding
    with pytest.warns(GradcheckWarning, match=r"input\[0\] is nearly zero"):
        gradcheck(lin, (np.ones((4, 3)),))
