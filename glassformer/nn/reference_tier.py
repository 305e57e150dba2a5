"""The reference equations behind the fast kernels' names: what ``kernels("reference")`` runs.

Each function here takes the arguments of the fast kernel of the same name
(:mod:`glassformer.nn.functional`, :mod:`glassformer.nn.attention_blocks`) and computes its result
with the plain functions of :mod:`glassformer.nn.reference`.  Only plumbing lives here: the
arguments that exist for speed are ignored (a precomputed ``k^T``, a bound, ``need_weights``,
``block`` -- the reference attends to every query at once), an ``out`` buffer is filled by a copy,
and members trained side by side run one member after the other.  No equation is written here.
"""

from __future__ import annotations

import numpy as np

import glassformer.nn.reference as R   # by full name, not through this package's __init__ (which imports this)
from .functional import attention_scale, dropout_scale

__all__ = [
    "linear", "linear_backward", "relu", "relu_backward", "gelu", "gelu_backward", "gelu_tanh",
    "gelu_tanh_backward", "tanh", "tanh_backward", "dropout_scale", "dropout", "dropout_backward",
    "layer_norm", "layer_norm_backward", "masked_softmax", "softmax_backward", "attention_scale",
    "attention_weights", "scaled_dot_product_attention", "scaled_dot_product_attention_backward",
    "attention_blocks", "attention_blocks_backward",
]

dropout, dropout_backward, tanh, tanh_backward = R.dropout, R.dropout_backward, R.tanh, R.tanh_backward


def _each_member(f, *arrays):
    """``f`` on member ``k`` of every array (None stays None), the results stacked along a new first
    axis (tuples element by element)."""
    results = [f(*(None if a is None else a[k] for a in arrays)) for k in range(len(arrays[0]))]
    if not isinstance(results[0], tuple):
        return np.stack(results)
    return tuple(None if r[0] is None else np.stack(r) for r in zip(*results))


def linear(x, weight, bias=None):
    if weight.ndim == 3:                                    # members: weight (K, out, in), x (K, ..., in)
        return _each_member(R.linear, x, weight, bias)
    return R.linear(x, weight, bias)


def linear_backward(dy, x, weight, has_bias=True):
    if weight.ndim == 3:
        return _each_member(lambda d, a, w: R.linear_backward(d, a, w, has_bias), dy, x, weight)
    return R.linear_backward(dy, x, weight, has_bias)


# The fast activations return what their backward needs beside the output; the reference's
# backward reads the input x, so x is what the layer keeps.
def relu(x):
    return R.relu(x), x


def relu_backward(dy, x):
    return R.relu_backward(dy, x)


def gelu(x):
    return R.gelu(x), None


def gelu_backward(dy, x, _):
    return R.gelu_backward(dy, x)


def gelu_tanh(x):
    return R.gelu_tanh(x), None


def gelu_tanh_backward(dy, x, _):
    return R.gelu_tanh_backward(dy, x)


def layer_norm(x, weight, bias, eps):
    if weight is not None and weight.ndim == 2:             # members: weight, bias (K, D)
        return _each_member(lambda a, w, b: R.layer_norm(a, w, b, eps), x, weight, bias)
    return R.layer_norm(x, weight, bias, eps)


def layer_norm_backward(dy, xhat, rstd, weight):
    if weight is not None and weight.ndim == 2:
        return _each_member(R.layer_norm_backward, dy, xhat, rstd, weight)
    return R.layer_norm_backward(dy, xhat, rstd, weight)


def masked_softmax(scores, allowed=None, members=False, bounded=False):
    return R.softmax(scores if allowed is None else np.where(allowed, scores, -np.inf))


def softmax_backward(dA, A, row_dots=None):
    return R.softmax_backward(dA, A)


def attention_weights(q, k, allowed=None, bias=None, scale=None, record=None, members=False, *, k_t=None,
                      k_bound=None):
    S = R.scores(q, k, _scale(q, scale), bias, allowed)
    if record is not None:
        record["S"] = S.copy()
    return R.softmax(S)


def scaled_dot_product_attention(q, k, v, allowed=None, bias=None, scale=None, keep=None, weights=None,
                                 record=None, *, members=False, out=None, k_t=None, k_bound=None,
                                 need_weights=True):
    if weights is not None:                                 # weights given by the caller (ablation)
        A = weights
        U = R.dropout(A, keep) @ v                          # (..., L, dv) U = A V
    else:
        U, A, S = R.attention(q, k, v, allowed, bias, _scale(q, scale), keep)
        if record is not None:
            record["S"] = S
    return _into(out, U), A


def scaled_dot_product_attention_backward(dout, q, k, v, A, scale=None, keep=None, fixed_weights=False, *,
                                          out=None, v_t=None, o=None, record=None):
    dq, dk, dv = R.attention_backward(dout, q, k, v, A, _scale(q, scale), keep, record)
    if fixed_weights:                                       # given weights: no path to the queries and keys
        dq, dk = np.zeros_like(q), np.zeros_like(k)
    return (dq, dk, dv) if out is None else tuple(_into(b, g) for b, g in zip(out, (dq, dk, dv)))


def attention_blocks(q, k, v, allowed=None, bias=None, scale=None, *, block, members=False, out=None):
    return scaled_dot_product_attention(q, k, v, allowed, bias, scale, out=out)[0]


def attention_blocks_backward(dout, q, k, v, o, allowed=None, bias=None, scale=None, *, block, members=False,
                              out=None):
    A = attention_weights(q, k, allowed, bias, scale)       # the weights again, from q and k
    return scaled_dot_product_attention_backward(dout, q, k, v, A, scale, out=out)


def _scale(q, scale):
    return attention_scale(q.shape[-1]) if scale is None else float(scale)


def _into(buf, value):
    """``value`` written into ``buf`` (a view the caller reads), or ``value`` itself without one."""
    if buf is None:
        return value
    buf[...] = value
    return buf
