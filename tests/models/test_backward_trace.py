"""The backward trace (``trace(X, positions, y=y, grads=True)``) against central finite differences.

Each gradient dL/d(intermediate) of the trace is compared, element by element (chapter model) or
along random directions (2-head, 2-layer pre-norm model), with

    (L(intermediate + h e) - L(intermediate - h e)) / (2h)

where the perturbation is injected into the forward pass at the line that computes the
intermediate, through the same probe hook (``Module.probing``) that records the gradients, and L is
the mean squared error computed here with plain NumPy.  The attention weights A and scores S are
perturbed through ``MultiheadAttention.override_weights`` (A + h e, or softmax(S + h e) formed here).
"""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import SequenceRegressor
from glassformer.errors import InputError, ShapeError
from glassformer.trace import backward_order

H_STEP = 1e-6
TOL = 1e-6


class Nudge:
    """A probe adding ``delta`` to the intermediate with trace key ``key`` in a forward pass."""

    def __init__(self, prefixes, key, delta):
        self.prefixes, self.key, self.delta = prefixes, key, delta

    def forward(self, module, symbol, value):
        prefix = self.prefixes.get(module)
        return value + self.delta if prefix is not None and prefix + symbol == self.key else value

    def backward(self, module, symbol, grad):
        pass


def _softmax(S):
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _loss(net, X, pos, Y, key, delta, tr):
    """The plain mean squared error with ``key`` perturbed by ``delta`` (one forward pass, no caches)."""
    head, _, sym = key.rpartition(".")
    net.eval()
    with net.no_cache():
        if key == "X":
            y_hat = net.forward(X + delta, pos)
        elif sym in ("A", "S"):
            A = tr[key] + delta if sym == "A" else _softmax(tr[key] + delta)
            with net.encoder.layers[int(head.split(".")[1])].self_attn.override_weights(A):
                y_hat = net.forward(X, pos)
        else:
            with net.probing(Nudge(net.trace_prefixes(), key, delta)):
                y_hat = net.forward(X, pos)
    return float(np.mean((y_hat - Y) ** 2))


def _forward_key(key):
    """``"layers.0.dA"`` -> ``"layers.0.A"``, ``"dy_hat"`` -> ``"y_hat"``."""
    head, _, dsym = key.rpartition(".")
    return f"{head}.{dsym[1:]}" if head else dsym[1:]


def _rel_error(a, n):
    return float(np.max(np.abs(a - n)) / max(np.max(np.abs(a)), np.max(np.abs(n)), 1e-12))


def _numeric_elementwise(net, X, pos, Y, key, tr):
    shape = tr[key].shape
    grad = np.zeros(shape)
    for i in np.ndindex(shape):
        e = np.zeros(shape)
        e[i] = H_STEP
        grad[i] = (_loss(net, X, pos, Y, key, e, tr) - _loss(net, X, pos, Y, key, -e, tr)) / (2 * H_STEP)
    return grad


def _data(seq, n_features, batch=2, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.05, 0.35, (batch, seq, n_features))          # porosity-like inputs, v/v
    y = rng.normal(1.0, 0.5, (batch, seq, 1))                      # log10 permeability-like targets
    return X, y


@pytest.fixture(scope="module")
def chapter():
    model = SequenceRegressor.chapter_model()
    model.build_network(1, 1)
    X, y = _data(7, 1)
    pos = np.arange(1.0, 8.0)
    return model, X, pos, y, model.trace(X, pos, y=y, grads=True)


@pytest.fixture(scope="module")
def prenorm():
    model = SequenceRegressor(d_model=8, num_heads=2, d_ff=16, num_layers=2, norm_first=True, random_state=3)
    model.build_network(2, 1)
    X, y = _data(5, 2, seed=8)
    pos = np.array([2501.0, 2501.5, 2502.0, 2502.5, 2503.0])       # depths, m
    return model, X, pos, y, model.trace(X, pos, y=y, grads=True)


def test_the_chapter_model_trace_holds_every_gradient_with_its_symbols_shape(chapter):
    model, X, pos, y, tr = chapter
    assert list(tr.gradients()) == backward_order(1)
    assert tr.has_grads and tr.backward_steps()[0] == ("y_hat", "dy_hat")
    assert [k for k, _ in tr.backward_steps()][-4:] == ["Z", "E", "P", "X"]
    for key, dkey in tr.backward_steps():
        assert tr[dkey].shape == tr[key].shape, dkey
        assert tr.grad(key) is tr[dkey]
    np.testing.assert_allclose(tr["L"], np.mean((tr["y_hat"] - y) ** 2), rtol=1e-14)
    np.testing.assert_allclose(tr["dy_hat"], 2.0 * (tr["y_hat"] - y) / y.size, rtol=1e-14)   # the chapter's
    assert tr.layer(0)["dA"] is tr["layers.0.dA"] and tr.head(0, 0)["dS"].shape == (2, 7, 7)


@pytest.mark.parametrize("key", [k for k in backward_order(1)])
def test_the_chapter_model_gradients_equal_central_differences_element_by_element(chapter, key):
    model, X, pos, y, tr = chapter
    fkey = _forward_key(key)
    numeric = _numeric_elementwise(model.network_, X, pos, y, fkey, tr)
    assert _rel_error(tr[key], numeric) < TOL, (key, _rel_error(tr[key], numeric))
    assert np.abs(numeric).max() > 1e-6                            # a gradient worth checking


@pytest.mark.parametrize("key", [k for k in backward_order(2)])
def test_a_two_head_two_layer_prenorm_model_matches_central_differences(prenorm, key):
    model, X, pos, y, tr = prenorm
    fkey = _forward_key(key)
    rng = np.random.default_rng(sum(map(ord, key)))
    for _ in range(3):                                             # random directions D: dL/dT . D
        D = rng.standard_normal(tr[fkey].shape) * H_STEP
        numeric = (_loss(model.network_, X, pos, y, fkey, D, tr) - _loss(model.network_, X, pos, y, fkey, -D, tr)) \
            / (2 * H_STEP)
        analytic = float(np.sum(tr[key] * D)) / H_STEP
        assert abs(analytic - numeric) <= TOL * max(abs(analytic), np.abs(tr[key]).max()), (key, analytic, numeric)


def test_the_pre_norm_trace_walks_both_layers_from_the_last(prenorm):
    *_, tr = prenorm
    keys = list(tr.gradients())
    assert keys.index("layers.1.dH") < keys.index("layers.1.dS") < keys.index("layers.0.dH") < keys.index("dZ")
    assert tr["layers.0.dQ"].shape == (2, 2, 5, 4)
    np.testing.assert_array_equal(tr["layers.1.dH"], tr["layers.1.dT2"])   # pre-norm: H = T2


def test_a_backward_trace_leaves_the_model_as_it_was(chapter):
    model, X, pos, y, tr = chapter
    net = model.network_
    for p in net.parameters():
        p.grad[...] = 0.25
    net.train()
    again = model.trace(X, pos, y=y, grads=True)
    assert all((p.grad == 0.25).all() for p in net.parameters()) and net.training
    assert all(m._cache is None and m._probe is None for m in net.modules())
    for key in tr:
        np.testing.assert_array_equal(again[key], tr[key])


def test_a_backward_trace_needs_targets_of_the_right_shape(chapter):
    model, X, pos, y, _ = chapter
    with pytest.raises(InputError, match="needs the targets y"):
        model.trace(X, pos, grads=True)
    with pytest.raises(ShapeError, match="y must have shape"):
        model.trace(X, pos, y=y[:, :3], grads=True)
    tr = model.trace(X, pos, y=y[..., 0])                          # forward only: no gradients
    assert not tr.has_grads and not tr.gradients() and "dA" not in tr.layer(0)


@pytest.mark.parametrize("options", [
    dict(positional="rotary", activation="gelu"),                        # Q, K after the head hook (RoPE)
    dict(mixer="fourier", positional="learned", positional_options={"max_len": 16}, input_embedding="mlp"),
    dict(dropout=0.2, attn_out_proj=False),                               # the trace runs in evaluation mode
])
def test_other_layers_trace_gradients_that_match_central_differences(options):
    model = SequenceRegressor(d_model=8, num_heads=2, d_ff=12, random_state=11, **options)
    model.build_network(1, 1)
    X, y = _data(6, 1, seed=2)
    pos = np.arange(1.0, 7.0)
    tr = model.trace(X, pos, y=y, grads=True)
    attention = options.get("mixer") != "fourier"
    assert ("layers.0.dS" in tr) == attention and ("layers.0.dQ" in tr) == attention
    rng = np.random.default_rng(0)
    keys = ["dZ", "dE", "dP", "layers.0.dT1", "layers.0.dG", "layers.0.dU"]
    for key in keys + (["layers.0.dQ", "layers.0.dK", "layers.0.dS"] if attention else []):
        fkey = _forward_key(key)
        D = rng.standard_normal(tr[fkey].shape) * H_STEP
        numeric = (_loss(model.network_, X, pos, y, fkey, D, tr) - _loss(model.network_, X, pos, y, fkey, -D, tr)) \
            / (2 * H_STEP)
        analytic = float(np.sum(tr[key] * D)) / H_STEP
        assert abs(analytic - numeric) <= TOL * max(abs(analytic), np.abs(tr[key]).max()), (key, analytic, numeric)


def test_the_reference_kernels_trace_the_same_gradients(chapter):
    model, X, pos, y, tr = chapter
    plain = SequenceRegressor.chapter_model(kernels="reference")
    plain.build_network(1, 1)
    ref = plain.trace(X, pos, y=y, grads=True)
    assert list(ref) == list(tr)
    for key in tr.gradients():                                     # the chapter's dA, dS from the reference too
        np.testing.assert_allclose(ref[key], tr[key], rtol=1e-12, atol=1e-15 * np.abs(tr[key]).max(), err_msg=key)
