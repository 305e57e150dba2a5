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

Why a context variable (:mod:`contextvars`) and not a module-level flag: the choice has to reach
every layer of a network without an argument threaded through each ``forward`` and ``backward``,
yet must not leak -- each thread and asyncio task has its own setting, and leaving the ``with``
block restores the previous one even after an error.  The flip side: a thread or process started
inside the block begins with the default (``"fast"``); work sent to a pool follows a model's own
``kernels=`` option, which the estimator enters wherever it fits or predicts.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from types import SimpleNamespace

# The tiers' modules themselves (their kernels are looked up at each call), imported by their full names:
# ``from . import functional`` would read as an import of this package's __init__, which imports this module.
import glassformer.nn.attention_blocks as _blocks
import glassformer.nn.functional as _functional
import glassformer.nn.reference_tier as _reference_tier

from ..errors import InputError

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


def _dispatcher(name: str, fast_module):
    """A function that calls the active tier's kernel ``name``, looked up at each call (so a test that
    replaces a kernel in :mod:`glassformer.nn.functional` replaces it here too)."""
    active = _ACTIVE.get                     # bound once: this runs for every kernel call

    def kernel(*args, **kwargs):
        return getattr(_reference_tier if active() == "reference" else fast_module, name)(*args, **kwargs)
    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"The active tier's ``{name}`` (see :mod:`glassformer.nn.tiers`)."
    return kernel


def _fast_module(name: str):
    return _functional if hasattr(_functional, name) else _blocks


#: The kernels of the active tier, by name (what the layers call): ``ops.linear(x, weight, bias)``.
#: One small function per name, not ``__getattr__``: a failed attribute lookup per call would cost
#: microseconds, a noticeable share of a small model's step.
ops = SimpleNamespace(**{name: _dispatcher(name, _fast_module(name)) for name in _reference_tier.__all__})
