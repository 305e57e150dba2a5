"""A read-only record of every named intermediate of one forward pass, for reading the model step by step.

The symbols are the chapter's (Pyrcz 2024, "Transformers"), in the order the forward pass computes them:

======  ======================================  ===================================
symbol  meaning                                 shape
======  ======================================  ===================================
X       the inputs as given                     (batch, seq, n_features)
E       input embedding ``W_e x + b_e``         (batch, seq, d_model)
P       positional encoding                     (seq, d_model) or (batch, seq, d_model)
Z       ``E + P``, the encoder input            (batch, seq, d_model)
Q K V   per-head query/key/value projections    (batch, num_heads, seq, head_dim)
S       scaled scores ``Q K^T / sqrt(d_k)``     (batch, num_heads, seq, seq)
A       softmax attention weights               (batch, num_heads, seq, seq)
U       attention output (after projection)     (batch, seq, d_model)
T1      first residual ``Z + U``                (batch, seq, d_model)
R       ``LayerNorm(T1)``                       (batch, seq, d_model)
G       feed-forward hidden activations         (batch, seq, d_ff)
F       feed-forward output                     (batch, seq, d_model)
T2      second residual ``R + F``               (batch, seq, d_model)
H       ``LayerNorm(T2)``, the layer output     (batch, seq, d_model)
y_hat   linear head ``W_y h + b_y``             (batch, seq, n_targets)
======  ======================================  ===================================

Per-layer symbols (Q ... H) are keyed ``"layers.<i>.<symbol>"``; model-level ones (X, E, P, Z,
y_hat) by the bare symbol.  In a pre-norm layer (``norm_first=True``) the meanings of T1, R, T2 and
H follow the layer's own ``intermediates()`` documentation.  Symbols a layer does not produce (for
example Q, K, V, S, A with ``mixer="fourier"``) are simply absent.

The backward trace (``model.trace(X, positions, y=y, grads=True)``) adds, after the forward arrays,
the target ``y``, the loss ``L`` (mean squared error over the observed targets, a 0-d array) and the
gradient of ``L`` with respect to every intermediate, keyed ``"d" + symbol`` with the same prefix and
shape as the intermediate, in the order backward computes them:

``dy_hat``, then for each layer from the last to the first ``layers.<i>.dH``, ``dT2``, ``dF``,
``dG``, ``dR``, ``dT1``, ``dU``, ``dA``, ``dS``, ``dQ``, ``dK``, ``dV``, then ``dZ``, ``dE``,
``dP`` and ``dX``.

Each is the chapter's gradient: ``dA = dL/dA`` and ``dS = dL/dS`` of the scaled scores
``S = Q K^T / sqrt(d_k)`` (not multiplied by the scale), ``dP = dL/dP`` summed over the batch when
``P`` is shared ``(seq, d_model)``.  A layer's input gradient is the previous layer's ``dH``
(the first layer's is ``dZ``).  :meth:`Trace.backward_steps` lists ``(symbol key, gradient key)``
pairs in that order, for walking the backward pass from ``y_hat`` down to ``S`` and ``Z``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .report.display import trace_html

_LAYER_SYMBOLS = ("Q", "K", "V", "S", "A", "U", "T1", "R", "G", "F", "T2", "H")
#: The order backward computes the gradients in: model level, each layer from the last, model level.
BACKWARD_LAYER_SYMBOLS = ("H", "T2", "F", "G", "R", "T1", "U", "A", "S", "Q", "K", "V")
BACKWARD_MODEL_SYMBOLS = (("y_hat",), ("Z", "E", "P", "X"))
#: Units that hold whatever the model's inputs are (attention weights and scores are pure numbers).
DEFAULT_UNITS = {"A": "weight, 0-1; each row sums to 1", "S": "dimensionless score"}
_HEAD_SYMBOLS = ("Q", "K", "V", "S", "A", "dQ", "dK", "dV", "dS", "dA")


def gradient_key(key: str) -> str:
    """The key of the gradient of ``key``: ``"layers.0.A"`` -> ``"layers.0.dA"``, ``"y_hat"`` -> ``"dy_hat"``."""
    head, _, sym = key.rpartition(".")
    return f"{head}.d{sym}" if head else f"d{sym}"


def _forward_key(gkey: str) -> str:
    """The inverse of :func:`gradient_key`: ``"layers.0.dA"`` -> ``"layers.0.A"``."""
    head, _, dsym = gkey.rpartition(".")
    return f"{head}.{dsym[1:]}" if head else dsym[1:]


def backward_order(num_layers: int) -> list:
    """Every gradient key a backward trace can hold, in the order backward computes them."""
    first, last = BACKWARD_MODEL_SYMBOLS
    keys = [f"d{s}" for s in first]
    for i in reversed(range(num_layers)):
        keys += [f"layers.{i}.d{s}" for s in BACKWARD_LAYER_SYMBOLS]
    return keys + [f"d{s}" for s in last]


class GradientRecorder:
    """A probe (:meth:`glassformer.nn.Module.probing`) that keeps a copy of every gradient it is shown.

    Parameters
    ----------
    prefixes : mapping of Module to str
        The trace prefix of each module whose gradients are kept (``""`` for the model,
        ``"layers.0."`` for the first layer, its attention and its feed-forward network).

    Attributes
    ----------
    grads : dict
        ``{"<prefix>d<symbol>": copy of dL/d(symbol)}``.
    """

    def __init__(self, prefixes):
        self.prefixes = prefixes
        self.grads = {}

    def forward(self, module, symbol: str, value):
        return value

    def backward(self, module, symbol: str, grad) -> None:
        prefix = self.prefixes.get(module)
        if prefix is not None:
            self.grads[f"{prefix}d{symbol}"] = np.array(grad, copy=True)


class Trace(Mapping):
    """Read-only mapping ``symbol -> ndarray`` of one forward pass.

    Every array is a private copy marked read-only, so a trace never changes after it is taken
    and never aliases model state.

    Parameters
    ----------
    arrays : mapping of str to array-like
        Keys are bare model-level symbols or ``"layers.<i>.<symbol>"`` (see the module docstring).
    positions : array-like, optional
        The positions (sample index or depth in metres) used, kept for labelling plots.
    units : mapping of str to str, optional
        Units of some entries, by key or by symbol (e.g. ``{"positions": "m", "X": "v/v"}``),
        shown by the notebook display; weights ``A`` and scores ``S`` carry theirs already.

    Examples
    --------
    >>> tr = model.trace(X, positions)               # doctest: +SKIP
    >>> tr["layers.0.A"].shape                       # (batch, num_heads, seq, seq)  # doctest: +SKIP
    >>> tr.layer(0)["A"] is tr["layers.0.A"]         # doctest: +SKIP
    True
    >>> tr.head(0, 0)["A"].shape                     # (batch, seq, seq)  # doctest: +SKIP
    >>> back = model.trace(X, positions, y=y, grads=True)    # doctest: +SKIP
    >>> back.grad("layers.0.A") is back["layers.0.dA"]      # dL/dA, the shape of A  # doctest: +SKIP
    True
    >>> [dkey for _, dkey in back.backward_steps()][:3]      # doctest: +SKIP
    ['dy_hat', 'layers.0.dH', 'layers.0.dT2']
    """

    def __init__(self, arrays: Mapping, positions=None, units: Mapping | None = None):
        store = {}
        for key, value in arrays.items():
            if value is None:
                continue
            arr = np.array(value, copy=True)
            arr.setflags(write=False)
            store[str(key)] = arr
        self._arrays = store
        if positions is not None:
            pos = np.array(positions, copy=True)
            pos.setflags(write=False)
        else:
            pos = None
        self.positions = pos
        self.units = {**DEFAULT_UNITS, **{str(k): str(v) for k, v in (units or {}).items()}}

    # --- Mapping protocol ------------------------------------------------
    def __getitem__(self, key: str) -> np.ndarray:
        try:
            return self._arrays[key]
        except KeyError:
            raise KeyError(f"Trace has no symbol {key!r}; available: {', '.join(self._arrays)}") from None

    def __iter__(self):
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    # --- views -----------------------------------------------------------
    @property
    def num_layers(self) -> int:
        """Number of encoder layers recorded."""
        idx = {int(k.split(".")[1]) for k in self._arrays if k.startswith("layers.")}
        return len(idx)

    def layer(self, i: int) -> dict:
        """Return ``{symbol: array}`` of layer ``i`` (negative indices count from the end)."""
        n = self.num_layers
        if not -n <= i < n:
            raise IndexError(f"Trace.layer: layer {i} out of range for {n} layer(s)")
        i %= n
        prefix = f"layers.{i}."
        return {k[len(prefix):]: v for k, v in self._arrays.items() if k.startswith(prefix)}

    def head(self, layer: int, head: int) -> dict:
        """Return the per-head symbols Q, K, V, S, A of one layer and head, head axis removed.

        Shapes: Q, K, V ``(batch, seq, head_dim)``; S, A ``(batch, seq, seq)``.
        """
        out = {}
        for sym, arr in self.layer(layer).items():
            if sym in _HEAD_SYMBOLS and arr.ndim == 4:
                if not -arr.shape[1] <= head < arr.shape[1]:
                    raise IndexError(f"Trace.head: head {head} out of range for {arr.shape[1]} head(s)")
                out[sym] = arr[:, head]
        return out

    @property
    def has_grads(self) -> bool:
        """True for a backward trace (``grads=True``): it holds the loss ``L`` and the gradients."""
        return "L" in self._arrays

    def grad(self, key: str) -> np.ndarray:
        """dL/d(``key``) of a backward trace: ``tr.grad("layers.0.A") is tr["layers.0.dA"]``.

        Raises
        ------
        KeyError
            No such gradient (a forward-only trace, or a symbol without one).
        """
        return self[gradient_key(key)]

    def gradients(self) -> dict:
        """``{gradient key: array}`` in the order backward computed them (empty for a forward trace)."""
        return {k: self._arrays[k] for k in backward_order(self.num_layers) if k in self._arrays}

    def backward_steps(self) -> list:
        """``(symbol key, gradient key)`` pairs in backward order, from ``("y_hat", "dy_hat")`` to ``("X", "dX")``.

        Walk the backward pass with them::

            for key, dkey in tr.backward_steps():
                print(key, tr[key].shape, "dL/d" + key, np.abs(tr[dkey]).max())
        """
        return [(_forward_key(k), k) for k in self.gradients()]

    def to_dict(self) -> dict:
        """Plain ``{key: writable copy}`` (for saving with ``np.savez``)."""
        return {k: v.copy() for k, v in self._arrays.items()}

    def __repr__(self) -> str:
        width = max((len(k) for k in self._arrays), default=1)
        rows = [f"  {k:<{width}}  {tuple(v.shape)}  {v.dtype}" for k, v in self._arrays.items()]
        return "Trace(\n" + "\n".join(rows) + "\n)"

    def _repr_html_(self) -> str:
        """Jupyter's view: every array in forward order with shape and units, attention heat maps per head;
        for a backward trace also the loss, the gradients in backward order and dL/dA, dL/dS maps."""
        return trace_html(self)
