"""Optimizers and clipping: published Adam numbers, PyTorch parity, hand-computed cases."""

import math

import numpy as np
import pytest

from glassformer.errors import DivergenceError, InputError, StateDictError
from glassformer.nn import Linear, Parameter
from glassformer.selftest.published import bug_report
from glassformer.train.optim import SGD, Adam, AdamW, clip_grad_norm

torch = pytest.importorskip("torch")

ADAM_CASE = bug_report("adam_three_steps")            # Kingma and Ba 2015, by hand
ADAM_GRADS = ADAM_CASE.inputs["grads"]


def _adam_parameters():
    return Parameter(ADAM_CASE.inputs["p1"]), Parameter(ADAM_CASE.inputs["p2"])


def test_adam_three_steps_published_numbers():
    p1, p2 = _adam_parameters()
    inputs, want = ADAM_CASE.inputs, ADAM_CASE.expected
    opt = Adam([p1, p2], lr=inputs["lr"], betas=tuple(inputs["betas"]), eps=inputs["eps"])
    seen = []
    for g1, g2 in ADAM_GRADS:
        p1.grad[...] = g1
        p2.grad[...] = g2
        opt.step()
        seen.append((p1.data.copy(), p2.data.copy()))
    np.testing.assert_allclose(seen[0][0], want["after_step_1"]["p1"], atol=1e-12)
    np.testing.assert_allclose(seen[0][1], want["after_step_1"]["p2"], atol=1e-12)
    np.testing.assert_allclose(seen[2][0], want["after_step_3"]["p1"], atol=5e-9)
    np.testing.assert_allclose(seen[2][1], want["after_step_3"]["p2"], atol=5e-9)


def test_adam_three_steps_match_torch_and_update_in_place():
    p1, p2 = _adam_parameters()
    data1 = p1.data
    t1 = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    t2 = torch.tensor([-2.0, 0.5], dtype=torch.float64, requires_grad=True)
    opt = Adam([("p1", p1), ("p2", p2)], lr=0.1)
    topt = torch.optim.Adam([t1, t2], lr=0.1, betas=(0.9, 0.999), eps=1e-8)
    for g1, g2 in ADAM_GRADS:
        p1.grad[...], p2.grad[...] = g1, g2
        t1.grad, t2.grad = torch.tensor(g1, dtype=torch.float64), torch.tensor(g2, dtype=torch.float64)
        opt.step()
        topt.step()
        np.testing.assert_array_equal(p1.data, t1.detach().numpy())
        np.testing.assert_array_equal(p2.data, t2.detach().numpy())
    assert p1.data is data1  # never rebound


CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.9), eps=1e-6, weight_decay=0.05)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, betas=(0.8, 0.99), weight_decay=0.1)),
]


@pytest.mark.parametrize("name,kw", CASES)
def test_parity_with_torch_optim_over_10_steps(name, kw):
    rng = np.random.default_rng(7)
    shapes = [(3, 4), (4,), (2, 3, 2)]
    init = [rng.standard_normal(s) for s in shapes]
    ours = [Parameter(a) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    opt = {"SGD": SGD, "Adam": Adam, "AdamW": AdamW}[name](ours, **kw)
    topt = getattr(torch.optim, name)(theirs, **kw)
    for step in range(10):
        for p, t in zip(ours, theirs):
            g = rng.standard_normal(p.shape) * (1 + step)
            p.grad[...] = g
            t.grad = torch.tensor(g)
        opt.step()
        topt.step()
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.data, t.detach().numpy(), rtol=0, atol=1e-12)


def test_float32_stays_float32():
    p = Parameter(np.ones(3, dtype=np.float32))
    for cls in (SGD, Adam, AdamW):
        opt = cls([p], lr=0.1) if cls is not SGD else cls([p], lr=0.1, momentum=0.9)
        p.grad[...] = [1.0, -2.0, 3.0]
        opt.step()
        opt.step()
        assert p.data.dtype == np.float32
        assert all(b.dtype == np.float32 for b in opt.state[0].values())


def test_tied_parameter_stepped_once_and_module_accepted():
    lin = Linear(2, 2, rng=0)
    shared = lin.weight
    named = list(lin.named_parameters()) + [("tied.weight", shared)]
    opt = SGD(named, lr=1.0)
    assert opt.param_names == ["weight", "bias"]
    before = shared.data.copy()
    shared.grad[...] = 1.0
    opt.step()
    np.testing.assert_array_equal(shared.data, before - 1.0)
    assert SGD(lin, lr=1.0).param_names == ["weight", "bias"]
    assert Adam(lin.parameters()).param_names == ["0", "1"]


def test_zero_grad_and_lr_mutable():
    p = Parameter([1.0, 2.0])
    opt = SGD([p], lr=0.5)
    p.grad[...] = [3.0, 4.0]
    opt.zero_grad()
    np.testing.assert_array_equal(p.grad, [0.0, 0.0])
    opt.lr = 0.25
    p.grad[...] = [1.0, 1.0]
    opt.step()
    np.testing.assert_array_equal(p.data, [0.75, 1.75])
    with pytest.raises(InputError, match="lr"):
        opt.lr = -1.0


@pytest.mark.parametrize("make,match", [
    (lambda p: SGD(p, lr=0.0), "lr"),
    (lambda p: SGD(p, lr=0.1, momentum=-0.5), "momentum"),
    (lambda p: SGD(p, lr=0.1, nesterov=True), "nesterov"),
    (lambda p: Adam(p, lr=float("nan")), "lr"),
    (lambda p: Adam(p, betas=(0.9, 1.0)), r"betas\[1\]"),
    (lambda p: Adam(p, betas=0.9), "betas"),
    (lambda p: Adam(p, eps=-1e-8), "eps"),
    (lambda p: AdamW(p, weight_decay=-0.1), "weight_decay"),
    (lambda p: Adam([], lr=0.1), "empty"),
    (lambda p: Adam([np.zeros(3)]), r"params\[0\]"),
])
def test_bad_hyperparameters_named(make, match):
    with pytest.raises(InputError, match=match):
        make([Parameter([1.0])])


def test_state_dict_round_trip_resumes_exactly():
    rng = np.random.default_rng(3)
    grads = [rng.standard_normal((5, 3, 2)) for _ in range(6)]

    def run(steps, opt=None, p=None):
        p = p or Parameter(np.linspace(-1, 1, 6).reshape(3, 2))
        opt = opt or AdamW([("w", p)], lr=0.01)
        for g in steps:
            p.grad[...] = g
            opt.step()
        return p, opt

    full, _ = run([g[0] for g in grads])
    half, opt = run([g[0] for g in grads[:3]])
    sd = opt.state_dict()
    assert sd["type"] == "AdamW" and sd["step"] == 3 and sd["hyperparameters"]["betas"] == [0.9, 0.999]
    assert set(sd["arrays"]) == {"w/exp_avg", "w/exp_avg_sq"}
    p2 = Parameter(half.data)
    opt2 = AdamW([("w", p2)], lr=0.5, weight_decay=0.3)
    opt2.load_state_dict(sd)
    assert opt2.lr == 0.01 and opt2.weight_decay == 0.01
    run([g[0] for g in grads[3:]], opt2, p2)
    np.testing.assert_array_equal(p2.data, full.data)


def test_load_state_dict_rejects_mismatch():
    p = Parameter(np.zeros(3))
    sd = Adam([("a", p)]).state_dict()
    with pytest.raises(StateDictError, match="not 'SGD'"):
        SGD([("a", p)], lr=0.1).load_state_dict(sd)
    with pytest.raises(StateDictError, match=r"missing \['b'\]"):
        Adam([("b", p)]).load_state_dict(sd)
    sd["arrays"]["a/exp_avg"] = np.zeros(4)
    with pytest.raises(StateDictError, match="shape"):
        Adam([("a", p)]).load_state_dict(sd)


def test_clip_grad_norm_matches_torch():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) * 3 for s in [(4, 5), (5,), (2, 2, 2)]]
    for max_norm, norm_type in [(1.0, 2.0), (100.0, 2.0), (0.5, 1.0), (2.0, math.inf)]:
        ours = [Parameter(np.zeros_like(a)) for a in arrays]
        for p, a in zip(ours, arrays):
            p.grad[...] = a
        theirs = [torch.zeros(a.shape, dtype=torch.float64, requires_grad=True) for a in arrays]
        for t, a in zip(theirs, arrays):
            t.grad = torch.tensor(a)
        total = clip_grad_norm(ours, max_norm, norm_type)
        ttotal = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
        assert total == pytest.approx(float(ttotal), rel=1e-13)
        for p, t in zip(ours, theirs):
            np.testing.assert_allclose(p.grad, t.grad.numpy(), rtol=1e-13, atol=0)


def test_clip_grad_norm_by_hand_and_nonfinite():
    p = Parameter(np.zeros(2))
    p.grad[...] = [3.0, 4.0]
    assert clip_grad_norm([p], 1.0) == 5.0
    np.testing.assert_allclose(p.grad, [3 / (5 + 1e-6), 4 / (5 + 1e-6)], rtol=1e-15)
    p.grad[...] = [0.3, 0.4]
    assert clip_grad_norm([p], 1.0) == pytest.approx(0.5)
    np.testing.assert_array_equal(p.grad, [0.3, 0.4])  # below the limit: untouched
    p.grad[...] = [np.nan, 1.0]
    assert math.isnan(clip_grad_norm([("w", p)], 1.0))
    assert p.grad[1] == 1.0  # left for the divergence guard, not smeared with NaN
    with pytest.raises(DivergenceError, match="'w'"):
        clip_grad_norm([("w", p)], 1.0, error_if_nonfinite=True)

