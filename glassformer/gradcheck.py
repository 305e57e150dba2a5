"""Central finite-difference gradient checking for any glassformer module.

The check contracts the module's output with a fixed random array ``R``, so the
scalar ``L = sum(R * output)`` has ``dL/d(output) = R``.  The analytic gradients
come from ``module.backward(R)``; the numerical ones from

    dL/dθ_i ≈ (L(θ + h e_i) - L(θ - h e_i)) / (2h)

for every element of every parameter and every floating input.  For each
tensor the *relative error* is ``max|analytic - numeric| / max(max|analytic|,
max|numeric|, atol)``.  Run it in float64 with dropout off (``module.eval()``
or ``p=0``); in float32 the differences are dominated by rounding.

Example
-------
>>> import numpy as np
>>> from glassformer.nn import Linear
>>> from glassformer import gradcheck
>>> report = gradcheck(Linear(3, 2, rng=0), (np.ones((4, 3)),))
>>> report.max_error < 1e-8
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .errors import InputError


@dataclass
class GradcheckReport:
    """Largest relative error per parameter (qualified name) and per input (``input[i]``)."""

    errors: dict = field(default_factory=dict)

    @property
    def max_error(self) -> float:
        return max(self.errors.values(), default=0.0)

    def ok(self, tol: float = 1e-6) -> bool:
        return self.max_error <= tol

    def worst(self) -> tuple:
        """``(name, error)`` of the largest relative error."""
        return max(self.errors.items(), key=lambda kv: kv[1], default=("", 0.0))

    def __str__(self) -> str:
        width = max((len(k) for k in self.errors), default=4)
        rows = [f"{k:<{width}}  {v:.3e}" for k, v in self.errors.items()]
        return "\n".join(rows + [f"{'max':<{width}}  {self.max_error:.3e}"])


def _first(output):
    """Default output selector: the first element of a tuple (output, weights/state), else itself."""
    return output[0] if isinstance(output, tuple) else output


def _rel_error(a: np.ndarray, n: np.ndarray, atol: float) -> float:
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(n), initial=0.0)), atol)
    return float(np.max(np.abs(a - n), initial=0.0)) / scale


def gradcheck(
    module,
    inputs: Sequence,
    *,
    kwargs: dict | None = None,
    select: Callable = _first,
    eps: float = 1e-6,
    atol: float = 1e-8,
    seed: int = 0,
    check_inputs: bool = True,
) -> GradcheckReport:
    """Compare ``module.backward`` with central finite differences.

    Parameters
    ----------
    module : Module
        Any glassformer module (float64 parameters recommended).
    inputs : sequence
        Positional inputs of ``forward``.  Floating arrays are differentiated;
        ``None``, bool and integer arrays (masks, token ids) are passed through unchanged.
    kwargs : dict, optional
        Keyword arguments of ``forward`` (masks, ``is_causal``, positions ...).
    select : callable
        Picks the array to differentiate from ``forward``'s return value (default: the
        first element of a tuple, e.g. the output of ``(output, attention_weights)``).
    eps : float
        Finite-difference step h.
    atol : float
        Floor of the denominator, so tensors whose gradient is zero compare absolutely.
    seed : int
        Seed of the random contraction ``R``.
    check_inputs : bool
        Also check dL/d(input) for every floating input.

    Returns
    -------
    GradcheckReport
        ``.errors[name]`` for each parameter and ``input[i]``; ``.max_error``; ``.ok(tol)``.

    Raises
    ------
    InputError
        If the module's ``backward`` returns a gradient of the wrong shape.
    """
    kwargs = dict(kwargs or {})
    inputs = [np.array(x, copy=True) if _is_float(x) else x for x in inputs]
    out = np.asarray(select(module.forward(*inputs, **kwargs)))
    R = np.random.default_rng(seed).standard_normal(out.shape).astype(out.dtype)

    def loss() -> float:
        return float(np.sum(np.asarray(select(module.forward(*inputs, **kwargs))) * R))

    # analytic
    module.zero_grad()
    module.forward(*inputs, **kwargs)
    grads_in = module.backward(R)
    if not isinstance(grads_in, tuple):
        grads_in = (grads_in,)
    params = list(module.named_parameters())
    analytic = {name: p.grad.copy() for name, p in params}

    report = GradcheckReport()
    for name, p in params:
        report.errors[name] = _rel_error(analytic[name], _numeric(p.data, loss, eps), atol)
    if check_inputs:
        for i, x in enumerate(inputs):
            if not _is_float(x):
                continue
            g = grads_in[i] if i < len(grads_in) else None
            if g is None:
                raise InputError(f"gradcheck: backward returned no gradient for input[{i}]")
            if np.shape(g) != x.shape:
                raise InputError(
                    f"gradcheck: gradient for input[{i}] has shape {np.shape(g)}, expected {x.shape}"
                )
            report.errors[f"input[{i}]"] = _rel_error(np.asarray(g), _numeric(x, loss, eps), atol)
    module.zero_grad()
    return report


def _is_float(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


def _numeric(array: np.ndarray, loss: Callable[[], float], eps: float) -> np.ndarray:
    """Central differences of ``loss`` w.r.t. every element of ``array`` (perturbed in place)."""
    grad = np.zeros_like(array)
    flat, gflat = array.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = loss()
        flat[i] = old - eps
        down = loss()
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return grad
