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

Units a user states
-------------------
``--unit CURVE=UNIT`` accepts the units of :data:`STATED_UNITS` in any of their spellings and
stores the usual one (``percent``, ``pct`` -> ``%``; ``frac``, ``fraction``, ``dec`` -> ``v/v``;
``feet`` -> ``ft``; ``metres`` -> ``m``; ``millidarcy``, ``md`` -> ``mD``); anything else is refused
(:func:`stated_unit`), so that a typing error never becomes a unit no check recognises.

Units written in a table's header
---------------------------------
A CSV or Excel column often carries its unit in its header: ``Por (%)``, ``Perm [mD]``,
``PERM_MD``.  :func:`split_header` splits such a header into the curve's name (``POR``,
``PERM``) and its unit.  Any text in parentheses or square brackets at the end of a header is
its unit; after an underscore only the units of :data:`HEADER_UNITS` are (a header such as
``RES_DEEP`` or ``PHIF_CORR`` keeps its name), and the lengths m and ft only after a depth name
(``RES_M``, medium resistivity, is not a curve in metres).  Recognised units are written in
their usual spelling (``MD`` -> ``mD``, ``PCT`` -> ``%``); others are kept as written.
"""

from __future__ import annotations

import difflib
import re

from ..errors import DepthError, InputError

__all__ = [
    "DEPTH_UNIT_NAMES",
    "FRACTION_UNITS",
    "HEADER_UNITS",
    "PERCENT_UNITS",
    "STATED_UNITS",
    "curve_name",
    "depth_unit_from_string",
    "did_you_mean",
    "fraction_percent_factor",
    "split_header",
    "stated_unit",
    "unit_quantity",
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

#: Units recognised in a header (upper-case spellings -> the spelling stored with the curve).
HEADER_UNITS: dict[str, str] = {
    "M": "m", "FT": "ft", "%": "%", "PCT": "%", "PU": "%", "V/V": "v/v", "FRAC": "frac", "DEC": "v/v",
    "MD": "mD", "G/CC": "g/cc", "G/CM3": "g/cm3", "API": "API", "GAPI": "gAPI", "US/FT": "us/ft",
    "USEC/FT": "us/ft", "OHM.M": "ohm.m", "OHMM": "ohm.m", "OHM-M": "ohm.m",
}
_LENGTHS = frozenset({"M", "FT"})

#: The units ``--unit CURVE=UNIT`` accepts: the spelling stored with the curve -> its spellings (upper-case).
STATED_UNITS: dict[str, frozenset[str]] = {
    "%": frozenset({"%", "PERCENT", "PCT", "PU", "P.U.", "%V/V"}),
    "v/v": frozenset({"V/V", "FRAC", "FRACTION", "DEC", "DECIMAL", "M3/M3", "FT3/FT3"}),
    "unitless": frozenset({"UNITLESS", "1", "-", "NONE"}),
    "m": frozenset({"M", "METER", "METERS", "METRE", "METRES"}),
    "ft": frozenset({"FT", "FEET", "FOOT", "USFT"}),
    "mD": frozenset({"MD", "MILLIDARCY", "MILLIDARCIES"}),
    "mD/cp": frozenset({"MD/CP"}),
    "g/cc": frozenset({"G/CC", "G/CM3"}),
    "API": frozenset({"API", "GAPI"}),
    "us/ft": frozenset({"US/FT", "USEC/FT"}),
    "ohm.m": frozenset({"OHM.M", "OHMM", "OHM-M"}),
}
#: What each unit of :data:`STATED_UNITS` measures: a curve in one cannot stand for a curve in another.
_QUANTITIES: dict[str, str] = {
    "%": "volume fraction", "v/v": "volume fraction", "m": "length", "ft": "length", "mD": "permeability",
    "mD/cp": "mobility", "g/cc": "density", "API": "gamma ray", "us/ft": "slowness", "ohm.m": "resistivity",
}
_DEPTH_NAMES = ("DEPTH", "DEPT", "MD", "TDEP")          # as glassformer.data.parsing.DEPTH_NAMES
_BRACKETED = re.compile(r"^(.*?\S)\s*[(\[]\s*([^()\[\]]*?)\s*[)\]]$")


def _unit_spelling(unit: str) -> str:
    return HEADER_UNITS.get(unit.strip().upper(), unit.strip())


def curve_name(text: str) -> str:
    """The curve name of a header or of a name typed by a user: upper-case, blanks as ``_``.

    ``"Por (%)"`` -> ``"POR"``, ``"Bulk density [g/cc]"`` -> ``"BULK_DENSITY"``, ``"PERM_MD"`` ->
    ``"PERM_MD"`` (an underscore unit is split by :func:`split_header` only: a LAS mnemonic may end
    in one).
    """
    text = str(text).strip()
    match = _BRACKETED.match(text)
    if match and match.group(2):
        text = match.group(1)
    return "_".join(text.upper().split())


def did_you_mean(name: str, names) -> str:
    """``" (did you mean PHIF?)"`` when ``names`` holds curve names close to ``name`` (a typing error), else ``""``.

    Closeness is :func:`difflib.get_close_matches`' ratio (at least 0.6), on the curve names as
    :func:`curve_name` writes them; at most three are offered, the closest first.

    Examples
    --------
    >>> did_you_mean("PHI", ["DEPTH", "PHIF", "VSH"]), did_you_mean("GR", ["PHIF"])
    (' (did you mean PHIF?)', '')
    """
    names = [str(n) for n in names]
    close = difflib.get_close_matches(curve_name(name), [curve_name(n) for n in names], n=3, cutoff=0.6)
    close = [names[[curve_name(n) for n in names].index(c)] for c in close]
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def split_header(header: str) -> tuple[str, str | None]:
    """Split a table header into the curve name and the unit it writes (see the module notes).

    Parameters
    ----------
    header : str
        ``"Por (%)"``, ``"Perm [mD]"``, ``"PERM_MD"``, ``"Depth (m)"``, ``"GR"`` ...

    Returns
    -------
    (name, unit)
        ``name`` upper-case, blanks as ``_``; ``unit`` None when the header names none.

    Examples
    --------
    >>> split_header("Por (%)"), split_header("PERM_MD"), split_header("RES_M"), split_header("DEPTH_FT")
    (('POR', '%'), ('PERM', 'mD'), ('RES_M', None), ('DEPTH', 'ft'))
    """
    text = str(header).strip()
    match = _BRACKETED.match(text)
    if match and match.group(2):
        return curve_name(match.group(1)), _unit_spelling(match.group(2))
    name = curve_name(text)
    stem, sep, unit = name.rpartition("_")
    if sep and stem and unit in HEADER_UNITS and (unit not in _LENGTHS or stem in _DEPTH_NAMES):
        return stem.rstrip("_"), HEADER_UNITS[unit]
    return name, None


def stated_unit(unit: str, curve: str = "") -> str:
    """The usual spelling of a unit a user states (``--unit CURVE=UNIT``): ``"percent"`` -> ``"%"``.

    Parameters
    ----------
    unit : str
        As typed, any case (``"pct"``, ``"Fraction"``, ``"feet"``, ``"md"``).
    curve : str, optional
        The curve it is stated for, named in the error message.

    Returns
    -------
    str
        A key of :data:`STATED_UNITS`.

    Raises
    ------
    InputError
        A unit glassformer does not know (the message lists those it accepts).

    Examples
    --------
    >>> stated_unit("percent"), stated_unit(" frac "), stated_unit("Feet"), stated_unit("md")
    ('%', 'v/v', 'ft', 'mD')
    """
    key = str(unit).strip().upper()
    for spelling, spellings in STATED_UNITS.items():
        if key in spellings:
            return spelling
    raise InputError(f"--unit {curve + '=' if curve else ''}{str(unit).strip()}: unknown unit {str(unit).strip()!r}; "
                     f"accepted: {', '.join(STATED_UNITS)} (also written percent, pct, frac, fraction, dec, feet, "
                     "metres, millidarcy)")


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


def unit_quantity(unit: str | None) -> str | None:
    """What a stated unit measures: ``"volume fraction"`` (v/v, %, PU, ...), ``"density"`` (g/cc),
    ``"gamma ray"`` (API), ``"slowness"`` (us/ft), ``"resistivity"`` (ohm.m), ``"permeability"`` (mD),
    ``"mobility"`` (mD/cp) or ``"length"`` (m, ft); None for no unit or one this module does not know.

    Examples
    --------
    >>> unit_quantity("G/CC"), unit_quantity("pu"), unit_quantity("V/V"), unit_quantity("xyz")
    ('density', 'volume fraction', 'volume fraction', None)
    """
    u = (unit or "").strip().upper()
    if not u:
        return None
    known = next((spelling for spelling, spellings in STATED_UNITS.items() if u in spellings), None)
    if known is not None:
        return _QUANTITIES.get(known)
    return "volume fraction" if volume_fraction_kind(u) is not None else None


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


def fraction_percent_factor(unit: str | None, to_unit: str | None) -> float | None:
    """The factor that converts a porosity-like curve from ``unit`` to ``to_unit``: 100 from a volume
    fraction to percent, 0.01 back; None when the two are not a stated fraction and a stated percent.

    Only the explicit fraction spellings of :data:`STATED_UNITS` (v/v, frac, dec, m3/m3 ...) count:
    the empty string, ``1``, ``UNITLESS`` and ``-`` also label ratios and exponents, so a curve in
    them is never scaled.

    Examples
    --------
    >>> fraction_percent_factor("V/V", "%"), fraction_percent_factor("pu", "frac"), fraction_percent_factor("", "%")
    (100.0, 0.01, None)
    """
    def kind(u):
        u = str(u or "").strip().upper()
        return "fraction" if u in STATED_UNITS["v/v"] else ("percent" if u and volume_fraction_kind(u) == "percent"
                                                             else None)
    pair = (kind(unit), kind(to_unit))
    return {("fraction", "percent"): 100.0, ("percent", "fraction"): 0.01}.get(pair)
