"""All parameters in one array, all gradients in another: what lets an optimizer update a model in one go.

A small model spends an update on calls, not arithmetic: Adam makes about ten NumPy calls per
parameter, so a model of 16 parameter arrays pays 160 calls on arrays of a few hundred numbers.
:func:`flatten_parameters` (``Module.flatten_parameters``) copies the values of the parameters into
one 1-D array, their gradients into another, and rebinds every ``p.data`` and ``p.grad`` to a
*view* of them, in order.  Shapes, names and ``state_dict`` stay as they were, and the layers,
which read ``p.data`` and add into ``p.grad``, do not change.  An optimizer that finds its
parameters laid out like this (:func:`flat_view`) runs its formulas once over the whole array --
the same arithmetic per element, so the same numbers bit for bit -- and the trainer zeroes and
clips the gradients with one call each.

A view stays valid until ``p.data`` or ``p.grad`` is rebound (``Module.to`` does, to change the
dtype); :meth:`FlatView.is_current` notices, and the optimizer goes back to one update per
parameter.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FlatView", "flat_view", "flatten_parameters"]


def flatten_parameters(params: list) -> None:
    """Copy ``params`` (each once) into one value array and one gradient array; rebind them to views.

    Parameters of different dtypes are left as they are (one array needs one dtype).
    """
    if not params or len({p.dtype for p in params}) != 1:
        return
    sizes = [p.size for p in params]
    ends = np.cumsum(sizes).tolist()
    data = np.empty(ends[-1], dtype=params[0].dtype)
    grad = np.empty_like(data)
    for p, b, n in zip(params, ends, sizes):
        data[b - n:b] = p.data.ravel()
        grad[b - n:b] = p.grad.ravel()
        p.data = data[b - n:b].reshape(p.shape)
        p.grad = grad[b - n:b].reshape(p.shape)


class FlatView:
    """``data`` and ``grad``: 1-D views covering exactly ``params``, in their order.

    Attributes
    ----------
    data, grad : ndarray (n,) with ``n = sum(p.size)``
    """

    __slots__ = ("params", "data", "grad", "_views")

    def __init__(self, params: list, data: np.ndarray, grad: np.ndarray):
        self.params, self.data, self.grad = params, data, grad
        self._views = [(p.data, p.grad) for p in params]

    def is_current(self) -> bool:
        """True while no parameter has been rebound since the view was taken."""
        for p, (d, g) in zip(self.params, self._views):        # a loop: called twice per update
            if p.data is not d or p.grad is not g:
                return False
        return True

    def split(self, flat_array: np.ndarray) -> list:
        """Per-parameter views (the parameters' shapes) of a 1-D array laid out like ``data``."""
        out, a = [], 0
        for p in self.params:
            out.append(flat_array[a:a + p.size].reshape(p.shape))
            a += p.size
        return out


def _span(arrays: list):
    """The 1-D array that ``arrays`` tile in order without gaps, or None."""
    base = arrays[0].base
    if not isinstance(base, np.ndarray) or base.ndim != 1 or not base.flags.c_contiguous:
        return None
    item, start = base.itemsize, base.ctypes.data
    first = (arrays[0].ctypes.data - start) // item
    pos = first
    for a in arrays:
        if a.base is not base or not a.flags.c_contiguous or (a.ctypes.data - start) // item != pos:
            return None
        pos += a.size
    return base[first:pos]


def flat_view(params: list) -> FlatView | None:
    """A :class:`FlatView` when ``params`` tile one value array and one gradient array in order, else None."""
    if not params:
        return None
    data = _span([p.data for p in params])
    grad = _span([p.grad for p in params]) if data is not None else None
    if grad is None or data.dtype != grad.dtype:
        return None
    return FlatView(list(params), data, grad)
