"""Input embeddings (linear, MLP, Fourier features) and the token embedding."""

import numpy as np
import pytest

from glassformer import gradcheck
from glassformer.errors import InputError, ShapeError
from glassformer.nn import (
    GELU,
    FourierInputEmbedding,
    LinearInputEmbedding,
    MLPInputEmbedding,
    TokenEmbedding,
    get_input_embedding,
)

X = np.random.default_rng(0).uniform(0.0, 1.0, size=(2, 5, 3))  # (batch, seq, n_features), scaled logs
CASES = [
    ("linear", {}),
    ("mlp", {"hidden": 6}),
    ("mlp", {"hidden": 4, "activation": "tanh"}),
    ("mlp", {"hidden": 4, "activation": "relu"}),
    ("fourier", {"num_frequencies": 3, "sigma": 1.0}),
    ("fourier", {"num_frequencies": 2, "trainable": True, "include_input": True}),
]


@pytest.mark.parametrize("name,options", CASES)
def test_gradcheck_parameters_and_input(name, options):
    emb = get_input_embedding(name, 3, 4, rng=1, **options)
    for x in (X, X[0]):  # batched and unbatched
        report = gradcheck(emb, (x,))
        assert report.max_error <= 1e-6, str(report)
        assert "input[0]" in report.errors


def test_linear_is_the_seeds_affine_map_with_torch_names():
    emb = LinearInputEmbedding(1, 4, rng=0)
    assert list(emb.state_dict()) == ["linear.weight", "linear.bias"]
    W = np.array([[0.5], [-1.0], [2.0], [0.0]])
    b = np.array([0.1, 0.2, 0.3, 0.4])
    emb.load_state_dict({"linear.weight": W, "linear.bias": b})
    porosity = np.array([[[0.13], [0.11]]])  # 13 %, 11 % as fractions
    np.testing.assert_allclose(emb(porosity), [[[0.165, 0.07, 0.56, 0.4], [0.155, 0.09, 0.52, 0.4]]], atol=1e-12)
    g = np.ones((1, 2, 4))
    np.testing.assert_allclose(emb.backward(g), np.full((1, 2, 1), 1.5), atol=1e-12)
    np.testing.assert_allclose(emb.linear.bias.grad, [2, 2, 2, 2])


def test_mlp_by_hand():
    emb = MLPInputEmbedding(1, 2, hidden=2, activation="relu", rng=0)
    emb.load_state_dict({
        "linear1.weight": np.array([[1.0], [-1.0]]), "linear1.bias": np.zeros(2),
        "linear2.weight": np.array([[1.0, 2.0], [3.0, 4.0]]), "linear2.bias": np.array([0.5, 0.0]),
    })
    out = emb(np.array([[2.0], [-3.0]]))  # hidden relu: [2, 0] and [0, 3]
    np.testing.assert_allclose(out, [[2.5, 6.0], [6.5, 12.0]])


def test_fourier_features_by_hand():
    emb = FourierInputEmbedding(1, 2, num_frequencies=2, frequencies=[[0.25, 0.5]], rng=0)
    # phi = [sin(pi/2 x), sin(pi x), cos(pi/2 x), cos(pi x)] at x = 1 -> [1, 0, 0, -1]
    emb.load_state_dict({"linear.weight": np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 1.0]]),
                         "linear.bias": np.zeros(2)})
    np.testing.assert_allclose(emb(np.array([[1.0]])), [[-3.0, -1.0]], atol=1e-12)
    assert list(emb.state_dict()) == ["linear.weight", "linear.bias"]
    trainable = FourierInputEmbedding(2, 3, num_frequencies=4, trainable=True, rng=0)
    assert list(trainable.state_dict()) == ["frequencies", "linear.weight", "linear.bias"]
    assert trainable.frequencies.shape == (2, 4) and trainable.linear.weight.shape == (3, 16)


def test_fourier_is_seeded():
    a = FourierInputEmbedding(2, 8, num_frequencies=500, sigma=2.0, rng=5)
    b = FourierInputEmbedding(2, 8, num_frequencies=500, sigma=2.0, rng=5)
    c = FourierInputEmbedding(2, 8, num_frequencies=500, sigma=2.0, rng=6)
    np.testing.assert_array_equal(a(X[..., :2]), b(X[..., :2]))
    assert not np.array_equal(a.frequencies, c.frequencies)
    assert 1.85 < a.frequencies.std() < 2.15


def test_gelu_keeps_float32():
    x = np.ones(2, dtype=np.float32)
    gelu = GELU()
    assert gelu(x).dtype == np.float32 and gelu.backward(x).dtype == np.float32


@pytest.mark.parametrize("name,options", CASES)
def test_determinism_and_float32(name, options):
    ref = get_input_embedding(name, 3, 4, rng=9, **options)
    again = get_input_embedding(name, 3, 4, rng=9, **options)
    np.testing.assert_array_equal(ref(X), again(X))
    emb32 = get_input_embedding(name, 3, 4, rng=9, dtype=np.float32, **options)
    out = emb32(X.astype(np.float32))
    assert out.dtype == np.float32
    dx = emb32.backward(np.ones_like(out))
    assert dx.dtype == np.float32 and all(p.grad.dtype == np.float32 for p in emb32.parameters())
    np.testing.assert_allclose(out, ref(X), atol=1e-5)


def test_torch_parity_mlp_and_fourier():
    torch = pytest.importorskip("torch")
    x = torch.tensor(X, requires_grad=True)
    mlp = MLPInputEmbedding(3, 4, hidden=6, activation="gelu", rng=2)
    seq = torch.nn.Sequential(torch.nn.Linear(3, 6), torch.nn.GELU(), torch.nn.Linear(6, 4)).double()
    with torch.no_grad():
        for tp, name in zip(seq.parameters(), ["linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"]):
            tp.copy_(torch.from_numpy(mlp.state_dict()[name]))
    g = np.random.default_rng(1).standard_normal((2, 5, 4))
    y = seq(x)
    y.backward(torch.from_numpy(g))
    np.testing.assert_allclose(mlp(X), y.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(mlp.backward(g), x.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(mlp.linear1.weight.grad, seq[0].weight.grad.numpy(), atol=1e-12)

    four = FourierInputEmbedding(3, 4, num_frequencies=2, trainable=True, rng=2)
    B = torch.tensor(four.frequencies.data, requires_grad=True)
    lin = torch.nn.Linear(12, 4).double()
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(four.linear.weight.data))
        lin.bias.copy_(torch.from_numpy(four.linear.bias.data))
    x.grad = None
    angle = 2 * torch.pi * x[..., :, None] * B
    y = lin(torch.cat([torch.sin(angle).flatten(-2), torch.cos(angle).flatten(-2)], dim=-1))
    y.backward(torch.from_numpy(g))
    np.testing.assert_allclose(four(X), y.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(four.backward(g), x.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(four.frequencies.grad, B.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("name", ["linear", "mlp", "fourier"])
def test_bad_input_raises_clear_errors(name):
    emb = get_input_embedding(name, 3, 4, rng=0)
    with pytest.raises(ShapeError, match=r"x.*\(2, 5, 2\)"):
        emb(X[..., :2])
    with pytest.raises(ShapeError, match=r"x.*\(30,\)"):
        emb(X.reshape(-1))
    bad = X.copy()
    bad[1, 2, 0] = np.nan
    with pytest.raises(InputError, match=r"x.*non-finite.*\(1, 2, 0\)"):
        emb(bad)


def test_factory_errors():
    with pytest.raises(InputError, match="linear"):
        get_input_embedding("conv", 1, 4)
    with pytest.raises(InputError, match="unknown option.*hidden"):
        get_input_embedding("linear", 1, 4, hidden=3)
    with pytest.raises(InputError, match="activation"):
        MLPInputEmbedding(1, 4, activation="swish")
    with pytest.raises(InputError, match=r"frequencies must have shape \(1, 2\)"):
        FourierInputEmbedding(1, 4, num_frequencies=2, frequencies=[0.1, 0.2])


def test_token_embedding_scaled_values_gradients_and_padding():
    tok = TokenEmbedding(6, 4, padding_idx=0, rng=0)
    assert list(tok.state_dict()) == ["embedding.weight"]
    ids = np.array([[1, 2, 0], [2, 5, 0]])
    out = tok(ids)
    np.testing.assert_allclose(out, tok.embedding.weight.data[ids] * 2.0)  # sqrt(4) = 2
    assert not out[:, 2].any()  # padding row starts at zero
    g = np.random.default_rng(0).standard_normal((2, 3, 4))
    assert tok.backward(g) is None
    np.testing.assert_allclose(tok.embedding.weight.grad[2], 2.0 * (g[0, 1] + g[1, 0]))
    assert not tok.embedding.weight.grad[0].any()  # padding receives no gradient

    plain = TokenEmbedding(6, 4, scale=False, rng=0)
    np.testing.assert_array_equal(plain(ids), plain.embedding.weight.data[ids])
    assert gradcheck(plain, (ids,)).max_error <= 1e-6
    assert gradcheck(TokenEmbedding(6, 4, rng=0), (ids,)).max_error <= 1e-6
    tok32 = TokenEmbedding(6, 4, rng=0, dtype=np.float32)
    assert tok32(ids).dtype == np.float32
    with pytest.raises(InputError, match=r"\[0, 6\)"):
        tok(np.array([[6]]))
