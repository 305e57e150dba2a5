"""Scaled dot-product and multi-head attention (Vaswani et al., 2017, eqs. 1 and 4-5).

Mask conventions (../shared/DESIGN.md, decisions 4 and 5) follow ``torch.nn.MultiheadAttention``:

* a **boolean** ``attn_mask`` is True where attention is **not allowed**;
* a **float** ``attn_mask`` is **added** to the scores (``-inf`` blocks);
* ``key_padding_mask (batch, S)`` is True at **padding** keys;
* ``is_causal=True`` really builds the causal mask (in PyTorch it is only a hint).

Beware: ``torch.nn.functional.scaled_dot_product_attention`` and Hugging Face ``attention_mask``
use the **opposite** boolean polarity (True / 1 = *may attend*).

A query row whose keys are all blocked gets weights exactly 0, an attention output of 0 (so the
layer output is ``out_proj.bias``) and zero gradients -- never NaN -- on every path.  The kernel
works with an ``allowed`` boolean array (True = may attend) internally: blocked scores are set to
``-inf``, the row maximum is taken over allowed entries only (0 for an empty row), ``exp(-inf) = 0``
removes blocked entries, and a zero denominator is replaced by 1.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_input, check_positive_int, check_probability
from ..errors import InputError, NotReadyError, ShapeError
from .dropout import dropout_scale
from .linear import Linear
from .module import Module, Parameter, make_rng
from .reductions import lead_sum, row_sum
from .rotary import RotaryEmbedding

__all__ = [
    "MultiheadAttention",
    "causal_mask",
    "padding_mask",
    "masked_softmax",
    "scaled_dot_product_attention",
    "scaled_dot_product_attention_backward",
]


# --------------------------------------------------------------------------- mask helpers
def causal_mask(L: int, S: int | None = None) -> np.ndarray:
    """Boolean ``(L, S)`` mask, True above the diagonal (query i may not attend to key j > i).

    Same polarity as ``torch.nn.MultiheadAttention``'s boolean ``attn_mask`` (True = blocked);
    equivalent to ``torch.nn.Transformer.generate_square_subsequent_mask(L)`` (which is float -inf/0).
    """
    L = check_positive_int(L, "L", "causal_mask")
    S = L if S is None else check_positive_int(S, "S", "causal_mask")
    return np.triu(np.ones((L, S), dtype=bool), k=1)


def padding_mask(lengths, S: int) -> np.ndarray:
    """Boolean ``(batch, S)`` key padding mask, True at positions ``>= lengths[b]`` (padding).

    Raises
    ------
    InputError if a length is negative or larger than ``S``.
    """
    S = check_positive_int(S, "S", "padding_mask")
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.dtype.kind not in "iu":
        raise InputError(f"padding_mask: lengths must be a 1-D integer array, got {lengths!r}")
    if lengths.size and (lengths.min() < 0 or lengths.max() > S):
        raise InputError(f"padding_mask: lengths must lie in [0, {S}], got {lengths.tolist()}")
    return np.arange(S)[None, :] >= lengths[:, None]


# --------------------------------------------------------------------------- kernel
# Scores within +-60 need no shift before exp: e^60 ~ 1e26 (sums of a trillion such terms stay
# finite in float32) and e^-60 ~ 9e-27 is still a normal float32.
_EXP_SAFE = 60.0


def _default_scale(head_dim: int) -> float:
    """``1/sqrt(head_dim)`` as a Python float, so float32 tensors stay float32 (NEP 50)."""
    return 1.0 / math.sqrt(head_dim)


def _exp_is_safe(scores: np.ndarray) -> bool:
    """True when every score lies in ``[-_EXP_SAFE, _EXP_SAFE]`` (False for NaN, +-inf or no scores)."""
    if scores.size == 0:
        return False
    # Whole-array extremes: two vectorised passes, far cheaper than one maximum per short row.
    return -_EXP_SAFE <= np.minimum.reduce(scores, axis=None) and np.maximum.reduce(scores, axis=None) <= _EXP_SAFE


def masked_softmax(scores: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the last axis, **in place**, with blocked entries exactly 0.

    ``A_ij = exp(s_ij - m_i) [allowed_ij] / sum_j' exp(s_ij' - m_i) [allowed_ij']`` with ``m_i`` the
    row maximum over allowed entries (0 for a fully blocked row); ``-inf`` entries of ``scores``
    count as blocked.  A fully blocked row comes out as zeros (the denominator 0 is replaced by 1).
    When every score lies in ``[-60, 60]`` the shift is skipped (``m_i = 0``): ``exp`` can then
    neither overflow nor leave float32's normal range, and the row maxima -- the slowest pass, a
    reduction over short rows -- are not needed.  Both give the same weights up to rounding.
    """
    if allowed is not None:
        np.copyto(scores, -np.inf, where=~allowed)
    if _exp_is_safe(scores):
        np.exp(scores, out=scores)
        scores /= row_sum(scores)                # each row sums to >= exp(-60) > 0
        return scores
    m = np.maximum.reduce(scores, axis=-1, keepdims=True)
    finite = np.isfinite(m)
    blocked_rows = not finite.all()
    if blocked_rows:
        m[~finite] = 0.0                         # fully blocked row: any finite shift will do
    np.subtract(scores, m, out=scores)
    np.exp(scores, out=scores)                   # exp(-inf) = 0 removes blocked entries
    denom = row_sum(scores)
    if blocked_rows:                             # with a finite maximum every row sums to >= 1
        denom[denom == 0] = 1.0
    scores /= denom
    return scores


def scaled_dot_product_attention(q, k, v, allowed=None, bias=None, scale=None):
    """``softmax(q k^T * scale + bias, blocked -> 0) v`` (Vaswani et al. 2017, eq. 1), vectorised.

    Parameters
    ----------
    q : ndarray (..., L, d)
    k : ndarray (..., S, d)
    v : ndarray (..., S, dv)
    allowed : bool ndarray broadcastable to (..., L, S), optional
        True where query i **may** attend to key j (the opposite of ``attn_mask``'s polarity).
    bias : float ndarray broadcastable to (..., L, S), optional
        Added to the scaled scores (a float ``attn_mask``); ``-inf`` blocks.
    scale : float, optional
        Default ``1/sqrt(d)``.

    Returns
    -------
    out : ndarray (..., L, dv)
    weights : ndarray (..., L, S)
        Rows sum to 1, or are all 0 for a fully blocked query.
    """
    scale = _default_scale(q.shape[-1]) if scale is None else float(scale)
    scores = (q * scale) @ np.swapaxes(k, -1, -2)
    if bias is not None:
        scores += bias
    weights = masked_softmax(scores, allowed)
    return weights @ v, weights


def scaled_dot_product_attention_backward(grad_out, q, k, v, weights, scale=None, keep=None):
    """Gradients of :func:`scaled_dot_product_attention` w.r.t. ``q``, ``k`` and ``v``.

    With ``A`` the softmax weights, ``A' = A * keep`` the weights actually applied (``keep`` is a
    dropout multiplier, or None), ``U = A' V`` and ``S = scale * q k^T``:

    * ``dV = A'^T dU`` and ``dA' = dU V^T``; ``dA = dA' * keep``
    * softmax: ``dS = A * (dA - sum_j(dA * A))`` -- blocked entries have ``A = 0`` so they, and
      whole blocked rows, get exactly zero gradient
    * ``dq = scale * dS k`` and ``dk = scale * dS^T q``.

    Returns
    -------
    (dq, dk, dv) with the shapes of (q, k, v).
    """
    scale = _default_scale(q.shape[-1]) if scale is None else float(scale)
    used = weights if keep is None else weights * keep
    dv = np.swapaxes(used, -1, -2) @ grad_out
    dA = grad_out @ np.swapaxes(v, -1, -2)
    if keep is not None:
        dA *= keep
    dS = dA
    dS -= np.einsum("...ij,...ij->...i", dA, weights)[..., None]   # row dots, no (..., L, S) temporary
    dS *= weights
    dq = (dS @ k) * scale
    dk = (np.swapaxes(dS, -1, -2) @ q) * scale
    return dq, dk, dv


# --------------------------------------------------------------------------- mask assembly
def _mask_array(mask, name: str, dtype) -> tuple[np.ndarray, bool]:
    """Return ``(array, is_bool)``; float masks become ``dtype``; NaN and +inf are refused."""
    m = np.asarray(mask)
    if m.dtype == bool:
        return m, True
    if m.dtype.kind != "f":
        # an integer 0/1 mask is ambiguous (added as a float it would not block anything)
        raise InputError(
            f"MultiheadAttention.forward: {name} must be bool (True = blocked) or float (added to the "
            f"scores), got dtype {m.dtype}"
        )
    m = m.astype(dtype, copy=False)
    if np.isnan(m).any() or np.isposinf(m).any():
        raise InputError(f"MultiheadAttention.forward: {name} contains NaN or +inf")
    return m, False


def _merge_masks(attn_mask, key_padding_mask, is_causal, B, H, L, S, dtype):
    """Combine every mask into ``(allowed, bias)`` broadcastable to (B, H, L, S); either may be None."""
    allowed = None
    bias = None
    if attn_mask is None and key_padding_mask is None and not is_causal:
        return allowed, bias

    def add_allowed(a):
        nonlocal allowed
        allowed = a if allowed is None else allowed & a

    def add_bias(b):
        nonlocal bias
        bias = b if bias is None else bias + b

    if attn_mask is not None:
        m, is_bool = _mask_array(attn_mask, "attn_mask", dtype)
        if m.shape == (L, S):
            pass
        elif m.shape == (B * H, L, S):
            m = m.reshape(B, H, L, S)         # PyTorch orders the first axis batch-major: b * H + h
        else:
            raise ShapeError(
                f"MultiheadAttention.forward: attn_mask must have shape ({L}, {S}) or "
                f"({B * H}, {L}, {S}) = (batch*num_heads, L, S), got {m.shape}"
            )
        if is_bool:
            add_allowed(~m)
        else:
            add_bias(m)
    if key_padding_mask is not None:
        m, is_bool = _mask_array(key_padding_mask, "key_padding_mask", dtype)
        if m.shape != (B, S):
            raise ShapeError(
                f"MultiheadAttention.forward: key_padding_mask must have shape ({B}, {S}) = (batch, S), got {m.shape}"
            )
        m = m[:, None, None, :]
        if is_bool:
            add_allowed(~m)
        else:
            add_bias(m)
    if is_causal:
        add_allowed(~causal_mask(L, S))
    return allowed, bias


# --------------------------------------------------------------------------- module
class MultiheadAttention(Module):
    """Multi-head attention with PyTorch's parameters, masks and return values.

    ``head_h = softmax(Q_h K_h^T / sqrt(head_dim) + masks) V_h`` with
    ``[Q | K | V] = [query | key | value] W_in^T + b_in`` split into ``num_heads`` heads of
    ``head_dim = embed_dim / num_heads`` features, ``U = concat_h(head_h)`` and output
    ``O = U W_out^T + b_out`` (Vaswani et al. 2017, eqs. 4-5; seed 000's Q, K, V, S, A, U).

    Parameters
    ----------
    embed_dim : int
        ``d_model`` E.
    num_heads : int
        Must divide ``embed_dim``.
    dropout : float, default 0.0
        Dropout on the attention weights in training mode, as PyTorch.
    bias : bool, default True
        Biases of the input and output projections.
    out_proj : bool, default True
        Keyword-only.  False drops the output projection (the seed's attention: U goes straight to
        the residual); ``state_dict`` then holds only ``in_proj_*``.
    rotary : RotaryEmbedding, optional
        Rotate per-head queries and keys by their positions (RoPE) before the scores.
    rng : int or numpy.random.Generator, optional
        Initialisation and attention-dropout masks.
    dtype : float64 (default) or float32

    Attributes
    ----------
    in_proj_weight : Parameter (3E, E) -- Q, K, V stacked by rows; xavier-uniform init as PyTorch
    in_proj_bias : Parameter (3E,) -- zero init
    out_proj : Linear(E, E) with zero bias, or None

    Masks
    -----
    Boolean ``attn_mask`` True = blocked, float ``attn_mask`` added to the scores; shape ``(L, S)`` or
    ``(batch*num_heads, L, S)``.  ``key_padding_mask`` ``(batch, S)``: True (bool) = padding, or float
    added.  Integer masks are refused (ambiguous).  ``is_causal=True`` builds the causal mask (combined with any other mask).  NOTE:
    ``F.scaled_dot_product_attention`` and Hugging Face use the opposite boolean polarity.  A fully
    masked query row gives zero weights, output ``out_proj.bias`` and zero gradients.

    Shapes
    ------
    query ``(batch, L, E)``, key/value ``(batch, S, E)``; unbatched ``(L, E)``/``(S, E)`` give unbatched
    outputs.  Returns ``(output (batch, L, E), weights)`` with weights ``(batch, L, S)`` averaged over
    heads, ``(batch, num_heads, L, S)`` when ``average_attn_weights=False``, or None when
    ``need_weights=False``; in training mode with ``dropout > 0`` they are the dropped-out weights
    actually applied to V, as PyTorch returns them.  ``backward(grad_output)`` returns ``(d_query, d_key, d_value)``; for
    self-attention the caller adds the three.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True, *,
                 out_proj: bool = True, rotary: RotaryEmbedding | None = None, rng=None, dtype=np.float64):
        super().__init__()
        E = check_positive_int(embed_dim, "embed_dim", "MultiheadAttention")
        H = check_positive_int(num_heads, "num_heads", "MultiheadAttention")
        if E % H:
            raise InputError(f"MultiheadAttention: embed_dim ({E}) must be divisible by num_heads ({H})")
        self.embed_dim, self.num_heads, self.head_dim = E, H, E // H
        self.dropout = check_probability(dropout, "dropout", "MultiheadAttention")
        if rotary is not None:
            if not isinstance(rotary, RotaryEmbedding):
                raise InputError(f"MultiheadAttention: rotary must be a RotaryEmbedding, got {type(rotary).__name__}")
            if rotary.head_dim != self.head_dim:
                raise InputError(
                    f"MultiheadAttention: rotary.head_dim ({rotary.head_dim}) != embed_dim/num_heads ({self.head_dim})"
                )
        self.rotary = rotary
        self.rng = make_rng(rng)
        bound = np.sqrt(6.0 / (E + 3 * E))       # xavier_uniform on the (3E, E) matrix, as PyTorch
        self.in_proj_weight = Parameter(self.rng.uniform(-bound, bound, size=(3 * E, E)).astype(dtype))
        self.in_proj_bias = Parameter(np.zeros(3 * E, dtype=dtype)) if bias else None
        if out_proj:
            self.out_proj = Linear(E, E, bias, rng=self.rng, dtype=dtype)
            if bias:
                self.out_proj.bias.data[...] = 0.0
        else:
            self.out_proj = None

    # ----------------------------------------------------------------- forward
    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False, positions=None):
        """Attend from ``query`` to ``key``/``value``; see the class docstring for shapes and masks.

        ``positions`` (rotary only): real positions ``(L,)`` or ``(batch, L)`` used for queries and
        keys (self-attention), or a pair ``(query_positions, key_positions)``; default ``arange``.
        """
        where = "MultiheadAttention.forward"
        dt = self.in_proj_weight.dtype
        E, H, hd = self.embed_dim, self.num_heads, self.head_dim
        raw = (query, key, value)
        # Group inputs that are the same object so one matmul projects them (fused QKV / KV).
        if query is key and key is value:
            groups = [(0, 1, 2)]
        elif key is value:
            groups = [(0,), (1, 2)]
        else:
            groups = [(0,), (1,), (2,)]
        arrays = [None, None, None]
        for g in groups:
            a = as_input(raw[g[0]], ("query", "key", "value")[g[0]], where, dt, self.check_inputs)
            for i in g:
                arrays[i] = a
        q_in, k_in, v_in = arrays
        unbatched = q_in.ndim == 2
        for name, a in zip(("query", "key", "value"), arrays):
            if a.ndim != (2 if unbatched else 3) or a.shape[-1] != E:
                want = "(L, E)" if unbatched else "(batch, L, E)"
                raise ShapeError(f"{where}: {name} must have shape {want} with E={E}, got {a.shape}")
        if unbatched:
            arrays = [a[None] for a in arrays]
            q_in, k_in, v_in = arrays
            if key_padding_mask is not None:
                key_padding_mask = np.asarray(key_padding_mask)[None]
        B, L, S = q_in.shape[0], q_in.shape[1], k_in.shape[1]
        if k_in.shape != v_in.shape:
            raise ShapeError(f"{where}: key and value must have the same shape (batch, S, E), "
                             f"got key {k_in.shape} and value {v_in.shape}")
        if k_in.shape[0] != B:
            raise ShapeError(f"{where}: query and key/value have different batch sizes ({B} vs {k_in.shape[0]}): "
                             f"query {q_in.shape}, key/value {k_in.shape}")
        allowed, bias = _merge_masks(attn_mask, key_padding_mask, is_causal, B, H, L, S, dt)

        # Projections: x W_rows^T + b_rows, reshaped to (n_parts, batch, heads, seq, head_dim).
        parts = [None, None, None]
        for g in groups:
            x = arrays[g[0]]
            rows = slice(g[0] * E, (g[-1] + 1) * E)
            proj = x.reshape(-1, E) @ self.in_proj_weight.data[rows].T     # one 2-D GEMM
            if self.in_proj_bias is not None:
                proj += self.in_proj_bias.data[rows]
            # Views, not copies: each (seq, head_dim) matrix has unit column stride, which BLAS takes.
            heads = proj.reshape(B, x.shape[1], len(g), H, hd).transpose(2, 0, 3, 1, 4)
            for j, i in enumerate(g):
                parts[i] = heads[j]
        q, k, v = parts
        q_pos = k_pos = None
        if self.rotary is not None:
            q_pos, k_pos = self._rotary_positions(positions, L, S)
            q = self.rotary.rotate(q, q_pos)
            k = self.rotary.rotate(k, k_pos)

        scale = _default_scale(hd)
        scores = (q * scale) @ k.swapaxes(-1, -2)              # S = Q K^T / sqrt(d)   (B, H, L, S)
        if bias is not None:
            scores += bias
        A = masked_softmax(scores, allowed)                       # A = softmax(S) with masked rows -> 0
        keep = None
        if self.training and self.dropout > 0.0:
            keep = dropout_scale(A.shape, self.dropout, self.rng, dt)
        A_used = A if keep is None else A * keep
        heads_out = A_used @ v                                    # head_h = A_h V_h   (B, H, L, hd)
        U = heads_out.transpose(0, 2, 1, 3).reshape(B, L, E)      # concat heads: (B, L, E)
        out = self.out_proj(U) if self.out_proj is not None else U
        self._save(groups=groups, arrays=arrays, q=q, k=k, v=v, A=A, keep=keep, U=U, O=out,
                   allowed=allowed, bias=bias, scale=scale, q_pos=q_pos, k_pos=k_pos, unbatched=unbatched)

        weights = None
        if need_weights:
            # a copy when per head: the cached weights must not be changed by the caller
            weights = A_used.mean(axis=1) if average_attn_weights else A_used.copy()
            if unbatched:
                weights = weights[0]
        return (out[0] if unbatched else out), weights

    def _rotary_positions(self, positions, L, S):
        if isinstance(positions, tuple):
            if len(positions) != 2:
                raise InputError("MultiheadAttention.forward: positions tuple must be (query_positions, key_positions)")
            return positions
        if positions is not None and L != S:
            raise InputError(
                f"MultiheadAttention.forward: positions of shape (L,) apply to queries and keys, but L={L} != S={S}; "
                "pass (query_positions, key_positions)"
            )
        return positions, positions

    # ----------------------------------------------------------------- backward
    def backward(self, grad_output):
        """Return ``(d_query, d_key, d_value)`` and add every parameter gradient.

        Gradients w.r.t. the returned attention weights are not supported (they are an output for
        inspection).  For self-attention (same array as query, key and value) add the three.
        """
        c = self._saved()
        per_group = self._backward(grad_output)
        out = [None, None, None]
        E = self.embed_dim
        for g, (d2, x2) in zip(c["groups"], per_group):
            for j, i in enumerate(g):
                out[i] = d2[:, j * E:(j + 1) * E] @ self.in_proj_weight.data[i * E:(i + 1) * E]
        shape = c["arrays"][0].shape[:1]
        out = [o.reshape(shape + (-1, E)) for o in out]
        if c["unbatched"]:
            out = [o[0] for o in out]
        return tuple(out)

    def backward_grouped(self, grad_output):
        """Like :meth:`backward` but returns one gradient per *distinct* input object, in the order
        (query[, key][, value]): ``(dx,)`` for self-attention, ``(d_query, d_memory)`` when key is
        value.  Saves the matmuls of splitting and re-adding the gradient of a shared input."""
        c = self._saved()
        per_group = self._backward(grad_output)
        res = []
        for g, (d2, x2) in zip(c["groups"], per_group):
            rows = slice(g[0] * self.embed_dim, (g[-1] + 1) * self.embed_dim)
            dx = d2 @ self.in_proj_weight.data[rows]
            dx = dx.reshape(c["arrays"][g[0]].shape)
            res.append(dx[0] if c["unbatched"] else dx)
        return tuple(res)

    def _backward(self, grad_output):
        """Backward down to the projections; returns ``[(d_proj (N, n*E), x (N, E))]`` per input group."""
        c = self._saved()
        grad_output = np.asarray(grad_output)
        if c["unbatched"]:
            grad_output = grad_output[None]
        B, L, E = c["U"].shape
        H, hd = self.num_heads, self.head_dim
        dU = self.out_proj.backward(grad_output) if self.out_proj is not None else grad_output
        d_heads = dU.reshape(B, L, H, hd).transpose(0, 2, 1, 3)
        dq, dk, dv = scaled_dot_product_attention_backward(d_heads, c["q"], c["k"], c["v"], c["A"], c["scale"], c["keep"])
        if self.rotary is not None:
            dq = self.rotary.rotate_backward(dq, c["q_pos"])
            dk = self.rotary.rotate_backward(dk, c["k_pos"])
        grads = (dq, dk, dv)
        res = []
        for g in c["groups"]:
            x = c["arrays"][g[0]]
            T = x.shape[1]
            # Gather the parts straight into the (B, T, n, H, hd) layout of the projection output,
            # so d2 = rows of [dQ | dK | dV] is a free reshape (one strided copy per part).
            d = np.empty((B, T, len(g), H, hd), dtype=grads[g[0]].dtype)
            for j, i in enumerate(g):
                d[:, :, j] = grads[i].transpose(0, 2, 1, 3)
            d2 = d.reshape(B * T, len(g) * E)
            x2 = x.reshape(B * T, E)
            rows = slice(g[0] * E, (g[-1] + 1) * E)
            self.in_proj_weight.grad[rows] += d2.T @ x2                 # d(x W^T)/dW = d^T x
            if self.in_proj_bias is not None:
                self.in_proj_bias.grad[rows] += lead_sum(d2)
            res.append((d2, x2))
        return res

    # ----------------------------------------------------------------- inspection
    def intermediates(self) -> dict:
        """Copies of the last forward's tensors, with the seed's symbols (always batched).

        ``Q``, ``K``, ``V``: per-head projections ``(batch, num_heads, seq, head_dim)`` (after rotary);
        ``S``: scaled, masked scores ``(batch, num_heads, L, S)`` with blocked entries ``-inf``;
        ``A``: softmax weights ``(batch, num_heads, L, S)`` (before attention dropout);
        ``U``: concatenated heads ``(batch, L, E)``; ``O``: after ``out_proj`` (equal to U without it).

        Raises
        ------
        NotReadyError if no forward has been cached (never run, or run inside ``no_cache()``).
        """
        if self._cache is None:
            raise NotReadyError("MultiheadAttention.intermediates() called before forward() (or inside no_cache())")
        c = self._cache
        S = (c["q"] * c["scale"]) @ c["k"].swapaxes(-1, -2)
        if c["bias"] is not None:
            S += c["bias"]
        if c["allowed"] is not None:
            np.copyto(S, -np.inf, where=~c["allowed"])
        out = {name: c[key].copy() for name, key in (("Q", "q"), ("K", "k"), ("V", "v"), ("A", "A"), ("U", "U"))}
        out["S"] = S
        out["O"] = np.array(c["O"], copy=True)
        return out

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, "
                f"out_proj={self.out_proj is not None}, rotary={self.rotary is not None}")
