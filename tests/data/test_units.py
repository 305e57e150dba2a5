"""Unit strings: depth units (as lasio's table, plus USFT) and porosity-like units as fraction or percent."""

from __future__ import annotations

import pytest

from glassformer.data import depth_unit_from_string, volume_fraction_kind
from glassformer.errors import DepthError


@pytest.mark.parametrize("unit, expected", [
    ("M", "m"), ("m", "m"), (" metres ", "m"), ("METER", "m"), ("метер", "m"), ("м", "m"), ("", "m"),
    ("FT", "ft"), ("ft", "ft"), ("F", "ft"), ("Feet", "ft"), ("FOOT", "ft"), ("USFT", "ft"),
])
def test_depth_unit_spellings(unit, expected):
    assert depth_unit_from_string(unit) == expected


def test_depth_unit_that_is_not_a_length_names_the_file():
    with pytest.raises(DepthError, match=r"^w\.las: depth unit 'S' is neither metres \(M\) nor feet \(FT\)$"):
        depth_unit_from_string("S", "w.las")
    with pytest.raises(DepthError, match=r"depth unit '\.1IN' \(tenths of an inch\) .*120 tenths of an inch make a foot"):
        depth_unit_from_string(".1IN")
    with pytest.raises(DepthError, match=r"depth unit 'KM'"):
        depth_unit_from_string("KM")


@pytest.mark.parametrize("unit, expected", [
    # fraction, 0 to 1
    ("V/V", "fraction"), ("v/v", "fraction"), ("DEC", "fraction"), ("frac", "fraction"), ("Fraction", "fraction"),
    ("", "fraction"), (None, "fraction"), ("m3/m3", "fraction"), ("UNITLESS", "fraction"), ("-", "fraction"),
    # percent, 0 to 100
    ("%", "percent"), (" % ", "percent"), ("PU", "percent"), ("p.u.", "percent"), ("pct", "percent"),
    ("%V/V", "percent"), ("%(V/V)", "percent"), ("% (v/v)", "percent"),
    # neither: the caller decides
    ("OHMM", None), ("mD", None), ("MD", None), ("GAPI", None), ("%/s", None),
])
def test_volume_fraction_kind(unit, expected):
    assert volume_fraction_kind(unit) == expected


@pytest.mark.parametrize("typed, stored", [
    ("percent", "%"), ("PCT", "%"), ("%", "%"), ("frac", "v/v"), ("Fraction", "v/v"), ("v/v", "v/v"), ("dec", "v/v"),
    ("ft", "ft"), ("feet", "ft"), ("m", "m"), ("metres", "m"), ("Meters", "m"), ("md", "mD"), ("mD", "mD"),
    ("millidarcy", "mD"), (" g/cc ", "g/cc"), ("gAPI", "API"), ("ohmm", "ohm.m"),
])
def test_a_stated_unit_is_written_in_its_usual_spelling(typed, stored):
    from glassformer.data import parse_units

    assert parse_units([f"POR={typed}"]) == {"POR": stored}


def test_an_unknown_stated_unit_is_refused_listing_the_accepted_ones():
    from glassformer.data import parse_units
    from glassformer.errors import InputError

    with pytest.raises(InputError, match=r"^--unit POR=furlongs: unknown unit 'furlongs'; accepted: %, v/v, unitless, "
                                         r"m, ft, mD, mD/cp, g/cc, API, us/ft, ohm.m \(also written percent"):
        parse_units(["POR=furlongs"])


def test_did_you_mean_offers_close_curve_names_only():
    from glassformer.data.units import did_you_mean

    assert did_you_mean("PHI", ["DEPTH", "PHIF", "VSH"]) == " (did you mean PHIF?)"
    assert did_you_mean("por", ["Depth (m)", "Por (%)", "Perm (mD)"]) == " (did you mean Por (%)?)"
    assert did_you_mean("GR", ["PHIF", "VSH"]) == ""


@pytest.mark.parametrize("unit, to_unit, factor", [
    ("V/V", "%", 100.0), ("frac", "PU", 100.0), ("%", "v/v", 0.01), ("% (v/v)", "dec", 0.01), ("%", "%", None),
    ("", "%", None), ("UNITLESS", "%", None), ("1", "%", None), ("%", "-", None), ("mD", "%", None)])
def test_fraction_percent_factor_only_between_a_stated_fraction_and_percent(unit, to_unit, factor):
    from glassformer.data.units import fraction_percent_factor

    assert fraction_percent_factor(unit, to_unit) == factor
