"""The transformer's equations as pure functions: the file to read first.

Every equation of the model is computed here and nowhere else.  Each forward function takes arrays
(no parameters, no state), returns its output and what its backward needs; the backward sits right
under it and returns the gradients of its inputs.  The modules of :mod:`glassformer.nn` hold the
parameters and the caches and call these functions (Vaswani et al., 2017; Pyrcz, M.J., 2024,
Applied Machine Learning in Python, chapter "Transformers").

The position-wise feed-forward network has no kernel of its own: it is :func:`linear`, an
activation, :func:`dropout` and :func:`linear` again, and :class:`~glassformer.nn.FeedForward`
composes the modules that call them (so a non-finite value is traced to the exact linear map).

Shapes: ``B`` batch, ``L`` queries, ``S`` keys, ``T`` positions, ``E`` d_model, ``H`` heads,
``hd = E / H`` head_dim, ``N`` all leading axes.

Speed tricks live inside the kernel that uses them, and the test suite compares each with the
plain formula:

* one 2-D matrix product per linear map (:func:`linear`): a 3-D @ 2-D ``matmul`` would make one
  BLAS call per row;
* fused projections (:func:`project_heads`): when query, key and value are the same array, the
  caller passes the stacked rows of ``W_Q``, ``W_K`` and ``W_V`` and one product computes all three;
* BLAS sums over short rows (:mod:`.reductions`) in :func:`layer_norm`, :func:`masked_softmax` and
  every bias gradient;
* the bounded-score softmax (:func:`masked_softmax`): no max shift when every score lies in
  ``[-60, 60]``;
* the row dot of :func:`softmax_backward`: an ``einsum`` that forms no ``(..., L, S)`` temporary.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

from .reductions import lead_sum, row_sum

__all__ = [
    "linear", "linear_backward", "relu", "relu_backward", "gelu", "gelu_backward", "gelu_tanh",
    "gelu_tanh_backward", "tanh", "tanh_backward", "dropout_scale", "dropout", "dropout_backward",
    "layer_norm", "layer_norm_backward", "masked_softmax", "softmax_backward", "scaled_dot_product_attention",
    "scaled_dot_product_attention_backward", "project_heads", "project_heads_backward", "split_heads",
    "merge_heads", "sigmoid", "lstm_step", "lstm_step_backward",
]

# Python floats (not np.float64) so float32 arrays stay float32 under NumPy 2's promotion rules.
_SQRT_2_OVER_PI = float(np.sqrt(2.0 / np.pi))
_INV_SQRT_2 = float(1.0 / np.sqrt(2.0))
_INV_SQRT_2PI = float(1.0 / np.sqrt(2.0 * np.pi))
# Scores within +-60 need no shift before exp: e^60 ~ 1e26 (sums of a trillion such terms stay
# finite in float32) and e^-60 ~ 9e-27 is still a normal float32.
_EXP_SAFE = 60.0


# =========================================================================== linear map
def linear(x, weight, bias=None):
    """``y = x W^T + b`` with PyTorch's layout ``weight (out, in)`` (the chapter's ``W z + b``)."""
    y = x.reshape(-1, weight.shape[1]) @ weight.T               # (N, out): one 2-D GEMM
    if bias is not None:
        y += bias
    return y.reshape(x.shape[:-1] + (weight.shape[0],))         # (..., out)


def linear_backward(dy, x, weight, has_bias=True):
    """Return ``(dx, dW, db)``: ``dW = dy^T x``, ``db = sum of dy over rows``, ``dx = dy W``."""
    dy2 = dy.reshape(-1, weight.shape[0])                       # (N, out)
    dW = dy2.T @ x.reshape(-1, weight.shape[1])                 # (out, in)
    db = lead_sum(dy2) if has_bias else None                    # (out,)
    dx = (dy2 @ weight).reshape(x.shape)                        # (..., in)
    return dx, dW, db


# =========================================================================== activations
def relu(x):
    """``max(0, x)``; returns ``(y, mask)``.  The derivative at exactly 0 is 0, as PyTorch's."""
    mask = x > 0
    return x * mask, mask


def relu_backward(dy, mask):
    return dy * mask


def gelu(x):
    """``x Phi(x)`` with the exact normal CDF (Hendrycks & Gimpel, 2016); returns ``(y, cdf)``."""
    cdf = 0.5 * (1.0 + erf(x * _INV_SQRT_2))
    return x * cdf, cdf


def gelu_backward(dy, x, cdf):
    """``d/dx x Phi(x) = Phi(x) + x phi(x)``."""
    pdf = _INV_SQRT_2PI * np.exp(-0.5 * x * x)
    return dy * (cdf + x * pdf)


def gelu_tanh(x):
    """``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, PyTorch's ``approximate="tanh"``; returns ``(y, t)``."""
    inner = _SQRT_2_OVER_PI * (x + 0.044715 * x**3)
    t = np.tanh(inner)
    return 0.5 * x * (1.0 + t), t


def gelu_tanh_backward(dy, x, t):
    dinner = _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x**2)
    return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t**2) * dinner)


def tanh(x):
    return np.tanh(x)


def tanh_backward(dy, y):
    """``d tanh(x) = 1 - tanh(x)^2``, from ``y = tanh(x)``."""
    return dy * (1.0 - y * y)


# =========================================================================== dropout
def dropout_scale(shape, p: float, rng: np.random.Generator, dtype) -> np.ndarray:
    """The multiplier ``keep / (1 - p)``, ``keep ~ Bernoulli(1 - p)`` (inverted dropout, Srivastava et al. 2014)."""
    keep = rng.random(shape) >= p
    return keep.astype(dtype) * np.asarray(1.0 / (1.0 - p), dtype=dtype)


def dropout(x, scale):
    """``x * scale``; ``scale=None`` is the identity (evaluation mode, ``p = 0``)."""
    return x if scale is None else x * scale


def dropout_backward(dy, scale):
    return dy if scale is None else dy * scale


# =========================================================================== layer normalisation
def layer_norm(x, weight, bias, eps: float):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last axis (Ba et al., 2016).

    Biased variance (divide by D) and ``eps`` inside the square root, as ``torch.nn.LayerNorm``;
    ``weight=None`` skips the affine part.  Returns ``(y, xhat, rstd)``.
    """
    n = x.shape[-1]
    xc = x - row_sum(x) / n                                     # (..., D) centred
    var = row_sum(xc * xc)                                      # (..., 1)
    var /= n                                                    # biased variance, as PyTorch
    var += eps
    rstd = np.sqrt(var, out=var)
    np.divide(1.0, rstd, out=rstd)                              # (..., 1) 1 / sqrt(var + eps)
    xhat = xc
    xhat *= rstd                                                # in place: xc is not needed again
    if weight is None:
        return xhat.copy(), xhat, rstd
    y = xhat * weight
    y += bias
    return y, xhat, rstd


def layer_norm_backward(dy, xhat, rstd, weight):
    """Return ``(dx, dweight, dbias)`` (the last two None without ``weight``).

    ``dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))``: the derivative through the mean
    and the biased variance.
    """
    n = xhat.shape[-1]
    dweight = dbias = None
    dxhat = dy
    if weight is not None:
        dweight = lead_sum(dy * xhat)                           # (D,)
        dbias = lead_sum(dy)                                    # (D,)
        dxhat = dy * weight
    m1 = row_sum(dxhat) / n                                     # (..., 1)
    m2 = row_sum(dxhat * xhat) / n                              # (..., 1)
    dx = dxhat - m1
    dx -= xhat * m2
    dx *= rstd
    return dx, dweight, dbias


# =========================================================================== softmax
def _exp_is_safe(scores) -> bool:
    """True when every score lies in ``[-_EXP_SAFE, _EXP_SAFE]`` (False for NaN, +-inf or no scores)."""
    if scores.size == 0:
        return False
    # Whole-array extremes: two vectorised passes, far cheaper than one maximum per short row.
    return -_EXP_SAFE <= np.minimum.reduce(scores, axis=None) and np.maximum.reduce(scores, axis=None) <= _EXP_SAFE


def masked_softmax(scores, allowed=None):
    """Softmax over the last axis, **in place**, with blocked entries exactly 0.

    ``A_ij = exp(s_ij - m_i) [allowed_ij] / sum_j' exp(s_ij' - m_i) [allowed_ij']``, ``m_i`` the row
    maximum over allowed entries; ``-inf`` scores count as blocked.  A fully blocked row comes out as
    zeros (its maximum is replaced by 0 and its zero denominator by 1), never NaN.  When every score
    lies in ``[-60, 60]`` the shift is skipped (``m_i = 0``): ``exp`` can then neither overflow nor
    leave float32's normal range, and the row maxima -- the slowest pass, a reduction over short
    rows -- are not needed.  Both give the same weights up to rounding.
    """
    if allowed is not None:
        np.copyto(scores, -np.inf, where=~allowed)
    if _exp_is_safe(scores):
        np.exp(scores, out=scores)
        scores /= row_sum(scores)                               # each row sums to >= exp(-60) > 0
        return scores
    m = np.maximum.reduce(scores, axis=-1, keepdims=True)       # (..., 1)
    finite = np.isfinite(m)
    blocked_rows = not finite.all()
    if blocked_rows:
        m[~finite] = 0.0                                        # fully blocked row: any finite shift will do
    np.subtract(scores, m, out=scores)
    np.exp(scores, out=scores)                                  # exp(-inf) = 0 removes blocked entries
    denom = row_sum(scores)                                     # (..., 1)
    if blocked_rows:                                            # with a finite maximum every row sums to >= 1
        denom[denom == 0] = 1.0
    scores /= denom
    return scores


def softmax_backward(dA, A):
    """``dS = A * (dA - sum_j dA_ij A_ij)``, **in place** on ``dA``; blocked entries (A = 0) get 0."""
    dA -= np.einsum("...ij,...ij->...i", dA, A)[..., None]     # row dots, no (..., L, S) temporary
    dA *= A
    return dA


# =========================================================================== attention
def _default_scale(head_dim: int) -> float:
    """``1/sqrt(head_dim)`` as a Python float, so float32 tensors stay float32."""
    return 1.0 / math.sqrt(head_dim)


def scaled_dot_product_attention(q, k, v, allowed=None, bias=None, scale=None, keep=None, weights=None,
                                 record=None):
    """``U = softmax(q k^T * scale + bias, blocked -> 0) v`` (Vaswani et al. 2017, eq. 1).

    Parameters
    ----------
    q : (..., L, d);  k : (..., S, d);  v : (..., S, dv)
    allowed : bool array broadcastable to (..., L, S), optional
        True where query i **may** attend to key j (the opposite of ``attn_mask``'s polarity).
    bias : float array broadcastable to (..., L, S), optional
        Added to the scaled scores (a float ``attn_mask``); ``-inf`` blocks.
    scale : float, default ``1/sqrt(d)``
    keep : array (..., L, S), optional
        Dropout multiplier applied to the weights before they meet ``v``.
    weights : array broadcastable to (..., L, S), optional
        Use these weights instead of the softmax (ablations); no scores are formed.
    record : dict, optional
        Receives ``"S"``, a copy of the masked scores (``-inf`` where blocked), for inspection.

    Returns
    -------
    out : (..., L, dv)
    A : (..., L, S) the weights before dropout; rows sum to 1, or are 0 for a fully blocked query.
    """
    if weights is None:
        scale = _default_scale(q.shape[-1]) if scale is None else float(scale)
        A = (q * scale) @ np.swapaxes(k, -1, -2)                # (..., L, S) the scores S
        if bias is not None:
            A += bias
        if allowed is not None:
            np.copyto(A, -np.inf, where=~allowed)
        if record is not None:
            record["S"] = A.copy()
        A = masked_softmax(A)                                   # in place: S becomes A
    else:
        A = weights
    out = (A if keep is None else A * keep) @ v                 # (..., L, dv)
    return out, A


def scaled_dot_product_attention_backward(dout, q, k, v, A, scale=None, keep=None, fixed_weights=False):
    """Return ``(dq, dk, dv)`` of :func:`scaled_dot_product_attention`.

    With ``A' = A * keep`` the weights applied: ``dv = A'^T dout``, ``dA = (dout v^T) * keep``,
    ``dS`` from :func:`softmax_backward`, ``dq = scale dS k`` and ``dk = scale dS^T q``.  Blocked
    entries and fully blocked rows have ``A = 0`` and get exactly zero gradient.  With
    ``fixed_weights`` (the weights were given, not computed) ``dq`` and ``dk`` are zero.
    """
    used = A if keep is None else A * keep
    dv = np.swapaxes(used, -1, -2) @ dout                       # (..., S, dv)
    if fixed_weights:
        return np.zeros_like(q), np.zeros_like(k), dv
    scale = _default_scale(q.shape[-1]) if scale is None else float(scale)
    dA = dout @ np.swapaxes(v, -1, -2)                          # (..., L, S)
    if keep is not None:
        dA *= keep
    dS = softmax_backward(dA, A)                                # (..., L, S)
    dq = (dS @ k) * scale                                       # (..., L, d)
    dk = (np.swapaxes(dS, -1, -2) @ q) * scale                  # (..., S, d)
    return dq, dk, dv


# =========================================================================== heads
def project_heads(x, weight, bias, num_heads: int, n_parts: int = 1):
    """Project ``x`` with ``n_parts`` stacked weight blocks and split each into heads.

    ``weight (n_parts * E, E_in)`` holds the rows of, e.g., ``W_Q``, ``W_K`` and ``W_V`` (fused
    projection: one GEMM for every part that reads the same input).  Returns views of shape
    ``(n_parts, B, H, T, hd)``; each ``(T, hd)`` matrix has unit column stride, which BLAS takes.
    """
    B, T, _ = x.shape
    y = linear(x, weight, bias)                                 # (B, T, n_parts * E)
    head_dim = weight.shape[0] // (n_parts * num_heads)
    return y.reshape(B, T, n_parts, num_heads, head_dim).transpose(2, 0, 3, 1, 4)   # (n, B, H, T, hd)


def project_heads_backward(d_parts, x, weight, has_bias=True):
    """Return ``(dx, dW, db)`` of :func:`project_heads` from one ``(B, H, T, hd)`` gradient per part."""
    B, H, T, hd = d_parts[0].shape
    n = len(d_parts)
    # Gather the parts straight into the (B, T, n, H, hd) layout of the projection output, so the
    # gradient of y is a free reshape (one strided copy per part).
    d = np.empty((B, T, n, H, hd), dtype=d_parts[0].dtype)
    for j, g in enumerate(d_parts):
        d[:, :, j] = g.transpose(0, 2, 1, 3)
    return linear_backward(d.reshape(B, T, n * H * hd), x, weight, has_bias)      # dx (B, T, E_in)


def split_heads(x, num_heads: int):
    """``(B, T, E) -> (B, H, T, hd)``."""
    B, T, E = x.shape
    return x.reshape(B, T, num_heads, E // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    """``(B, H, T, hd) -> (B, T, H * hd)``: concatenate the heads (the chapter's U)."""
    B, H, T, hd = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * hd)


# =========================================================================== LSTM step
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
