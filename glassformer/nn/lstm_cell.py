"""One LSTM step as a module, ``LSTMCell`` (as ``torch.nn.LSTMCell``), and what it shares with
:class:`~glassformer.nn.LSTM`: PyTorch's initial values and the check of a ``(h, c)`` state.

The step's equations and their backward are :func:`~glassformer.nn.lstm_step.lstm_step` and
:func:`~glassformer.nn.lstm_step.lstm_step_backward` (Hochreiter & Schmidhuber, 1997; gate order
i, f, g, o).  Parameter names and layouts match PyTorch's, so its ``state_dict`` loads directly.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, check_last_dim, check_ndim, check_positive_int
from ..errors import InputError, ShapeError
from .lstm_step import lstm_step, lstm_step_backward
from .module import Module, Parameter, make_rng

__all__ = ["LSTMCell", "init_weights", "split_state"]


def init_weights(gen, input_size, hidden_size, bias, dtype):
    """PyTorch's default: every LSTM parameter ~ U(-1/sqrt(H), 1/sqrt(H))."""
    k = 1.0 / np.sqrt(hidden_size)
    out = [gen.uniform(-k, k, size=(4 * hidden_size, input_size)).astype(dtype),
           gen.uniform(-k, k, size=(4 * hidden_size, hidden_size)).astype(dtype)]
    if bias:
        out += [gen.uniform(-k, k, size=4 * hidden_size).astype(dtype) for _ in range(2)]
    return out


def split_state(state, where):
    """``state`` as the pair ``(h, c)``; InputError naming ``where`` for anything else."""
    if not (isinstance(state, (tuple, list)) and len(state) == 2):
        raise InputError(f"{where}: state must be None or a pair (h, c), got {type(state).__name__}")
    return state


class LSTMCell(Module):
    """One LSTM step, as ``torch.nn.LSTMCell`` (gate order i, f, g, o).

    Parameters
    ----------
    input_size : int
        Features of the input ``x``.
    hidden_size : int
        Width H of the hidden and cell states.
    bias : bool, default True
        Whether to use ``bias_ih`` and ``bias_hh``.
    rng : int or numpy.random.Generator, optional
        Initial values: PyTorch's default U(-1/sqrt(H), 1/sqrt(H)) for every parameter.
    dtype : float64 (default) or float32

    Attributes
    ----------
    weight_ih : Parameter of shape (4 * hidden_size, input_size)
    weight_hh : Parameter of shape (4 * hidden_size, hidden_size)
    bias_ih, bias_hh : Parameter of shape (4 * hidden_size,), or None

    Shapes
    ------
    forward(x, state=None): ``x (batch, input_size)`` or unbatched ``(input_size,)``; ``state`` is
    ``(h, c)``, each ``(batch, hidden_size)`` (or ``(hidden_size,)``), zeros when None.
    Returns ``(h', c')`` with the state's shape.

    backward(dh, dc=None) -> ``(dx, (dh_prev, dc_prev))``; the second entry is None when the
    forward pass had ``state=None`` (the module contract: no gradient for a None input).

    Raises
    ------
    ShapeError on wrong ranks or sizes; InputError on NaN/inf or a malformed ``state``.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, *, rng=None, dtype=np.float64):
        super().__init__()
        self.input_size = check_positive_int(input_size, "input_size", "LSTMCell")
        self.hidden_size = check_positive_int(hidden_size, "hidden_size", "LSTMCell")
        self.bias = bool(bias)
        weights = init_weights(make_rng(rng), input_size, hidden_size, bias, dtype)
        self.weight_ih = Parameter(weights[0])
        self.weight_hh = Parameter(weights[1])
        self.bias_ih = Parameter(weights[2]) if bias else None
        self.bias_hh = Parameter(weights[3]) if bias else None

    def forward(self, x, state=None):
        where = "LSTMCell.forward"
        dt = self.weight_ih.dtype
        x = as_float_array(x, "x", where, dtype=dt)
        check_ndim(x, (1, 2), "x", where, layout="(batch, input_size) or (input_size,)")
        check_last_dim(x, self.input_size, "x", where)
        unbatched = x.ndim == 1
        xb = x[None] if unbatched else x
        B, H = xb.shape[0], self.hidden_size
        if state is None:
            h0 = np.zeros((B, H), dtype=dt)
            c0 = np.zeros((B, H), dtype=dt)
        else:
            h0, c0 = split_state(state, where)
            want = (H,) if unbatched else (B, H)
            h0 = as_float_array(h0, "h", where, dtype=dt)
            c0 = as_float_array(c0, "c", where, dtype=dt)
            for name, arr in (("h", h0), ("c", c0)):
                if arr.shape != want:
                    raise ShapeError(f"{where}: {name} must have shape {want}, got {arr.shape}")
            h0, c0 = h0.reshape(B, H), c0.reshape(B, H)
        pre = xb @ self.weight_ih.data.T + h0 @ self.weight_hh.data.T
        if self.bias:
            pre += self.bias_ih.data + self.bias_hh.data
        gates, c, tanh_c, h = lstm_step(pre, c0)
        self._save(x=xb, h0=h0, c0=c0, gates=gates, tanh_c=tanh_c, unbatched=unbatched,
                   has_state=state is not None)
        if unbatched:
            return h[0], c[0]
        return h, c

    def backward(self, dh, dc=None):
        s = self._saved()
        shape = s["h0"].shape
        dh = np.zeros(shape, s["x"].dtype) if dh is None else np.asarray(dh).reshape(shape)
        dc = np.zeros(shape, s["x"].dtype) if dc is None else np.asarray(dc).reshape(shape)
        dpre, dc0 = lstm_step_backward(s["gates"], s["c0"], s["tanh_c"], dh, dc)
        self.weight_ih.grad += dpre.T @ s["x"]
        self.weight_hh.grad += dpre.T @ s["h0"]
        if self.bias:
            db = dpre.sum(axis=0)
            self.bias_ih.grad += db
            self.bias_hh.grad += db
        dx = dpre @ self.weight_ih.data
        dh0 = dpre @ self.weight_hh.data
        if s["unbatched"]:
            dx, dh0, dc0 = dx[0], dh0[0], dc0[0]
        return dx, ((dh0, dc0) if s["has_state"] else None)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, bias={self.bias}"
