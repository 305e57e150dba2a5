"""Additive positional encodings at real-valued positions: published values, gradients, shapes, errors."""

import numpy as np
import pytest

from glassformer import gradcheck
from glassformer.errors import InputError, NotReadyError, ShapeError
from glassformer.nn import (
    ContinuousPositionalEncoding,
    FourierPositionalEncoding,
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    WavelengthPositionalEncoding,
    get_positional_encoding,
)
from glassformer.nn.positional import REGISTRY
from glassformer.selftest.published import bug_report

ADDITIVE = sorted(n for n, spec in REGISTRY.items() if spec.kind == "additive")

# name -> options for a d_model of 6 (every registered encoding, so a new one must be added here)
OPTIONS = {
    "sinusoidal": {},
    "wavelengths": {"wavelengths": [2.0, 5.0, 30.0]},
    "learned": {"max_len": 12},
    "continuous": {"hidden": 5, "scale": 4.0, "offset": 2.0},
    "fourier": {"sigma": 0.3, "trainable": True},
    "none": {},
}
TRAINABLE = [
    ("learned", {"max_len": 12}),
    ("continuous", {"hidden": 5, "scale": 4.0}),
    ("continuous", {"hidden": 4, "activation": "gelu"}),
    ("fourier", {"sigma": 0.3, "trainable": True}),
]
POSITIONS_2D = np.array([[0.0, 1.0, 2.0, 7.0], [3.0, 3.0, 5.0, 11.0]])  # repeats test accumulation


def build(name, d_model=6, **kw):
    if name == "chapter":
        return get_positional_encoding("chapter", 4, **kw)
    return get_positional_encoding(name, d_model, rng=0, **OPTIONS[name], **kw)


def test_every_name_is_covered_by_these_tests():
    assert set(ADDITIVE) == set(OPTIONS) | {"chapter"}


def test_sinusoidal_odd_d_model_5_published_values():
    case = bug_report("sinusoidal_odd_d_model")          # codertimo/BERT-pytorch issue #78
    expected = case.expected["encoding"]
    out = get_positional_encoding("sinusoidal", case.inputs["d_model"])(np.array([0, 1, 2]))
    assert out.shape == (3, 5) and out.dtype == np.float64
    np.testing.assert_allclose(out, expected, atol=5e-9)


def test_sinusoidal_matches_vaswani_formula_for_odd_and_even_d_model():
    t = np.array([0.0, 0.5, 3.25, 1234.5])  # real-valued, e.g. metres
    for d in (1, 6, 7):
        out = SinusoidalPositionalEncoding(d)(t)
        for j in range(d):
            angle = t / 10000.0 ** (2 * (j // 2) / d)
            np.testing.assert_allclose(out[:, j], np.sin(angle) if j % 2 == 0 else np.cos(angle), atol=1e-12)
    assert SinusoidalPositionalEncoding(7)(t).shape == (4, 7)
    # base option: with base 1 every pair is (sin t, cos t)
    np.testing.assert_allclose(SinusoidalPositionalEncoding(4, base=1.0)(t)[:, 2], np.sin(t), atol=1e-12)


def test_chapter_encoding_reproduces_the_chapter_values_at_depths_1_to_14():
    depth = np.arange(1.0, 15.0)
    out = get_positional_encoding("chapter", 4)(depth)
    expected = np.column_stack([np.sin(depth), np.cos(depth), np.sin(depth / 100), np.cos(depth / 100)])
    np.testing.assert_allclose(out, expected, atol=1e-12)
    # a few values by hand (depth 1 m and 14 m)
    np.testing.assert_allclose(out[0], [0.8414709848, 0.5403023059, 0.0099998333, 0.9999500004], atol=1e-10)
    np.testing.assert_allclose(out[13], [0.9906073557, 0.1367372182, 0.1395431146, 0.9902159962], atol=1e-10)
    with pytest.raises(InputError, match="d_model 4"):
        get_positional_encoding("chapter", 6)


def test_wavelengths_layout_and_values():
    pe = get_positional_encoding("wavelengths", 4, wavelengths=[4.0, 8.0])
    out = pe(np.array([0.0, 1.0, 2.0]))
    # t=1: sin(2pi/4)=1, cos=0, sin(2pi/8)=cos(2pi/8)=sqrt(2)/2; t=2: sin(pi)=0, cos(pi)=-1, sin(pi/2)=1
    s = np.sqrt(0.5)
    np.testing.assert_allclose(out, [[0, 1, 0, 1], [1, 0, s, s], [0, -1, 1, 0]], atol=1e-12)
    # the chapter's encoding is wavelengths [2 pi, 200 pi]
    t = np.linspace(0.0, 50.0, 11)
    np.testing.assert_allclose(
        WavelengthPositionalEncoding(4, [2 * np.pi, 200 * np.pi])(t), get_positional_encoding("chapter", 4)(t)
    )


def test_wavelengths_errors():
    with pytest.raises(InputError, match=r"2 \* len\(wavelengths\) = 4"):
        get_positional_encoding("wavelengths", 5, wavelengths=[1.0, 2.0])
    with pytest.raises(InputError, match="positive"):
        WavelengthPositionalEncoding(2, [-1.0])
    with pytest.raises(InputError, match="wavelengths"):
        get_positional_encoding("wavelengths", 4)


@pytest.mark.parametrize("name,options", TRAINABLE)
def test_gradcheck_of_trainable_encodings(name, options):
    pe = get_positional_encoding(name, 6, rng=1, **options)
    assert pe.num_parameters() > 0
    report = gradcheck(pe, (POSITIONS_2D,), check_inputs=False)
    assert report.max_error <= 1e-6, str(report)
    report = gradcheck(pe, (POSITIONS_2D[1],), check_inputs=False)  # unbatched
    assert report.max_error <= 1e-6, str(report)


def test_learned_gradient_adds_up_repeated_positions_and_parameter_name():
    pe = LearnedPositionalEmbedding(3, max_len=5, rng=0)
    assert list(pe.state_dict()) == ["weight"] and pe.weight.shape == (5, 3)
    np.testing.assert_array_equal(pe(np.array([[4, 0, 4]])), pe.weight.data[[[4, 0, 4]]])
    g = np.arange(9.0).reshape(1, 3, 3)
    assert pe.backward(g) is None
    np.testing.assert_array_equal(pe.weight.grad[4], g[0, 0] + g[0, 2])
    np.testing.assert_array_equal(pe.weight.grad[0], g[0, 1])
    assert not pe.weight.grad[1:4].any()


def test_learned_init_std_and_errors_beyond_max_len():
    pe = LearnedPositionalEmbedding(64, max_len=100, rng=0)
    assert 0.018 < pe.weight.data.std() < 0.022  # N(0, 0.02^2)
    pe(np.arange(100))
    with pytest.raises(InputError, match=r"max_len=100"):
        pe(np.arange(101))
    with pytest.raises(InputError, match=r"max_len=100"):
        pe(np.array([-1, 2]))
    with pytest.raises(InputError, match="integer"):
        pe(np.array([0.0, 1.5]))
    with pytest.raises(InputError, match="max_len"):
        get_positional_encoding("learned", 4)


def test_continuous_encoding_values_by_hand():
    pe = ContinuousPositionalEncoding(2, hidden=2, scale=10.0, offset=1000.0, rng=0)
    pe.load_state_dict({
        "linear1.weight": np.array([[1.0], [-2.0]]), "linear1.bias": np.array([0.0, 0.5]),
        "linear2.weight": np.array([[1.0, 1.0], [2.0, 0.0]]), "linear2.bias": np.array([0.1, -0.1]),
    })
    depth = np.array([1000.0, 1005.0])  # metres -> u = 0, 0.5
    h = np.tanh(np.array([[0.0, 0.5], [0.5, -0.5]]))
    np.testing.assert_allclose(pe(depth), [[h[0].sum() + 0.1, 2 * h[0, 0] - 0.1],
                                           [h[1].sum() + 0.1, 2 * h[1, 0] - 0.1]], atol=1e-12)


def test_fourier_encoding_values_and_odd_d_model():
    pe = FourierPositionalEncoding(4, frequencies=[0.25, 0.5])
    out = pe(np.array([1.0, 2.0]))  # [sin(2pi B t) ..., cos(2pi B t) ...]
    np.testing.assert_allclose(out, [[1, 0, 0, -1], [0, 0, -1, 1]], atol=1e-12)
    assert pe.num_parameters() == 0 and pe.backward(np.zeros((2, 4))) is None
    with pytest.raises(InputError, match="even"):
        get_positional_encoding("fourier", 5)
    with pytest.raises(InputError, match="sigma"):
        get_positional_encoding("fourier", 4, sigma=0.0)


def test_fourier_frequencies_are_seeded_with_sigma():
    a = FourierPositionalEncoding(4000, sigma=0.3, rng=7)
    b = FourierPositionalEncoding(4000, sigma=0.3, rng=7)
    c = FourierPositionalEncoding(4000, sigma=0.3, rng=8)
    np.testing.assert_array_equal(a.frequencies, b.frequencies)
    assert not np.array_equal(a.frequencies, c.frequencies)
    assert 0.28 < a.frequencies.std() < 0.32
    trainable = get_positional_encoding("fourier", 6, rng=3, trainable=True)
    assert list(trainable.state_dict()) == ["frequencies"]
    assert list(get_positional_encoding("fourier", 6, rng=3).state_dict()) == []


@pytest.mark.parametrize("name", ADDITIVE)
def test_determinism_with_the_same_seed(name):
    t = np.arange(6.0)
    np.testing.assert_array_equal(build(name)(t), build(name)(t))


@pytest.mark.parametrize("name", ADDITIVE)
def test_shapes_unbatched_and_batched_agree(name):
    pe = build(name)
    d = pe.d_model
    single = pe(np.arange(5))
    assert single.shape == (5, d)
    batch = pe(np.stack([np.arange(5), np.arange(5) + 3]))
    assert batch.shape == (2, 5, d)
    np.testing.assert_allclose(batch[0], single, atol=1e-15)
    np.testing.assert_allclose(batch[1], pe(np.arange(5) + 3), atol=1e-15)


@pytest.mark.parametrize("name", ADDITIVE)
def test_float32_stays_float32(name):
    if name == "chapter":
        pe = get_positional_encoding("chapter", 4, dtype=np.float32)
    else:
        pe = get_positional_encoding(name, 6, rng=0, dtype=np.float32, **OPTIONS[name])
    out = pe(np.arange(5.0, dtype=np.float32))
    assert out.dtype == np.float32
    assert pe(np.arange(5)).dtype == np.float32  # integer positions too
    pe.backward(np.ones_like(out))
    assert all(p.grad.dtype == np.float32 for p in pe.parameters())
    ref = build(name)(np.arange(5.0))
    np.testing.assert_allclose(out, ref, atol=1e-5)
    assert pe.to(np.float64)(np.arange(5.0)).dtype == np.float64


def test_zero_encoding_is_zero():
    out = get_positional_encoding("none", 3)(np.array([[1.0, 2.0]]))
    assert out.shape == (1, 2, 3) and not out.any()


@pytest.mark.parametrize("name", ["sinusoidal", "learned", "continuous", "fourier"])
def test_bad_positions_raise_clear_errors(name):
    pe = build(name)
    with pytest.raises(ShapeError, match=r"positions.*\(2, 3, 1\)"):
        pe(np.zeros((2, 3, 1)))
    with pytest.raises(InputError, match="positions.*non-finite"):
        pe(np.array([0.0, np.nan]))
    pe(np.arange(3.0))
    with pytest.raises(ShapeError, match=r"grad_output"):
        pe.backward(np.ones((4, pe.d_model)))


def test_backward_before_forward_and_unknown_names_or_options():
    with pytest.raises(NotReadyError):
        SinusoidalPositionalEncoding(4).backward(np.zeros((1, 4)))
    with pytest.raises(InputError, match="sinusoidal"):
        get_positional_encoding("sinusodial", 4)
    with pytest.raises(InputError, match="rotary"):
        get_positional_encoding("rotary", 4)
    with pytest.raises(InputError, match="unknown option"):
        get_positional_encoding("sinusoidal", 4, max_len=3)
    with pytest.raises(InputError, match="no options"):
        get_positional_encoding("chapter", 4, wavelengths=[1.0, 2.0])
