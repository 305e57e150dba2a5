"""Losses: NaN-masked MSE by hand, cross-entropy with label smoothing on a published case, PyTorch parity."""

import numpy as np
import pytest

from glassformer.errors import InputError, NotReadyError, ShapeError
from glassformer.train.losses import CrossEntropyLoss, MSELoss, log_softmax, softmax
from glassformer.selftest.published import bug_report

torch = pytest.importorskip("torch")
F = torch.nn.functional


# ----------------------------------------------------------------------------- MSE
def test_mse_all_valid_is_the_seeds_formula_exactly():
    rng = np.random.default_rng(0)
    pred, target = rng.standard_normal((7, 1)), rng.standard_normal((7, 1))
    loss = MSELoss()
    assert loss.forward(pred, target) == np.mean((pred - target) ** 2)
    np.testing.assert_array_equal(loss.backward(), 2.0 * (pred - target) / target.size)


def test_mse_ignores_nan_targets_by_hand():
    pred = np.array([[1.0, 2.0], [3.0, 4.0]])
    target = np.array([[0.0, np.nan], [5.0, np.nan]])
    loss = MSELoss()
    # valid: (1-0)^2 = 1 and (3-5)^2 = 4 -> mean 2.5
    assert loss.forward(pred, target) == 2.5
    np.testing.assert_array_equal(loss.backward(), [[1.0, 0.0], [-2.0, 0.0]])  # 2*(p-t)/2
    s = MSELoss(reduction="sum")
    assert s.forward(pred, target) == 5.0
    np.testing.assert_array_equal(s.backward(), [[2.0, 0.0], [-4.0, 0.0]])


def test_mse_explicit_mask_broadcasts_and_combines_with_nan():
    pred = np.array([[[1.0], [2.0], [4.0]]])           # (batch 1, seq 3, 1 target)
    target = np.array([[[0.0], [np.nan], [1.0]]])
    mask = np.array([[True, True, False]])[..., None]   # last position excluded
    loss = MSELoss()
    assert loss.forward(pred, target, mask=mask) == 1.0
    np.testing.assert_array_equal(loss.backward()[0, :, 0], [2.0, 0.0, 0.0])
    assert loss.forward(pred, target, mask=np.ones((1, 3, 1), bool)) == 5.0  # (1 + 9) / 2


def test_mse_float32_kept_and_nan_pred_propagates():
    loss = MSELoss()
    v = loss.forward(np.ones(3, np.float32), np.zeros(3))
    assert v == 1.0 and loss.backward().dtype == np.float32
    assert np.isnan(loss.forward(np.array([np.nan, 1.0]), np.array([0.0, 0.0])))


def test_mse_errors():
    loss = MSELoss()
    with pytest.raises(NotReadyError, match="before forward"):
        loss.backward()
    with pytest.raises(InputError, match="no valid target"):
        loss.forward(np.ones(3), np.full(3, np.nan))
    with pytest.raises(InputError, match="no valid target"):
        loss.forward(np.ones(3), np.zeros(3), mask=np.zeros(3, bool))
    with pytest.raises(ShapeError, match=r"target has shape \(3, 1\).*\(3,\)"):
        loss.forward(np.ones(3), np.zeros((3, 1)))
    with pytest.raises(ShapeError, match="mask"):
        loss.forward(np.ones(3), np.zeros(3), mask=np.ones(2, bool))
    with pytest.raises(InputError, match="boolean"):
        loss.forward(np.ones(3), np.zeros(3), mask=np.ones(3))
    with pytest.raises(InputError, match="inf"):
        loss.forward(np.ones(3), np.array([0.0, np.inf, 0.0]))
    with pytest.raises(InputError, match="reduction"):
        MSELoss(reduction="none")


# ----------------------------------------------------------------------------- cross-entropy
SMOOTHING_CASE = bug_report("label_smoothing_ignore_index")    # PyTorch issue #73205
LOGITS = SMOOTHING_CASE.inputs["logits"]
IGN = SMOOTHING_CASE.inputs["ignore_index"]


def test_cross_entropy_label_smoothing_ignores_padded_targets_published_numbers():
    targets, want = SMOOTHING_CASE.inputs["targets"], SMOOTHING_CASE.expected
    smoothing = SMOOTHING_CASE.inputs["label_smoothing"]
    ce = CrossEntropyLoss(ignore_index=IGN, label_smoothing=smoothing)
    assert ce.forward(LOGITS, targets) == pytest.approx(want["mean"], abs=5e-9)
    grad = ce.backward()
    np.testing.assert_allclose(grad[0], want["grad_row_0"], atol=5e-9)
    assert np.all(grad[1] == 0.0)
    np.testing.assert_allclose(grad[2], want["grad_row_2"], atol=5e-9)
    total = CrossEntropyLoss(ignore_index=IGN, label_smoothing=smoothing, reduction="sum").forward(LOGITS, targets)
    assert total == pytest.approx(want["sum"], abs=5e-9)
    alone = CrossEntropyLoss(label_smoothing=smoothing).forward(LOGITS[[0, 2]], np.array([0, 2]))
    assert alone == pytest.approx(ce.forward(LOGITS, targets), rel=1e-15)


def _torch_ce(logits, targets, **kw):
    t = torch.tensor(logits, requires_grad=True)
    out = F.cross_entropy(t.reshape(-1, logits.shape[-1]), torch.tensor(targets).reshape(-1), **kw)
    out.backward()
    return out.item(), t.grad.numpy()


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.7])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_parity_with_torch(smoothing, reduction):
    rng = np.random.default_rng(11)
    B, T, C, pad = 3, 5, 7, 0
    logits = rng.standard_normal((B, T, C)) * 3
    targets = rng.integers(1, C, size=(B, T))
    targets[0, 3:] = pad
    targets[2, 1:] = pad
    ce = CrossEntropyLoss(ignore_index=pad, label_smoothing=smoothing, reduction=reduction)
    value, grad = ce.forward(logits, targets), ce.backward()
    tvalue, tgrad = _torch_ce(logits, targets, ignore_index=pad, label_smoothing=smoothing, reduction=reduction)
    assert value == pytest.approx(tvalue, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(grad, tgrad, rtol=0, atol=1e-12)
    assert grad.shape == logits.shape
    assert np.all(grad[targets == pad] == 0.0)


def test_cross_entropy_gradient_by_finite_differences():
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((2, 3, 4))
    targets = np.array([[1, 3, -1], [0, -1, 2]])
    ce = CrossEntropyLoss(ignore_index=-1, label_smoothing=0.15)
    ce.forward(logits, targets)
    grad = ce.backward()
    h, num = 1e-6, np.zeros_like(logits)
    for i in np.ndindex(logits.shape):
        e = np.zeros_like(logits)
        e[i] = h
        num[i] = (ce.forward(logits + e, targets) - ce.forward(logits - e, targets)) / (2 * h)
    np.testing.assert_allclose(grad, num, atol=1e-8)


def test_cross_entropy_stable_for_huge_logits():
    logits = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]])
    targets = np.array([1, 2])
    ce = CrossEntropyLoss(label_smoothing=0.1)
    value, grad = ce.forward(logits, targets), ce.backward()
    tvalue, tgrad = _torch_ce(logits, targets, label_smoothing=0.1)
    assert np.isfinite(value) and np.isfinite(grad).all()
    assert value == pytest.approx(tvalue, rel=1e-12)
    np.testing.assert_allclose(grad, tgrad, atol=1e-12)
    f32 = CrossEntropyLoss().forward(logits.astype(np.float32), targets)
    assert np.isfinite(f32) and f32 == pytest.approx((2e4 + np.log(3.0)) / 2, rel=1e-6)


def test_cross_entropy_errors():
    ce = CrossEntropyLoss()
    with pytest.raises(NotReadyError):
        ce.backward()
    with pytest.raises(ShapeError, match=r"logits.shape\[:-1\]"):
        ce.forward(np.zeros((2, 3)), np.array([0, 1, 2]))
    with pytest.raises(InputError, match=r"target 3 at index \(1,\) is outside \[0, 3\)"):
        ce.forward(np.zeros((2, 3)), np.array([0, 3]))
    with pytest.raises(InputError, match="integer"):
        ce.forward(np.zeros((2, 3)), np.array([0.0, 1.0]))
    with pytest.raises(InputError, match="ignore_index"):
        ce.forward(np.zeros((2, 3)), np.array([-100, -100]))
    with pytest.raises(InputError, match="label_smoothing"):
        CrossEntropyLoss(label_smoothing=1.5)


def test_softmax_helpers():
    x = np.array([[1000.0, 1000.0, -np.inf], [0.0, np.log(3.0), -1e4]])
    np.testing.assert_allclose(softmax(x), [[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]], atol=1e-15)
    ls = log_softmax(x)
    np.testing.assert_allclose(ls[:, :2], np.log([[0.5, 0.5], [0.25, 0.75]]), atol=1e-15)
    assert ls[0, 2] == -np.inf
    y = np.random.default_rng(0).standard_normal((2, 3, 5))
    np.testing.assert_allclose(log_softmax(y, axis=1), F.log_softmax(torch.tensor(y), dim=1).numpy(), atol=1e-14)
    assert softmax(y.astype(np.float32)).dtype == np.float32
