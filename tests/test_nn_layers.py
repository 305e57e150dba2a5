"""LayerNorm, Dropout, FeedForward, RotaryEmbedding, FourierMixing: hand values, gradients, contract."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import gradcheck
from glassformer.errors import InputError, NotReadyError, ShapeError, StateDictError
from glassformer.nn import Dropout, FeedForward, FourierMixing, LayerNorm, Module, RotaryEmbedding


# --------------------------------------------------------------------------- LayerNorm
def test_layernorm_hand_values():
    ln = LayerNorm(4, eps=1e-5)
    x = np.array([[1.0, 2.0, 3.0, 6.0]])             # mean 3, biased variance (4+1+0+9)/4 = 3.5
    y = ln(x)
    np.testing.assert_allclose(y, (x - 3.0) / np.sqrt(3.5 + 1e-5), atol=1e-14)
    ln.weight.data[...] = [1, 2, 3, 4]
    ln.bias.data[...] = 0.5
    np.testing.assert_allclose(ln(x), (x - 3.0) / np.sqrt(3.5 + 1e-5) * [1, 2, 3, 4] + 0.5, atol=1e-14)


@pytest.mark.parametrize("affine", [True, False])
def test_layernorm_gradcheck(affine):
    # not seed 0: gradcheck's contraction R is drawn from seed 0 and would then be parallel to x,
    # a direction LayerNorm is blind to (the gradient would vanish)
    rng = np.random.default_rng(20)
    ln = LayerNorm(5, elementwise_affine=affine)
    if affine:
        ln.weight.data[...] = rng.standard_normal(5)
        ln.bias.data[...] = rng.standard_normal(5)
    else:
        assert ln.state_dict() == {}
    rep = gradcheck(ln, (rng.standard_normal((2, 3, 5)) * 2 + 1,))
    assert rep.max_error <= 1e-6, str(rep)


def test_layernorm_contract():
    ln = LayerNorm(3, dtype=np.float32)
    with pytest.raises(NotReadyError):
        ln.backward(np.ones((2, 3)))
    with pytest.raises(ShapeError):
        ln(np.ones((2, 4), np.float32))
    with pytest.raises(StateDictError, match="weight"):
        ln.load_state_dict({"weight": np.ones(4), "bias": np.zeros(3)})
    y = ln(np.ones((2, 3), np.float32))
    assert y.dtype == np.float32
    assert ln.backward(np.ones((2, 3), np.float32)).dtype == np.float32


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


# --------------------------------------------------------------------------- RotaryEmbedding
class _Rotate(Module):
    def __init__(self, rope, positions, offset=0.0):
        super().__init__()
        self.rope, self.positions, self.offset = rope, positions, offset

    def forward(self, x):
        self._save(done=True)
        return self.rope.rotate(x, self.positions, self.offset)

    def backward(self, g):
        return self.rope.rotate_backward(g, self.positions, self.offset)


@pytest.mark.parametrize("interleaved", [False, True])
def test_rotary_gradcheck_real_positions(interleaved):
    rng = np.random.default_rng(3)
    rope = RotaryEmbedding(6, interleaved=interleaved)
    positions = rng.uniform(1000.0, 1010.0, size=(2, 5))     # depths in metres, per batch
    rep = gradcheck(_Rotate(rope, positions, offset=0.5), (rng.standard_normal((2, 3, 5, 6)),))
    assert rep.max_error <= 1e-6, str(rep)


def test_rotary_relative_and_norm_preserving():
    rng = np.random.default_rng(4)
    rope = RotaryEmbedding(8)
    q, k = rng.standard_normal((1, 8)), rng.standard_normal((1, 8))
    a = np.sum(rope.rotate(q, [2.37]) * rope.rotate(k, [0.12]))
    b = np.sum(rope.rotate(q, [102.37]) * rope.rotate(k, [100.12]))
    assert a == pytest.approx(b, abs=1e-9)
    x = rng.standard_normal((3, 5, 8))
    np.testing.assert_allclose(np.linalg.norm(rope.rotate(x, np.linspace(0, 9, 5)), axis=-1),
                               np.linalg.norm(x, axis=-1), atol=1e-12)
    with pytest.raises(ShapeError):
        rope.rotate(x, np.arange(4.0))
    with pytest.raises(ShapeError):
        rope.rotate(np.ones((5, 6)))


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
