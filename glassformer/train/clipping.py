"""Gradient clipping by the global norm (Pascanu et al., 2013), in NumPy.

:func:`clip_grad_norm` is PyTorch's ``torch.nn.utils.clip_grad_norm_`` over Parameters (any
norm); :func:`clip_global_norm` is the trainer's: the L2 norm over plain gradient arrays (one flat
array for a model whose parameters share a buffer, :mod:`glassformer.nn.flat`).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DivergenceError, InputError
from ._checks import check_number, named_params

__all__ = ["clip_global_norm", "clip_grad_norm"]


def clip_grad_norm(params, max_norm: float, norm_type: float = 2.0, *, error_if_nonfinite: bool = False) -> float:
    """Rescale gradients in place so that their global norm is at most ``max_norm``.

    PyTorch's ``torch.nn.utils.clip_grad_norm_``: the total norm is the ``norm_type``-norm of all
    gradients taken together; if ``max_norm / (total + 1e-6) < 1`` every gradient is multiplied by
    that factor (Pascanu et al., 2013, Algorithm 2).

    Parameters
    ----------
    params : Module, iterable of Parameter, or iterable of (name, Parameter)
    max_norm : float > 0
    norm_type : float > 0 or inf, default 2
    error_if_nonfinite : bool, default False
        If True, a NaN/inf total norm raises :class:`DivergenceError`.  If False it is returned and
        the gradients are left untouched (unlike PyTorch, which would spread NaN into all of them),
        so the caller's divergence guard can inspect them.

    Returns
    -------
    float
        The total norm before clipping.
    """
    named = named_params(params, "clip_grad_norm")
    max_norm = check_number(max_norm, "max_norm", "clip_grad_norm", strict=True)
    norm_type = float(norm_type)
    if not norm_type > 0:
        raise InputError(f"clip_grad_norm: norm_type must be > 0 or inf, got {norm_type!r}")
    grads = [p.grad for _, p in named]
    if math.isinf(norm_type):
        total = max(float(np.max(np.abs(g))) if g.size else 0.0 for g in grads)
    else:
        per = np.array([np.linalg.norm(g.ravel(), ord=norm_type) if g.size else 0.0 for g in grads],
                       dtype=np.float64)
        total = float(np.linalg.norm(per, ord=norm_type))
    if not math.isfinite(total):
        if error_if_nonfinite:
            bad = next(n for n, p in named if not np.isfinite(p.grad).all())
            raise DivergenceError(f"clip_grad_norm: the gradient norm is {total} (first non-finite "
                                  f"gradient: {bad!r})", where=bad)
        return total
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for g in grads:
            g *= coef
    return total


def clip_global_norm(grads: list, max_norm: float) -> float:
    """Scale ``grads`` (arrays) in place to a global L2 norm of at most ``max_norm``; return the norm before.

    The trainer's clipping: the norm is the square root of the summed squares of all gradients
    (Pascanu et al., 2013), rescaled when that sum overflows with finite gradients; the factor is
    ``max_norm / (norm + 1e-6)``.  A non-finite gradient leaves every gradient untouched and gives
    a non-finite norm, for the divergence guard to report.  Pass ``[flat.grad]`` for a flat model.
    """
    sq = 0.0
    with np.errstate(over="ignore"):                       # an overflowing sum is rescaled below
        for g in grads:
            g = g.ravel()
            sq += float(np.dot(g, g))
    norm = math.sqrt(sq)
    if not math.isfinite(sq):
        if not all(np.isfinite(g).all() for g in grads):
            return sq
        big = max(float(np.max(np.abs(g), initial=0.0)) for g in grads)
        norm = big * math.sqrt(sum(float(np.sum((g / big) ** 2)) for g in grads))
    if norm > max_norm:
        scale = max_norm / (norm + 1e-6)
        for g in grads:
            g *= scale
    return norm
