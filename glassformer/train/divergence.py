"""Finding where training went non-finite: the first module or tensor to blame.

Used by :class:`~glassformer.train.DivergenceGuard`: a failing batch is re-run with every module's
output watched (:func:`locate_nonfinite`); :func:`find_nonfinite` searches the cached tensors.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["find_nonfinite", "first_nonfinite_grad", "locate_nonfinite"]


def find_nonfinite(model) -> str | None:
    """Return ``"<module path>: <tensor>"`` of the first non-finite cached tensor, or None.

    Modules are walked in registration order (glassformer models register children in forward
    order); within a module, its ``intermediates()`` (the chapter's symbols) are checked first, then its
    backward cache.  The root module is reported as ``"<model>"``.
    """
    if model is None or not hasattr(model, "named_modules"):
        return None
    for path, mod in model.named_modules():
        name = path or "<model>"
        tensors = {}
        inter = getattr(mod, "intermediates", None)
        if callable(inter):
            try:
                tensors.update(inter() or {})
            except Exception:  # no forward yet / caching off: fall back to the raw cache
                pass
        cache = getattr(mod, "_cache", None)
        if isinstance(cache, dict):
            for k, v in cache.items():
                tensors.setdefault(k, v)
        for key, value in tensors.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.isfinite(value).all():
                return f"{name}: {key}"
    return None


def locate_nonfinite(model, run: Callable) -> str | None:
    """Re-run ``run()`` (a forward pass) watching every module's output; return the first culprit.

    Each module's ``forward`` is wrapped for the duration of the call; the first module (in call
    order, so the innermost layer) that returns a non-finite array is reported as
    ``"<module path> (<class>): output"``.  Returns None when every output stays finite.
    Exceptions raised by ``run`` are swallowed (they are the symptom being diagnosed).
    """
    if model is None or not hasattr(model, "named_modules"):
        return None
    found = []

    def wrap(path, mod, original):
        def forward(*args, **kwargs):
            try:
                out = original(*args, **kwargs)
            except Exception:
                # Raised inside with finite inputs (a child refused a non-finite tensor computed here,
                # e.g. attention scores that overflowed): this module is the culprit.
                if not found and all(_finite_or_other(a) for a in (*args, *kwargs.values())):
                    tensor = _first_nonfinite_cached(mod)
                    found.append(f"{path or '<model>'} ({type(mod).__name__}): "
                                 + (tensor if tensor else "an intermediate tensor (its inputs were finite)"))
                raise
            if not found:
                for arr in (out if isinstance(out, tuple) else (out,)):
                    if isinstance(arr, np.ndarray) and arr.dtype.kind == "f" and not np.isfinite(arr).all():
                        found.append(f"{path or '<model>'} ({type(mod).__name__}): output")
                        break
            return out
        return forward

    wrapped = []
    for path, mod in model.named_modules():
        if "forward" in mod.__dict__:          # already wrapped elsewhere: leave it alone
            continue
        object.__setattr__(mod, "forward", wrap(path, mod, mod.forward))
        wrapped.append(mod)
    try:
        with np.errstate(all="ignore"):
            run()
    except Exception:  # noqa: BLE001 - the failure is what we are diagnosing
        pass
    finally:
        for mod in wrapped:
            object.__delattr__(mod, "forward")
    return found[0] if found else None


def _finite_or_other(value) -> bool:
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return bool(np.isfinite(value).all())
    return True


def _first_nonfinite_cached(mod) -> str | None:
    cache = getattr(mod, "_cache", None)
    if isinstance(cache, dict):
        for key, value in cache.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.isfinite(value).all():
                return key
    return None


def first_nonfinite_grad(named_params) -> str | None:
    """``"<name>: grad"`` of the first parameter whose gradient is non-finite, or None."""
    for name, p in named_params:
        if not np.isfinite(p.grad).all():
            return f"{name}: grad"
    return None

