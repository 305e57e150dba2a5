"""Long short-term memory: ``LSTM`` over whole sequences (stacked, optionally bidirectional), with
backward through time written by hand; one step as a module is :class:`~glassformer.nn.LSTMCell`
(:mod:`glassformer.nn.lstm_cell`).

The equations (kernel :func:`~glassformer.nn.lstm_step.lstm_step`) are those of ``torch.nn.LSTM``
(Hochreiter & Schmidhuber, 1997, with the forget gate of Gers et al., 2000), gate order i, f, g, o::

    a_t = x_t @ W_ih.T + b_ih + h_{t-1} @ W_hh.T + b_hh           (batch, 4 * hidden)
    i_t = sigmoid(a_i)   f_t = sigmoid(a_f)   g_t = tanh(a_g)   o_t = sigmoid(a_o)
    c_t = f_t * c_{t-1} + i_t * g_t
    h_t = o_t * tanh(c_t)

Backward through time runs :func:`~glassformer.nn.lstm_step.lstm_step_backward` from the last step to
the first, and the weight gradients are sums over time, computed as single matmuls after the loop.
Parameter names and layouts match PyTorch, so
``load_state_dict({k: v.numpy() for k, v in torch_lstm.state_dict().items()})`` works.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, check_last_dim, check_ndim, check_positive_int, check_probability
from ..errors import InputError, NotReadyError, ShapeError
from .functional import dropout_scale
from .lstm_cell import init_weights, split_state
from .lstm_step import lstm_step, lstm_step_backward
from .module import Module, Parameter, make_rng

GATES = ("i", "f", "g", "o")


class LSTM(Module):
    """Multi-layer, optionally bidirectional LSTM over whole sequences, as ``torch.nn.LSTM``.

    Layer ``l`` reads the previous layer's output (the input for ``l = 0``); a bidirectional layer
    runs a second LSTM over the reversed sequence and concatenates both outputs on the feature
    axis (forward first).  Between layers, in training mode, dropout with probability ``dropout``
    is applied to the layer output (not after the last layer), as PyTorch does.

    Parameters
    ----------
    input_size : int
        Features per time step.
    hidden_size : int
        Width H of each direction's hidden and cell states.
    num_layers : int, default 1
    bias : bool, default True
    batch_first : bool, default True
        Must be True: glassformer is batch first everywhere (as everywhere in glassformer).
    dropout : float in [0, 1), default 0
        Inter-layer dropout (inverted: kept values are scaled by 1 / (1 - p)); only in training mode.
    bidirectional : bool, default False
    rng : int or numpy.random.Generator, optional
        Initial values, PyTorch's default U(-1/sqrt(H), 1/sqrt(H)) for every parameter; the same
        generator then draws the dropout masks.
    dtype : float64 (default) or float32

    Attributes
    ----------
    weight_ih_l{k}[_reverse] : Parameter (4H, input_size) for k = 0, (4H, D * H) for k > 0
    weight_hh_l{k}[_reverse] : Parameter (4H, H)
    bias_ih_l{k}[_reverse], bias_hh_l{k}[_reverse] : Parameter (4H,)
        PyTorch's names, order and layouts (D = 2 if bidirectional else 1; rows stacked i, f, g, o).

    Shapes
    ------
    forward(x, state=None):
        ``x (batch, seq, input_size)`` or unbatched ``(seq, input_size)``; ``state = (h0, c0)``,
        each ``(num_layers * D, batch, H)`` (``(num_layers * D, H)`` unbatched), zeros when None.
        Returns ``output (batch, seq, D * H)`` (the last layer's h at every step) and
        ``(h_n, c_n)``, each ``(num_layers * D, batch, H)``; index ``l * D + d`` is layer l,
        direction d (1 = reverse), as PyTorch.
    backward(grad_output, grad_state=None):
        ``grad_output`` like ``output``; ``grad_state = (dh_n, dc_n)`` (either may be None) like
        ``(h_n, c_n)``.  Returns ``(dx, (dh0, dc0))``; the second entry is None when the forward
        pass had ``state=None``.

    Raises
    ------
    InputError for ``batch_first=False``, bad sizes, NaN/inf inputs or a malformed state;
    ShapeError for wrong ranks or sizes.

    Notes
    -----
    The input projection ``x @ W_ih.T`` is one matmul over all time steps; only the recurrence
    is a Python loop over time.  ``intermediates()`` returns the gates, c and h of every step of
    the last forward pass.  ``proj_size`` (LSTM with projections) is not supported.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = True, dropout: float = 0.0, bidirectional: bool = False,
                 *, rng=None, dtype=np.float64):
        super().__init__()
        where = "LSTM"
        if batch_first is not True:
            raise InputError(f"{where}: batch_first must be True (glassformer is batch first: "
                             f"x is (batch, seq, features)), got {batch_first!r}")
        self.input_size = check_positive_int(input_size, "input_size", where)
        self.hidden_size = check_positive_int(hidden_size, "hidden_size", where)
        self.num_layers = check_positive_int(num_layers, "num_layers", where)
        self.dropout = check_probability(dropout, "dropout", where)
        self.bias = bool(bias)
        self.batch_first = True
        self.bidirectional = bool(bidirectional)
        self.num_directions = 2 if bidirectional else 1
        gen = make_rng(rng)
        for layer in range(self.num_layers):
            n_in = self.input_size if layer == 0 else self.num_directions * self.hidden_size
            for suffix in self._suffixes(layer):
                weights = init_weights(gen, n_in, self.hidden_size, self.bias, dtype)
                setattr(self, f"weight_ih{suffix}", Parameter(weights[0]))
                setattr(self, f"weight_hh{suffix}", Parameter(weights[1]))
                if self.bias:
                    setattr(self, f"bias_ih{suffix}", Parameter(weights[2]))
                    setattr(self, f"bias_hh{suffix}", Parameter(weights[3]))
        self._dropout_rng = gen

    def _suffixes(self, layer: int):
        return [f"_l{layer}"] + ([f"_l{layer}_reverse"] if self.bidirectional else [])

    # --- forward ------------------------------------------------------
    def forward(self, x, state=None):
        where = "LSTM.forward"
        dt = self.dtype
        x = as_float_array(x, "x", where, dtype=dt)
        check_ndim(x, (2, 3), "x", where, layout="(batch, seq, input_size) or (seq, input_size)")
        check_last_dim(x, self.input_size, "x", where)
        unbatched = x.ndim == 2
        xb = x[None] if unbatched else x
        h0, c0 = self._initial_state(state, xb.shape[0], unbatched, dt, where)
        dropping = self.training and self.dropout > 0 and self.num_layers > 1
        layer_in, runs, masks, h_n, c_n = xb, [], [], [], []
        for layer in range(self.num_layers):
            outs = []
            for d, suffix in enumerate(self._suffixes(layer)):
                k = layer * self.num_directions + d
                run = self._run_direction(layer_in, h0[k], c0[k], suffix, reverse=d == 1)
                runs.append(run)
                outs.append(run["h"][:, 1:] if d == 0 else run["h"][:, :0:-1])
                h_n.append(run["h"][:, -1])
                c_n.append(run["c"][:, -1])
            layer_out = outs[0] if len(outs) == 1 else np.concatenate(outs, axis=-1)
            if dropping and layer < self.num_layers - 1:
                mask = dropout_scale(layer_out.shape, self.dropout, self._dropout_rng, dt)
                masks.append(mask)
                layer_out = layer_out * mask
            else:
                masks.append(None)
            layer_in = layer_out
        h_n, c_n = np.stack(h_n), np.stack(c_n)
        self._save(runs=runs, masks=masks, unbatched=unbatched, has_state=state is not None)
        if unbatched:
            return layer_in[0], (h_n[:, 0], c_n[:, 0])
        return layer_in, (h_n, c_n)

    def _initial_state(self, state, B, unbatched, dt, where):
        n, H = self.num_layers * self.num_directions, self.hidden_size
        if state is None:
            zeros = np.zeros((n, B, H), dtype=dt)
            return zeros, zeros
        h0, c0 = split_state(state, where)
        want = (n, H) if unbatched else (n, B, H)
        out = []
        for name, arr in (("h0", h0), ("c0", c0)):
            arr = as_float_array(arr, name, where, dtype=dt)
            if arr.shape != want:
                raise ShapeError(f"{where}: {name} must have shape {want} "
                                 f"(num_layers * num_directions, {'' if unbatched else 'batch, '}hidden_size), "
                                 f"got {arr.shape}")
            out.append(arr.reshape(n, B, H))
        return out

    def _run_direction(self, x, h0, c0, suffix, reverse):
        """Run one layer in one direction over ``x (B, T, n_in)``; returns its cache.

        The cache holds arrays in *processing* order (reversed time for the reverse direction):
        ``x``, ``gates (B, T, 4H)``, ``h`` and ``c`` ``(B, T + 1, H)`` with the initial state at
        index 0, ``tanh_c (B, T, H)``.
        """
        if reverse:
            x = x[:, ::-1]
        B, T, _ = x.shape
        H = self.hidden_size
        W_hh = getattr(self, f"weight_hh{suffix}").data
        pre = x @ getattr(self, f"weight_ih{suffix}").data.T   # all steps at once
        if self.bias:
            pre += getattr(self, f"bias_ih{suffix}").data + getattr(self, f"bias_hh{suffix}").data
        gates = np.empty((B, T, 4 * H), dtype=pre.dtype)
        h = np.empty((B, T + 1, H), dtype=pre.dtype)
        c = np.empty((B, T + 1, H), dtype=pre.dtype)
        tanh_c = np.empty((B, T, H), dtype=pre.dtype)
        h[:, 0], c[:, 0] = h0, c0
        for t in range(T):
            gates[:, t], c[:, t + 1], tanh_c[:, t], h[:, t + 1] = lstm_step(pre[:, t] + h[:, t] @ W_hh.T, c[:, t])
        return {"suffix": suffix, "reverse": reverse, "x": x, "gates": gates, "h": h, "c": c, "tanh_c": tanh_c}

    # --- backward -----------------------------------------------------
    def backward(self, grad_output, grad_state=None):
        s = self._saved()
        runs, masks = s["runs"], s["masks"]
        D, H = self.num_directions, self.hidden_size
        B, T = runs[0]["x"].shape[:2]
        n = self.num_layers * D
        dt = runs[0]["x"].dtype
        g_out = np.asarray(grad_output, dtype=dt)
        if g_out.size != B * T * D * H:
            raise ShapeError(f"LSTM.backward: grad_output must have the output's shape "
                             f"{(B, T, D * H) if not s['unbatched'] else (T, D * H)}, got {g_out.shape}")
        g_out = g_out.reshape(B, T, D * H)
        dh_n, dc_n = (None, None) if grad_state is None else split_state(grad_state, "LSTM.backward")
        dh_n = np.zeros((n, B, H), dt) if dh_n is None else np.asarray(dh_n, dtype=dt).reshape(n, B, H)
        dc_n = np.zeros((n, B, H), dt) if dc_n is None else np.asarray(dc_n, dtype=dt).reshape(n, B, H)
        dh0, dc0 = np.empty_like(dh_n), np.empty_like(dc_n)
        for layer in reversed(range(self.num_layers)):
            if masks[layer] is not None:
                g_out = g_out * masks[layer]
            d_in = None
            for d in range(D):
                k = layer * D + d
                dH = g_out[..., d * H:(d + 1) * H]
                dx, dh0[k], dc0[k] = self._backward_direction(runs[k], dH, dh_n[k], dc_n[k])
                d_in = dx if d_in is None else d_in + dx
            g_out = d_in
        dx = g_out
        if s["unbatched"]:
            dx, dh0, dc0 = dx[0], dh0[:, 0], dc0[:, 0]
        return dx, ((dh0, dc0) if s["has_state"] else None)

    def _backward_direction(self, run, dH, dh_last, dc_last):
        """BPTT for one layer and direction; ``dH (B, T, H)`` in natural time order.

        Adds the parameter gradients and returns ``dx`` (natural order), ``dh0``, ``dc0``.
        """
        suffix, x, gates, h, c, tanh_c = (run[k] for k in ("suffix", "x", "gates", "h", "c", "tanh_c"))
        if run["reverse"]:
            dH = dH[:, ::-1]
        B, T, _ = x.shape
        W_ih = getattr(self, f"weight_ih{suffix}")
        W_hh = getattr(self, f"weight_hh{suffix}")
        dpre = np.empty_like(gates)
        dh, dc = dh_last, dc_last
        for t in reversed(range(T)):
            dpre[:, t], dc = lstm_step_backward(gates[:, t], c[:, t], tanh_c[:, t], dH[:, t] + dh, dc)
            dh = dpre[:, t] @ W_hh.data
        flat = dpre.reshape(B * T, -1)
        W_ih.grad += flat.T @ x.reshape(B * T, -1)
        W_hh.grad += flat.T @ h[:, :-1].reshape(B * T, -1)
        if self.bias:
            db = flat.sum(axis=0)
            getattr(self, f"bias_ih{suffix}").grad += db
            getattr(self, f"bias_hh{suffix}").grad += db
        dx = dpre @ W_ih.data
        if run["reverse"]:
            dx = dx[:, ::-1]
        return dx, dh, dc

    # --- inspection ---------------------------------------------------
    def intermediates(self) -> dict:
        """Per-step quantities of the last forward pass, in natural time order.

        Returns
        -------
        dict
            ``{"l0": {...}, "l0_reverse": {...}, "l1": {...}, ...}`` (keys = the parameter
            suffixes); each value maps ``"i", "f", "g", "o"`` (activated gates), ``"c"`` and
            ``"h"`` to copies of shape ``(batch, seq, hidden_size)`` (``(seq, hidden_size)`` for an
            unbatched input), plus ``"dropout_mask"`` ``(batch, seq, D * H)`` for a layer whose
            output was dropped out (training mode), else absent.

        Raises
        ------
        NotReadyError
            Before any forward pass, or after one run inside ``no_cache()``.
        """
        if self._cache is None:
            raise NotReadyError("LSTM.intermediates() needs a forward pass with caching on "
                                "(not inside no_cache())")
        s, H = self._cache, self.hidden_size
        out = {}
        for k, run in enumerate(s["runs"]):
            order = slice(None, None, -1) if run["reverse"] else slice(None)
            item = {name: run["gates"][:, order, j * H:(j + 1) * H].copy() for j, name in enumerate(GATES)}
            item["c"] = run["c"][:, 1:][:, order].copy()
            item["h"] = run["h"][:, 1:][:, order].copy()
            mask = s["masks"][k // self.num_directions]
            if mask is not None:
                item["dropout_mask"] = mask.copy()
            if s["unbatched"]:
                item = {name: v[0] for name, v in item.items()}
            out[run["suffix"][1:]] = item
        return out

    def extra_repr(self) -> str:
        extra = ""
        if self.num_layers != 1:
            extra += f", num_layers={self.num_layers}"
        if not self.bias:
            extra += ", bias=False"
        if self.dropout:
            extra += f", dropout={self.dropout}"
        if self.bidirectional:
            extra += ", bidirectional=True"
        return f"{self.input_size}, {self.hidden_size}, batch_first=True{extra}"
