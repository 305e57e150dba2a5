"""glassformer window regressor -> ``torch.nn.Module`` (:func:`to_torch`).

The architecture is read from the estimator's ``get_params()`` and from its fitted ``network_``
(the public attributes of each part: an encoding's ``base`` or ``wavelengths``, a Fourier
embedding's ``frequencies``); the weights from ``network_.state_dict()``, whose keys the torch
modules share.  Standard blocks become ``torch.nn.TransformerEncoderLayer`` /
``torch.nn.TransformerEncoder`` (batch first); the chapter's attention without output projection,
RoPE and Fourier mixing become :class:`~glassformer.interop.torch_encoder.EncoderLayer`.

This module imports torch: :mod:`glassformer.interop` imports it only when a conversion runs.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from .. import nn as gnn
from ..errors import InputError, NotReadyError
from ..models import LSTMRegressor, SequenceRegressor
from .torch_encoder import Encoder, EncoderLayer
from .torch_layers import (ContinuousPositionalEncoding, FourierInputEmbedding, FourierPositionalEncoding,
                           LearnedPositionalEmbedding, LinearInputEmbedding, MLPInputEmbedding, Rotary,
                           SinCosPositionalEncoding, ZeroPositionalEncoding, activation_module)
from .torch_models import TorchLSTMRegressor, TorchSequenceRegressor

_TORCH_DTYPES = {np.dtype(np.float64): torch.float64, np.dtype(np.float32): torch.float32}
WHERE = "to_torch"


def export(model) -> nn.Module:
    """The torch module of a fitted (or built) :class:`SequenceRegressor` or :class:`LSTMRegressor`.

    See :func:`glassformer.interop.to_torch` for the contract.
    """
    est = _checked_estimator(model, (SequenceRegressor, LSTMRegressor))
    net = est.network_
    with torch.random.fork_rng(devices=[]):       # torch's default initialisation must not move the caller's RNG
        if isinstance(est, LSTMRegressor):
            module = _lstm_module(est)
        else:
            module = _transformer_module(est)
    module.to(_TORCH_DTYPES[np.dtype(net.dtype)])
    state = {k: torch.from_numpy(np.array(v)) for k, v in net.state_dict().items()}
    state.update(_fixed_frequencies(net))
    _load(module, state)
    return module.train(net.training)


def _checked_estimator(model, kinds):
    """``model`` if it is one of ``kinds`` with a network; a one-line error naming what to pass otherwise."""
    if type(model).__name__ == "WellModel":
        raise InputError(f"{WHERE}: pass the well model's regressor, to_torch(well_model.model_) (the torch module "
                         "works on scaled windows; the scalers stay with the WellModel)")
    if not isinstance(model, kinds) and isinstance(getattr(model, "members", None), list):
        raise InputError(f"{WHERE}: this is the mean of {len(model.members)} transformers (glassformer train "
                         "--members); export each one, to_torch(well_model.model_.members[k]), or train with --members 1")
    if not isinstance(model, kinds):
        raise InputError(f"{WHERE}: expected a SequenceRegressor or LSTMRegressor, got {type(model).__name__}")
    if getattr(model, "network_", None) is None:
        raise NotReadyError(f"{WHERE}: the {type(model).__name__} has no network yet; call fit(X, y) or "
                            "build_network(n_features) first")
    return model


def _load(module: nn.Module, state: dict) -> None:
    theirs, ours = set(module.state_dict()), set(state)
    if theirs != ours:
        raise InputError(f"{WHERE}: the torch module does not match the network: missing {sorted(ours - theirs)}, "
                         f"extra {sorted(theirs - ours)}")
    module.load_state_dict(state, strict=True)


def _fixed_frequencies(net) -> dict:
    """Fixed Fourier frequencies, kept outside glassformer's ``state_dict``, as torch buffers."""
    out = {}
    for name in ("embedding", "positional"):
        part = getattr(net, name, None)
        freqs = getattr(part, "frequencies", None)
        if freqs is not None and not getattr(part, "trainable", False):
            out[f"{name}.frequencies"] = torch.from_numpy(np.array(freqs))
    return out


# ----------------------------------------------------------------------------- the LSTM
def _lstm_module(est) -> TorchLSTMRegressor:
    p = est.get_params()
    return TorchLSTMRegressor(p["hidden_size"], p["num_layers"], bool(p["bidirectional"]), float(p["dropout"]),
                              kind=type(est).__name__, params=p, n_features=est.n_features_in_,
                              n_targets=est.n_targets_)


# ----------------------------------------------------------------------------- the transformer
def _transformer_module(est) -> TorchSequenceRegressor:
    p, net = est.get_params(), est.network_
    rotary = _rotary(p, net)
    encoder = _encoder(p, net, rotary)
    head = nn.Linear(net.head.in_features, net.head.out_features)
    return TorchSequenceRegressor(_embedding(net.embedding, p), _positional(net.positional, p), encoder, head,
                                  rotary=rotary is not None, kind=type(est).__name__, params=p,
                                  n_features=est.n_features_in_, n_targets=est.n_targets_)


def _encoder(p: dict, net, rotary) -> nn.Module:
    """``torch.nn.TransformerEncoder`` where it matches, else a stack of :class:`EncoderLayer`."""
    n_layers, d_model, heads = len(net.encoder.layers), int(p["d_model"]), int(p["num_heads"])
    d_ff = net.encoder.layers[0].linear1.out_features
    dropout, act, norm_first = float(p["dropout"]), p["activation"], bool(p["norm_first"])
    mixer = p.get("mixer", "attention")
    if mixer not in ("attention", "fourier"):
        raise InputError(f"{WHERE}: mixer {mixer!r} has no PyTorch counterpart here; supported: 'attention', 'fourier'")
    if mixer == "attention" and p.get("attn_out_proj", True) and rotary is None:
        layer = nn.TransformerEncoderLayer(d_model, heads, d_ff, dropout, _torch_activation(act), 1e-5,
                                           batch_first=True, norm_first=norm_first)
        return nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
    return Encoder([EncoderLayer(d_model, heads, d_ff, dropout, act, norm_first, mixer=mixer,
                                 out_proj=bool(p.get("attn_out_proj", True)), rotary=rotary)
                    for _ in range(n_layers)])


def _torch_activation(name: str):
    """``torch.nn.TransformerEncoderLayer``'s ``activation``: a name it knows, or a module."""
    return name if name in ("relu", "gelu") else activation_module(name)


def _rotary(p: dict, net) -> Rotary | None:
    """The RoPE of the attention layers (found by type, whatever attribute holds it); None without RoPE."""
    for layer in net.encoder.layers:
        attn = getattr(layer, "self_attn", None)
        for value in vars(attn).values() if attn is not None else ():
            if isinstance(value, gnn.RotaryEmbedding):
                return Rotary(value.head_dim, value.base, value.interleaved)
    if p.get("positional") in ("rotary", "rope"):
        raise InputError(f"{WHERE}: positional {p['positional']!r} is set but the attention layers hold no "
                         "RotaryEmbedding; this per-head encoding has no PyTorch counterpart here")
    return None


def _embedding(emb, p: dict) -> nn.Module:
    """The torch input embedding mirroring glassformer's ``emb`` (linear, MLP or Fourier)."""
    kind = type(emb)
    if kind is gnn.LinearInputEmbedding:
        return LinearInputEmbedding(emb.n_features, emb.d_model)
    if kind is gnn.MLPInputEmbedding:
        return MLPInputEmbedding(emb.n_features, emb.d_model, emb.hidden, emb.activation_name)
    if kind is gnn.FourierInputEmbedding:
        freqs = emb.frequencies.data if emb.trainable else emb.frequencies
        return FourierInputEmbedding(freqs, emb.d_model, emb.trainable, emb.include_input)
    raise InputError(f"{WHERE}: input_embedding {p.get('input_embedding')!r} ({kind.__name__}) has no PyTorch "
                     "counterpart here; supported: 'linear', 'mlp', 'fourier'")


def _positional(pos, p: dict) -> nn.Module:
    """The torch positional encoding mirroring glassformer's additive ``pos``."""
    kind, d = type(pos), pos.d_model
    if kind is gnn.SinusoidalPositionalEncoding:
        return SinCosPositionalEncoding(pos.base ** (-np.arange(0, d, 2, dtype=np.float64) / d), d)
    if kind is gnn.WavelengthPositionalEncoding:          # also the chapter's [sin t, cos t, sin t/100, cos t/100]
        return SinCosPositionalEncoding(2.0 * np.pi / np.asarray(pos.wavelengths, dtype=np.float64), d)
    if kind is gnn.LearnedPositionalEmbedding:
        return LearnedPositionalEmbedding(pos.max_len, d)
    if kind is gnn.ContinuousPositionalEncoding:
        return ContinuousPositionalEncoding(d, pos.hidden, pos.activation_name, pos.scale, pos.offset)
    if kind is gnn.FourierPositionalEncoding:
        freqs = pos.frequencies.data if pos.trainable else pos.frequencies
        return FourierPositionalEncoding(freqs, pos.trainable)
    if kind is gnn.ZeroPositionalEncoding:
        return ZeroPositionalEncoding(d)
    raise InputError(f"{WHERE}: positional {p.get('positional')!r} ({kind.__name__}) has no PyTorch counterpart "
                     "here; supported: 'sinusoidal', 'wavelengths', 'chapter', 'learned', 'continuous', 'fourier', "
                     "'none', 'rotary'")
