"""Transformer encoder and decoder blocks and stacks, with ``torch.nn.Transformer*`` parameters.

Post-norm (``norm_first=False``, the chapter's and PyTorch's default), encoder block:

    U  = Attention(Z)            T1 = Z + U        R = LayerNorm1(T1)
    G  = act(R W1^T + b1)        F  = G W2^T + b2  T2 = R + F           H = LayerNorm2(T2)

Pre-norm (``norm_first=True``, Xiong et al. 2020):

    U  = Attention(LayerNorm1(Z))   T1 = Z + U     R = LayerNorm2(T1)
    G  = act(R W1^T + b1)           F  = G W2^T + b2                    T2 = T1 + F    H = T2

A block is built from modules -- :class:`MultiheadAttention`, :class:`FeedForward` (an inline
child, so the names stay PyTorch's ``linear1.*``/``linear2.*``) and ``LayerNorm`` -- joined by one
residual helper, :func:`residual`, for both norm placements.  Dropout (in training mode) acts on the
attention weights, on U before the residual (``dropout1``), on G (``dropout``) and on F before the
residual (``dropout2``), exactly where PyTorch puts it.
"""

from __future__ import annotations

import copy

import numpy as np

from .._validation import as_input, check_positive_int, check_probability
from ..errors import InputError
from .attention import MultiheadAttention
from .dropout import Dropout
from .feedforward import FeedForward
from .fourier import FourierMixing
from .module import Module, ModuleList, make_rng
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder", "TransformerDecoder",
           "residual", "residual_backward"]


def _untapped(role, value):
    return value


def residual(x, sublayer, norm, dropout, norm_first: bool, tap=_untapped):
    """One sub-layer with its residual connection and LayerNorm (Vaswani et al. 2017, sec. 5.4).

    Post-norm: ``out = norm(x + dropout(sublayer(x)))``; pre-norm: ``out = x + dropout(sublayer(norm(x)))``.
    Returns ``(out, u, t, sub_in)``: the sub-layer's output ``u``, the sum ``t = x + dropout(u)``
    and the sub-layer's input ``sub_in``.  ``tap(role, value)`` returns each intermediate as it is
    computed -- roles ``"in"`` (pre-norm ``norm(x)``), ``"u"``, ``"t"`` and ``"out"`` (post-norm
    ``norm(t)``) -- so that a probe sees (or perturbs) it; by default it returns the value.
    """
    sub_in = tap("in", norm(x)) if norm_first else x
    u = tap("u", sublayer(sub_in))
    t = tap("t", x + dropout(u))
    return (t if norm_first else tap("out", norm(t))), u, t, sub_in


def residual_backward(d_out, sublayer_backward, norm, dropout, norm_first: bool, tap=_untapped):
    """dL/dx of :func:`residual` from dL/d(out): the skip path plus the path through the sub-layer.

    ``tap(role, grad)`` sees dL/d(intermediate) for the roles of :func:`residual` where it is computed.
    """
    if norm_first:                                 # out = x + dropout(sublayer(norm(x)))
        dt = tap("t", d_out)                       # out is t
        return dt + norm.backward(tap("in", sublayer_backward(tap("u", dropout.backward(dt)))))
    dt = tap("t", norm.backward(tap("out", d_out)))  # out = norm(t), t = x + dropout(sublayer(x))
    return dt + sublayer_backward(tap("u", dropout.backward(dt)))


def _ffn_and_norms(layer, d_model, dim_feedforward, p, activation, eps, bias, norms, gen, dtype):
    """The feed-forward network (inline: names ``linear1.*``, ``dropout``, ``linear2.*``), norms, dropouts."""
    layer.ffn = FeedForward(d_model, dim_feedforward, p, activation, bias, rng=gen, dtype=dtype)
    layer.inline("ffn")
    for i in range(1, norms + 1):
        setattr(layer, f"norm{i}", LayerNorm(d_model, eps, dtype=dtype))
    for i in range(1, norms + 1):
        setattr(layer, f"dropout{i}", Dropout(p, rng=gen))


class TransformerEncoderLayer(Module):
    """Self-attention (or Fourier mixing) and a feed-forward network, each with residual and LayerNorm.

    Parameters
    ----------
    d_model : int
    nhead : int
        Number of attention heads (PyTorch's name).
    dim_feedforward : int, default 2048
        ``d_ff``.
    dropout : float, default 0.1
        Used by attention weights, ``dropout``, ``dropout1`` and ``dropout2`` (training mode only).
    activation : {"relu", "gelu", "gelu_tanh", "tanh"}
    layer_norm_eps : float, default 1e-5
    norm_first : bool, default False
        Post-norm (False, the chapter's) or pre-norm (True); see the module docstring.
    bias : bool, default True
    mixer : {"attention", "fourier"}, keyword-only
        ``"fourier"`` replaces self-attention by FNet's parameter-free 2-D Fourier mixing (child
        ``mixer``; no ``self_attn`` parameters, no masks).
    attn_out_proj : bool, default True
        False removes attention's output projection (the chapter's block).
    head_hook : object, optional
        Per-head hook of self-attention (e.g. :class:`~glassformer.nn.RotaryEmbedding`).
    query_block : "auto", int or None, default "auto"
        Attention by blocks of this many queries, keeping no weights for backward (long sequences;
        see :class:`MultiheadAttention`); ``"auto"`` blocks only when the weights of one call would
        exceed the attention's ``weights_budget`` (32 MiB), None never.
    rng : int or numpy.random.Generator, optional
    dtype : float64 (default) or float32

    Attributes
    ----------
    self_attn, ffn (with linear1, dropout, linear2), norm1, norm2, dropout1, dropout2: ``state_dict``
    keys equal those of ``torch.nn.TransformerEncoderLayer``.

    Shapes
    ------
    ``forward(src (batch, seq, d_model), src_mask, src_key_padding_mask, is_causal, positions, cache)``
    -> ``(batch, seq, d_model)``; ``backward(grad) -> dsrc``.  Masks as :class:`MultiheadAttention`;
    ``cache`` an :class:`~glassformer.nn.kv_cache.AttentionCache` (incremental decoding, inference only).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str = "relu", layer_norm_eps: float = 1e-5, norm_first: bool = False,
                 bias: bool = True, *, mixer: str = "attention", attn_out_proj: bool = True, head_hook=None,
                 query_block: int | str | None = "auto", rng=None, dtype=np.float64):
        super().__init__()
        check_positive_int(d_model, "d_model", "TransformerEncoderLayer")
        check_positive_int(dim_feedforward, "dim_feedforward", "TransformerEncoderLayer")
        p = check_probability(dropout, "dropout", "TransformerEncoderLayer")
        if mixer not in ("attention", "fourier"):
            raise InputError(f"TransformerEncoderLayer: mixer must be 'attention' or 'fourier', got {mixer!r}")
        gen = make_rng(rng)
        self.mixer_kind = mixer
        if mixer == "attention":
            self.self_attn = MultiheadAttention(d_model, nhead, p, bias, out_proj=attn_out_proj, head_hook=head_hook,
                                                query_block=query_block, rng=gen, dtype=dtype)
        else:
            self.mixer = FourierMixing("2d")
        self.norm_first = bool(norm_first)
        _ffn_and_norms(self, d_model, dim_feedforward, p, activation, layer_norm_eps, bias, 2, gen, dtype)

    def _mixer(self, src_mask, src_key_padding_mask, is_causal, positions, cache):
        """The token-mixing sub-layer as a function of its input."""
        if self.mixer_kind == "fourier":
            if src_mask is not None or src_key_padding_mask is not None or is_causal or cache is not None:
                raise InputError(
                    "TransformerEncoderLayer: mixer='fourier' supports no masks and no cache (FourierMixing has no "
                    "padding mask and is not causal); pass src_mask=None, src_key_padding_mask=None, is_causal=False"
                )
            return self.mixer
        attn = self.self_attn
        return lambda x: attn(x, x, x, key_padding_mask=src_key_padding_mask, need_weights=False, attn_mask=src_mask,
                              is_causal=is_causal, positions=positions, cache=cache)[0]

    def _mixer_backward(self, dU):
        if self.mixer_kind == "fourier":
            return self.mixer.backward(dU)
        return self.self_attn._backward_grouped(dU)[0]      # query is key is value: one fused gradient

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False, positions=None,
                cache=None):
        """Encode ``src (batch, seq, d_model)`` (or ``(seq, d_model)``); returns the same shape."""
        Z = as_input(src, "src", "TransformerEncoderLayer.forward", self.dtype, self.check_inputs)
        mix = self._mixer(src_mask, src_key_padding_mask, is_causal, positions, cache)
        taps = self._taps(self._tap)
        out1, U, T1, _ = residual(Z, mix, self.norm1, self.dropout1, self.norm_first, taps[0])
        H, F, T2, R = residual(out1, self.ffn, self.norm2, self.dropout2, self.norm_first, taps[1])
        H = self._tap("H", H)
        self._save(U=U, T1=T1, R=R, F=F, T2=T2, H=H)
        return H

    def backward(self, grad_output):
        """Return dL/dsrc; adds every parameter gradient.

        A probe (:meth:`~glassformer.nn.Module.probing`) sees dL/dH, dL/dT2, dL/dF, dL/dR, dL/dT1 and
        dL/dU here (symbols of :meth:`intermediates`), dL/dG from the feed-forward network and dL/dQ,
        dL/dK, dL/dV, dL/dA, dL/dS from self-attention.
        """
        self._saved()
        taps = self._taps(self._tap_grad)
        dH = self._tap_grad("H", np.asarray(grad_output))
        dX = residual_backward(dH, self.ffn.backward, self.norm2, self.dropout2, self.norm_first, taps[1])
        return residual_backward(dX, self._mixer_backward, self.norm1, self.dropout1, self.norm_first, taps[0])

    def _taps(self, show):
        """The ``tap`` arguments of the two :func:`residual` calls: each role under its chapter symbol."""
        if self._probe is None:
            return _untapped, _untapped
        # post-norm: the first sub-layer's output norm1(T1) is R; pre-norm: R = norm2(T1) is the FFN's input
        names = ({"u": "U", "t": "T1"} if self.norm_first else {"u": "U", "t": "T1", "out": "R"},
                 {"u": "F", "t": "T2", "in": "R"} if self.norm_first else {"u": "F", "t": "T2"})
        return tuple((lambda role, a, n=n: show(n[role], a) if role in n else a) for n in names)

    def intermediates(self) -> dict:
        """Copies of the block's tensors with the chapter's symbols (see the module docstring).

        Keys: ``Q, K, V, S, A`` (per head, from self-attention; absent with Fourier mixing; ``S`` only
        after a forward inside ``tracing()``), ``U`` (the mixer's output after ``out_proj``, before
        ``dropout1``), ``T1``, ``R`` (input of the FFN), ``G`` (post-activation hidden), ``F`` (FFN output
        before ``dropout2``), ``T2``, ``H`` (output).  In pre-norm, ``U`` is computed from ``norm1(Z)``,
        ``T1 = Z + U``, ``R = norm2(T1)``, ``T2 = T1 + F`` and ``H = T2``.

        Raises
        ------
        NotReadyError before a cached forward.
        """
        c = self._saved()
        out = {}
        if self.mixer_kind == "attention":
            att = self.self_attn.intermediates()
            out.update({k: att[k] for k in ("Q", "K", "V", "S", "A") if k in att})
        arrays = dict(c, G=self.ffn.hidden())
        out.update({k: np.array(arrays[k], copy=True) for k in ("U", "T1", "R", "G", "F", "T2", "H")})
        return out

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}, activation={self.ffn.activation_name!r}, mixer={self.mixer_kind!r}"


class TransformerDecoderLayer(Module):
    """Masked self-attention, cross-attention to ``memory`` and a feed-forward network.

    Post-norm: ``x = norm1(x + SA(x))``; ``x = norm2(x + CA(x, memory))``; ``x = norm3(x + FFN(x))``.
    Pre-norm: ``x = x + SA(norm1(x))``; ``x = x + CA(norm2(x), memory)``; ``x = x + FFN(norm3(x))``.
    Parameters and names as ``torch.nn.TransformerDecoderLayer`` (``self_attn``, ``multihead_attn``,
    ``linear1``, ``linear2``, ``norm1..3``); arguments as :class:`TransformerEncoderLayer` (its
    ``head_hook`` acts in the self-attention).

    Shapes
    ------
    ``forward(tgt (batch, T, d_model), memory (batch, S, d_model), tgt_mask (T, T), memory_mask (T, S),
    tgt_key_padding_mask (batch, T), memory_key_padding_mask (batch, S), tgt_is_causal,
    memory_is_causal, cache) -> (batch, T, d_model)``; ``backward(grad) -> (dtgt, dmemory)``.
    ``tgt_is_causal=True`` builds the causal mask itself.  ``cache``: a pair of
    :class:`~glassformer.nn.kv_cache.AttentionCache` ``(self-attention cache, static cross-attention cache)``.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str = "relu", layer_norm_eps: float = 1e-5, norm_first: bool = False,
                 bias: bool = True, *, head_hook=None, rng=None, dtype=np.float64):
        super().__init__()
        check_positive_int(d_model, "d_model", "TransformerDecoderLayer")
        check_positive_int(dim_feedforward, "dim_feedforward", "TransformerDecoderLayer")
        p = check_probability(dropout, "dropout", "TransformerDecoderLayer")
        gen = make_rng(rng)
        self.self_attn = MultiheadAttention(d_model, nhead, p, bias, head_hook=head_hook, rng=gen, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, p, bias, rng=gen, dtype=dtype)
        self.norm_first = bool(norm_first)
        _ffn_and_norms(self, d_model, dim_feedforward, p, activation, layer_norm_eps, bias, 3, gen, dtype)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False,
                cache=None):
        """Decode ``tgt`` attending to ``memory``; returns ``(batch, T, d_model)``."""
        dt, where = self.dtype, "TransformerDecoderLayer.forward"
        tgt = as_input(tgt, "tgt", where, dt, self.check_inputs)
        memory = as_input(memory, "memory", where, dt, self.check_inputs)
        self_cache, cross_cache = (None, None) if cache is None else cache
        sa, ca, nf = self.self_attn, self.multihead_attn, self.norm_first

        def self_attention(x):
            return sa(x, x, x, key_padding_mask=tgt_key_padding_mask, need_weights=False, attn_mask=tgt_mask,
                      is_causal=tgt_is_causal, cache=self_cache)[0]

        def cross_attention(x):
            return ca(x, memory, memory, key_padding_mask=memory_key_padding_mask, need_weights=False,
                      attn_mask=memory_mask, is_causal=memory_is_causal, cache=cross_cache)[0]

        R1, U1, T1, _ = residual(tgt, self_attention, self.norm1, self.dropout1, nf)
        out2, U2, T2, _ = residual(R1, cross_attention, self.norm2, self.dropout2, nf)
        H, F, T3, R2 = residual(out2, self.ffn, self.norm3, self.dropout3, nf)
        self._save(U1=U1, T1=T1, R1=R1, U2=U2, T2=T2, R2=R2, F=F, T3=T3, H=H)
        return H

    def backward(self, grad_output):
        """Return ``(dtgt, dmemory)``; adds every parameter gradient."""
        self._saved()
        d_memory = []

        def cross_attention_backward(d):
            d_query, d_mem = self.multihead_attn._backward_grouped(d)      # key is value: (d_query, d_memory)
            d_memory.append(d_mem)
            return d_query

        nf = self.norm_first
        dx = residual_backward(np.asarray(grad_output), self.ffn.backward, self.norm3, self.dropout3, nf)
        dx = residual_backward(dx, cross_attention_backward, self.norm2, self.dropout2, nf)
        dx = residual_backward(dx, lambda d: self.self_attn._backward_grouped(d)[0], self.norm1, self.dropout1, nf)
        return dx, d_memory[0]

    def intermediates(self) -> dict:
        """Copies of the block's tensors.

        ``"self"`` and ``"cross"``: the attention intermediates (Q, K, V, S, A, U, O) of the masked
        self-attention and of the cross-attention; ``U1``/``U2`` their outputs (after out_proj);
        ``T1 = tgt + U1``, ``R1`` (post-norm: ``norm1(T1)``; pre-norm: ``T1``), ``T2 = R1 + U2``,
        ``R2`` (input of the FFN), ``G``, ``F``, ``T3 = R2 + F`` (pre-norm ``T2 + F``), ``H`` (output).
        """
        c = self._saved()
        out = {"self": self.self_attn.intermediates(), "cross": self.multihead_attn.intermediates()}
        arrays = dict(c, G=self.ffn.hidden())
        names = ("U1", "T1", "R1", "U2", "T2", "R2", "G", "F", "T3", "H")
        out.update({k: np.array(arrays[k], copy=True) for k in names})
        return out

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}, activation={self.ffn.activation_name!r}"


def _clone_layers(layer: Module, num_layers: int) -> ModuleList:
    """Deep copies of ``layer`` (as PyTorch's ``_get_clones``), each with its own dropout generators.

    A plain deep copy would duplicate the generators' states, so every layer would drop the same
    units; each copy instead gets a child generator spawned from the original (reproducible).
    """
    layers = ModuleList()
    for _ in range(num_layers):
        clone = copy.deepcopy(layer)
        fresh = {}
        for orig, new in zip(layer.modules(), clone.modules()):
            gen = getattr(orig, "rng", None)
            if isinstance(gen, np.random.Generator):
                if id(gen) not in fresh:
                    try:
                        fresh[id(gen)] = gen.spawn(1)[0]
                    except (AttributeError, TypeError, ValueError):  # numpy < 1.25 or no seed sequence
                        fresh[id(gen)] = np.random.default_rng(gen.integers(2**63))
                new.rng = fresh[id(gen)]
        layers.append(clone)
    return layers


def _per_layer(cache, stack, where: str) -> list:
    """The caches, checked: one per layer."""
    if len(cache) != stack.num_layers:
        raise InputError(f"{where}.forward: cache must hold one entry per layer ({stack.num_layers}), got {len(cache)}")
    return cache


class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer`` and an optional final norm.

    State-dict keys as PyTorch: ``layers.0.self_attn.in_proj_weight`` ... ``norm.weight``.
    ``forward(src, mask=None, src_key_padding_mask=None, is_causal=False, positions=None, cache=None)``
    passes the masks to every layer (``cache``: one ``AttentionCache`` per layer); ``backward(grad) -> dsrc``;
    ``intermediates()`` is a list, one dict per layer.
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: LayerNorm | None = None):
        super().__init__()
        check_positive_int(num_layers, "num_layers", "TransformerEncoder")
        self.layers = _clone_layers(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: bool = False, positions=None,
                cache=None):
        x = as_input(src, "src", "TransformerEncoder.forward", self.dtype, self.check_inputs)
        caches = [None] * self.num_layers if cache is None else _per_layer(cache, self, "TransformerEncoder")
        for layer, c in zip(self.layers, caches):
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal,
                      positions=positions, cache=c)
        if self.norm is not None:
            x = self.norm(x)
        self._save(done=True)
        return x

    def backward(self, grad_output):
        self._saved()
        g = self.norm.backward(grad_output) if self.norm is not None else grad_output
        for layer in reversed(list(self.layers)):
            g = layer.backward(g)
        return g

    def intermediates(self) -> list:
        """One :meth:`TransformerEncoderLayer.intermediates` dict per layer, in order."""
        self._saved()
        return [layer.intermediates() for layer in self.layers]


class TransformerDecoder(Module):
    """A stack of ``num_layers`` deep copies of ``decoder_layer`` and an optional final norm.

    ``forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
    tgt_is_causal, memory_is_causal, cache)``, ``cache`` one ``(self, cross)`` pair per layer;
    ``backward(grad) -> (dtgt, dmemory)`` with ``dmemory`` summed over the layers (every layer reads
    the same memory); ``intermediates()`` is a list per layer.
    """

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: LayerNorm | None = None):
        super().__init__()
        check_positive_int(num_layers, "num_layers", "TransformerDecoder")
        self.layers = _clone_layers(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False,
                cache=None):
        where = "TransformerDecoder.forward"
        x = as_input(tgt, "tgt", where, self.dtype, self.check_inputs)
        memory = as_input(memory, "memory", where, self.dtype, self.check_inputs)
        caches = [None] * self.num_layers if cache is None else _per_layer(cache, self, "TransformerDecoder")
        for layer, c in zip(self.layers, caches):
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal, cache=c)
        if self.norm is not None:
            x = self.norm(x)
        self._save(done=True)
        return x

    def backward(self, grad_output):
        self._saved()
        g = self.norm.backward(grad_output) if self.norm is not None else grad_output
        dmem = None
        for layer in reversed(list(self.layers)):
            g, dm = layer.backward(g)
            dmem = dm if dmem is None else dmem + dm
        return g, dmem

    def intermediates(self) -> list:
        """One :meth:`TransformerDecoderLayer.intermediates` dict per layer, in order."""
        self._saved()
        return [layer.intermediates() for layer in self.layers]
