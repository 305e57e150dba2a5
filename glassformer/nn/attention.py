"""Multi-head attention (Vaswani et al., 2017, eqs. 4-5) with PyTorch's parameters and masks.

``MultiheadAttention.forward`` reads as the equations: project the inputs, split the heads, let
the per-head hook act (RoPE), attend (the kernel
:func:`glassformer.nn.functional.scaled_dot_product_attention`), merge the heads, ``out_proj``.
``backward`` mirrors it step by step.  Masks follow ``torch.nn.MultiheadAttention``
(:mod:`glassformer.nn.masks`); a fully masked query row gets zero weights, an attention output of 0
(so the layer output is ``out_proj.bias``) and zero gradients -- never NaN.

Three hooks reuse this one implementation instead of copying it:

* ``head_hook``: an object with ``forward(q, k, positions) -> (q, k)`` and
  ``backward(dq, dk, positions) -> (dq, dk)`` applied to the per-head queries and keys (as
  equinox's ``process_heads``); :class:`~glassformer.nn.RotaryEmbedding` is one.
* :meth:`MultiheadAttention.override_weights`: attention weights given by the caller instead of
  the softmax (the chapter's ablation with uniform or identity weights).
* ``cache``: an :class:`~glassformer.nn.kv_cache.AttentionCache` of the keys and values of
  earlier positions (incremental decoding).

Long sequences: by default (``query_block="auto"``), when the ``(batch, heads, L, S)`` weights of a
call would exceed ``weights_budget`` bytes (32 MiB), or with ``query_block`` set to a number,
attention runs by blocks of queries
(:mod:`glassformer.nn.attention_blocks`) and keeps no ``(L, S)`` weights for backward,
which forms them again block by block; :meth:`MultiheadAttention.intermediates` (and so ``trace``)
forms them from the cached queries and keys, so every weight is still there to inspect.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from .._validation import as_float_array, as_input, check_positive_int, check_probability
from ..errors import InputError, NotReadyError, ShapeError
from .attention_blocks import WEIGHTS_BUDGET, choose_query_block, head_mean_weights
from .tiers import active_kernels
from .tiers import ops as F
from .heads import empty_heads, project_heads, project_heads_backward, split_heads
from .linear import Linear
from .masks import merge_masks
from .module import Module, Parameter, make_rng

__all__ = ["MultiheadAttention"]

_WHERE = "MultiheadAttention.forward"
_NAMES = ("query", "key", "value")
_SHARED = ((0, 1, 2),)          # the input groups of self-attention: query is key is value


def _check_hook(hook, head_dim: int):
    if hook is None:
        return None
    if not (callable(getattr(hook, "forward", None)) and callable(getattr(hook, "backward", None))):
        raise InputError(f"MultiheadAttention: head_hook must have forward(q, k, positions) and "
                         f"backward(dq, dk, positions), got {type(hook).__name__}")
    if getattr(hook, "head_dim", head_dim) != head_dim:
        raise InputError(f"MultiheadAttention: head_hook.head_dim ({hook.head_dim}) != embed_dim/num_heads "
                         f"({head_dim})")
    return hook


class MultiheadAttention(Module):
    """Multi-head attention with PyTorch's parameters, masks and return values.

    ``head_h = softmax(Q_h K_h^T / sqrt(head_dim) + masks) V_h`` with
    ``[Q | K | V] = [query | key | value] W_in^T + b_in`` split into ``num_heads`` heads of
    ``head_dim = embed_dim / num_heads`` features, ``U = concat_h(head_h)`` and output
    ``O = U W_out^T + b_out`` (Vaswani et al. 2017, eqs. 4-5; the chapter's Q, K, V, S, A, U).

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
        Keyword-only.  False drops the output projection (the chapter's attention: U goes straight
        to the residual); ``state_dict`` then holds only ``in_proj_*``.
    head_hook : object, optional
        Applied to the per-head queries and keys (see the module docstring), e.g.
        :class:`~glassformer.nn.RotaryEmbedding` (RoPE).
    query_block : "auto", int or None, default "auto"
        Keyword-only.  Attend by blocks of this many queries and keep no weights for backward (the
        memory of a long sequence, see the module docstring); used when there are more queries, no
        attention dropout in training and no cache.  ``"auto"``: blocks only when the weights of the
        call would exceed ``weights_budget``, of the size
        :func:`~glassformer.nn.attention_blocks.choose_query_block` picks; None: never.  Settable
        attribute.
    weights_budget : int, default 32 MiB
        Keyword-only.  Bytes the ``(batch, num_heads, L, S)`` weights of one call may take before
        ``query_block="auto"`` blocks (:data:`~glassformer.nn.attention_blocks.WEIGHTS_BUDGET`).
        Settable attribute.
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
    added.  Integer masks are refused (ambiguous).  ``is_causal=True`` builds the causal mask
    (combined with any other mask).  NOTE: ``F.scaled_dot_product_attention`` and Hugging Face use
    the opposite boolean polarity.

    Shapes
    ------
    query ``(batch, L, E)``, key/value ``(batch, S, E)``; unbatched ``(L, E)``/``(S, E)`` give unbatched
    outputs.  Returns ``(output (batch, L, E), weights)`` with weights ``(batch, L, S)`` averaged over
    heads, ``(batch, num_heads, L, S)`` when ``average_attn_weights=False``, or None when
    ``need_weights=False``; in training mode with ``dropout > 0`` they are the dropped-out weights
    actually applied to V, as PyTorch returns them.

    ``backward(grad_output)`` always returns ``(d_query, d_key, d_value)``, as PyTorch's autograd
    sees three inputs.  When one array was passed for several of them, its gradient is the sum of
    their entries -- ``d_query + d_key + d_value`` for self-attention, ``d_key + d_value`` for a
    memory used as key and value -- which the caller forms.  (A shared input is projected by one
    fused matrix product; the transformer layers take its gradient from one fused product too,
    through an internal method, so they sum nothing.)
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True, *,
                 out_proj: bool = True, head_hook=None, query_block: int | str | None = "auto",
                 weights_budget: int = WEIGHTS_BUDGET, rng=None, dtype=np.float64):
        super().__init__()
        E = check_positive_int(embed_dim, "embed_dim", "MultiheadAttention")
        H = check_positive_int(num_heads, "num_heads", "MultiheadAttention")
        if E % H:
            raise InputError(f"MultiheadAttention: embed_dim ({E}) must be divisible by num_heads ({H})")
        self.embed_dim, self.num_heads, self.head_dim = E, H, E // H
        self.scale = 1.0 / math.sqrt(self.head_dim)        # a Python float: float32 stays float32
        self.dropout = check_probability(dropout, "dropout", "MultiheadAttention")
        self.head_hook = _check_hook(head_hook, self.head_dim)
        self.query_block = query_block if query_block is None or query_block == "auto" else \
            check_positive_int(query_block, "query_block", "MultiheadAttention")
        self.weights_budget = check_positive_int(weights_budget, "weights_budget", "MultiheadAttention")
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
        self._weights = None                     # set by override_weights()

    # ----------------------------------------------------------------- forward
    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False, positions=None, cache=None):
        """Attend from ``query`` to ``key``/``value``; see the class docstring for shapes and masks.

        ``positions`` (used by ``head_hook`` only): real positions ``(L,)`` or ``(batch, L)`` of the
        queries and keys (self-attention), or a pair ``(query_positions, key_positions)``; default
        ``0, 1, ...`` after the cached positions.  ``cache``: an
        :class:`~glassformer.nn.kv_cache.AttentionCache` (inference only: no backward).
        """
        x, groups, unbatched = self._inputs(query, key, value)                # (B, T, E) each, checked
        q, k, v = self._project(x, groups, cache)                             # project, split heads: (B, H, T, hd)
        t0 = 0 if cache is None else cache.offset                             # positions already cached
        pos = None
        if self.head_hook is not None:
            pos = self._hook_positions(positions, q, k, t0, cache)
            q, k = self.head_hook.forward(q, k, pos)                          # per-head hook, e.g. RoPE
        if self._probe is not None:
            q, k, v = self._tap("Q", q), self._tap("K", k), self._tap("V", v)  # a probe sees (or perturbs) them
        if cache is not None:
            k, v = cache.update(k, v)                                         # (B, H, S, hd): every key so far
        members = self.in_proj_weight.data.ndim == 3
        allowed, bias, keep, weights, record = self._kernel_arguments(
            q.shape[:-1] + (k.shape[-2],), q.dtype, attn_mask, key_padding_mask, is_causal, unbatched, t0, members)
        U = np.empty(q.shape[:-3] + (q.shape[-2], self.embed_dim), dtype=q.dtype)    # (B, L, E)
        heads = split_heads(U, self.num_heads)                              # (B, H, L, hd) view: no copy to merge
        block = self._block(q.shape[:-1] + (k.shape[-2],), q.dtype.itemsize)
        blocked = (block is not None and q.shape[-2] > block and keep is None
                   and weights is None and record is None and cache is None)
        if blocked:                                                           # long sequence: keep no weights
            A = None
            F.attention_blocks(q, k, v, allowed, bias, self.scale, block=block, members=members, out=heads)
        else:
            _, A = F.scaled_dot_product_attention(q, k, v, allowed, bias, self.scale, keep, weights, record,
                                                  members=members, out=heads,
                                                  need_weights=need_weights or self._keep_cache)
        out = self.out_proj(U) if self.out_proj is not None else U            # (B, L, E)
        if cache is not None:                                                 # inference with a cache: no backward
            object.__setattr__(self, "_cache", None)
        else:
            self._save(groups=groups, x=x, q=q, k=k, v=v, A=A, keep=keep, fixed=weights is not None, U=U, O=out,
                       positions=pos, unbatched=unbatched, S=None if record is None else record["S"],
                       allowed=allowed, bias=bias, blocked=blocked, block=block, members=members)
        if need_weights and A is None and average_attn_weights and active_kernels() == "fast":   # the head mean by blocks too
            returned = head_mean_weights(q, k, allowed, bias, self.scale, block=block, members=members)
            return (out[0] if unbatched else out), (returned[0] if unbatched else returned)
        if need_weights and A is None:
            A = F.attention_weights(q, k, allowed, bias, self.scale, members=members)
        returned = self._returned_weights(A, keep, average_attn_weights, unbatched) if need_weights else None
        return (out[0] if unbatched else out), returned

    def _block(self, weights_shape, itemsize):
        """Queries per block for this call (None: all at once), from ``query_block`` and the budget."""
        if self.query_block != "auto":
            return self.query_block
        return choose_query_block(weights_shape, itemsize, self.weights_budget)

    def _kernel_arguments(self, shape, dtype, attn_mask, key_padding_mask, is_causal, unbatched, offset,
                          members) -> tuple:
        """The kernel's masks ``allowed`` and ``bias``, dropout multiplier, overriding weights and record."""
        allowed = bias = keep = weights = None
        if members and (attn_mask is not None or key_padding_mask is not None or is_causal or self._weights is not None
                        or (self.training and self.dropout > 0.0)):
            raise InputError(f"{_WHERE}: members trained side by side take no masks, no given weights and no "
                             "attention dropout")
        if attn_mask is not None or key_padding_mask is not None or is_causal:
            if unbatched and key_padding_mask is not None:
                key_padding_mask = np.asarray(key_padding_mask)[None]
            allowed, bias = merge_masks(attn_mask, key_padding_mask, is_causal, shape, dtype, offset=offset)
        if self.training and self.dropout > 0.0:
            keep = F.dropout_scale(shape, self.dropout, self.rng, dtype)
        if self._weights is not None:
            weights = self._broadcast_weights(shape)
        return allowed, bias, keep, weights, ({} if self._tracing else None)

    def _inputs(self, query, key, value):
        """Checked ``[query, key, value]`` as ``(B, T, E)`` arrays, the groups of shared inputs, ``unbatched``."""
        E, W = self.embed_dim, self.in_proj_weight.data
        raw = (query, key, value)
        # Inputs that are the same object share one (fused) projection.
        if query is key and key is value:
            groups = _SHARED
        else:
            groups = ((0,), (1, 2)) if key is value else ((0,), (1,), (2,))
        x = [None, None, None]
        for g in groups:
            a = as_input(raw[g[0]], _NAMES[g[0]], _WHERE, W.dtype, self.check_inputs)
            for i in g:
                x[i] = a
        members = W.ndim == 3                                         # (K, batch, L, E): K members side by side
        unbatched = x[0].ndim == 2 and not members
        ndim = 2 if unbatched else 4 if members else 3
        for name, a in zip(_NAMES, x) if groups is not _SHARED else ((_NAMES[0], x[0]),):
            if a.ndim != ndim or a.shape[-1] != E:
                want = "(L, E)" if unbatched else "(members, batch, L, E)" if members else "(batch, L, E)"
                raise ShapeError(f"{_WHERE}: {name} must have shape {want} with E={E}, got {a.shape}")
        if groups is _SHARED and not unbatched:
            return x, groups, unbatched                               # one array: the checks below hold
        if unbatched:
            x = [a[None] for a in x]
        if x[1].shape != x[2].shape:
            raise ShapeError(f"{_WHERE}: key and value must have the same shape (batch, S, E), "
                             f"got key {x[1].shape} and value {x[2].shape}")
        if x[1].shape[:-2] != x[0].shape[:-2]:
            raise ShapeError(f"{_WHERE}: query and key/value have different batch sizes ({x[0].shape[0]} vs "
                             f"{x[1].shape[0]}): query {x[0].shape}, key/value {x[1].shape}")
        return x, groups, unbatched

    def _project(self, x, groups, cache) -> list:
        """``[Q, K, V]`` per head, one fused projection per group; a filled static cache keeps its K, V."""
        E, b = self.embed_dim, self.in_proj_bias
        skip_kv = cache is not None and cache.holds_memory
        parts = [None, None, None]
        for g in groups:
            if skip_kv and g[0] > 0:
                continue
            rows = slice(g[0] * E, (g[-1] + 1) * E)
            heads = project_heads(x[g[0]], self.in_proj_weight.data[..., rows, :],
                                    None if b is None else b.data[..., rows], self.num_heads, len(g))  # (n, B, H, T, hd)
            for j, i in enumerate(g):
                parts[i] = heads[j]
        return parts

    def _hook_positions(self, positions, q, k, t0, cache):
        """``(query_positions, key_positions)`` for the head hook (None: the hook's default)."""
        if cache is not None and cache.static:
            raise InputError(f"{_WHERE}: a static (cross-attention) cache cannot be used with a head_hook")
        L, S = q.shape[2], k.shape[2]
        if isinstance(positions, tuple):
            if len(positions) != 2:
                raise InputError(f"{_WHERE}: positions tuple must be (query_positions, key_positions)")
            return positions
        if positions is not None and L != S:
            raise InputError(f"{_WHERE}: positions of shape (L,) apply to queries and keys, but L={L} != S={S}; "
                             "pass (query_positions, key_positions)")
        if positions is None and t0:
            positions = np.arange(t0, t0 + L, dtype=np.float64)              # after the cached positions
        return positions, positions

    def _broadcast_weights(self, shape):
        A = self._weights
        try:
            return np.broadcast_to(A, shape)
        except ValueError:
            raise ShapeError(f"MultiheadAttention.override_weights: weights of shape {A.shape} do not broadcast "
                             f"to (batch, num_heads, L, S) = {shape}") from None

    @staticmethod
    def _returned_weights(A, keep, average, unbatched):
        used = A if keep is None else A * keep
        # a copy when per head: the cached weights must not be changed by the caller
        weights = used.mean(axis=-3) if average else used.copy()
        return weights[0] if unbatched else weights

    # ----------------------------------------------------------------- backward
    def backward(self, grad_output):
        """Return ``(d_query, d_key, d_value)``; adds every parameter gradient.

        Always three arrays; for an input passed more than once (self-attention: query is key is
        value) the gradient of that array is the sum of its entries, formed by the caller.

        A probe (:meth:`~glassformer.nn.Module.probing`) sees dL/dQ, dL/dK, dL/dV (per head, after the
        head hook: the arrays of :meth:`intermediates`), and dL/dA, dL/dS unless the weights were
        given (:meth:`override_weights`) or formed by blocks.

        Gradients w.r.t. the returned attention weights are not supported (they are an output for
        inspection).
        """
        return self._backward(grad_output, per_input=True)

    def _backward_grouped(self, grad_output):
        """One gradient per *distinct* input, in the order query, key, value: ``(d_x,)`` when query is
        key is value, ``(d_query, d_memory)`` when key is value.  A shared input's gradient comes from
        one fused product (the self- and cross-attention of the transformer layers use this)."""
        return self._backward(grad_output, per_input=False)

    def _backward(self, grad_output, per_input: bool):
        c = self._saved()
        dO = np.asarray(grad_output)
        if c["unbatched"]:
            dO = dO[None]
        dU = self.out_proj.backward(dO) if self.out_proj is not None else dO      # (B, L, E)
        d_heads = split_heads(dU, self.num_heads)                                # (B, H, L, hd)
        buffers, d = self._gradient_buffers(c["groups"], c["x"])                   # dq, dk, dv in projection layout
        if c["blocked"]:
            grads = F.attention_blocks_backward(d_heads, c["q"], c["k"], c["v"], split_heads(c["U"], self.num_heads),
                                                c["allowed"], c["bias"], self.scale, block=c["block"],
                                              members=c["members"], out=d)
        else:
            record = None if self._probe is None else {}                      # dL/dA and dL/dS for a probe
            grads = F.scaled_dot_product_attention_backward(d_heads, c["q"], c["k"], c["v"], c["A"], self.scale,
                                                            c["keep"], c["fixed"], out=d, record=record)
            for sym in ("A", "S"):
                if record:
                    self._tap_grad(sym, record["d" + sym])
        if self._probe is not None:
            for sym, grad in zip("QKV", grads):
                self._tap_grad(sym, grad)
        if self.head_hook is not None:
            grads = (*self.head_hook.backward(grads[0], grads[1], c["positions"]), grads[2])
        for buf, grad in zip(d, grads):
            if grad is not buf:               # a hook (or kernel) that returned new arrays
                buf[...] = grad
        out, E, b = [], self.embed_dim, self.in_proj_bias
        for g, buf in zip(c["groups"], buffers):
            # per input: one product per part of a shared input (its own gradient); else one for the group
            parts = [(buf[j:j + 1], (i,)) for j, i in enumerate(g)] if per_input else [(buf, g)]
            for d_part, part in parts:
                rows = slice(part[0] * E, (part[-1] + 1) * E)
                dx, dW, db = project_heads_backward(d_part, c["x"][g[0]], self.in_proj_weight.data[..., rows, :],
                                                      b is not None)
                self.in_proj_weight.grad[..., rows, :] += dW
                if b is not None:
                    b.grad[..., rows] += db
                out.append(dx[0] if c["unbatched"] else dx)
        return tuple(out)

    def _gradient_buffers(self, groups, x):
        """One :func:`~glassformer.nn.heads.empty_heads` array per input group, and the
        ``(dq, dk, dv)`` views of them the attention backward writes into."""
        buffers, d = [], [None, None, None]
        for g in groups:
            buf = empty_heads(x[g[0]].shape, len(g), self.num_heads, self.head_dim, x[g[0]].dtype)
            buffers.append(buf)
            for j, i in enumerate(g):
                d[i] = buf[j]
        return buffers, tuple(d)

    # ----------------------------------------------------------------- hooks and inspection
    @contextmanager
    def override_weights(self, weights):
        """Context manager: forward passes inside use ``weights`` instead of ``softmax(S)``.

        ``weights`` broadcastable to ``(batch, num_heads, L, S)`` -- e.g. ``np.full((L, L), 1 / L)``
        (uniform) or ``np.eye(L)`` (identity); masks do not apply to them.  Then ``U = A V`` per head
        and the rest of the layer as usual; ``backward`` gives zero gradients to queries and keys.
        """
        A = as_float_array(weights, "weights", "MultiheadAttention.override_weights", dtype=self.in_proj_weight.dtype)
        before = self._weights
        self._weights = A
        try:
            yield self
        finally:
            self._weights = before

    def intermediates(self) -> dict:
        """Copies of what the last forward computed, with the chapter's symbols (always batched).

        ``Q``, ``K``, ``V``: per-head projections ``(batch, num_heads, seq, head_dim)`` (after the head
        hook); ``S``: scaled, masked scores ``(batch, num_heads, L, S)`` with blocked entries ``-inf``,
        present when the forward ran inside :meth:`~glassformer.nn.Module.tracing` (and the weights
        were not overridden); ``A``: attention weights ``(batch, num_heads, L, S)`` (before attention
        dropout); ``U``: concatenated heads ``(batch, L, E)``; ``O``: after ``out_proj`` (U without it).

        Raises
        ------
        NotReadyError if no forward has been cached (never run, run inside ``no_cache()`` or with a cache).
        """
        if self._cache is None:
            raise NotReadyError("MultiheadAttention.intermediates() called before forward() (or inside no_cache())")
        c = dict(self._cache)
        if c["A"] is None:                        # attention by blocks kept no weights: form them again
            c["A"] = F.attention_weights(c["q"], c["k"], c["allowed"], c["bias"], self.scale, members=c["members"])
        names = {"Q": "q", "K": "k", "V": "v", "S": "S", "A": "A", "U": "U", "O": "O"}
        return {sym: np.array(c[key], copy=True) for sym, key in names.items() if c.get(key) is not None}

    def extra_repr(self) -> str:
        hook = None if self.head_hook is None else type(self.head_hook).__name__
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, "
                f"out_proj={self.out_proj is not None}, head_hook={hook}"
                + ("" if self.query_block == "auto" else f", query_block={self.query_block}"))
