"""Curve aliases: the same quantity under another mnemonic (porosity as PHIF or PHIE, ...).

A model trained on ``PHIF`` meets a well whose effective porosity is called ``PHIE``.
:func:`resolve_curves` finds, for every curve asked for, the curve to use:

1. the curve of that name, if the well has it;
2. else the user's aliases for that name (``PHIF=PHIE``: "use PHIE where PHIF is asked"): exactly
   one present is used; several present is an error listing them;
3. else the names of the same group in :data:`DEFAULT_ALIASES`, by the same rule;
4. else :class:`~glassformer.errors.CurveNotFoundError` listing what the well has.

The default table
-----------------
Each group holds mnemonics that name one quantity in common practice: the interpretation
outputs of Crain's Petrophysical Handbook's curve names (PHIe, PHIt, Vsh, Sw, PERM) as LAS files
write them, and the Volve CPI logs (PHIF, KLOGH).  Quantities that are related but not the same
are kept in separate groups, never aliased:

* effective porosity (PHIF, PHIE) is not total porosity (PHIT, PORT): in shaly rock total
  porosity includes clay-bound water and is larger;
* neutron porosity (NPHI, TNPH) and density porosity (DPHI) are tool readings in limestone (or
  sandstone) units, not interpreted porosity, and core porosity (CPOR) is a laboratory
  measurement, often in percent: none of them is an alias of porosity;
* shale volume (VSH) is not clay volume (VCL): shale includes silt;
* effective water saturation (SW, SWE) is not total water saturation (SWT);
* horizontal log permeability (KLOGH, KLOG, PERM, PERMH) is not vertical permeability (KLOGV),
  and ``K`` is left out: in spectral gamma-ray logs it is potassium.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from ..errors import CurveNotFoundError, DataFileError, InputError
from .units import curve_name, did_you_mean
from .welllog import WellLog

__all__ = ["DEFAULT_ALIASES", "describe_use", "parse_aliases", "resolve_curves", "with_requested_names"]

#: Groups of mnemonics naming one quantity; any member may stand in for another.
DEFAULT_ALIASES: dict[str, tuple[str, ...]] = {
    "effective porosity, v/v": ("PHIF", "PHIE"),
    "total porosity, v/v": ("PHIT", "PORT"),
    "shale volume, v/v": ("VSH", "VSHALE"),
    "clay volume, v/v": ("VCL", "VCLAY"),
    "effective water saturation, v/v": ("SW", "SWE"),
    "total water saturation, v/v": ("SWT",),
    "horizontal permeability, mD": ("KLOGH", "KLOG", "PERM", "PERMH"),
    "vertical permeability, mD": ("KLOGV", "PERMV"),
}


def parse_aliases(specs: Iterable[str] | Mapping[str, str | Sequence[str]] | None) -> dict[str, tuple[str, ...]]:
    """Turn ``["PHIF=PHIE", "PHIF=POR"]`` (or a mapping) into ``{"PHIF": ("PHIE", "POR")}``.

    Parameters
    ----------
    specs : iterable of str, or mapping of str -> str or sequence of str, or None
        ``"ASKED=USED"`` strings (repeatable, as ``--alias`` on the command line), or a mapping
        from the asked name to one or several curves to use.  Names are case-insensitive.

    Returns
    -------
    dict of str -> tuple of str
        Upper-case names, the aliases of each name in the order given.

    Raises
    ------
    InputError
        For a string that is not ``NAME=CURVE`` with two different, non-empty names.
    """
    pairs: list[tuple[str, str]] = []
    if isinstance(specs, Mapping):
        for asked, used in specs.items():
            pairs += [(asked, u) for u in ([used] if isinstance(used, str) else used)]
    else:
        for spec in specs or ():
            asked, eq, used = str(spec).partition("=")
            if not eq:
                raise InputError(f"alias {spec!r} must be NAME=CURVE, e.g. PHIF=PHIE (use PHIE where PHIF is asked)")
            pairs.append((asked, used))
    out: dict[str, tuple[str, ...]] = {}
    for asked, used in pairs:
        a, u = curve_name(asked), curve_name(used)          # "POR=Por (%)" names the curve POR
        if not a or not u or a == u:
            raise InputError(f"alias {asked}={used} must name two different curves, e.g. PHIF=PHIE")
        if u not in out.get(a, ()):
            out[a] = (*out.get(a, ()), u)
    return out


def _default_group(name: str) -> tuple[str, ...]:
    for members in DEFAULT_ALIASES.values():
        if name in members:
            return tuple(m for m in members if m != name)
    return ()


def _resolve_one(log: WellLog, name: str, user: tuple[str, ...], use_defaults: bool) -> str:
    have = set(log.curves) | {log.depth_mnemonic}
    if log.key_of(name) in have:                # the name, or a header's spelling of it (``Por (%)``)
        return log.key_of(name)
    tried: list[str] = []
    for candidates, origin in ((user, "aliases given"), (_default_group(name) if use_defaults else (), "default aliases")):
        present = [c for c in candidates if c in have]
        tried += [c for c in candidates if c not in tried]
        if len(present) == 1:
            return present[0]
        if len(present) > 1:
            raise DataFileError(
                f"curve {name!r} is not in {log.label} and several of its {origin} are: "
                f"{', '.join(present)}; choose one with an alias, e.g. {name}={present[0]}"
            )
    if not tried:
        log.curve(name)  # raises CurveNotFoundError: the log's own message, which names skipped curves
    raise CurveNotFoundError(
        f"curve {name!r} not found in {log.label}, nor any of its aliases {', '.join(tried)}; "
        f"available: {', '.join([log.depth_mnemonic, *log.curves])}"
        + did_you_mean(name, [log.depth_mnemonic, *log.curves]).replace(" (", "; ").rstrip(")")
    )


def resolve_curves(
    log: WellLog, names: Sequence[str], aliases=None, *, use_defaults: bool = True
) -> dict[str, str]:
    """Find the curve of ``log`` to use for each name asked for (the rule is in the module notes).

    Parameters
    ----------
    log : WellLog
        The well.
    names : sequence of str
        The curves asked for (e.g. a model's inputs and target), any case.
    aliases : see :func:`parse_aliases`, optional
        The user's aliases; they are tried before the default table.
    use_defaults : bool, default True
        Try :data:`DEFAULT_ALIASES` when the name and the user's aliases are absent.

    Returns
    -------
    dict of str -> str
        Each asked name (upper-case) -> the mnemonic used; equal when the well has the name.

    Raises
    ------
    CurveNotFoundError
        A name, and every alias of it, absent (the message lists the well's curves).
    DataFileError
        Several aliases of one name present (the message lists them), or two names resolved to
        the same curve.
    """
    user = parse_aliases(aliases)
    used: dict[str, str] = {}
    for asked in names:
        key = curve_name(asked)                 # "Por (%)" asks for POR
        used[key] = _resolve_one(log, key, user.get(key, ()), use_defaults)
    by_curve: dict[str, list[str]] = {}
    for asked, curve in used.items():
        by_curve.setdefault(curve, []).append(asked)
    for curve, asked in by_curve.items():
        if len(asked) > 1:
            raise DataFileError(f"{log.label}: {' and '.join(asked)} would all use curve {curve}")
    return used


def with_requested_names(log: WellLog, names: Sequence[str], aliases=None, *, use_defaults: bool = True):
    """Return ``(log2, used)``: a copy of ``log`` whose curves carry the names asked for.

    ``used`` is :func:`resolve_curves`'s mapping (asked -> used mnemonic, to report); in ``log2``
    each aliased curve is renamed to the name asked for, so code that reads ``PHIF`` finds the
    well's ``PHIE`` there.  Raises as :func:`resolve_curves`.
    """
    used = resolve_curves(log, names, aliases, use_defaults=use_defaults)
    renames = {curve: asked for asked, curve in used.items() if curve != asked}
    return (log.rename(renames) if renames else log), used


def describe_use(asked: str, curve: str, aliases=None) -> str:
    """What to tell the user when ``asked`` was read from ``curve``: ``"PHIF read from curve PHIE"``.

    When the user gave aliases for ``asked`` and ``curve`` is none of them (the default table found
    it), says so, so that a mistyped alias is not passed over in silence.
    """
    given = parse_aliases(aliases).get(str(asked).strip().upper(), ())
    text = f"{asked} read from curve {curve}"
    if given and curve not in given:
        text += (f" (a default alias: the alias given, {', '.join(given)}, is not in this well)")
    return text

