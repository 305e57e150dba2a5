"""Transformer encoder and decoder blocks and stacks, with ``torch.nn.Transformer*`` parameters.

Post-norm (``norm_first=False``, the seed's and PyTorch's default), encoder block (seed 000):

    U  = Attention(Z)            T1 = Z + U        R = LayerNorm1(T1)
    G  = act(R W1^T + b1)        F  = G W2^T + b2  T2 = R + F           H = LayerNorm2(T2)

Pre-norm (``norm_first=True``, Xiong et al. 2020):

    U  = Attention(LayerNorm1(Z))   T1 = Z + U     R = LayerNorm2(T1)
    G  = act(R W1^T + b1)           F  = G W2^T + b2                    T2 = T1 + F    H = T2

Dropout (in training mode) acts on the attention weights, on U before the residual (``dropout1``),
on G (``dropout``) and on F before the residual (``dropout2``), exactly where PyTorch puts it.
"""

from __future__ import annotations

import copy

import numpy as np

from .._validation import as_input, check_positive_int, check_probability
from ..errors import InputError
from .activation import get_activation
from .attention import MultiheadAttention
from .dropout import Dropout
from .fourier import FourierMixing
from .linear import Linear
from .module import Module, ModuleList, make_rng
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder", "TransformerDecoder"]


def _ffn_forward(layer, x):
    """``F = linear2(dropout(act(linear1(x))))``; returns (G, F)."""
    g = layer.activation(layer.linear1(x))
    return g, layer.linear2(layer.dropout(g))


def _ffn_backward(layer, dF):
    return layer.linear1.backward(layer.activation.backward(layer.dropout.backward(layer.linear2.backward(dF))))


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
    activation : {"relu", "gelu", "gelu_tanh"}
    layer_norm_eps : float, default 1e-5
    norm_first : bool, default False
        Post-norm (False, the seed's) or pre-norm (True); see the module docstring.
    bias : bool, default True
    mixer : {"attention", "fourier"}, keyword-only
        ``"fourier"`` replaces self-attention by FNet's parameter-free 2-D Fourier mixing (child
        ``mixer``; no ``self_attn`` parameters, no masks).
    attn_out_proj : bool, default True
        False removes attention's output projection (the seed's block).
    rotary : RotaryEmbedding, optional
        RoPE inside self-attention.
    rng : int or numpy.random.Generator, optional
    dtype : float64 (default) or float32

    Attributes
    ----------
    self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2 : as PyTorch, so
    ``state_dict`` keys equal those of ``torch.nn.TransformerEncoderLayer``.

    Shapes
    ------
    ``forward(src (batch, seq, d_model), src_mask, src_key_padding_mask, is_causal, positions)``
    -> ``(batch, seq, d_model)``; ``backward(grad) -> dsrc``.  Masks as :class:`MultiheadAttention`.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str = "relu", layer_norm_eps: float = 1e-5, norm_first: bool = False,
                 bias: bool = True, *, mixer: str = "attention", attn_out_proj: bool = True, rotary=None,
                 rng=None, dtype=np.float64):
        super().__init__()
        check_positive_int(d_model, "d_model", "TransformerEncoderLayer")
        check_positive_int(dim_feedforward, "dim_feedforward", "TransformerEncoderLayer")
        p = check_probability(dropout, "dropout", "TransformerEncoderLayer")
        if mixer not in ("attention", "fourier"):
            raise InputError(f"TransformerEncoderLayer: mixer must be 'attention' or 'fourier', got {mixer!r}")
        gen = make_rng(rng)
        self.mixer_kind = mixer
        if mixer == "attention":
            self.self_attn = MultiheadAttention(d_model, nhead, p, bias, out_proj=attn_out_proj, rotary=rotary,
                                                rng=gen, dtype=dtype)
        else:
            self.mixer = FourierMixing("2d")
        self.linear1 = Linear(d_model, dim_feedforward, bias, rng=gen, dtype=dtype)
        self.dropout = Dropout(p, rng=gen)
        self.linear2 = Linear(dim_feedforward, d_model, bias, rng=gen, dtype=dtype)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm(d_model, layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(p, rng=gen)
        self.dropout2 = Dropout(p, rng=gen)
        self.activation = get_activation(activation)
        self.activation_name = activation

    def _mix(self, x, src_mask, src_key_padding_mask, is_causal, positions):
        if self.mixer_kind == "fourier":
            if src_mask is not None or src_key_padding_mask is not None or is_causal:
                raise InputError(
                    "TransformerEncoderLayer: mixer='fourier' supports no masks (FourierMixing has no padding "
                    "mask and is not causal); pass src_mask=None, src_key_padding_mask=None, is_causal=False"
                )
            return self.mixer(x)
        out, _ = self.self_attn(x, x, x, key_padding_mask=src_key_padding_mask, need_weights=False,
                                attn_mask=src_mask, is_causal=is_causal, positions=positions)
        return out

    def _mix_backward(self, dU):
        if self.mixer_kind == "fourier":
            return self.mixer.backward(dU)
        return self.self_attn.backward_grouped(dU)[0]

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False, positions=None):
        """Encode ``src (batch, seq, d_model)`` (or ``(seq, d_model)``); returns the same shape."""
        src = as_input(src, "src", "TransformerEncoderLayer.forward", self.dtype, self.check_inputs)
        if self.norm_first:
            U = self._mix(self.norm1(src), src_mask, src_key_padding_mask, is_causal, positions)
            T1 = src + self.dropout1(U)
            R = self.norm2(T1)
            G, F = _ffn_forward(self, R)
            T2 = T1 + self.dropout2(F)
            H = T2
        else:
            U = self._mix(src, src_mask, src_key_padding_mask, is_causal, positions)
            T1 = src + self.dropout1(U)
            R = self.norm1(T1)
            G, F = _ffn_forward(self, R)
            T2 = R + self.dropout2(F)
            H = self.norm2(T2)
        self._save(U=U, T1=T1, R=R, G=G, F=F, T2=T2, H=H)
        return H

    def backward(self, grad_output):
        """Return dL/dsrc; adds every parameter gradient."""
        self._saved()
        dH = np.asarray(grad_output)
        if self.norm_first:
            dT1 = dH + self.norm2.backward(_ffn_backward(self, self.dropout2.backward(dH)))   # T2 = T1 + F(norm2(T1))
            return dT1 + self.norm1.backward(self._mix_backward(self.dropout1.backward(dT1)))  # T1 = Z + U(norm1(Z))
        dT2 = self.norm2.backward(dH)
        dR = dT2 + _ffn_backward(self, self.dropout2.backward(dT2))                        # T2 = R + F(R)
        dT1 = self.norm1.backward(dR)
        return dT1 + self._mix_backward(self.dropout1.backward(dT1))                      # T1 = Z + U(Z)

    def intermediates(self) -> dict:
        """Copies of the block's tensors with the seed's symbols (see the module docstring).

        Keys: ``Q, K, V, S, A`` (per head, from self-attention; absent with Fourier mixing), ``U``
        (the mixer's output after ``out_proj``, before ``dropout1``), ``T1``, ``R`` (input of the FFN),
        ``G`` (post-activation hidden), ``F`` (FFN output before ``dropout2``), ``T2``, ``H`` (output).
        In pre-norm, ``U`` is computed from ``norm1(Z)``, ``T1 = Z + U``, ``R = norm2(T1)``,
        ``T2 = T1 + F`` and ``H = T2``.

        Raises
        ------
        NotReadyError before a cached forward.
        """
        c = self._saved()
        out = {}
        if self.mixer_kind == "attention":
            att = self.self_attn.intermediates()
            out.update({k: att[k] for k in ("Q", "K", "V", "S", "A")})
        out.update({k: np.array(v, copy=True) for k, v in c.items()})
        return out

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}, activation={self.activation_name!r}, mixer={self.mixer_kind!r}"


class TransformerDecoderLayer(Module):
    """Masked self-attention, cross-attention to ``memory`` and a feed-forward network.

    Post-norm: ``x = norm1(x + SA(x))``; ``x = norm2(x + CA(x, memory))``; ``x = norm3(x + FFN(x))``.
    Pre-norm: ``x = x + SA(norm1(x))``; ``x = x + CA(norm2(x), memory)``; ``x = x + FFN(norm3(x))``.
    Parameters and names as ``torch.nn.TransformerDecoderLayer`` (``self_attn``, ``multihead_attn``,
    ``linear1``, ``linear2``, ``norm1..3``); arguments as :class:`TransformerEncoderLayer`.

    Shapes
    ------
    ``forward(tgt (batch, T, d_model), memory (batch, S, d_model), tgt_mask (T, T), memory_mask (T, S),
    tgt_key_padding_mask (batch, T), memory_key_padding_mask (batch, S), tgt_is_causal,
    memory_is_causal) -> (batch, T, d_model)``; ``backward(grad) -> (dtgt, dmemory)``.
    ``tgt_is_causal=True`` builds the causal mask itself.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str = "relu", layer_norm_eps: float = 1e-5, norm_first: bool = False,
                 bias: bool = True, *, rotary=None, rng=None, dtype=np.float64):
        super().__init__()
        check_positive_int(d_model, "d_model", "TransformerDecoderLayer")
        check_positive_int(dim_feedforward, "dim_feedforward", "TransformerDecoderLayer")
        p = check_probability(dropout, "dropout", "TransformerDecoderLayer")
        gen = make_rng(rng)
        self.self_attn = MultiheadAttention(d_model, nhead, p, bias, rotary=rotary, rng=gen, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, p, bias, rng=gen, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias, rng=gen, dtype=dtype)
        self.dropout = Dropout(p, rng=gen)
        self.linear2 = Linear(dim_feedforward, d_model, bias, rng=gen, dtype=dtype)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm(d_model, layer_norm_eps, dtype=dtype)
        self.norm3 = LayerNorm(d_model, layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(p, rng=gen)
        self.dropout2 = Dropout(p, rng=gen)
        self.dropout3 = Dropout(p, rng=gen)
        self.activation = get_activation(activation)
        self.activation_name = activation

    def _sa(self, x, mask, kpm, causal):
        return self.self_attn(x, x, x, key_padding_mask=kpm, need_weights=False, attn_mask=mask, is_causal=causal)[0]

    def _ca(self, x, mem, mask, kpm, causal):
        return self.multihead_attn(x, mem, mem, key_padding_mask=kpm, need_weights=False, attn_mask=mask,
                                   is_causal=causal)[0]

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False):
        """Decode ``tgt`` attending to ``memory``; returns ``(batch, T, d_model)``."""
        dt, where = self.dtype, "TransformerDecoderLayer.forward"
        tgt = as_input(tgt, "tgt", where, dt, self.check_inputs)
        memory = as_input(memory, "memory", where, dt, self.check_inputs)
        if self.norm_first:
            U1 = self._sa(self.norm1(tgt), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            T1 = tgt + self.dropout1(U1)
            R1 = T1
            U2 = self._ca(self.norm2(T1), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            T2 = T1 + self.dropout2(U2)
            R2 = self.norm3(T2)
            G, F = _ffn_forward(self, R2)
            T3 = T2 + self.dropout3(F)
            H = T3
        else:
            U1 = self._sa(tgt, tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            T1 = tgt + self.dropout1(U1)
            R1 = self.norm1(T1)
            U2 = self._ca(R1, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            T2 = R1 + self.dropout2(U2)
            R2 = self.norm2(T2)
            G, F = _ffn_forward(self, R2)
            T3 = R2 + self.dropout3(F)
            H = self.norm3(T3)
        self._save(U1=U1, T1=T1, R1=R1, U2=U2, T2=T2, R2=R2, G=G, F=F, T3=T3, H=H)
        return H

    def backward(self, grad_output):
        """Return ``(dtgt, dmemory)``; adds every parameter gradient."""
        self._saved()
        dH = np.asarray(grad_output)
        if self.norm_first:
            dT2 = dH + self.norm3.backward(_ffn_backward(self, self.dropout3.backward(dH)))
            dq, dmem = self.multihead_attn.backward_grouped(self.dropout2.backward(dT2))
            dT1 = dT2 + self.norm2.backward(dq)
            (dx,) = self.self_attn.backward_grouped(self.dropout1.backward(dT1))
            return dT1 + self.norm1.backward(dx), dmem
        dT3 = self.norm3.backward(dH)
        dR2 = dT3 + _ffn_backward(self, self.dropout3.backward(dT3))
        dT2 = self.norm2.backward(dR2)
        dq, dmem = self.multihead_attn.backward_grouped(self.dropout2.backward(dT2))
        dR1 = dT2 + dq
        dT1 = self.norm1.backward(dR1)
        (dx,) = self.self_attn.backward_grouped(self.dropout1.backward(dT1))
        return dT1 + dx, dmem

    def intermediates(self) -> dict:
        """Copies of the block's tensors.

        ``"self"`` and ``"cross"``: the attention intermediates (Q, K, V, S, A, U, O) of the masked
        self-attention and of the cross-attention; ``U1``/``U2`` their outputs (after out_proj);
        ``T1 = tgt + U1``, ``R1`` (post-norm: ``norm1(T1)``; pre-norm: ``T1``), ``T2 = R1 + U2``,
        ``R2`` (input of the FFN), ``G``, ``F``, ``T3 = R2 + F`` (pre-norm ``T2 + F``), ``H`` (output).
        """
        c = self._saved()
        out = {"self": self.self_attn.intermediates(), "cross": self.multihead_attn.intermediates()}
        out.update({k: np.array(v, copy=True) for k, v in c.items()})
        return out

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}, activation={self.activation_name!r}"


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


class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer`` and an optional final norm.

    State-dict keys as PyTorch: ``layers.0.self_attn.in_proj_weight`` ... ``norm.weight``.
    ``forward(src, mask=None, src_key_padding_mask=None, is_causal=False, positions=None)`` passes the
    masks to every layer; ``backward(grad) -> dsrc``; ``intermediates()`` is a list, one dict per layer.
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: LayerNorm | None = None):
        super().__init__()
        check_positive_int(num_layers, "num_layers", "TransformerEncoder")
        self.layers = _clone_layers(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: bool = False, positions=None):
        x = as_input(src, "src", "TransformerEncoder.forward", self.dtype, self.check_inputs)
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal,
                      positions=positions)
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
    tgt_is_causal, memory_is_causal)``; ``backward(grad) -> (dtgt, dmemory)`` with ``dmemory`` summed
    over the layers (every layer reads the same memory); ``intermediates()`` is a list per layer.
    """

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: LayerNorm | None = None):
        super().__init__()
        check_positive_int(num_layers, "num_layers", "TransformerDecoder")
        self.layers = _clone_layers(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False):
        where = "TransformerDecoder.forward"
        x = as_input(tgt, "tgt", where, self.dtype, self.check_inputs)
        memory = as_input(memory, "memory", where, self.dtype, self.check_inputs)
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
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
