"""``torch.nn.Module`` -> fitted glassformer window regressor (:func:`restore`, behind ``from_torch``).

The estimator is rebuilt from its parameters (recorded by ``to_torch`` on the module, or given as
a template), its network built for the recorded widths and loaded with the module's weights.

This module imports torch: :mod:`glassformer.interop` imports it only when a conversion runs.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch
from sklearn.base import clone

from ..errors import InputError, StateDictError
from ..models import LSTMRegressor, SequenceRegressor

WHERE = "from_torch"
_FIXED = ("embedding.frequencies", "positional.frequencies")   # buffers in torch, plain arrays in glassformer


def restore(module, model=None):
    """A fitted estimator with the weights of ``module``; see :func:`glassformer.interop.from_torch`."""
    module = _unwrapped(module)
    if isinstance(module, Mapping):
        state, carried = dict(module), None
    elif isinstance(module, torch.nn.Module):
        state, carried = module.state_dict(), _carried(module)
    else:
        raise InputError(f"{WHERE}: expected a torch.nn.Module or a state_dict, got {type(module).__name__}")
    arrays = {k: _array(v) for k, v in state.items()}
    kinds = {"SequenceRegressor": SequenceRegressor, "LSTMRegressor": LSTMRegressor}
    if model is None:
        if carried is None:
            raise InputError(f"{WHERE}: the module carries no glassformer parameters (it was not made by to_torch); "
                             "pass model=SequenceRegressor(...) or LSTMRegressor(...) with its architecture")
        if carried[0] not in kinds:
            raise InputError(f"{WHERE}: the module was exported from a {carried[0]!r}; from_torch rebuilds "
                             f"{sorted(kinds)}")
        model = kinds[carried[0]](**carried[1])
    if not isinstance(model, tuple(kinds.values())):
        raise InputError(f"{WHERE}: model must be a SequenceRegressor or LSTMRegressor, got {type(model).__name__}")
    est = clone(model)
    n_features, n_targets = carried[2:] if carried is not None else _widths(arrays)
    net = est.build_network(n_features, n_targets)
    _set_fixed(net, arrays)
    try:
        net.load_state_dict(arrays)
    except StateDictError as exc:
        raise StateDictError(f"{WHERE}: the module's weights do not fit {type(est).__name__}"
                             f"({_architecture(est)}): {exc}") from None
    net.train(module.training if isinstance(module, torch.nn.Module) else True)
    est.is_fitted_, est.history_ = True, None
    return est


def _array(value) -> np.ndarray:
    """A CPU NumPy copy; floating tensors as float64 (NumPy has no bfloat16), cast to the model's dtype on loading."""
    if not torch.is_tensor(value):
        return np.asarray(value)
    value = value.detach()
    return value.to("cpu", torch.float64 if value.is_floating_point() else value.dtype).numpy()


def _unwrapped(module):
    """The model inside ``DistributedDataParallel``/``DataParallel`` (``.module``) or ``torch.compile`` (``._orig_mod``)."""
    for attr in ("module", "_orig_mod"):
        inner = getattr(module, attr, None)
        if isinstance(inner, torch.nn.Module):
            return _unwrapped(inner)
    return module


def _carried(module) -> tuple | None:
    """``(kind, params, n_features, n_targets)`` recorded by ``to_torch``, or None."""
    kind = getattr(module, "glassformer_kind", None)
    if kind is None:
        return None
    return kind, dict(module.glassformer_params), int(module.n_features), int(module.n_targets)


def _widths(arrays: dict) -> tuple[int, int]:
    """``(n_features, n_targets)`` read from the shapes of a state_dict's first and last layers."""
    first = [("embedding.frequencies", 0), ("embedding.linear1.weight", 1), ("embedding.linear.weight", 1),
             ("lstm.weight_ih_l0", 1)]
    for key, axis in first:
        if key in arrays and arrays[key].ndim == 2:
            if "head.weight" not in arrays:
                break
            return int(arrays[key].shape[axis]), int(arrays["head.weight"].shape[0])
    raise InputError(f"{WHERE}: cannot read n_features and n_targets from the state_dict (no 'head.weight' beside "
                     "'embedding.linear.weight', 'embedding.linear1.weight', 'embedding.frequencies' or "
                     "'lstm.weight_ih_l0')")


def _set_fixed(net, arrays: dict) -> None:
    """Copy fixed Fourier frequencies (not parameters in glassformer) into the network, removing their keys."""
    for key in _FIXED:
        part = getattr(net, key.split(".")[0], None)
        if key not in arrays or part is None or getattr(part, "trainable", True):
            continue
        value = arrays.pop(key)
        if np.shape(value) != np.shape(part.frequencies):
            raise StateDictError(f"{WHERE}: '{key}' has shape {np.shape(value)}, expected {np.shape(part.frequencies)}")
        part.frequencies = np.array(value, dtype=net.dtype)


def _architecture(est) -> str:
    keys = ("d_model", "num_heads", "num_layers", "positional", "input_embedding", "hidden_size", "bidirectional")
    return ", ".join(f"{k}={v!r}" for k, v in est.get_params().items() if k in keys)
