"""One flat array for the parameters: views keep shapes and names, the fused update equals the
per-parameter update bit for bit, and a rebound parameter falls back to the plain path."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.models import SequenceRegressor
from glassformer.nn import Linear
from glassformer.nn.flat import flat_view, flatten_parameters
from glassformer.train import Trainer
from glassformer.train.losses import MSELoss
from glassformer.train.optim import SGD, Adam, AdamW, clip_global_norm


def _net(seed=0):
    return SequenceRegressor(d_model=8, num_heads=2, random_state=seed).build_network(3, 1)


def test_flatten_makes_views_of_one_array_and_keeps_the_state_dict():
    net = SequenceRegressor(d_model=8, num_heads=2).build_network(3, 1)   # built flat by the estimator
    flat = flat_view(net.parameters())
    assert flat is not None and flat.data.size == net.num_parameters()
    for p, view in zip(net.parameters(), flat.split(flat.data)):
        assert np.shares_memory(p.data, flat.data) and p.data.shape == view.shape
    plain = Linear(4, 3, rng=0)
    before = dict(plain.state_dict())
    assert flat_view(plain.parameters()) is None                         # separate arrays: not flat
    plain.flatten_parameters()
    assert flat_view(plain.parameters()) is not None
    assert list(plain.state_dict()) == list(before)
    for k in before:
        np.testing.assert_array_equal(plain.state_dict()[k], before[k])


def test_a_subset_in_order_is_flat_a_gap_or_another_order_is_not():
    net = _net()
    params = net.parameters()
    assert flat_view(params[2:7]) is not None
    assert flat_view([params[0], params[2]]) is None
    assert flat_view(params[::-1]) is None


@pytest.mark.parametrize("make", [lambda p: SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
                                  lambda p: Adam(p, lr=0.01, weight_decay=0.1),
                                  lambda p: AdamW(p, lr=0.01)])
def test_the_fused_update_equals_one_update_per_parameter_bit_for_bit(make):
    fused_net, plain_net = _net(), _net()
    plain_params = plain_net.parameters()
    for p in plain_params:                                  # plain: every parameter its own array
        p.data, p.grad = p.data.copy(), p.grad.copy()
    fused, plain = make(fused_net.parameters()), make(plain_params)
    assert fused.fused() is not None and plain.fused() is None
    rng = np.random.default_rng(1)
    for _ in range(3):
        for p, q in zip(fused_net.parameters(), plain_params):
            q.grad[...] = p.grad[...] = rng.standard_normal(p.shape)
        fused.step()
        plain.step()
    for p, q in zip(fused_net.parameters(), plain_params):
        np.testing.assert_array_equal(p.data, q.data)
    state = fused.state_dict()
    other = make(_net().parameters())
    other.load_state_dict(state)                            # into the flat buffers
    for a, b in zip(other.state, fused.state):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])


def test_a_rebound_parameter_falls_back_to_the_plain_update():
    net = _net()
    opt = SGD(net.parameters(), lr=0.5)
    p = net.head.weight
    p.data = p.data.copy()                                  # rebound: no longer a view
    assert opt.fused() is None
    p.grad = np.ones_like(p.data)
    before = p.data.copy()
    opt.step()
    np.testing.assert_allclose(p.data, before - 0.5)


def test_trainer_zeroes_and_clips_the_flat_gradient_like_the_plain_loop():
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((40, 6, 3)), rng.standard_normal((40, 6, 1))
    histories = []
    for flat in (True, False):
        net = _net(3)
        if not flat:
            for p in net.parameters():
                p.data, p.grad = p.data.copy(), p.grad.copy()
        loss = MSELoss()

        def step(batch):
            value = loss.forward(net(batch[0]), batch[1])
            net.backward(loss.backward())
            return value

        opt = Adam(net.parameters(), lr=0.01)
        assert (opt.fused() is not None) == flat
        histories.append(Trainer(net, step, opt, epochs=3, batch_size=8, grad_clip=0.05, callbacks=[]).fit((X, y)))
    # one dot product over the flat gradient against a sum of per-parameter dots: rounding only
    np.testing.assert_allclose(histories[0].train_loss, histories[1].train_loss, rtol=1e-12)


def test_clip_global_norm_by_hand():
    g1, g2 = np.array([3.0, 0.0]), np.array([[4.0]])
    assert clip_global_norm([g1, g2], 10.0) == 5.0 and g1[0] == 3.0          # below the limit: untouched
    norm = clip_global_norm([g1, g2], 1.0)
    assert norm == 5.0
    np.testing.assert_allclose(np.sqrt(np.sum(g1 ** 2) + np.sum(g2 ** 2)), 5.0 / (5.0 + 1e-6), rtol=1e-12)
    bad = np.array([np.nan, 1.0])
    assert not np.isfinite(clip_global_norm([bad], 1.0)) and bad[1] == 1.0
    huge = np.array([1e200, 1e200])
    assert clip_global_norm([huge], 1.0) == pytest.approx(np.sqrt(2) * 1e200)
    flatten_parameters([])                                  # nothing to lay out: no error
