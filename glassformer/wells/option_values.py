"""What the values of a request mean: a list of curves, the options of a positional encoding.

Commands and scripts give the well job curve names as typed (``--inputs PHIF,VSH "Por (%)"``) and a
positional encoding by its name with its wavelengths; the functions here turn them into the names
and options the well model uses, refusing what cannot work with one clear line that names the
option to change.  Units: wavelengths are in position units (samples with ``positions="index"``, the
depth unit with ``positions="depth"``).
"""

from __future__ import annotations

import math

from ..data.units import curve_name
from ..errors import InputError
from ..nn.positional import get_spec

__all__ = ["implied_d_model", "input_names", "positional_options"]


def input_names(inputs) -> list:
    """``--inputs`` values as a list of curve names (commas also separate).

    A value is one curve even with blanks in it: a table's header as written (``"Por (%)"``) and
    its name (``Por``) both name the curve ``POR``
    (:func:`glassformer.data.units.curve_name`; blanks inside a name become ``_``).

    Raises
    ------
    InputError
        No mnemonic at all, or one given twice.
    """
    typed = [m.strip() for item in inputs for m in str(item).split(",") if m.strip()]
    names = [curve_name(m) for m in typed]
    if not names:
        raise InputError("--inputs needs at least one curve mnemonic, e.g. --inputs PHIF VSH SW")
    unique = {}
    for m, t in zip(names, typed):
        unique.setdefault(m, t)
    if len(unique) < len(names):
        dup = next(t for i, t in enumerate(typed) if names[i] in names[:i])
        raise InputError(f"--inputs lists {dup} more than once; give each curve once, e.g. "
                         f"--inputs {' '.join(unique.values())}")
    return names


def positional_options(positional: str, wavelengths, positions: str, window: int, d_model: int | None) -> dict:
    """``positional_options`` for ``--positional``, from its registry entry, checked against
    ``--wavelengths``, ``--positions`` and ``--d-model``.

    ``d_model=None`` (``compare``, which has no --d-model) skips the width check: the caller takes
    the width the options imply (:func:`implied_d_model`).

    Raises
    ------
    InputError
        A combination that cannot work, named with the option that fixes it.
    """
    spec = get_spec(positional, "--positional")
    opts = {}
    if wavelengths and "wavelengths" not in spec.cli_options:
        raise InputError(f"--wavelengths is used only with --positional wavelengths (got --positional {positional})")
    if spec.integer_positions:
        if positions == "depth":
            raise InputError(f"--positional {positional} needs --positions index (one vector per sample index "
                             "1..T); depths in metres are not table indices")
        opts["max_len"] = window + 1
    if "wavelengths" in spec.cli_options:
        opts["wavelengths"] = _wavelengths(wavelengths, required="wavelengths" in spec.required)
    if spec.d_model_for is not None and d_model is not None and d_model != spec.d_model_for(opts):
        width = spec.d_model_for(opts)
        why = (f"2 x the number of --wavelengths ({len(opts['wavelengths'])})" if "wavelengths" in opts
               else f"{width} for this encoding")
        raise InputError(f"--positional {positional}: --d-model ({d_model}) must be {why}; use --d-model {width}")
    return opts


def implied_d_model(positional: str, options: dict) -> int | None:
    """The width ``--positional`` with ``options`` implies (2 x the wavelengths, 4 for the chapter's), or None."""
    spec = get_spec(positional, "--positional")
    return None if spec.d_model_for is None else int(spec.d_model_for(options))


def _wavelengths(values, *, required: bool) -> list:
    if not values and required:
        raise InputError("--positional wavelengths needs --wavelengths W1 W2 ... (position units: samples with "
                         "--positions index, the depth unit with --positions depth); d_model must be 2 x their "
                         "count")
    bad = [w for w in values if not (math.isfinite(w) and w > 0)]
    if bad:
        raise InputError(f"--wavelengths must be finite numbers > 0, got {bad[0]:g}")
    return [float(w) for w in values]
