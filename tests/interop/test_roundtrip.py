"""to_torch / from_torch round trips: outputs equal to 1e-10 in float64 for every supported option.

Each model is trained for two epochs in glassformer, exported, checked against glassformer at the
default positions (1..seq) and at irregular per-window depths in metres, trained for three AdamW
steps in PyTorch, brought back, and checked against the PyTorch module again.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from glassformer import SequenceRegressor  # noqa: E402
from glassformer.interop import from_torch, to_torch  # noqa: E402
from glassformer.interop.torch_encoder import Encoder  # noqa: E402

OPTIONS = {
    "post-norm, relu": {},
    "pre-norm, gelu, 2 layers": dict(norm_first=True, activation="gelu", num_layers=2),
    "gelu tanh form": dict(activation="gelu_tanh"),
    "the chapter's block": dict(d_model=4, num_heads=1, d_ff=16, positional="chapter", attn_out_proj=False),
    "no output projection, pre-norm": dict(attn_out_proj=False, norm_first=True, activation="gelu"),
    "wavelengths": dict(positional="wavelengths", positional_options={"wavelengths": [3.0, 10.0, 40.0, 200.0]}),
    "learned": dict(positional="learned", positional_options={"max_len": 12}),
    "continuous": dict(positional="continuous", positional_options={"hidden": 6, "scale": 2.0, "offset": 2500.0}),
    "fourier positions": dict(positional="fourier", positional_options={"sigma": 0.2}),
    "fourier positions, trainable": dict(positional="fourier", positional_options={"trainable": True}),
    "no positions": dict(positional="none"),
    "rotary, 2 layers": dict(positional="rotary", num_layers=2),
    "rotary interleaved, pre-norm": dict(positional="rotary", positional_options={"interleaved": True, "base": 100.0},
                                         norm_first=True),
    "FNet mixing, 2 layers": dict(mixer="fourier", num_layers=2),
    "MLP embedding": dict(input_embedding="mlp", input_embedding_options={"hidden": 6, "activation": "tanh"}),
    "Fourier embedding": dict(input_embedding="fourier", input_embedding_options={"num_frequencies": 3}),
    "Fourier embedding, trainable": dict(input_embedding="fourier", input_embedding_options={
        "num_frequencies": 3, "trainable": True, "include_input": True}),
}
# Standard blocks must be PyTorch's own layers, the others the custom block.
TORCH_LAYERS = {"post-norm, relu", "pre-norm, gelu, 2 layers", "gelu tanh form", "wavelengths", "learned",
                "continuous", "fourier positions", "fourier positions, trainable", "no positions", "MLP embedding",
                "Fourier embedding", "Fourier embedding, trainable"}


def torch_predict(module, X, positions=None):
    module.eval()
    with torch.no_grad():
        pos = None if positions is None else torch.from_numpy(positions)
        return module(torch.from_numpy(X), pos).numpy()


def max_err(a, b):
    assert a.shape == b.shape
    return float(np.max(np.abs(a - b)))


def train_in_torch(module, X, y, steps=3):
    """Three AdamW steps on the masked MSE; returns the losses."""
    module.train()
    opt = torch.optim.AdamW(module.parameters(), lr=0.01)
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    ok = ~torch.isnan(yt)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((module(Xt) - yt)[ok] ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


@pytest.mark.parametrize("name", list(OPTIONS))
def test_round_trip_parity(name, fitted, windows):
    X, y, depth = windows
    model = fitted(**OPTIONS[name])
    module = to_torch(model)
    assert isinstance(module.encoder, torch.nn.TransformerEncoder if name in TORCH_LAYERS else Encoder)
    assert set(model.network_.state_dict()) <= set(module.state_dict())
    assert all(t.dtype == torch.float64 for t in module.state_dict().values())

    assert max_err(torch_predict(module, X), model.predict(X)) <= 1e-10
    if name != "learned":                              # a learned table takes integer sample indices only
        assert max_err(torch_predict(module, X, depth), model.predict(X, depth)) <= 1e-10

    losses = train_in_torch(module, X, y)
    assert losses[-1] < losses[0]
    back = from_torch(module)
    assert type(back) is SequenceRegressor and back.is_fitted_
    assert back.get_params() == model.get_params()
    tuned = torch_predict(module, X)
    assert max_err(tuned, model.predict(X)) > 1e-4           # the PyTorch training changed the model ...
    assert max_err(back.predict(X), tuned) <= 1e-10          # ... and glassformer now has those weights
    assert max_err(back.trace(X[:2])["y_hat"], tuned[:2]) <= 1e-10
    if name != "learned":
        assert max_err(back.predict(X, depth), torch_predict(module, X, depth)) <= 1e-10


def test_lstm_round_trip(fitted, windows):
    X, y, _ = windows
    model = fitted(lstm=True, num_layers=2)
    module = to_torch(model)
    assert isinstance(module.lstm, torch.nn.LSTM) and module.lstm.bidirectional and module.lstm.batch_first
    assert max_err(torch_predict(module, X), model.predict(X)) <= 1e-10
    train_in_torch(module, X, y)
    back = from_torch(module)
    assert type(back).__name__ == "LSTMRegressor"
    assert max_err(back.predict(X), torch_predict(module, X)) <= 1e-10


def test_chapter_model_after_the_chapter_training(windows):
    """The chapter's preset (its initialisation, full-batch gradient descent) goes out and back unchanged."""
    X, y, _ = windows
    model = SequenceRegressor.chapter_model(epochs=20).fit(X[..., :1], y[..., :1])
    module = to_torch(model)
    assert max_err(torch_predict(module, X[..., :1]), model.predict(X[..., :1])) <= 1e-10
    back = from_torch(module)
    np.testing.assert_array_equal(back.predict(X[..., :1]), model.predict(X[..., :1]))
    for key, value in model.network_.state_dict().items():
        np.testing.assert_array_equal(back.network_.state_dict()[key], value)


def test_float32_model_gives_a_float32_module(windows):
    X, y, depth = windows
    model = SequenceRegressor(d_model=8, epochs=2, batch_size=4, dtype="float32", positional="rotary").fit(X, y)
    module = to_torch(model)
    assert all(p.dtype == torch.float32 for p in module.parameters())
    ours, theirs = model.predict(X, depth), torch_predict(module, X.astype(np.float32), depth)
    assert max_err(ours, theirs) / np.abs(ours).max() <= 1e-5
    assert from_torch(module).network_.dtype == np.float32


def test_weights_are_copies_both_ways(fitted, windows):
    X, _, _ = windows
    model = fitted()
    before = model.predict(X)
    module = to_torch(model)
    back = from_torch(module)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(1.0)
    np.testing.assert_array_equal(model.predict(X), before)
    np.testing.assert_array_equal(back.predict(X), before)


def test_state_dict_and_template_rebuild_the_model(fitted, windows):
    """A bare state_dict (what torch.save writes) comes back with the architecture given as a template."""
    X, y, _ = windows
    options = dict(positional="rotary", attn_out_proj=False, input_embedding="fourier",
                   input_embedding_options={"num_frequencies": 3})
    model = fitted(**options)
    module = to_torch(model)
    train_in_torch(module, X, y)
    state = {k: v.clone() for k, v in module.state_dict().items()}
    template = SequenceRegressor(d_model=8, num_heads=2, **options)
    back = from_torch(state, model=template)
    assert max_err(back.predict(X), torch_predict(module, X)) <= 1e-10
    assert not hasattr(template, "network_")                # the template is cloned, never changed


def test_wrapped_module_is_unwrapped(fitted, windows):
    """``DataParallel`` (as ``DistributedDataParallel``) keeps the model in ``.module``."""
    X, y, _ = windows
    module = to_torch(fitted(norm_first=True))
    train_in_torch(module, X, y)
    back = from_torch(torch.nn.DataParallel(module))
    assert max_err(back.predict(X), torch_predict(module, X)) <= 1e-10


def test_restored_model_saves_and_loads(fitted, windows, tmp_path):
    X, y, _ = windows
    module = to_torch(fitted(positional="fourier"))
    train_in_torch(module, X, y)
    back = from_torch(module)
    back.save(tmp_path / "tuned")
    again = SequenceRegressor.load(tmp_path / "tuned")
    np.testing.assert_array_equal(again.predict(X), back.predict(X))


def test_export_leaves_torch_random_state_alone(fitted):
    model = fitted()
    torch.manual_seed(3)
    expected = torch.rand(4)
    torch.manual_seed(3)
    to_torch(model)
    assert torch.equal(torch.rand(4), expected)


def test_a_bfloat16_module_comes_back_in_the_model_dtype(fitted, windows):
    """Mixed-precision fine-tuning (bfloat16 weights) loads into the float64 estimator, rounded as PyTorch rounded."""
    X, _, _ = windows
    module = to_torch(fitted(positional="rotary")).to(torch.bfloat16)
    back = from_torch(module)
    assert back.network_.dtype == np.float64
    for name, value in module.state_dict().items():
        np.testing.assert_array_equal(back.network_.state_dict()[name], value.to(torch.float64).numpy())


@pytest.mark.parametrize("options", [{}, dict(norm_first=True), dict(positional="rotary"), dict(attn_out_proj=False)],
                         ids=["torch layers", "torch layers, pre-norm", "rotary block", "no out_proj block"])
def test_key_padding_mask_parity(options, fitted, windows):
    """``src_key_padding_mask`` (True = padding) gives glassformer's outputs in evaluation and training mode."""
    X, _, depth = windows
    model = fitted(**options)
    kpm = np.zeros(X.shape[:2], dtype=bool)
    kpm[1, 5:] = True                                      # a short last window, padded at the bottom
    kpm[4, :2] = True
    net = model.network_
    net.eval()
    ours = net(X, depth, kpm)
    module = to_torch(model)
    for mode in (module.eval, module.train):
        mode()
        with torch.no_grad():
            theirs = module(torch.from_numpy(X), torch.from_numpy(depth), torch.from_numpy(kpm)).numpy()
        assert max_err(theirs, ours) <= 1e-10
    net.train()
