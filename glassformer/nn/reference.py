"""The chapter's transformer as plain equations: the reference, the file to read first.

Every equation of the model of Pyrcz (2024), "Transformers" (Applied Machine Learning in Python),
and of the standard multi-head attention (Vaswani et al., 2017), as a forward function with its
backward right under it.  Nothing here is tuned for speed: no member axis, no blocks of queries,
no bounds that skip a step, nothing computed in place.  The kernels of
:mod:`glassformer.nn.functional` are the optimised implementation of these functions and are tested
equal to them; ``with glassformer.kernels("reference"):`` (or ``kernels="reference"`` where a
model is built) makes every layer, ``fit``, ``predict`` and ``trace`` run the functions of this file.

The chapter's symbols: ``X`` inputs, ``E`` input embedding, ``P`` positional encoding,
``Z = E + P``, ``Q``, ``K``, ``V``, scores ``S``, weights ``A``, attention output ``U``,
``T1 = Z + U``, ``R = LayerNorm(T1)``, hidden ``G``, ``F`` the feed-forward output,
``T2 = R + F``, ``H = LayerNorm(T2)``, prediction ``y_hat``.  A ``d`` in front names a gradient of
the loss (``dS = dL/dS``).  Weights use PyTorch's layout ``W (out, in)``, so a linear map is
``x W^T + b``.

Shapes: ``B`` batch, ``T`` query positions, ``Tk`` key positions, ``D`` d_model, ``n_heads``
heads, ``d_k = D / n_heads``, ``d_ff`` the hidden width.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

__all__ = [
    "linear", "linear_backward", "relu", "relu_backward", "gelu", "gelu_backward", "gelu_tanh",
    "gelu_tanh_backward", "tanh", "tanh_backward", "dropout", "dropout_backward", "layer_norm",
    "layer_norm_backward", "scores", "scores_backward", "softmax", "softmax_backward", "attention",
    "attention_backward", "split_heads", "merge_heads", "multi_head_attention",
    "multi_head_attention_backward", "chapter_positional_encoding", "encoder_layer", "encoder_layer_backward",
    "chapter_model", "chapter_model_backward", "mse", "mse_backward",
]


# ----------------------------------------------------------------- linear map
def linear(x, W, b=None):
    """``y = x W^T + b`` over the last axis: ``x (..., in)``, ``W (out, in)``, ``b (out,)``."""
    y = x @ W.T                                        # (..., out)
    if b is not None:
        y = y + b
    return y


def linear_backward(dy, x, W, has_bias=True):
    """``(dx, dW, db)``: ``dx = dy W``, ``dW = dy^T x`` and ``db = sum dy``, summed over every row."""
    dx = dy @ W                                        # (..., in)
    dy_rows = dy.reshape(-1, dy.shape[-1])             # (rows, out)
    x_rows = x.reshape(-1, x.shape[-1])                # (rows, in)
    dW = dy_rows.T @ x_rows                            # (out, in)
    db = dy_rows.sum(axis=0) if has_bias else None     # (out,)
    return dx, dW, db


# ----------------------------------------------------------------- activations
def relu(x):
    """``max(0, x)``, the chapter's activation."""
    G = np.maximum(x, 0.0)
    return G


def relu_backward(dy, x):
    """The slope is 1 where ``x > 0`` and 0 elsewhere (also at 0, as PyTorch)."""
    return dy * (x > 0)


def gelu(x):
    """``x Phi(x)``, ``Phi`` the standard normal CDF (Hendrycks & Gimpel, 2016)."""
    return x * 0.5 * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_backward(dy, x):
    """``d/dx x Phi(x) = Phi(x) + x phi(x)``."""
    Phi = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
    phi = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return dy * (Phi + x * phi)


def gelu_tanh(x):
    """``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, GELU's tanh form."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def gelu_tanh_backward(dy, x):
    t = np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))
    dinner = math.sqrt(2.0 / math.pi) * (1.0 + 3 * 0.044715 * x**2)
    return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t**2) * dinner)


def tanh(x):
    return np.tanh(x)


def tanh_backward(dy, y):
    """``d tanh(x)/dx = 1 - tanh(x)^2``, from the output ``y``."""
    return dy * (1.0 - y * y)


def dropout(x, keep):
    """``x * keep``, ``keep`` each entry 0 or ``1/(1-p)`` (inverted dropout); None: no dropout."""
    return x if keep is None else x * keep


def dropout_backward(dy, keep):
    return dy if keep is None else dy * keep


# ----------------------------------------------------------------- layer normalisation
def layer_norm(x, gamma, beta, eps=1e-5):
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` over the last axis (Ba et al., 2016).

    The biased variance (divided by D), as PyTorch.  Returns ``(y, xhat, rstd)``; without
    ``gamma`` (None) ``y = xhat``.
    """
    mean = x.mean(axis=-1, keepdims=True)                          # (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)           # (..., 1)
    rstd = 1.0 / np.sqrt(var + eps)                                # (..., 1)
    xhat = (x - mean) * rstd                                       # (..., D) zero mean, unit variance
    y = xhat if gamma is None else xhat * gamma + beta
    return y, xhat, rstd


def layer_norm_backward(dy, xhat, rstd, gamma):
    """``(dx, dgamma, dbeta)``; ``dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))``,
    the derivative through the mean and the variance."""
    dxhat = dy if gamma is None else dy * gamma                    # (..., D)
    dx = rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True)
                 - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    if gamma is None:
        return dx, None, None
    D = dy.shape[-1]
    dgamma = (dy * xhat).reshape(-1, D).sum(axis=0)                # (D,)
    dbeta = dy.reshape(-1, D).sum(axis=0)                          # (D,)
    return dx, dgamma, dbeta


# ----------------------------------------------------------------- attention
def scores(Q, K, scale=None, bias=None, allowed=None):
    """``S = Q K^T / sqrt(d_k)`` (+ ``bias``), ``-inf`` where ``allowed`` is False.

    ``Q (..., T, d_k)``, ``K (..., Tk, d_k)``; ``bias`` (a float mask) and ``allowed`` (True: the
    query may see the key) broadcast to ``(..., T, Tk)``; ``scale`` defaults to ``1/sqrt(d_k)``.
    """
    scale = 1.0 / math.sqrt(Q.shape[-1]) if scale is None else scale
    S = (Q @ K.swapaxes(-1, -2)) * scale                           # (..., T, Tk)
    if bias is not None:
        S = S + bias
    if allowed is not None:
        S = np.where(allowed, S, -np.inf)
    return S


def scores_backward(dS, Q, K, scale=None):
    """``(dQ, dK)``: ``dQ = dS K / sqrt(d_k)``, ``dK = dS^T Q / sqrt(d_k)``."""
    scale = 1.0 / math.sqrt(Q.shape[-1]) if scale is None else scale
    dQ = (dS @ K) * scale                                          # (..., T, d_k)
    dK = (dS.swapaxes(-1, -2) @ Q) * scale                         # (..., Tk, d_k)
    return dQ, dK


def softmax(S):
    """``A_ij = exp(S_ij - m_i) / sum_j exp(S_ij - m_i)`` over the keys, ``m_i`` the row maximum.

    The shift by ``m_i`` keeps ``exp`` from overflowing; ``-inf`` scores (blocked) get weight 0,
    and a row with every key blocked gets zeros, not NaN.
    """
    m = S.max(axis=-1, keepdims=True)                              # (..., T, 1)
    m = np.where(np.isfinite(m), m, 0.0)                           # a fully blocked row: any shift will do
    e = np.exp(S - m)                                              # (..., T, Tk) 0 where blocked
    total = e.sum(axis=-1, keepdims=True)                          # (..., T, 1) >= 1 unless fully blocked
    A = e / np.where(total > 0, total, 1.0)                        # (..., T, Tk) rows sum to 1 (or are 0)
    return A


def softmax_backward(dA, A):
    """``dS_ij = A_ij (dA_ij - sum_j' dA_ij' A_ij')``; blocked entries (A = 0) get 0."""
    return A * (dA - (dA * A).sum(axis=-1, keepdims=True))


def attention(Q, K, V, allowed=None, bias=None, scale=None, keep=None):
    """``U = softmax(Q K^T / sqrt(d_k)) V`` (Vaswani et al., 2017, eq. 1); returns ``(U, A, S)``.

    ``keep``: dropout multiplier of the weights (training only).  ``V (..., Tk, d_v)``.
    """
    S = scores(Q, K, scale, bias, allowed)                         # (..., T, Tk)
    A = softmax(S)                                                 # (..., T, Tk) rows sum to 1
    U = dropout(A, keep) @ V                                       # (..., T, d_v)
    return U, A, S


def attention_backward(dU, Q, K, V, A, scale=None, keep=None, record=None):
    """``(dQ, dK, dV)`` of :func:`attention` from ``dU = dL/dU``; ``record`` (a dict, for the backward
    trace) receives ``dA`` and ``dS``."""
    dV = dropout(A, keep).swapaxes(-1, -2) @ dU                    # (..., Tk, d_v)
    dA = dropout_backward(dU @ V.swapaxes(-1, -2), keep)           # (..., T, Tk)
    dS = softmax_backward(dA, A)                                   # (..., T, Tk)
    if record is not None:
        record.update(dA=dA, dS=dS)
    dQ, dK = scores_backward(dS, Q, K, scale)
    return dQ, dK, dV


def split_heads(X, n_heads):
    """``(B, T, D) -> (B, n_heads, T, d_k)``: head h holds features ``h d_k ... (h+1) d_k - 1``."""
    B, T, D = X.shape
    return X.reshape(B, T, n_heads, D // n_heads).transpose(0, 2, 1, 3)    # (B, n_heads, T, d_k)


def merge_heads(X):
    """``(B, n_heads, T, d_k) -> (B, T, D)``: the heads side by side (concatenated)."""
    B, n_heads, T, d_k = X.shape
    return X.transpose(0, 2, 1, 3).reshape(B, T, n_heads * d_k)            # (B, T, D)


def multi_head_attention(query, key, value, W_in, b_in, W_out, b_out, n_heads, allowed=None, bias=None):
    """Multi-head attention (Vaswani et al., 2017, eqs. 4-5) with PyTorch's parameters.

    ``W_in (3D, D)`` stacks ``W_Q``, ``W_K``, ``W_V`` by rows (``b_in (3D,)`` likewise); ``W_out``
    None leaves out the output projection (the chapter's attention).  ``query (B, T, D)``,
    ``key``/``value (B, Tk, D)``.  Returns ``(O, saved)``, ``saved`` what the backward needs.
    """
    D = query.shape[-1]
    W_Q, W_K, W_V = W_in[:D], W_in[D:2 * D], W_in[2 * D:]                 # (D, D) each
    b_Q, b_K, b_V = (None, None, None) if b_in is None else (b_in[:D], b_in[D:2 * D], b_in[2 * D:])   # (D,) each
    Q = split_heads(linear(query, W_Q, b_Q), n_heads)              # (B, n_heads, T, d_k)
    K = split_heads(linear(key, W_K, b_K), n_heads)                # (B, n_heads, Tk, d_k)
    V = split_heads(linear(value, W_V, b_V), n_heads)              # (B, n_heads, Tk, d_k)
    U_heads, A, S = attention(Q, K, V, allowed, bias)              # (B, n_heads, T, d_k)
    U = merge_heads(U_heads)                                       # (B, T, D)
    O = U if W_out is None else linear(U, W_out, b_out)            # (B, T, D)
    saved = dict(query=query, key=key, value=value, Q=Q, K=K, V=V, A=A, S=S, U=U, W_in=W_in,
                 W_out=W_out, has_bias=b_in is not None, n_heads=n_heads)
    return O, saved


def multi_head_attention_backward(dO, saved):
    """``(d_query, d_key, d_value, grads)`` of :func:`multi_head_attention`.

    Always three input gradients: when one array was passed as query, key and value
    (self-attention) its gradient is the sum ``d_query + d_key + d_value``, which the caller forms.
    ``grads`` holds ``W_in``, ``b_in``, ``W_out``, ``b_out``.
    """
    c, grads = saved, {}
    D = c["query"].shape[-1]
    if c["W_out"] is None:
        dU = dO
    else:
        dU, grads["W_out"], grads["b_out"] = linear_backward(dO, c["U"], c["W_out"], c["has_bias"])
    dU_heads = split_heads(dU, c["n_heads"])                       # (B, n_heads, T, d_k)
    dQ, dK, dV = attention_backward(dU_heads, c["Q"], c["K"], c["V"], c["A"])
    d_inputs, dW, db = [], [], []
    for i, (dP, x) in enumerate(((dQ, c["query"]), (dK, c["key"]), (dV, c["value"]))):
        dx, dW_i, db_i = linear_backward(merge_heads(dP), x, c["W_in"][i * D:(i + 1) * D], c["has_bias"])  # dx like x
        d_inputs.append(dx)
        dW.append(dW_i)
        db.append(db_i)
    grads["W_in"] = np.concatenate(dW)                             # (3D, D)
    grads["b_in"] = np.concatenate(db) if c["has_bias"] else None  # (3D,)
    return d_inputs[0], d_inputs[1], d_inputs[2], grads


# ----------------------------------------------------------------- the chapter's model
def chapter_positional_encoding(t):
    """``P = [sin t, cos t, sin(t/100), cos(t/100)]`` at positions ``t (T,)``: ``(T, 4)``, the
    chapter's code (its prose writes other wavelengths; the code is what its numbers come from)."""
    return np.stack([np.sin(t), np.cos(t), np.sin(t / 100.0), np.cos(t / 100.0)], axis=-1)   # (T, 4)


def encoder_layer(Z, p, n_heads=1, eps=1e-5):
    """One post-norm encoder block, the chapter's: ``p`` holds the PyTorch-named parameters.

    ``U = Attention(Z)``, ``T1 = Z + U``, ``R = LayerNorm(T1)``, ``G = relu(R W1^T + b1)``,
    ``F = G W2^T + b2``, ``T2 = R + F``, ``H = LayerNorm(T2)``.  ``Z (B, T, D)``; returns
    ``(H, saved)``.  ``p["out_proj.weight"]`` absent: attention without an output projection.
    """
    U, att = multi_head_attention(Z, Z, Z, p["self_attn.in_proj_weight"], p.get("self_attn.in_proj_bias"),
                                  p.get("self_attn.out_proj.weight"), p.get("self_attn.out_proj.bias"), n_heads)
    T1 = Z + U                                                     # (B, T, D)
    R, xhat1, rstd1 = layer_norm(T1, p["norm1.weight"], p["norm1.bias"], eps)
    G_in = linear(R, p["linear1.weight"], p["linear1.bias"])       # (B, T, d_ff)
    G = relu(G_in)                                                 # (B, T, d_ff)
    F = linear(G, p["linear2.weight"], p["linear2.bias"])          # (B, T, D)
    T2 = R + F                                                     # (B, T, D)
    H, xhat2, rstd2 = layer_norm(T2, p["norm2.weight"], p["norm2.bias"], eps)
    saved = dict(att=att, R=R, G_in=G_in, G=G, xhat1=xhat1, rstd1=rstd1, xhat2=xhat2, rstd2=rstd2)
    return H, saved


def encoder_layer_backward(dH, saved, p):
    """``(dZ, grads)`` of :func:`encoder_layer`: each step of the forward undone, last first."""
    c, g = saved, {}
    dT2, g["norm2.weight"], g["norm2.bias"] = layer_norm_backward(dH, c["xhat2"], c["rstd2"], p["norm2.weight"])
    dR, dF = dT2, dT2                                              # T2 = R + F
    dG, g["linear2.weight"], g["linear2.bias"] = linear_backward(dF, c["G"], p["linear2.weight"])
    dG_in = relu_backward(dG, c["G_in"])                           # (B, T, d_ff)
    dR_ffn, g["linear1.weight"], g["linear1.bias"] = linear_backward(dG_in, c["R"], p["linear1.weight"])
    dR = dR + dR_ffn                                               # R feeds T2 and the FFN
    dT1, g["norm1.weight"], g["norm1.bias"] = layer_norm_backward(dR, c["xhat1"], c["rstd1"], p["norm1.weight"])
    dZ, dU = dT1, dT1                                              # T1 = Z + U
    d_query, d_key, d_value, ga = multi_head_attention_backward(dU, c["att"])
    dZ = dZ + d_query + d_key + d_value                            # Z is query, key and value
    g["self_attn.in_proj_weight"], g["self_attn.in_proj_bias"] = ga["W_in"], ga["b_in"]
    if "W_out" in ga:
        g["self_attn.out_proj.weight"], g["self_attn.out_proj.bias"] = ga["W_out"], ga["b_out"]
    return dZ, g


def _layer(p, i):
    """The parameters of encoder layer ``i``, without their ``encoder.layers.<i>.`` prefix."""
    prefix = f"encoder.layers.{i}."
    return {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}


def chapter_model(X, t, p, n_heads=1, num_layers=1):
    """``y_hat`` of the whole model: ``E = X W_e^T + b_e``, ``Z = E + P``, the encoder layers, the
    linear head.  ``X (B, T, n_features)``, ``t (T,)``, ``p`` the network's ``state_dict()``.
    Returns ``(y_hat (B, T, n_targets), saved)``."""
    E = linear(X, p["embedding.linear.weight"], p["embedding.linear.bias"])   # (B, T, D)
    P = chapter_positional_encoding(t)                             # (T, D)
    H = E + P                                                      # (B, T, D) Z, the first layer's input
    layers = []
    for i in range(num_layers):
        H, saved = encoder_layer(H, _layer(p, i), n_heads)         # (B, T, D)
        layers.append(saved)
    y_hat = linear(H, p["head.weight"], p["head.bias"])            # (B, T, n_targets)
    return y_hat, dict(X=X, H=H, layers=layers, n_heads=n_heads)


def chapter_model_backward(dy_hat, saved, p):
    """The gradient of every parameter of :func:`chapter_model` (keys as ``p``) from ``dL/dy_hat``."""
    g = {}
    dH, g["head.weight"], g["head.bias"] = linear_backward(dy_hat, saved["H"], p["head.weight"])
    for i in reversed(range(len(saved["layers"]))):
        dH, g_layer = encoder_layer_backward(dH, saved["layers"][i], _layer(p, i))
        g.update({f"encoder.layers.{i}.{k}": v for k, v in g_layer.items()})
    dE = dH                                                        # Z = E + P, P fixed
    _, g["embedding.linear.weight"], g["embedding.linear.bias"] = linear_backward(
        dE, saved["X"], p["embedding.linear.weight"])
    return g


def mse(y_hat, y):
    """``L = mean((y_hat - y)^2)`` over every entry, the chapter's loss."""
    return float(np.mean((y_hat - y) ** 2))                       # a number


def mse_backward(y_hat, y):
    """``dL/dy_hat = 2 (y_hat - y) / n``."""
    return 2.0 * (y_hat - y) / y.size
