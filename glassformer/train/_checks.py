"""Argument checks shared by the optimizers, schedules, callbacks and the trainer (and its data).

Each raises :class:`~glassformer.errors.InputError` with a one-line message that names the
object (``where``), the argument and the value received.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from ..nn.module import Module, Parameter

__all__ = ["check_batch_size", "check_epochs", "check_int", "check_number", "count_rows", "named_params"]


def check_number(value, name: str, where: str, *, minimum: float = 0.0, strict: bool = False,
                 below: float | None = None) -> float:
    """Return ``value`` as a finite float >= ``minimum`` (> when ``strict``) and < ``below``."""
    if isinstance(value, bool):
        raise InputError(f"{where}: {name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {name} must be a number, got {value!r}") from None
    ok = math.isfinite(v) and (v > minimum if strict else v >= minimum)
    if ok and below is not None:
        ok = v < below
    if not ok:
        rng = f"{'>' if strict else '>='} {minimum:g}" + (f" and < {below:g}" if below is not None else "")
        raise InputError(f"{where}: {name} must be a finite number {rng}, got {value!r}")
    return v


def check_int(value, name: str, where: str, *, minimum: int, unit: str = "") -> int:
    """Return ``value`` as an int >= ``minimum`` (bools and floats refused); ``unit`` is named in the message."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{where}: {name} must be an integer >= {minimum}{f' ({unit})' if unit else ''}, "
                         f"got {value!r}")
    return int(value)


def named_params(params, where: str, *, unnamed: str = "{}") -> list[tuple[str, Parameter]]:
    """Normalise params to ``[(name, Parameter)]``, each Parameter once.

    Accepts a Module, an iterable of Parameters (named ``unnamed.format(i)``: ``"0"``, ``"1"``,
    ... by default, like PyTorch's optimizer state), or an iterable of ``(name, Parameter)`` pairs.
    A Parameter that occurs twice (tied weights) is kept once, under its first name, so it is not
    stepped twice.

    Raises
    ------
    InputError
        A single Parameter, an item that is neither a Parameter nor a pair, a name used for two
        different Parameters, or nothing to optimise.
    """
    if isinstance(params, Module):
        params = params.named_parameters()
    if isinstance(params, Parameter):
        raise InputError(f"{where}: params must be an iterable of Parameters, got a single Parameter "
                         "(wrap it in a list)")
    try:
        items = list(params)
    except TypeError:
        raise InputError(f"{where}: params must be an iterable of Parameters or (name, Parameter) "
                         f"pairs, got {type(params).__name__}") from None
    out, seen, names = [], set(), set()
    for i, item in enumerate(items):
        if isinstance(item, Parameter):
            name, p = unnamed.format(i), item
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Parameter):
            name, p = str(item[0]), item[1]
        else:
            raise InputError(f"{where}: params[{i}] must be a Parameter or a (name, Parameter) pair, "
                             f"got {type(item).__name__}")
        if id(p) in seen:
            continue
        if name in names:
            raise InputError(f"{where}: parameter name {name!r} occurs twice for different Parameters")
        seen.add(id(p))
        names.add(name)
        out.append((name, p))
    if not out:
        raise InputError(f"{where}: params is empty (nothing to optimise)")
    return out


def check_epochs(epochs) -> int:
    """The trainer's ``epochs``: an integer >= 0 (bools refused)."""
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 0:
        raise InputError(f"Trainer: epochs must be an integer >= 0, got {epochs!r}")
    return int(epochs)


def check_batch_size(batch_size) -> int | None:
    """The trainer's ``batch_size``: None (the full batch) or an integer >= 1."""
    if batch_size is not None and (isinstance(batch_size, bool) or int(batch_size) < 1):
        raise InputError(f"Trainer: batch_size must be None or an integer >= 1, got {batch_size!r}")
    return None if batch_size is None else int(batch_size)


def count_rows(data: tuple, where: str) -> int:
    """The common leading length of the arrays of ``data`` (None entries skipped); at least one row."""
    n = None
    for a in data:
        if a is None:
            continue
        if n is None:
            n = len(a)
        elif len(a) != n:
            raise InputError(f"{where}: all training arrays need the same number of rows, "
                             f"got {[None if x is None else len(x) for x in data]}")
    if not n:
        raise InputError(f"{where}: no training rows")
    return n
