"""The LSTM's step as a forward/backward pair of pure functions (Hochreiter & Schmidhuber, 1997).

The recurrent model the transformer is compared with (:class:`~glassformer.nn.LSTM`) calls these
once per time step; they sit apart from :mod:`glassformer.nn.functional`, which holds the
transformer's equations, in the same style: the backward right under its forward.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sigmoid", "lstm_step", "lstm_step_backward"]


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Logistic function ``1 / (1 + exp(-x))`` without overflow for large ``|x|``; keeps the dtype.

    Uses ``z = exp(-|x|)`` (always in (0, 1]): ``1 / (1 + z)`` for x >= 0 and ``z / (1 + z)`` otherwise.
    """
    z = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + z), z / (1 + z))


def lstm_step(pre: np.ndarray, c_prev: np.ndarray):
    """One LSTM step (Hochreiter & Schmidhuber 1997; gate order i, f, g, o as PyTorch) from the
    pre-activations ``pre = x W_ih^T + b_ih + h W_hh^T + b_hh (batch, 4H)`` and ``c_prev (batch, H)``:
    ``c = f c_prev + i g``, ``h = o tanh(c)``.

    Returns ``gates (batch, 4H)`` (activated i, f, g, o), ``c (batch, H)``, ``tanh_c``, ``h``.
    """
    H = c_prev.shape[-1]
    gates = sigmoid(pre)                                        # (batch, 4H)
    gates[..., 2 * H:3 * H] = np.tanh(pre[..., 2 * H:3 * H])
    i, f, g, o = (gates[..., k * H:(k + 1) * H] for k in range(4))
    c = f * c_prev + i * g
    tanh_c = np.tanh(c)
    return gates, c, tanh_c, o * tanh_c


def lstm_step_backward(gates, c_prev, tanh_c, dh, dc):
    """Backward of :func:`lstm_step` given dL/dh_t (from the output and from step t+1) and dL/dc_t.

    ``dc = dc_t + dh_t o (1 - tanh(c)^2)``; ``da_i = dc g i (1 - i)``, ``da_f = dc c_prev f (1 - f)``,
    ``da_g = dc i (1 - g^2)``, ``da_o = dh_t tanh(c) o (1 - o)``; ``dc_prev = dc f``.  Returns
    ``dpre (batch, 4H)`` and ``dc_prev (batch, H)``; the caller forms ``dh_prev = dpre W_hh``.
    """
    H = c_prev.shape[-1]
    i, f, g, o = (gates[..., k * H:(k + 1) * H] for k in range(4))
    dc = dc + dh * o * (1 - tanh_c * tanh_c)
    dpre = np.empty_like(gates)
    dpre[..., :H] = dc * g * i * (1 - i)
    dpre[..., H:2 * H] = dc * c_prev * f * (1 - f)
    dpre[..., 2 * H:3 * H] = dc * i * (1 - g * g)
    dpre[..., 3 * H:] = dh * tanh_c * o * (1 - o)
    return dpre, dc * f
