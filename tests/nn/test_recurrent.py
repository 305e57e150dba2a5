"""LSTMCell and LSTM: a published two-step case by hand, finite differences, and parity with torch.nn.LSTM."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import gradcheck
from glassformer.errors import InputError, NotReadyError, ShapeError, StateDictError
from glassformer.nn import LSTM, LSTMCell, Module
from glassformer.nn.lstm_step import sigmoid
from glassformer.selftest.published import bug_report

torch = pytest.importorskip("torch")


# --- wrappers so gradcheck sees the initial state and every output --------------------------

class CellWithState(Module):
    """forward(x, h0, c0) -> concat(h', c'): gradcheck then differentiates all inputs and both outputs."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, x, h0, c0):
        h, c = self.cell(x, (h0, c0))
        return np.concatenate([h, c], axis=-1)

    def backward(self, grad):
        H = self.cell.hidden_size
        dx, (dh0, dc0) = self.cell.backward(grad[..., :H], grad[..., H:])
        return dx, dh0, dc0


class LSTMWithState(Module):
    """forward(x, h0, c0) -> flat concat(output, h_n, c_n); optional fixed dropout masks."""

    def __init__(self, lstm, dropout_seed=None):
        super().__init__()
        self.lstm = lstm
        self.dropout_seed = dropout_seed

    def forward(self, x, h0, c0):
        if self.dropout_seed is not None:   # same masks on every call, so differences are smooth
            self.lstm._dropout_rng = np.random.default_rng(self.dropout_seed)
        out, (h, c) = self.lstm(x, (h0, c0))
        self._shapes = (out.shape, h.shape, c.shape)
        return np.concatenate([out.ravel(), h.ravel(), c.ravel()])

    def backward(self, grad):
        parts, start = [], 0
        for shape in self._shapes:
            size = int(np.prod(shape))
            parts.append(grad[start:start + size].reshape(shape))
            start += size
        dx, (dh0, dc0) = self.lstm.backward(parts[0], (parts[1], parts[2]))
        return dx, dh0, dc0


def _state(rng, n, B, H):
    shape = (n, B, H) if B else (n, H)
    return rng.standard_normal(shape), rng.standard_normal(shape)


# --- two steps by hand (Hochreiter and Schmidhuber 1997; PyTorch's gate order) -------------------

TWO_STEPS = bug_report("lstm_two_steps")
STEPS = list(zip(TWO_STEPS.expected["c"], TWO_STEPS.expected["h"]))      # (c_t, h_t) per step


def _two_steps_state(suffix=""):
    return {f"weight_ih{suffix}": np.zeros((4, 1)), f"weight_hh{suffix}": np.zeros((4, 1)),
            f"bias_ih{suffix}": TWO_STEPS.inputs["bias_ih"], f"bias_hh{suffix}": TWO_STEPS.inputs["bias_hh"]}


def _two_steps_initial_state():
    return np.full((1, 1), TWO_STEPS.inputs["h0"]), np.full((1, 1), TWO_STEPS.inputs["c0"])


@pytest.mark.parametrize("x", [np.array([[0.0], [0.0]]), np.array([[3.7], [-12.0]])])
def test_lstm_two_steps_published_values(x):
    lstm = LSTM(1, 1, rng=0)
    lstm.load_state_dict(_two_steps_state("_l0"))
    out, (h_n, c_n) = lstm(x, _two_steps_initial_state())
    inter = lstm.intermediates()["l0"]
    np.testing.assert_allclose(inter["c"][:, 0], [c for c, _ in STEPS], atol=5e-9)
    np.testing.assert_allclose(inter["h"][:, 0], [h for _, h in STEPS], atol=5e-9)
    np.testing.assert_allclose(out[:, 0], [h for _, h in STEPS], atol=5e-9)
    assert h_n.shape == (1, 1) and c_n[0, 0] == pytest.approx(STEPS[1][0], abs=5e-9)
    np.testing.assert_allclose(inter["i"][:, 0], 1 / (1 + np.exp(1.0)), rtol=1e-14)


def test_lstm_two_steps_with_the_cell():
    cell = LSTMCell(1, 1, rng=0)
    cell.load_state_dict(_two_steps_state())
    h, c = _two_steps_initial_state()
    for c_want, h_want in STEPS:
        h, c = cell(np.array([[5.0]]), (h, c))
        assert c[0, 0] == pytest.approx(c_want, abs=5e-9)
        assert h[0, 0] == pytest.approx(h_want, abs=5e-9)


# --- sigmoid -----------------------------------------------------------------------------------

def test_sigmoid_is_stable_and_keeps_dtype():
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is fine
        y = sigmoid(x)
    np.testing.assert_allclose(y, [0.0, 1 / (1 + np.exp(30.0)), 0.5, 1 / (1 + np.exp(-30.0)), 1.0], rtol=1e-15)
    assert sigmoid(x.astype(np.float32)).dtype == np.float32


# --- finite differences -------------------------------------------------------------------------

@pytest.mark.parametrize("batched", [True, False])
def test_cell_gradcheck(batched):
    rng = np.random.default_rng(1)
    cell = LSTMCell(3, 4, rng=2)
    shape = (2,) if batched else ()
    x = rng.standard_normal(shape + (3,))
    h0, c0 = rng.standard_normal(shape + (4,)), rng.standard_normal(shape + (4,))
    report = gradcheck(CellWithState(cell), (x, h0, c0))
    assert set(report.errors) == {"cell.weight_ih", "cell.weight_hh", "cell.bias_ih", "cell.bias_hh",
                                  "input[0]", "input[1]", "input[2]"}
    assert report.max_error <= 1e-6, str(report)


@pytest.mark.parametrize("num_layers, bidirectional, bias", [(1, False, True), (2, True, True), (2, False, False)])
def test_lstm_gradcheck(num_layers, bidirectional, bias):
    rng = np.random.default_rng(3)
    lstm = LSTM(3, 2, num_layers, bias=bias, bidirectional=bidirectional, rng=4)
    D = 2 if bidirectional else 1
    x = rng.standard_normal((2, 4, 3))
    h0, c0 = _state(rng, num_layers * D, 2, 2)
    report = gradcheck(LSTMWithState(lstm), (x, h0, c0))
    assert len(report.errors) == len(list(lstm.named_parameters())) + 3
    assert report.max_error <= 1e-6, str(report)


def test_lstm_gradcheck_unbatched():
    rng = np.random.default_rng(5)
    lstm = LSTM(2, 3, 2, rng=6)
    x = rng.standard_normal((4, 2))
    h0, c0 = _state(rng, 2, None, 3)
    report = gradcheck(LSTMWithState(lstm), (x, h0, c0))
    assert report.max_error <= 1e-6, str(report)


def test_lstm_gradcheck_with_fixed_dropout_masks():
    rng = np.random.default_rng(7)
    lstm = LSTM(2, 3, 3, dropout=0.4, rng=8).train()
    x = rng.standard_normal((2, 5, 2))
    h0, c0 = _state(rng, 3, 2, 3)
    report = gradcheck(LSTMWithState(lstm, dropout_seed=9), (x, h0, c0))
    assert report.max_error <= 1e-6, str(report)
    masks = [lstm.intermediates()[f"l{k}"].get("dropout_mask") for k in range(3)]
    assert masks[2] is None
    for m in masks[:2]:
        assert set(np.unique(m)) == {0.0, 1 / 0.6}


# --- PyTorch parity -----------------------------------------------------------------------------

def _torch_parity(B, T, I, H, num_layers, bidirectional, with_state, unbatched=False):
    torch.manual_seed(0)
    ref = torch.nn.LSTM(I, H, num_layers, batch_first=True, bidirectional=bidirectional).double()
    ours = LSTM(I, H, num_layers, bidirectional=bidirectional, rng=0)
    ours.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()})
    assert list(ours.state_dict()) == list(ref.state_dict())
    D = 2 if bidirectional else 1
    rng = np.random.default_rng(11)
    lead = () if unbatched else (B,)
    x = rng.standard_normal(lead + (T, I))
    st_shape = (num_layers * D,) + lead + (H,)
    h0, c0 = rng.standard_normal(st_shape), rng.standard_normal(st_shape)
    g_out = rng.standard_normal(lead + (T, D * H))
    g_h, g_c = rng.standard_normal(st_shape), rng.standard_normal(st_shape)

    tx = torch.tensor(x, requires_grad=True)
    th0, tc0 = torch.tensor(h0, requires_grad=True), torch.tensor(c0, requires_grad=True)
    t_out, (t_h, t_c) = ref(tx, (th0, tc0)) if with_state else ref(tx)
    loss = (t_out * torch.tensor(g_out)).sum() + (t_h * torch.tensor(g_h)).sum() + (t_c * torch.tensor(g_c)).sum()
    loss.backward()

    out, (h_n, c_n) = ours(x, (h0, c0)) if with_state else ours(x)
    dx, dstate = ours.backward(g_out, (g_h, g_c))
    tol = dict(rtol=0, atol=1e-10)
    np.testing.assert_allclose(out, t_out.detach().numpy(), **tol)
    np.testing.assert_allclose(h_n, t_h.detach().numpy(), **tol)
    np.testing.assert_allclose(c_n, t_c.detach().numpy(), **tol)
    np.testing.assert_allclose(dx, tx.grad.numpy(), **tol)
    if with_state:
        np.testing.assert_allclose(dstate[0], th0.grad.numpy(), **tol)
        np.testing.assert_allclose(dstate[1], tc0.grad.numpy(), **tol)
    else:
        assert dstate is None
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad, getattr(ref, name).grad.numpy(), err_msg=name, **tol)


@pytest.mark.parametrize("num_layers, bidirectional", [(1, False), (2, False), (1, True), (2, True)])
def test_torch_parity(num_layers, bidirectional):
    _torch_parity(B=3, T=7, I=5, H=4, num_layers=num_layers, bidirectional=bidirectional, with_state=True)


def test_torch_parity_zero_state_and_unbatched():
    _torch_parity(B=2, T=6, I=3, H=5, num_layers=2, bidirectional=True, with_state=False)
    _torch_parity(B=None, T=6, I=3, H=5, num_layers=2, bidirectional=True, with_state=True, unbatched=True)


def test_cell_torch_parity():
    torch.manual_seed(1)
    ref = torch.nn.LSTMCell(5, 3).double()
    cell = LSTMCell(5, 3, rng=0)
    cell.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()})
    rng = np.random.default_rng(2)
    x, h0, c0 = rng.standard_normal((4, 5)), rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    gh, gc = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    tx, th, tc = (torch.tensor(a, requires_grad=True) for a in (x, h0, c0))
    t_h, t_c = ref(tx, (th, tc))
    ((t_h * torch.tensor(gh)).sum() + (t_c * torch.tensor(gc)).sum()).backward()
    h, c = cell(x, (h0, c0))
    dx, (dh0, dc0) = cell.backward(gh, gc)
    for ours, theirs in [(h, t_h.detach()), (c, t_c.detach()), (dx, tx.grad), (dh0, th.grad), (dc0, tc.grad),
                         (cell.weight_ih.grad, ref.weight_ih.grad), (cell.weight_hh.grad, ref.weight_hh.grad),
                         (cell.bias_ih.grad, ref.bias_ih.grad), (cell.bias_hh.grad, ref.bias_hh.grad)]:
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=0, atol=1e-12)


def test_init_matches_torch_bounds_and_names():
    lstm = LSTM(3, 16, 2, bidirectional=True, rng=0)
    ref = torch.nn.LSTM(3, 16, 2, batch_first=True, bidirectional=True)
    assert [(k, v.shape) for k, v in lstm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    for p in lstm.parameters():
        assert np.abs(p.data).max() <= 0.25 and np.abs(p.data).max() > 0.2
    assert np.array_equal(LSTM(3, 16, rng=5).weight_hh_l0.data, LSTM(3, 16, rng=5).weight_hh_l0.data)


# --- modes, dtypes, errors -----------------------------------------------------------------------

def test_dropout_only_in_training_and_eval_matches_no_dropout():
    x = np.random.default_rng(0).standard_normal((2, 5, 3))
    plain = LSTM(3, 4, 2, rng=1)
    dropped = LSTM(3, 4, 2, dropout=0.5, rng=1)
    out_train, _ = dropped(x)
    out_eval, _ = dropped.eval()(x)
    out_plain, _ = plain(x)
    np.testing.assert_array_equal(out_eval, out_plain)
    assert np.abs(out_train - out_plain).max() > 1e-3


def test_float32_stays_float32():
    lstm = LSTM(3, 4, 2, bidirectional=True, rng=0, dtype=np.float32)
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype(np.float32)
    out, (h, c) = lstm(x)
    dx, _ = lstm.backward(np.ones_like(out))
    assert out.dtype == h.dtype == c.dtype == dx.dtype == np.float32
    assert all(p.grad.dtype == np.float32 for p in lstm.parameters())
    ref = LSTM(3, 4, 2, bidirectional=True, rng=0)
    np.testing.assert_allclose(out, ref(x.astype(np.float64))[0], atol=1e-5)


def test_no_cache_and_backward_before_forward():
    lstm = LSTM(2, 3, rng=0)
    with pytest.raises(NotReadyError):
        lstm.backward(np.zeros((1, 2, 3)))
    with lstm.no_cache():
        lstm(np.ones((1, 2, 2)))
    with pytest.raises(NotReadyError, match="no_cache"):
        lstm.intermediates()
    with pytest.raises(NotReadyError):
        LSTMCell(2, 3, rng=0).backward(np.zeros((1, 3)))


def test_errors_name_the_problem():
    with pytest.raises(InputError, match="batch_first"):
        LSTM(2, 3, batch_first=False)
    with pytest.raises(InputError, match="dropout"):
        LSTM(2, 3, dropout=1.0)
    lstm = LSTM(2, 3, 2, rng=0)
    with pytest.raises(ShapeError, match="last dimension of x must be 2"):
        lstm(np.ones((1, 4, 5)))
    with pytest.raises(ShapeError, match=r"h0 must have shape \(2, 1, 3\)"):
        lstm(np.ones((1, 4, 2)), (np.zeros((1, 1, 3)), np.zeros((2, 1, 3))))
    with pytest.raises(InputError, match="pair"):
        lstm(np.ones((1, 4, 2)), np.zeros((2, 1, 3)))
    with pytest.raises(InputError, match="non-finite"):
        lstm(np.full((1, 4, 2), np.nan))
    lstm(np.ones((1, 4, 2)))
    with pytest.raises(ShapeError, match=r"grad_output must have the output's shape \(1, 4, 3\)"):
        lstm.backward(np.ones((1, 4, 6)))
    with pytest.raises(StateDictError):
        lstm.load_state_dict({"weight_ih_l0": np.zeros((12, 2))})
    with pytest.raises(ShapeError, match=r"c must have shape \(2, 3\)"):
        LSTMCell(2, 3, rng=0)(np.ones((2, 2)), (np.zeros((2, 3)), np.zeros((3,))))


def test_gradients_accumulate():
    lstm = LSTM(2, 3, rng=0)
    x = np.random.default_rng(1).standard_normal((2, 4, 2))
    g = np.random.default_rng(2).standard_normal((2, 4, 3))
    lstm(x)
    lstm.backward(g)
    once = lstm.weight_hh_l0.grad.copy()
    lstm(x)
    lstm.backward(g)
    np.testing.assert_allclose(lstm.weight_hh_l0.grad, 2 * once, rtol=1e-14)
