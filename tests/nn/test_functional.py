"""The kernels of glassformer.nn.functional: hand values, finite differences, and every speed trick
against the plain formula it replaces (one GEMM per linear map, BLAS row sums,
the bounded-score softmax, the row dot of the softmax backward)."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.nn import causal_mask
from glassformer.nn import functional as F
from glassformer.nn.functional import (
    masked_softmax, scaled_dot_product_attention, scaled_dot_product_attention_backward,
)
from glassformer.nn.attention_blocks import attention_blocks, attention_blocks_backward
from glassformer.nn.reductions import ones_vector, row_sum
from glassformer.selftest.published import bug_report


def _numeric(f, x, eps=1e-6):
    """Central differences of the scalar ``f()`` w.r.t. every element of ``x`` (perturbed in place)."""
    g = np.zeros_like(x)
    for i in range(x.size):
        old = x.flat[i]
        x.flat[i] = old + eps
        up = f()
        x.flat[i] = old - eps
        g.flat[i] = (up - f()) / (2 * eps)
        x.flat[i] = old
    return g


# --------------------------------------------------------------------------- linear
def test_linear_is_one_gemm_equal_to_the_batched_product():
    rng = np.random.default_rng(0)
    x, W, b = rng.standard_normal((3, 4, 5)), rng.standard_normal((2, 5)), rng.standard_normal(2)
    y = F.linear(x, W, b)
    np.testing.assert_allclose(y, np.einsum("btj,oj->bto", x, W) + b, rtol=1e-13, atol=1e-13)
    dy = rng.standard_normal(y.shape)
    dx, dW, db = F.linear_backward(dy, x, W)
    np.testing.assert_allclose(dx, np.einsum("bto,oj->btj", dy, W), atol=1e-12)
    np.testing.assert_allclose(dW, np.einsum("bto,btj->oj", dy, x), atol=1e-12)
    np.testing.assert_allclose(db, dy.sum(axis=(0, 1)), atol=1e-12)
    assert F.linear_backward(dy, x, W, has_bias=False)[2] is None


# --------------------------------------------------------------------------- activations
def _activation(name):
    """``(forward(x) -> y, backward(dy, x) -> dx)`` from the kernel pair of activation ``name``."""
    if name == "relu":
        return (lambda x: F.relu(x)[0]), (lambda dy, x: F.relu_backward(dy, F.relu(x)[1]))
    if name == "gelu":
        return (lambda x: F.gelu(x)[0]), (lambda dy, x: F.gelu_backward(dy, x, F.gelu(x)[1]))
    if name == "gelu_tanh":
        return (lambda x: F.gelu_tanh(x)[0]), (lambda dy, x: F.gelu_tanh_backward(dy, x, F.gelu_tanh(x)[1]))
    return F.tanh, (lambda dy, x: F.tanh_backward(dy, F.tanh(x)))


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh", "tanh"])
def test_activation_derivatives_by_finite_differences_and_float32(name):
    forward, backward = _activation(name)
    x = np.linspace(-3, 3, 13) + 0.01                     # no kink of relu at exactly 0
    R = np.random.default_rng(1).standard_normal(x.shape)
    num = _numeric(lambda: float(np.sum(forward(x) * R)), x)
    np.testing.assert_allclose(backward(R, x), num, rtol=1e-6, atol=1e-8)
    x32 = x.astype(np.float32)
    assert forward(x32).dtype == np.float32 and backward(R.astype(np.float32), x32).dtype == np.float32


def test_activation_hand_values():
    np.testing.assert_array_equal(F.relu(np.array([-1.0, 0.0, 2.0]))[0], [0.0, 0.0, 2.0])
    # GELU(1) = Phi(1) = 0.8413447460685429; tanh form 0.8411919906082768 (PyTorch's values)
    assert F.gelu(np.array([1.0]))[0][0] == pytest.approx(0.8413447460685429, abs=1e-15)
    assert F.gelu_tanh(np.array([1.0]))[0][0] == pytest.approx(0.8411919906082768, abs=1e-15)


# --------------------------------------------------------------------------- layer norm
def test_layer_norm_equals_the_textbook_formula_and_its_gradient():
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((2, 3, 5)) * 2 + 1, rng.standard_normal(5), rng.standard_normal(5)
    y, xhat, rstd = F.layer_norm(x, w, b, 1e-5)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)          # biased variance
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5) * w + b, atol=1e-12)
    R = rng.standard_normal(x.shape)
    dx, dw, db = F.layer_norm_backward(R, xhat, rstd, w)
    np.testing.assert_allclose(dx, _numeric(lambda: float(np.sum(F.layer_norm(x, w, b, 1e-5)[0] * R)), x), atol=1e-7)
    np.testing.assert_allclose(dw, _numeric(lambda: float(np.sum(F.layer_norm(x, w, b, 1e-5)[0] * R)), w), atol=1e-7)
    np.testing.assert_allclose(db, R.sum(axis=(0, 1)), atol=1e-12)


# --------------------------------------------------------------------------- BLAS row sums
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_and_column_sums_equal_numpy(dtype):
    x = np.random.default_rng(1).standard_normal((3, 4, 5, 7)).astype(dtype)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    columns = ones_vector(60, x.dtype) @ x.reshape(-1, 7)          # the bias gradients' column sums
    assert row_sum(x).dtype == dtype and columns.dtype == dtype
    np.testing.assert_allclose(row_sum(x), x.sum(axis=-1, keepdims=True), rtol=tol, atol=tol)
    np.testing.assert_allclose(columns, x.reshape(-1, 7).sum(axis=0), rtol=tol, atol=tol)
    view = x[:, ::2]                      # non-contiguous input
    np.testing.assert_allclose(row_sum(view), view.sum(axis=-1, keepdims=True), rtol=tol, atol=tol)


# --------------------------------------------------------------------------- softmax
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


def test_softmax_backward_row_dot_equals_the_jacobian_product():
    rng = np.random.default_rng(3)
    s = rng.standard_normal((2, 3, 4, 6))
    A = F.masked_softmax(s.copy())
    dA = rng.standard_normal(A.shape)
    # the plain form: dS_ij = sum_k dA_ik A_ik (delta_jk - A_ij), i.e. the full softmax Jacobian
    J = np.einsum("...ij,jk->...ijk", A, np.eye(6)) - np.einsum("...ij,...ik->...ijk", A, A)
    np.testing.assert_allclose(F.softmax_backward(dA.copy(), A), np.einsum("...ik,...ijk->...ij", dA, J), atol=1e-13)


# --------------------------------------------------------------------------- attention
def test_kernel_broadcasts_over_leading_axes():
    rng = np.random.default_rng(14)
    q, k, v = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3, 6, 7))
    out, w = scaled_dot_product_attention(q, k, v)
    s = np.einsum("bhld,bhsd->bhls", q, k) / np.sqrt(5)
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(w, e / e.sum(-1, keepdims=True), atol=1e-12)
    np.testing.assert_allclose(out, np.einsum("bhls,bhsd->bhld", w, v), atol=1e-12)


def test_attention_backward_equals_finite_differences_with_masks_bias_and_dropout():
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 3))
    allowed = rng.random((2, 3, 5)) > 0.3
    allowed[0, 1] = False                                  # a fully blocked row
    bias = rng.standard_normal((3, 5))
    keep = (rng.random((2, 3, 5)) > 0.2) / 0.8
    R = rng.standard_normal((2, 3, 3))

    def loss():
        return float(np.sum(scaled_dot_product_attention(q, k, v, allowed, bias, 0.7, keep)[0] * R))

    out, A = scaled_dot_product_attention(q, k, v, allowed, bias, 0.7, keep)
    dq, dk, dv = scaled_dot_product_attention_backward(R, q, k, v, A, 0.7, keep)
    for got, arr in ((dq, q), (dk, k), (dv, v)):
        np.testing.assert_allclose(got, _numeric(loss, arr), atol=1e-8)
    assert np.all(A[0, 1] == 0) and np.all(dq[0, 1] == 0)


def test_attention_records_the_masked_scores_and_takes_given_weights():
    rng = np.random.default_rng(5)
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    record = {}
    out, A = scaled_dot_product_attention(q, k, v, ~causal_mask(3, 5), record=record)
    expected = q @ k.T / 2.0
    expected[causal_mask(3, 5)] = -np.inf
    np.testing.assert_allclose(record["S"], expected, atol=1e-14)
    W = rng.random((3, 5))
    out, A = scaled_dot_product_attention(q, k, v, weights=W)
    np.testing.assert_allclose(out, W @ v, atol=1e-14)
    dq, dk, dv = scaled_dot_product_attention_backward(np.ones_like(out), q, k, v, W, fixed_weights=True)
    assert not dq.any() and not dk.any()
    np.testing.assert_allclose(dv, W.T @ np.ones_like(out), atol=1e-14)


# --------------------------------------------------------------------------- cases from public bug reports


# --------------------------------------------------------------------------- cases from public bug reports
# (inputs and expected values are stored once, in glassformer/selftest/published.json, with their sources)
def test_fully_padded_sequence_gives_zeros_not_nan():
    case = bug_report("fully_padded_sequence")
    x, kpm, want = case.inputs["x"], case.inputs["key_padding_mask"], case.expected
    allowed = ~kpm[:, None, :]                       # (batch, 1 query axis, S)
    out, w = scaled_dot_product_attention(x, x, x, allowed=allowed)   # scale 1/sqrt(2), no projections
    np.testing.assert_allclose(w[0], want["weights_0"], atol=1e-8)
    np.testing.assert_allclose(out[0], want["output_0"], atol=1e-8)
    assert np.all(w[1] == 0) and np.all(out[1] == 0)

    dq, dk, dv = scaled_dot_product_attention_backward(np.ones_like(out), x, x, x, w)
    dx = dq + dk + dv                                 # q = k = v = x share one gradient
    np.testing.assert_allclose(dx[0], want["grad_x_0"], atol=1e-8)
    assert np.all(dx[1] == 0)


def test_causal_attention_weights_and_no_leak_from_later_values():
    case = bug_report("causal_attention")
    q, v = case.inputs["q"], case.inputs["v"]
    allowed = ~causal_mask(3)
    out, w = scaled_dot_product_attention(q, q, v, allowed=allowed)
    np.testing.assert_allclose(w, case.expected["weights"], atol=1e-8)
    np.testing.assert_allclose(out[:, 0], case.expected["output"], atol=1e-7)
    v2 = v.copy()
    v2[2] = -5.0
    out2, _ = scaled_dot_product_attention(q, q, v2, allowed=allowed)
    np.testing.assert_array_equal(out2[:2], out[:2])
    assert out2[2, 0] != out[2, 0]


# --------------------------------------------------------------------------- the later speed tricks
@pytest.mark.parametrize("width", [4, 16, 48])              # one-GEMM centring up to 32 features, two passes above
def test_layer_norm_centring_and_its_backward_against_the_plain_formula(width):
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal((3, 5, width)) + 2.0, rng.standard_normal(width), rng.standard_normal(width)
    y, xhat, rstd = F.layer_norm(x, w, b, 1e-5)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5) * w + b, rtol=1e-12, atol=1e-12)
    dy = rng.standard_normal(x.shape)
    dx, dw, db = F.layer_norm_backward(dy, xhat, rstd, w)
    dxhat = dy * w                                           # the plain form of the derivative
    plain = (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True)) * rstd
    np.testing.assert_allclose(dx, plain, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dw, (dy * xhat).sum(axis=(0, 1)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(db, dy.sum(axis=(0, 1)), rtol=1e-12, atol=1e-12)


def test_linear_with_one_output_takes_the_outer_product_exactly():
    rng = np.random.default_rng(8)
    x, W = rng.standard_normal((4, 6, 5)), rng.standard_normal((1, 5))
    dy = rng.standard_normal((4, 6, 1))
    dx, dW, db = F.linear_backward(dy, x, W)
    np.testing.assert_array_equal(dx, dy * W)                 # one product per entry, no sums: exact
    np.testing.assert_allclose(dW, np.einsum("bto,btj->oj", dy, x), atol=1e-12)


def test_scores_bounded_from_q_and_k_take_the_same_softmax_as_the_scan():
    rng = np.random.default_rng(9)
    q, k = rng.standard_normal((2, 3, 4, 4)), rng.standard_normal((2, 3, 64, 4))   # S >= 8 d: the bound is used
    assert F._bounded(q, F.key_bound(F.transposed(k, 0.5)))
    bounded = F.attention_weights(q, k, scale=0.5)
    scanned = F.masked_softmax((q * 0.5) @ k.swapaxes(-1, -2))
    np.testing.assert_array_equal(bounded, scanned)
    assert not F._bounded(q * 100.0, F.key_bound(F.transposed(k, 0.5)))   # not provably bounded: the scan decides
    np.testing.assert_allclose(F.attention_weights(q * 100.0, k, scale=0.5),
                               _reference_softmax((q * 50.0) @ k.swapaxes(-1, -2), np.ones((1, 1, 4, 64), bool)),
                               rtol=1e-12, atol=1e-300)


def test_attention_by_query_blocks_equals_attention_at_once():
    rng = np.random.default_rng(10)
    q, k, v = rng.standard_normal((2, 2, 11, 4)), rng.standard_normal((2, 2, 9, 4)), rng.standard_normal((2, 2, 9, 3))
    allowed = rng.random((2, 1, 11, 9)) > 0.2
    allowed[0, 0, 3] = False                                 # a fully blocked query
    bias = rng.standard_normal((11, 9))
    out, A = scaled_dot_product_attention(q, k, v, allowed, bias, 0.6)
    blocked = attention_blocks(q, k, v, allowed, bias, 0.6, block=4)
    np.testing.assert_allclose(blocked, out, rtol=1e-13, atol=1e-13)
    dout = rng.standard_normal(out.shape)
    want = scaled_dot_product_attention_backward(dout, q, k, v, A, 0.6)
    got = attention_blocks_backward(dout, q, k, v, blocked, allowed, bias, 0.6, block=4)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert np.all(got[0][0, :, 3] == 0)


def test_kernels_with_a_member_axis_equal_each_member_alone_bit_for_bit():
    rng = np.random.default_rng(11)
    K = 3
    x, W, b = rng.standard_normal((K, 4, 7, 5)), rng.standard_normal((K, 6, 5)), rng.standard_normal((K, 6))
    y = F.linear(x, W, b)
    dy = rng.standard_normal(y.shape)
    dx, dW, db = F.linear_backward(dy, x, W)
    g, c = rng.standard_normal((K, 5)), rng.standard_normal((K, 5))
    ln, xhat, rstd = F.layer_norm(x, g, c, 1e-5)
    dln = F.layer_norm_backward(dy[..., :5], xhat, rstd, g)
    s = rng.standard_normal((K, 4, 2, 7, 7)) * np.array([1.0, 100.0, 1.0])[:, None, None, None, None]
    A = F.masked_softmax(s.copy(), members=True)              # member 1 needs the shift, 0 and 2 do not
    for m in range(K):
        np.testing.assert_array_equal(y[m], F.linear(x[m], W[m], b[m]))
        for got, want in zip((dx[m], dW[m], db[m]), F.linear_backward(dy[m], x[m], W[m])):
            np.testing.assert_array_equal(got, want)
        alone = F.layer_norm(x[m], g[m], c[m], 1e-5)
        np.testing.assert_array_equal(ln[m], alone[0])
        for got, want in zip((dln[0][m], dln[1][m], dln[2][m]), F.layer_norm_backward(dy[m, ..., :5], *alone[1:], g[m])):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(A[m], F.masked_softmax(s[m].copy()))


@pytest.mark.parametrize("masked", [False, True])
def test_attention_without_weights_divides_the_output_and_equals_the_weighted_sum(masked):
    rng = np.random.default_rng(12)
    q, k, v = rng.standard_normal((3, 2, 6, 4)), rng.standard_normal((3, 2, 5, 4)), rng.standard_normal((3, 2, 5, 3))
    allowed = None
    if masked:
        allowed = rng.random((3, 1, 6, 5)) > 0.3
        allowed[1, 0, 2] = False                              # a fully blocked query: output exactly 0
    full, A = scaled_dot_product_attention(q, k, v, allowed)
    out, none = scaled_dot_product_attention(q, k, v, allowed, need_weights=False)
    assert none is None
    np.testing.assert_allclose(out, full, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out, _reference_softmax(q @ k.swapaxes(-1, -2) / 2.0,
                                                       np.ones((1, 1, 6, 5), bool) if allowed is None else allowed) @ v,
                               rtol=1e-12, atol=1e-14)
    if masked:
        assert np.all(out[1, :, 2] == 0.0)
    buf = np.empty((3, 6, 2, 3)).transpose(0, 2, 1, 3)       # the merged-heads layout, written in place
    got, _ = scaled_dot_product_attention(q, k, v, allowed, out=buf, need_weights=False)
    assert got is buf
    np.testing.assert_array_equal(buf, out)
