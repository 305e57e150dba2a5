"""glassformer/nn/reference.py read as a whole: its model is the library's, its backward the true gradient.

The reference's own composite functions (multi-head attention, the chapter's encoder block and
model, the loss) are checked against the library's modules with the same parameters, and the
model's backward against central finite differences.
"""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest

from glassformer import SequenceRegressor
from glassformer.nn import MultiheadAttention
from glassformer.nn import reference as R
from glassformer.nn.positional import chapter_positional_encoding
from glassformer.train.losses import MSELoss

RTOL = 1e-12


def _chapter_network(n_features=1, seed=3):
    return SequenceRegressor.chapter_model(random_state=seed).build_network(n_features)


@pytest.mark.parametrize("sharing", ["qkv", "kv", "none"])
@pytest.mark.parametrize("out_proj", [True, False])
def test_multi_head_attention_equals_the_layer_and_returns_three_gradients(sharing, out_proj):
    rng = np.random.default_rng(0)
    B, L, S, E, H = 2, 5, 4 if sharing != "qkv" else 5, 6, 3
    layer = MultiheadAttention(E, H, out_proj=out_proj, rng=1)
    layer.in_proj_bias.data[...] = rng.standard_normal(3 * E)
    q = rng.standard_normal((B, L, E))
    k = q if sharing == "qkv" else rng.standard_normal((B, S, E))
    v = k if sharing != "none" else rng.standard_normal((B, S, E))
    dO = rng.standard_normal((B, L, E))
    want, _ = layer(q, k, v)
    want_grads = layer.backward(dO)
    p = layer.state_dict()
    O, saved = R.multi_head_attention(q, k, v, p["in_proj_weight"], p["in_proj_bias"],
                                      p.get("out_proj.weight"), p.get("out_proj.bias"), H)
    np.testing.assert_allclose(O, want, rtol=RTOL, atol=1e-13)
    *d_inputs, grads = R.multi_head_attention_backward(dO, saved)
    assert len(d_inputs) == 3
    for got, ref in zip(d_inputs, want_grads):
        np.testing.assert_allclose(got, ref, rtol=RTOL, atol=1e-13)
    np.testing.assert_allclose(grads["W_in"], layer.in_proj_weight.grad, rtol=RTOL, atol=1e-13)
    np.testing.assert_allclose(grads["b_in"], layer.in_proj_bias.grad, rtol=RTOL, atol=1e-13)


def test_the_chapter_model_equals_the_library_network_forward_and_backward():
    net = _chapter_network()
    rng = np.random.default_rng(4)
    X, t = rng.uniform(0.05, 0.3, (3, 7, 1)), np.arange(1.0, 8.0)
    dy = rng.standard_normal((3, 7, 1))
    want = net(X, t)
    net.zero_grad()
    net.backward(dy)
    p = net.state_dict()
    y_hat, saved = R.chapter_model(X, t, p)
    np.testing.assert_allclose(y_hat, want, rtol=RTOL, atol=1e-13)
    grads = R.chapter_model_backward(dy, saved, p)
    assert grads.keys() == {n for n, _ in net.named_parameters()}
    for name, param in net.named_parameters():
        np.testing.assert_allclose(grads[name], param.grad, rtol=1e-11, atol=1e-13, err_msg=name)


def test_the_chapter_model_backward_matches_central_finite_differences():
    net = _chapter_network(seed=5)
    rng = np.random.default_rng(6)
    X, t, y = rng.uniform(0.05, 0.3, (2, 7, 1)), np.arange(1.0, 8.0), rng.standard_normal((2, 7, 1))
    p = {k: v.copy() for k, v in net.state_dict().items()}

    def loss(params):
        return R.mse(R.chapter_model(X, t, params)[0], y)
    y_hat, saved = R.chapter_model(X, t, p)
    grads = R.chapter_model_backward(R.mse_backward(y_hat, y), saved, p)
    h = 1e-6
    for name, value in p.items():
        for i in rng.choice(value.size, size=min(3, value.size), replace=False):
            up, down = {**p, name: value.copy()}, {**p, name: value.copy()}
            up[name].flat[i] += h
            down[name].flat[i] -= h
            numeric = (loss(up) - loss(down)) / (2 * h)
            assert abs(numeric - grads[name].flat[i]) <= 1e-7 * max(1.0, abs(numeric)), (name, i)


def test_positional_encoding_and_loss_equal_the_library():
    t = np.array([1.0, 2.5, 30.0, 1000.0])
    np.testing.assert_allclose(R.chapter_positional_encoding(t), chapter_positional_encoding()(t), rtol=0, atol=1e-15)
    rng = np.random.default_rng(7)
    y_hat, y = rng.standard_normal((3, 7, 1)), rng.standard_normal((3, 7, 1))
    loss = MSELoss()
    assert R.mse(y_hat, y) == pytest.approx(loss.forward(y_hat, y), rel=1e-14)
    np.testing.assert_allclose(R.mse_backward(y_hat, y), loss.backward(), rtol=1e-14)


def test_softmax_of_a_fully_masked_row_is_zero_and_huge_scores_do_not_overflow():
    S = np.array([[1000.0, 999.0, -np.inf], [-np.inf, -np.inf, -np.inf]])
    A = R.softmax(S)
    np.testing.assert_allclose(A[0], [1 / (1 + np.exp(-1)), np.exp(-1) / (1 + np.exp(-1)), 0.0], rtol=1e-15)
    assert np.array_equal(A[1], np.zeros(3))
    dS = R.softmax_backward(np.ones_like(A), A)
    assert np.all(dS[1] == 0) and np.all(np.isfinite(dS))


def test_the_reference_has_no_speed_machinery():
    """No member axis, no blocks, no bounds, nothing in place, no branch on the data's size."""
    text = open(R.__file__, encoding="utf-8").read()
    tree = ast.parse(text)
    for node in ast.walk(tree):                              # the code without docstrings and comments
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            node.body = body[1:] or [ast.Pass()]
    code = ast.unparse(tree)
    for word in ("members", "block", "bound", r"\bout=", r"\+=", "-=", r"\*=", "/=", "copyto", "einsum", "k_t"):
        assert not re.search(word, code), word
    assert len(text.splitlines()) <= 400
