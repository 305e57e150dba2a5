"""LayerNorm: hand values, finite differences, the module contract, public bug cases and PyTorch parity."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import gradcheck
from glassformer.errors import NotReadyError, ShapeError, StateDictError
from glassformer.nn import LayerNorm
from glassformer.selftest.published import bug_report


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


# --------------------------------------------------------------------------- B13


# --------------------------------------------------------------------------- B14


# --------------------------------------------------------------------------- PyTorch parity
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_layernorm_parity(dtype, tp):
    rng = np.random.default_rng(13)
    tn = tp.torch.nn.LayerNorm(tp.E, eps=1e-5).to(tp.DTYPES[dtype])
    with tp.torch.no_grad():
        tn.weight.normal_()
        tn.bias.normal_()
    ours = LayerNorm(tp.E, dtype=dtype)
    tp.load(ours, tn)
    x, R = tp.rand(rng, (tp.B, tp.L, tp.E), dtype) * 3 + 1, tp.rand(rng, (tp.B, tp.L, tp.E), dtype)
    tx = tp.t(x, True)
    tout = tn(tx)
    tp.assert_match(ours(x), tout.detach().numpy(), dtype, "LayerNorm output")
    dx = ours.backward(R)
    tout.backward(tp.t(R))
    tp.compare_param_grads(ours, tn, dtype)
    tp.assert_match(dx, tx.grad.numpy(), dtype, "LayerNorm dx")


# --------------------------------------------------------------------------- cases from public bug reports
# (inputs and expected values are stored once, in glassformer/selftest/published.json, with their sources)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_layernorm_over_one_feature(dtype):
    case = bug_report("layernorm_one_feature")
    ln = LayerNorm(1, eps=case.inputs["eps"], dtype=dtype)
    ln.weight.data[...] = case.inputs["weight"]
    ln.bias.data[...] = case.inputs["bias"]
    x = case.inputs["x"].astype(dtype)
    y = ln(x)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, case.expected["y"])
    dx = ln.backward(np.ones_like(x))
    assert np.all(np.abs(dx - case.expected["dx"]) <= 1e-6)
    assert np.all(np.abs(ln.weight.grad - case.expected["dweight"]) <= 1e-6)
    np.testing.assert_array_equal(ln.bias.grad, case.expected["dbias"])


def test_layernorm_backward_values():
    case = bug_report("layernorm_backward")
    ln = LayerNorm(3, eps=case.inputs["eps"])
    ln.weight.data[...] = case.inputs["weight"]
    ln.bias.data[...] = case.inputs["bias"]
    ln(case.inputs["x"])
    dx = ln.backward(case.inputs["dy"])
    np.testing.assert_allclose(ln.weight.grad, case.expected["dweight"], atol=1e-7)
    np.testing.assert_allclose(ln.bias.grad, case.expected["dbias"], atol=1e-12)
    np.testing.assert_allclose(dx[1, 1], case.expected["dx_1_1"], atol=1e-7)
