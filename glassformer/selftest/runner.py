"""Running checks: one ``[ok]``/``[FAIL]`` line each, then ``N/N checks passed``.

A check (:class:`~glassformer.selftest.check.Check`) is a named function returning ``(ok, detail)``.
A check that raises counts as a failure whose detail is the exception's message, so a broken layer
shows up as ``[FAIL]`` and the run always reaches its summary line.
"""

from __future__ import annotations

from typing import Callable, Sequence

from .catalogue import CHECKS
from .check import Check

__all__ = ["run_check", "run_checks", "select_checks"]


def run_check(check: Check) -> tuple[bool, str]:
    """Run one check; an exception counts as a failure with its message as the detail."""
    try:
        ok, detail = check.func()
        return bool(ok), str(detail)
    except Exception as exc:  # noqa: BLE001 -- a broken layer must show up as [FAIL], never crash the run
        message = " ".join(str(exc).split()) or "(no message)"
        return False, f"{type(exc).__name__}: {message}"


def select_checks(checks: Sequence[Check], *, quick: bool = False, only: str | None = None) -> list[Check]:
    """The checks a run covers: without gradchecks when ``quick``; names containing ``only``."""
    selected = [c for c in checks if not (quick and c.group == "gradcheck")]
    if only:
        selected = [c for c in selected if only.lower() in c.name.lower()]
    return selected


def _line(check: Check, ok: bool, detail: str, details: bool) -> str:
    if not ok:
        return f"[FAIL] {check.name} — {detail}"
    return f"[ok] {check.name}" + (f" — {detail}" if details and detail else "")


def run_checks(verbose: bool = True, *, quick: bool = False, only: str | None = None, details: bool = False,
               echo: Callable[[str], None] = print, checks: Sequence[Check] | None = None) -> tuple[int, int]:
    """Run the checks and print one line each, then ``N/N checks passed``.

    Parameters
    ----------
    verbose : bool, default True
        Print the lines (through ``echo``); False runs silently.
    quick : bool, default False
        Leave out the gradchecks (the properties and the published values only).
    only : str, optional
        Run only the checks whose name contains this text (case-insensitive).
    details : bool, default False
        Also print the detail (measured error, shapes) after ``[ok]`` lines.
    echo : callable, default print
    checks : sequence of Check, optional
        What to run; default every check of :data:`glassformer.selftest.CHECKS`.

    Returns
    -------
    (passed, total) : tuple of int
    """
    selected = select_checks(CHECKS if checks is None else checks, quick=quick, only=only)
    passed = 0
    for check in selected:
        ok, detail = run_check(check)
        passed += ok
        if verbose:
            echo(_line(check, ok, detail, details))
    if verbose:
        echo(f"{passed}/{len(selected)} checks passed")
    return passed, len(selected)
