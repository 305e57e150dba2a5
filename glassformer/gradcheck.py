"""Central finite-difference gradient checking for any glassformer module.

The check contracts the module's output with a random array ``R``, so the
scalar ``L = sum(R * output)`` has ``dL/d(output) = R``.  ``R`` comes from a stream of its own
(a seed sequence with a spawn key, which no ``default_rng(seed)`` reproduces): inputs drawn with
any integer seed never equal it.  They must not: ``R`` parallel to a LayerNorm's input, for one,
is a direction LayerNorm removes, so the input gradient is nearly zero and the rounding of the
finite differences alone exceeds the tolerance on a correct backward.  The analytic gradients
come from ``module.backward(R)``; the numerical ones from

    dL/dθ_i ≈ (L(θ + h e_i) - L(θ - h e_i)) / (2h)

for every element of every parameter and every floating input.  For each
tensor the *relative error* is ``max|analytic - numeric| / max(max|analytic|,
max|numeric|, atol)``.  Run it in float64 with dropout off (``module.eval()``
or ``p=0``); in float32 the differences are dominated by rounding.  A tensor whose gradient is
nearly zero -- so small that the rounding of the differences alone is a tenth of the default
tolerance of its relative error -- is named in a :class:`GradcheckWarning`.

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

import warnings
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .errors import InputError
from .nn.module import make_rng

__all__ = ["GradcheckReport", "GradcheckWarning", "contraction_rng", "gradcheck"]

#: Entropy of the contraction's stream ("gradcheck" in ASCII); with a spawn key, see :func:`contraction_rng`.
_CONTRACTION_ENTROPY = int.from_bytes(b"gradcheck", "big")
#: Warn when the differences' rounding exceeds this fraction of a gradient's size: a tenth of the
#: default tolerance 1e-6, a hundred times what a well-scaled gradient shows (~1e-9).
_NEAR_ZERO = 1e-7


class GradcheckWarning(UserWarning):
    """A checked gradient is nearly zero: its relative error measures rounding, not the backward."""


def contraction_rng(rng=None) -> np.random.Generator:
    """The generator of the contraction ``R``.

    None (the default): a fixed stream, ``SeedSequence(entropy, spawn_key=(1,))``; ``default_rng(n)``
    seeds from ``SeedSequence(n)`` with no spawn key, so no integer seed gives these numbers and the
    check is still reproducible.  An int or a Generator: that stream (as :func:`~glassformer.nn.make_rng`).
    """
    if rng is None:
        return np.random.default_rng(np.random.SeedSequence(_CONTRACTION_ENTROPY, spawn_key=(1,)))
    return make_rng(rng)


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
    rng=None,
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
    rng : None, int or numpy.random.Generator
        Source of the random contraction ``R`` (:func:`contraction_rng`); None, the default, is a
        stream of its own that inputs drawn with any integer seed cannot equal.
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

    Warns
    -----
    GradcheckWarning
        For each tensor whose gradient is nearly zero: the rounding of the finite differences,
        ``eps_machine * sum|R * output| / eps``, exceeds ``1e-7`` of its largest entry.
    """
    kwargs = dict(kwargs or {})
    inputs = [np.array(x, copy=True) if _is_float(x) else x for x in inputs]
    out = np.asarray(select(module.forward(*inputs, **kwargs)))
    R = contraction_rng(rng).standard_normal(out.shape).astype(out.dtype)
    # What the rounding of L = sum(R * output) leaves in a central difference (two evaluations / 2h).
    noise = float(np.finfo(out.dtype).eps * np.sum(np.abs(R * out)) / eps)

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
        report.errors[name] = _checked(name, analytic[name], _numeric(p.data, loss, eps), atol, noise)
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
            report.errors[f"input[{i}]"] = _checked(f"input[{i}]", np.asarray(g), _numeric(x, loss, eps), atol, noise)
    module.zero_grad()
    return report


def _checked(name: str, analytic: np.ndarray, numeric: np.ndarray, atol: float, noise: float) -> float:
    """The relative error of one tensor, with a warning when its gradient is nearly zero."""
    size = max(float(np.max(np.abs(analytic), initial=0.0)), float(np.max(np.abs(numeric), initial=0.0)))
    if 0.0 < size < noise / _NEAR_ZERO:          # exact zeros on both sides are an exact answer, not a doubt
        warnings.warn(f"gradcheck: the gradient of {name} is nearly zero (largest entry {size:.3g}, rounding of the "
                      f"finite differences ~{noise:.3g}), so its relative error measures rounding, not the backward; "
                      "is the contraction (rng=) or the input special, e.g. a direction the layer removes?",
                      GradcheckWarning, stacklevel=3)
    return _rel_error(analytic, numeric, atol)


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
