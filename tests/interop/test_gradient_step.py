"""A gradient step on the exported model in PyTorch equals the same step in glassformer.

Same weights, same windows (with gaps masked out of the MSE), same optimizer settings: after two
steps of SGD with momentum, Adam or AdamW the losses agree to 1e-12 and every parameter to 1e-10
(float64).  glassformer's gradients come from its hand-written backward passes, PyTorch's from
autograd through the exported modules, so this checks both the export and the backward passes.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from glassformer.train import make_optimizer  # noqa: E402
from glassformer.train.losses import MSELoss  # noqa: E402
from glassformer.interop import to_torch  # noqa: E402

CONFIGS = {
    "torch encoder layers": {},
    "rotary, no out_proj, pre-norm, gelu tanh, 2 layers": dict(
        positional="rotary", attn_out_proj=False, norm_first=True, activation="gelu_tanh", num_layers=2),
    "FNet, learned positions, MLP embedding": dict(
        mixer="fourier", positional="learned", positional_options={"max_len": 12}, input_embedding="mlp"),
    "trainable Fourier embedding and positions": dict(
        positional="fourier", positional_options={"trainable": True, "sigma": 0.01}, input_embedding="fourier",
        input_embedding_options={"num_frequencies": 3, "trainable": True, "include_input": True}),
    "continuous positions, pre-norm, gelu": dict(positional="continuous", norm_first=True, activation="gelu",
                                                 positional_options={"scale": 2.0, "offset": 2500.0}),
    "LSTM": dict(lstm=True, num_layers=2),
}
DEPTH_POSITIONS = ("torch encoder layers", "rotary, no out_proj, pre-norm, gelu tanh, 2 layers",
                   "continuous positions, pre-norm, gelu")
OPTIMIZERS = {
    "sgd": (dict(lr=0.05, momentum=0.9), lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9)),
    "adam": (dict(lr=0.01), lambda ps: torch.optim.Adam(ps, lr=0.01)),
    "adamw": (dict(lr=0.01, weight_decay=0.01), lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.01)),
}


def glassformer_steps(net, optimizer, X, y, positions, steps):
    loss, losses = MSELoss(), []
    for _ in range(steps):
        net.zero_grad()
        losses.append(loss.forward(net(X, positions), y))
        net.backward(loss.backward())
        optimizer.step()
    return losses


def torch_steps(module, optimizer, X, y, positions, steps):
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    pos = None if positions is None else torch.from_numpy(positions)
    ok, losses = ~torch.isnan(yt), []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((module(Xt, pos) - yt)[ok] ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses


@pytest.mark.parametrize("opt", list(OPTIMIZERS))
@pytest.mark.parametrize("config", list(CONFIGS))
def test_two_steps_equal(config, opt, fitted, windows):
    X, y, depth = windows
    options = dict(CONFIGS[config])
    model = fitted(**options)
    # Depths in metres where the encoding takes them well; a learned table needs sample indices, and
    # trainable Fourier frequencies times 2,500 m make a step so ill-conditioned that rounding shows.
    positions = depth if config in DEPTH_POSITIONS else None
    module = to_torch(model).train()
    ours_kw, make_torch_opt = OPTIMIZERS[opt]
    net = model.network_
    net.train()
    ours = glassformer_steps(net, make_optimizer(opt, list(net.named_parameters()), **ours_kw), X, y, positions, 2)
    theirs = torch_steps(module, make_torch_opt(module.parameters()), X, y, positions, 2)

    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    tparams = dict(module.named_parameters())
    assert sorted(tparams) == sorted(n for n, _ in net.named_parameters())
    for name, p in net.named_parameters():
        ref = tparams[name].detach().numpy()
        assert np.max(np.abs(p.data - ref)) <= 1e-10, f"{name}: differs after two {opt} steps"
        assert np.max(np.abs(p.grad - tparams[name].grad.numpy())) <= 1e-10, f"{name}: gradients differ"
