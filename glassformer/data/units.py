"""Unit strings as well files write them: depth units, and fractions vs. percent.

A LAS file states each curve's unit in its ``~Curve`` section (``PHIF .V/V``, ``CPOR .%``,
``KLOGH .mD``); :class:`~glassformer.data.WellLog` keeps those strings exactly as written.  The
functions here *classify* them without changing them, so that a model trained on porosity in v/v
can recognise a file whose porosity is in percent.

Recognised spellings (compared without case and surrounding blanks)
-------------------------------------------------------------------
Depth, metres
    M, METER, METERS, METRE, METRES, the Cyrillic метер and м (as lasio's table), and the empty
    string (metres unless the file says otherwise).
Depth, feet
    FT, F, FEET, FOOT, USFT (US survey foot).
Volume fraction (porosity, shale volume, water saturation): fraction
    V/V, v/v, DEC, DECIMAL, FRAC, FRACTION, M3/M3, FT3/FT3, 1, UNITLESS, - and the empty string
    (an unlabelled porosity-like curve is conventionally a fraction; Volve's CPI logs write V/V).
Volume fraction: percent
    %, PCT, PERCENT, PU, P.U. (porosity units: 1 pu = 1 % of bulk volume), %V/V, % (V/V).
"""

from __future__ import annotations

import re

from ..errors import DepthError

__all__ = [
    "DEPTH_UNIT_NAMES",
    "FRACTION_UNITS",
    "PERCENT_UNITS",
    "depth_unit_from_string",
    "volume_fraction_kind",
]

#: Spellings of the two depth units, upper-case, by the name glassformer uses ("m" or "ft").
DEPTH_UNIT_NAMES: dict[str, frozenset[str]] = {
    "m": frozenset({"M", "METER", "METERS", "METRE", "METRES", "МЕТЕР", "М"}),
    "ft": frozenset({"FT", "F", "FEET", "FOOT", "USFT"}),
}

#: Unit strings (upper-case) of a volume fraction written as a fraction, 0 to 1.
FRACTION_UNITS: frozenset[str] = frozenset(
    {"", "V/V", "DEC", "DECIMAL", "FRAC", "FRACTION", "M3/M3", "FT3/FT3", "1", "UNITLESS", "-"}
)

#: Unit strings (upper-case) of a volume fraction written in percent, 0 to 100.
PERCENT_UNITS: frozenset[str] = frozenset({"%", "PCT", "PERCENT", "PU", "P.U.", "%V/V"})

# "% (V/V)", "%(v/v)": percent of the bulk volume, written out.
_PERCENT_OF_VOLUME = re.compile(r"^%\s*\(\s*V/V\s*\)$")

# Tenths of an inch: an index unit some logging contractors write (lasio knows it too).
_TENTH_INCH = frozenset({".1IN", "0.1IN", ".1INCH", "0.1INCH"})


def depth_unit_from_string(unit: str, source: str = "") -> str:
    """Map a file's depth-unit string to ``"m"`` or ``"ft"``.

    Parameters
    ----------
    unit : str
        The unit as the file writes it (``"M"``, ``"ft"``, ``"метер"``, ``""`` ...).
    source : str, optional
        The file, named in the error message.

    Returns
    -------
    str
        ``"m"`` or ``"ft"``; an empty string means metres (metres unless the file says otherwise).

    Raises
    ------
    DepthError
        If the unit is neither metres nor feet (the spellings recognised are listed in this
        module's documentation); tenths of an inch (``.1IN``) get their own explanation.
    """
    u = (unit or "").strip().upper()
    for name, spellings in DEPTH_UNIT_NAMES.items():
        if u in spellings:
            return name
    if u == "":
        return "m"
    where = f"{source}: " if source else ""
    if u in _TENTH_INCH:
        raise DepthError(
            f"{where}depth unit {unit!r} (tenths of an inch) is neither metres (M) nor feet (FT); "
            "glassformer keeps depth in the file's own metres or feet, so convert the index first "
            "(120 tenths of an inch make a foot)"
        )
    raise DepthError(f"{where}depth unit {unit!r} is neither metres (M) nor feet (FT)")


def volume_fraction_kind(unit: str | None) -> str | None:
    """Classify the unit of a porosity-like curve (porosity, shale volume, saturation).

    Parameters
    ----------
    unit : str or None
        The unit string as the file writes it; None is treated like the empty string.

    Returns
    -------
    {"fraction", "percent"} or None
        ``"fraction"`` for values 0 to 1 (V/V, DEC, FRAC, the empty string, ...), ``"percent"``
        for values 0 to 100 (%, PU, ...), None for any other unit (e.g. ``"OHMM"``, ``"mD"``):
        the caller decides what an unknown unit means.  The spellings are listed in this
        module's documentation.

    Examples
    --------
    >>> volume_fraction_kind("V/V"), volume_fraction_kind(" pu "), volume_fraction_kind("OHMM")
    ('fraction', 'percent', None)
    """
    u = (unit or "").strip().upper()
    if u in FRACTION_UNITS:
        return "fraction"
    if u in PERCENT_UNITS or _PERCENT_OF_VOLUME.match(u):
        return "percent"
    return None
