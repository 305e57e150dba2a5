"""One switch between the two tiers of kernels: the fast ones (the default) and the reference.

The layers of :mod:`glassformer.nn` call their equations through :data:`ops` (``F.linear(...)``,
``F.scaled_dot_product_attention(...)``, ...), which hands each call to the active tier:

* ``"fast"``: :mod:`glassformer.nn.functional` and :mod:`glassformer.nn.attention_blocks`, the
  optimised kernels;
* ``"reference"``: :mod:`glassformer.nn.reference_tier`, which runs the plain equations of
  :mod:`glassformer.nn.reference` behind the same names and signatures (like PyTorch's
  ``sdpa_kernel(SDPBackend.MATH)``, which forces the math implementation of attention).

Both tiers give the same numbers up to rounding (tested to 1e-12 in float64), so a model trained
in one mode predicts the same in the other.

Why a context variable: the choice has to reach every layer of a network without a flag threaded
through each ``forward`` and ``backward``, and it must not leak from one thread (or asyncio task)
to another -- a process pool or a threaded notebook running two models in different modes each sees
its own setting, and leaving the ``with`` block restores the previous one even after an error.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from ..errors import InputError
from . import attention_blocks as _blocks
from . import functional as _functional
from . import reference_tier as _reference_tier

__all__ = ["kernels", "active_kernels", "ops", "KERNELS"]

#: The tiers :func:`kernels` accepts.
KERNELS = ("fast", "reference")

_ACTIVE: ContextVar[str] = ContextVar("glassformer_kernels", default="fast")


def _check(name) -> str:
    if name not in KERNELS:
        raise InputError(f"kernels must be 'fast' or 'reference', got {name!r}")
    return name


@contextmanager
def kernels(name: str = "reference"):
    """Context manager: every layer inside runs the ``name`` tier (``"fast"`` or ``"reference"``).

    ``with glassformer.kernels("reference"): model.fit(X, y)`` trains with the plain equations of
    :mod:`glassformer.nn.reference`; ``fit``, ``predict`` and ``trace`` all follow the setting.
    ``None`` keeps the current setting (so a model built with ``kernels=None`` follows the caller).

    Raises
    ------
    InputError for any other name.
    """
    if name is None:
        yield active_kernels()
        return
    token = _ACTIVE.set(_check(name))
    try:
        yield name
    finally:
        _ACTIVE.reset(token)


def active_kernels() -> str:
    """The tier the layers run now: ``"fast"`` (the default) or ``"reference"``."""
    return _ACTIVE.get()


class _Dispatch:
    """``ops.name`` is the active tier's function ``name``, looked up at each call (so a test that
    replaces a kernel in :mod:`glassformer.nn.functional` replaces it here too)."""

    _FAST = (_functional, _blocks)

    def __getattr__(self, name):
        if _ACTIVE.get() == "reference":
            return getattr(_reference_tier, name)
        for module in self._FAST:
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"no kernel named {name!r}")

    def __repr__(self) -> str:
        return f"<glassformer kernels: {_ACTIVE.get()}>"


#: The kernels of the active tier, by name (what the layers call).
ops = _Dispatch()
