"""What a check is: a named function returning ``(ok, detail)``, and the helpers that turn
comparisons into such pairs.  The check modules and the runner both build on this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

__all__ = ["Check", "all_ok", "close", "max_diff"]


@dataclass(frozen=True)
class Check:
    """One named check.

    Attributes
    ----------
    name : str
        The text printed after ``[ok]`` / ``[FAIL]``.
    group : {"properties", "gradcheck", "values"}
        ``--quick`` leaves out the ``"gradcheck"`` group.
    func : callable
        ``func() -> (ok: bool, detail: str)``.
    """

    name: str
    group: str
    func: Callable[[], tuple]


# --------------------------------------------------------------------------- (ok, detail) helpers
def max_diff(a, b) -> float:
    """``max |a - b|`` over all elements (0 for empty arrays)."""
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0))


def close(name: str, got, want, atol: float) -> tuple[bool, str]:
    """Same shape and ``max |got - want| <= atol``."""
    err = max_diff(got, want)
    ok = np.shape(got) == np.shape(want) and err <= atol
    return ok, f"{name}: max |got - expected| = {err:.2e} (tolerance {atol:g})"


def all_ok(results: Iterable[tuple]) -> tuple[bool, str]:
    """Combine several ``(ok, detail)`` into one: all must pass; the detail lists the failures first."""
    results = list(results)
    bad = [d for ok, d in results if not ok]
    return not bad, "; ".join(bad or [d for _, d in results])
