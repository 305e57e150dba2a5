"""The fast kernels: the optimised implementation of :mod:`glassformer.nn.reference`.

Read :mod:`glassformer.nn.reference` first: the equations of the chapter's model (Pyrcz, M.J.,
2024, Applied Machine Learning in Python, "Transformers"; Vaswani et al., 2017), plain.  Each
kernel here computes the same numbers faster and names the reference function it must equal; the
tests compare them on every path (1e-12 in float64), and ``glassformer.kernels("reference")`` runs
the reference instead.  A forward returns its output and what its backward (right under it) needs;
the modules of :mod:`glassformer.nn` hold the parameters and call these through :mod:`.tiers`.
The feed-forward network has no kernel of its own (:func:`linear`, an activation, :func:`dropout`,
:func:`linear`: :class:`~glassformer.nn.FeedForward` composes the modules that call them).

Shapes: ``B`` batch, ``L`` queries, ``S`` keys, ``T`` positions, ``D`` d_model, ``H`` heads,
``hd = D / H`` head_dim, ``N`` all leading axes.

Speed tricks, each inside the kernel that uses them: one 2-D GEMM per linear map (also for the
fused query/key/value projection of :mod:`.heads`); BLAS row sums, one-GEMM centring and tiled row
vectors (:mod:`.reductions`); no max shift in the softmax when the scores are bounded; the output
divided by the row sums after ``v``; contiguous ``k^T`` and ``v^T`` (:func:`transposed`);
:mod:`.attention_blocks` runs these kernels by blocks of queries.  A leading member axis
(``weight (K, out, in)``, ``x (K, batch, ...)``) trains K models side by side
(:mod:`glassformer.models.members`), each member making the very BLAS calls it makes alone.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

from .reductions import TILE_MIN_ROWS, centre, ones_vector, row_mean, row_sum, rows, with_row_vector

__all__ = [
    "linear", "linear_backward", "relu", "relu_backward", "gelu", "gelu_backward", "gelu_tanh",
    "gelu_tanh_backward", "tanh", "tanh_backward", "dropout_scale", "dropout", "dropout_backward",
    "layer_norm", "layer_norm_backward", "masked_softmax", "softmax_backward", "scaled_dot_product_attention",
    "scaled_dot_product_attention_backward", "attention_weights", "attention_scale", "key_bound", "transposed",
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
    """:func:`glassformer.nn.reference.linear` ``y = x W^T + b``, ``weight (out, in)`` as PyTorch.

    Members: ``weight (K, out, in)``, ``bias (K, out)``, ``x (K, ..., in)``.
    """
    if weight.ndim == 3:
        y = rows(x, True) @ weight.transpose(0, 2, 1)           # (K, N, out): one GEMM per member
        if bias is not None:
            y += bias[:, None, :]
        return y.reshape(x.shape[:-1] + (weight.shape[-2],))    # (K, ..., out)
    y = x.reshape(-1, x.shape[-1]) @ weight.T                   # (N, out): one GEMM
    if bias is not None:
        if len(y) < TILE_MIN_ROWS:
            y += bias
        else:
            with_row_vector(np.add, y, bias, out=y)             # y += bias, fast on many short rows
    return y.reshape(x.shape[:-1] + (weight.shape[0],))         # (..., out)


def linear_backward(dy, x, weight, has_bias=True):
    """:func:`glassformer.nn.reference.linear_backward`: ``(dx, dW, db)``, ``dW = dy^T x``, ``dx = dy W``.

    With one output (a regression head) ``dy W`` is an outer product: broadcasting computes it
    faster than a GEMM with an inner size of 1, and exactly (one product per entry).  The bias
    gradient ``db`` is the column sums of ``dy``, one matrix-vector product with ones.
    """
    members = weight.ndim == 3
    if members:
        dy2, x2 = rows(dy, True), rows(x, True)                 # (K, N, out), (K, N, in)
        dW = dy2.transpose(0, 2, 1) @ x2                        # (K, out, in)
    else:
        dy2, x2 = dy.reshape(-1, dy.shape[-1]), x.reshape(-1, x.shape[-1])   # (N, out), (N, in)
        dW = dy2.T @ x2                                         # (out, in)
    db = (ones_vector(dy2.shape[-2], dy2.dtype) @ dy2) if has_bias else None      # (out,) column sums
    dx = dy2 * weight if weight.shape[-2] == 1 else dy2 @ weight
    return dx.reshape(x.shape), dW, db                          # dx (..., in)


# =========================================================================== activations
def relu(x):
    """:func:`glassformer.nn.reference.relu`, keeping the mask ``x > 0``: returns ``(y, mask)``."""
    mask = x > 0
    return np.maximum(x, x.dtype.type(0)), mask                 # faster than x * mask; equal up to the sign of 0


def relu_backward(dy, mask):
    return dy * mask


def gelu(x):
    """:func:`glassformer.nn.reference.gelu` ``x Phi(x)``, keeping ``Phi(x)``: returns ``(y, cdf)``."""
    cdf = 0.5 * (1.0 + erf(x * _INV_SQRT_2))
    return x * cdf, cdf


def gelu_backward(dy, x, cdf):
    """``d/dx x Phi(x) = Phi(x) + x phi(x)``."""
    pdf = _INV_SQRT_2PI * np.exp(-0.5 * x * x)
    return dy * (cdf + x * pdf)


def gelu_tanh(x):
    """:func:`glassformer.nn.reference.gelu_tanh`, keeping the tanh ``t``: returns ``(y, t)``."""
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
    ``weight=None`` skips the affine part (members: ``weight, bias (K, D)``, ``x (K, ..., D)``).
    Returns ``(y, xhat, rstd)``.  Equals :func:`glassformer.nn.reference.layer_norm`: the centring
    is one GEMM, the row vectors are tiled, and ``xhat`` is formed in the centred array's memory.
    """
    members = weight is not None and weight.ndim == 2
    xc = centre(rows(x, True) if members else x.reshape(-1, x.shape[-1]))   # (N, D) centred
    var = row_mean(xc * xc)                                     # (N, 1) biased variance, as PyTorch
    var += eps
    rstd = np.sqrt(var, out=var)
    np.divide(1.0, rstd, out=rstd)                              # (N, 1) 1 / sqrt(var + eps)
    xhat = xc
    xhat *= rstd                                                # in place: xc is not needed again
    if weight is None:
        y = xhat.copy()
    elif members:
        y = xhat * weight[:, None, :]
        y += bias[:, None, :]
    elif len(xhat) < TILE_MIN_ROWS:
        y = xhat * weight
        y += bias
    else:
        y = with_row_vector(np.multiply, xhat, weight)          # xhat * weight, fast on many short rows
        with_row_vector(np.add, y, bias, out=y)                 # y += bias
    return y.reshape(x.shape), xhat.reshape(x.shape), rstd.reshape(x.shape[:-1] + (1,))


def layer_norm_backward(dy, xhat, rstd, weight):
    """Return ``(dx, dweight, dbias)`` (the last two None without ``weight``).

    ``dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))``: the derivative through the mean
    and the biased variance.  ``mean(dxhat xhat) = (dy xhat) . weight / D`` reuses ``dy xhat``,
    the product ``dweight`` sums.  Equals :func:`glassformer.nn.reference.layer_norm_backward`.
    """
    members = weight is not None and weight.ndim == 2
    if members:
        dy2, xh, rs = rows(dy, True), rows(xhat, True), rows(rstd, True)         # (K, N, D), (K, N, D), (K, N, 1)
    else:
        d = dy.shape[-1]
        dy2, xh, rs = dy.reshape(-1, d), xhat.reshape(-1, d), rstd.reshape(-1, 1)   # (N, D), (N, D), (N, 1)
    if weight is None:
        dweight = dbias = None
        dxhat, m2 = dy2, row_mean(dy2 * xh)                     # (N, D), (N, 1)
    else:
        ones = ones_vector(dy2.shape[-2], dy2.dtype)
        dyx = dy2 * xh
        dweight, dbias = ones @ dyx, ones @ dy2                 # (D,) column sums
        dxhat = dy2 * (weight[:, None, :] if members else weight)
        m2 = dyx @ (weight * (1.0 / xh.shape[-1]))[..., None]   # (N, 1) mean(dxhat * xhat)
    dx = centre(dxhat)                                          # dxhat - mean(dxhat)
    dx -= xh * m2
    dx *= rs
    return dx.reshape(dy.shape), dweight, dbias


# =========================================================================== softmax
def _exp_is_safe(scores) -> bool:
    """True when every score lies in ``[-_EXP_SAFE, _EXP_SAFE]`` (False for NaN, +-inf or no scores): then
    ``exp`` without reference.softmax's shift gives its weights up to rounding."""
    if scores.size == 0:
        return False
    # Whole-array extremes: two vectorised passes, far cheaper than one maximum per short row.
    return -_EXP_SAFE <= np.minimum.reduce(scores, axis=None) and np.maximum.reduce(scores, axis=None) <= _EXP_SAFE


def masked_softmax(scores, allowed=None, members=False, bounded=False):
    """Softmax over the last axis, **in place**, with blocked entries exactly 0.

    ``A_ij = exp(s_ij - m_i) [allowed_ij] / sum_j' exp(s_ij' - m_i) [allowed_ij']``, ``m_i`` the row
    maximum over allowed entries; ``-inf`` scores count as blocked.  A fully blocked row comes out as
    zeros (its maximum is replaced by 0 and its zero denominator by 1), never NaN.  When every score
    lies in ``[-60, 60]`` (scanned, or shown by the caller: ``bounded``) the shift is skipped
    (``m_i = 0``): ``exp`` can neither overflow nor leave float32's normal range, and the row maxima
    -- a slow reduction over short rows -- are not needed; same weights up to rounding.  With
    ``members`` (scores ``(K, ...)``) each member takes the choice it would take alone.
    Equals :func:`glassformer.nn.reference.softmax` of the scores with blocked entries ``-inf``.
    """
    scores, denom = _softmax_terms(scores, allowed, members, bounded)
    if denom is not None:
        scores /= denom
    return scores


def _softmax_terms(scores, allowed=None, members=False, bounded=False):
    """The softmax of :func:`masked_softmax` before its division: ``(exp(s - m), denominators (..., 1))``,
    in place; the denominators are None when the members took different paths (then the weights
    are already divided).  Divided, equals :func:`glassformer.nn.reference.softmax`."""
    if allowed is not None:
        np.copyto(scores, -np.inf, where=~allowed)
    if bounded or not members:
        safe = bounded or _exp_is_safe(scores)
    else:
        each = {_exp_is_safe(s) for s in scores}
        if len(each) > 1:                                       # members differ: each as it would alone
            for s in scores:
                masked_softmax(s)
            return scores, None
        safe = each.pop()
    if safe:
        np.exp(scores, out=scores)
        return scores, row_sum(scores, members)                 # each row sums to >= exp(-60) > 0
    m = np.maximum.reduce(scores, axis=-1, keepdims=True)       # (..., 1)
    finite = np.isfinite(m)
    blocked_rows = not finite.all()
    if blocked_rows:
        m[~finite] = 0.0                                        # fully blocked row: any finite shift will do
    np.subtract(scores, m, out=scores)
    np.exp(scores, out=scores)                                  # exp(-inf) = 0 removes blocked entries
    denom = row_sum(scores, members)                            # (..., 1)
    if blocked_rows:                                            # with a finite maximum every row sums to >= 1
        denom[denom == 0] = 1.0
    return scores, denom


def softmax_backward(dA, A, row_dots=None):
    """``dS = A * (dA - sum_j dA_ij A_ij)``, **in place** on ``dA``; blocked entries (A = 0) get 0.

    ``row_dots (..., 1)``: the sums ``sum_j dA_ij A_ij`` when the caller has them more cheaply
    (attention by blocks); else an ``einsum`` forms them with no ``(..., L, S)`` temporary.
    Equals :func:`glassformer.nn.reference.softmax_backward`.
    """
    dA -= np.einsum("...ij,...ij->...i", dA, A)[..., None] if row_dots is None else row_dots
    dA *= A
    return dA


# =========================================================================== attention
def attention_scale(head_dim: int) -> float:
    """The default scale of the scores, ``1/sqrt(head_dim)``, as a Python float (float32 stays float32)."""
    return 1.0 / math.sqrt(head_dim)


def attention_weights(q, k, allowed=None, bias=None, scale=None, record=None, members=False, *, k_t=None,
                      k_bound=None):
    """``A = softmax(q k^T * scale + bias, blocked -> 0)`` over the keys: ``(..., L, S)``.

    The scores ``S`` and weights ``A`` of :func:`scaled_dot_product_attention` (arguments as there),
    from ``q`` and the contiguous ``k_t = scale k^T`` (:func:`transposed`; ~2x faster than the
    projection's transposed view).  ``k_t`` and ``k_bound`` (:func:`key_bound`) may be passed in
    when already formed (attention by blocks forms them once for all its blocks).  Equals
    :func:`glassformer.nn.reference.softmax` of :func:`glassformer.nn.reference.scores`.
    """
    exp_scores, denom = _weight_terms(q, k, allowed, bias, scale, record, members, k_t, k_bound)
    if denom is None:                                           # members took different paths: already divided
        return exp_scores
    A = exp_scores
    A /= denom                                                  # in place: exp(S - m) becomes the weights A
    return A


def _weight_terms(q, k, allowed, bias, scale, record, members, k_t, k_bound):
    """:func:`attention_weights` before the softmax's division: ``(exp(S - m), denominators)`` (see
    :func:`_softmax_terms`).  ``k_t`` holds ``scale k^T``: the ``1/sqrt(d)`` of
    :func:`glassformer.nn.reference.scores` multiplies the keys (the smaller array) once."""
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    k_t = transposed(k, scale) if k_t is None else k_t        # (..., d, S) scale * k^T
    scores = q @ k_t                                            # (..., L, S) the scores S
    if bias is not None:
        scores += bias
    if allowed is not None:
        np.copyto(scores, -np.inf, where=~allowed)
    if record is not None:
        record["S"] = scores.copy()
    # Long rows: bound the scores from q and k (Cauchy-Schwarz) instead of scanning the (L, S) array;
    # within the bound the unshifted softmax equals reference.softmax's shifted one up to rounding.
    bounded = allowed is None and bias is None and k_t.shape[-1] >= 8 * k_t.shape[-2] and \
        _bounded(q, key_bound(k_t) if k_bound is None else k_bound)
    return _softmax_terms(scores, members=members, bounded=bounded)   # in place: S becomes exp(S - m)


def key_bound(k_t) -> float:
    """The largest squared norm of a (scaled) key, a column of ``k_t (..., d, S)``."""
    return float(np.maximum.reduce(np.add.reduce(k_t * k_t, axis=-2), axis=None))


def _bounded(q, bound: float) -> bool:
    """``max_i |q_i|^2 max_j |k_j|^2 <= 59^2`` (``bound``: the keys' part): every score lies in ``[-59, 59]``
    (Cauchy-Schwarz), so the softmax may skip the shift of :func:`glassformer.nn.reference.softmax`."""
    return bool(np.maximum.reduce(row_sum(q * q), axis=None) * bound <= 59.0 ** 2)


def transposed(a, scale=1.0):
    """``scale * a^T`` over the last two axes, as a new C-contiguous array ``(..., d, S)``: the layout
    in which NumPy's batched products take their right operand fastest (see :func:`attention_weights`)."""
    out = np.empty(a.shape[:-2] + (a.shape[-1], a.shape[-2]), dtype=a.dtype)
    return np.multiply(a.swapaxes(-1, -2), scale, out=out)


def scaled_dot_product_attention(q, k, v, allowed=None, bias=None, scale=None, keep=None, weights=None,
                                 record=None, *, members=False, out=None, k_t=None, k_bound=None,
                                 need_weights=True):
    """:func:`glassformer.nn.reference.attention`: ``U = softmax(q k^T * scale + bias, blocked -> 0) v``.

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
    members : bool
        The first axis holds the members of an ensemble trained as one (see the module docstring).
    out : array (..., L, dv), optional
        Where to write the output (e.g. a view in the merged-heads layout, saving a copy).
    need_weights : bool, default True
        False (inference without caches): ``A`` is not formed (None returned).  Without ``keep``
        and ``weights`` the output is always ``(exp(S - m) v) / row sums``, the softmax's division
        on an ``(L, dv)`` array (Dao et al., 2022), so it is the same with or without the weights.

    Returns
    -------
    out : (..., L, dv)
    A : (..., L, S) the weights before dropout; rows sum to 1, or are 0 for a fully blocked query.
    """
    if keep is not None or weights is not None:
        A = weights if weights is not None else \
            attention_weights(q, k, allowed, bias, scale, record, members, k_t=k_t, k_bound=k_bound)
        return np.matmul(A if keep is None else A * keep, v, out=out), A         # (..., L, dv)
    exp_scores, denom = _weight_terms(q, k, allowed, bias, scale, record, members, k_t, k_bound)
    out = np.matmul(exp_scores, v, out=out)                     # (..., L, dv) exp(S - m) v
    if denom is None:                                           # members took different paths: already A
        return out, exp_scores
    out /= denom                                                # (exp(S - m) v) / sums = A V, reference.attention's U
    if not need_weights:
        return out, None
    A = exp_scores
    A /= denom                                                  # in place: exp(S - m) becomes the weights A
    return out, A


def scaled_dot_product_attention_backward(dout, q, k, v, A, scale=None, keep=None, fixed_weights=False, *,
                                          out=None, v_t=None, o=None, record=None):
    """Return ``(dq, dk, dv)`` of :func:`scaled_dot_product_attention`.

    With ``A' = A * keep`` the weights applied: ``dv = A'^T dout``, ``dA = (dout v^T) * keep``,
    ``dS`` from :func:`softmax_backward`, ``dq = scale dS k``, ``dk = scale dS^T q`` (the scale
    multiplies ``dout``, the smaller array).  Blocked entries and fully blocked rows get exactly zero
    gradient; ``fixed_weights`` (given, not computed) gives zero ``dq`` and ``dk``.  ``out``: arrays
    ``(dq, dk, dv)`` to write into (views of :func:`~glassformer.nn.heads.empty_heads`; None: allocate); ``v_t``: ``v^T``
    already :func:`transposed`; ``o = A' v`` (the forward output): the softmax row dots become
    ``dout_i . o_i``, sums over ``dv`` instead of ``S`` (Dao et al., 2022), equal up to rounding.
    Equals :func:`glassformer.nn.reference.attention_backward`.
    ``record`` (a dict, for inspection) receives ``"dA"`` = dL/dA and ``"dS"`` = dL/dS of the scaled
    scores, the chapter's gradients (the kernel carries them multiplied by ``scale``).
    """
    dq, dk, dv = (None, None, None) if out is None else out
    dv = np.matmul((A if keep is None else A * keep).swapaxes(-1, -2), dout, out=dv)   # (..., S, dv)
    if fixed_weights:
        return np.zeros_like(q) if dq is None else _zero(dq), np.zeros_like(k) if dk is None else _zero(dk), dv
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    # reference.scores_backward's scale, applied to dout (L, dv) instead of dS (L, S): dA, dS are scaled.
    dout_scaled = dout * scale                                  # (..., L, dv)
    dA = dout_scaled @ (transposed(v) if v_t is None else v_t)   # (..., L, S) scale * dL/dA
    if keep is not None:
        dA *= keep
    if record is not None:
        record["dA"] = dA / scale                               # (..., L, S) dL/dA
    row_dots = None if o is None else np.einsum("...ij,...ij->...i", dout_scaled, o)[..., None]
    dS = softmax_backward(dA, A, row_dots)                      # (..., L, S) scale * dL/dS
    if record is not None:
        record["dS"] = dS / scale                               # (..., L, S) dL/dS
    dq = np.matmul(dS, k, out=dq)                               # (..., L, d)
    dk = np.matmul(dS.swapaxes(-1, -2), q, out=dk)              # (..., S, d)
    return dq, dk, dv


def _zero(buf):
    buf[...] = 0.0
    return buf
