"""Curve aliases: the named curve first, then the user's aliases, then the default table; ambiguity is an error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from glassformer.data import DEFAULT_ALIASES, WellLog, parse_aliases, read_las, resolve_curves, with_requested_names
from glassformer.errors import CurveNotFoundError, DataFileError, InputError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "wells"


def _log(*names):
    return WellLog(name="W", depth=[1.0, 2.0, 3.0], curves={n: np.arange(3.0) + k for k, n in enumerate(names)},
                   units={n: "V/V" for n in names}, source="w.las")


def test_parse_aliases():
    assert parse_aliases(["phif=PHIE", "PHIF = POR", "KLOGH=PERM", "PHIF=PHIE"]) == {
        "PHIF": ("PHIE", "POR"), "KLOGH": ("PERM",)}
    assert parse_aliases({"PHIF": "PHIE", "SW": ["SWE", "SWT"]}) == {"PHIF": ("PHIE",), "SW": ("SWE", "SWT")}
    assert parse_aliases(None) == {}
    with pytest.raises(InputError, match=r"alias 'PHIF' must be NAME=CURVE, e\.g\. PHIF=PHIE"):
        parse_aliases(["PHIF"])
    for bad in ("PHIF=", "=PHIE", "PHIF=phif"):
        with pytest.raises(InputError, match=r"must name two different curves"):
            parse_aliases([bad])


def test_the_named_curve_wins_and_one_alias_stands_in():
    assert resolve_curves(_log("PHIF", "PHIE", "VSH"), ["phif", "VSH"]) == {"PHIF": "PHIF", "VSH": "VSH"}
    assert resolve_curves(_log("PHIE", "VSHALE", "SWE", "PERM"), ["PHIF", "VSH", "SW", "KLOGH"]) == {
        "PHIF": "PHIE", "VSH": "VSHALE", "SW": "SWE", "KLOGH": "PERM"}
    assert resolve_curves(_log("DEPTH_X"), ["DEPTH"]) == {"DEPTH": "DEPTH"}  # the depth index counts


def test_related_but_different_quantities_are_never_aliases():
    for name, not_aliases in [("PHIF", ("PHIT", "NPHI", "DPHI", "CPOR")), ("VSH", ("VCL",)), ("SW", ("SWT",)),
                              ("KLOGH", ("K", "KLOGV"))]:
        with pytest.raises(CurveNotFoundError, match=rf"curve '{name}' not found in well 'W' \(w\.las\), nor any of its aliases"):
            resolve_curves(_log(*not_aliases), [name])
    groups = [set(g) for g in DEFAULT_ALIASES.values()]
    assert all(a.isdisjoint(b) for i, a in enumerate(groups) for b in groups[i + 1:])


def test_several_aliases_present_is_an_error_listing_them():
    with pytest.raises(DataFileError, match=r"curve 'KLOGH' is not in well 'W' \(w\.las\) and several of its default aliases are: KLOG, PERM; choose one with an alias, e\.g\. KLOGH=KLOG"):
        resolve_curves(_log("PERM", "KLOG"), ["KLOGH"])
    # the user's alias settles it
    assert resolve_curves(_log("PERM", "KLOG"), ["KLOGH"], ["KLOGH=PERM"]) == {"KLOGH": "PERM"}
    with pytest.raises(DataFileError, match=r"several of its aliases given are: PHIE, POR"):
        resolve_curves(_log("PHIE", "POR"), ["PHIF"], {"PHIF": ["PHIE", "POR"]})


def test_user_aliases_before_the_table_and_the_table_can_be_switched_off():
    assert resolve_curves(_log("POR"), ["PHIF"], ["PHIF=POR"]) == {"PHIF": "POR"}
    assert resolve_curves(_log("PHIE"), ["PHIF"], ["PHIF=POR"]) == {"PHIF": "PHIE"}   # user's absent: table
    with pytest.raises(CurveNotFoundError, match=r"nor any of its aliases POR; available: DEPTH, PHIE"):
        resolve_curves(_log("PHIE"), ["PHIF"], ["PHIF=POR"], use_defaults=False)
    with pytest.raises(CurveNotFoundError, match=r"curve 'GR' not found in well 'W' \(w\.las\); available: DEPTH, PHIE"):
        resolve_curves(_log("PHIE"), ["GR"])   # no alias to try: the well's own message


def test_two_names_on_one_curve_is_an_error():
    with pytest.raises(DataFileError, match=r"PHIF and PHIE would all use curve PHIE"):
        resolve_curves(_log("PHIE"), ["PHIF", "PHIE"])


def test_an_aliased_well_reads_exactly_like_the_renamed_original(tmp_path):
    original = read_las(FIX / "b19_bottom_up.las")
    renamed = tmp_path / "phie.las"
    renamed.write_text((FIX / "b19_bottom_up.las").read_text().replace("NPHI.V/V", "PHIE.V/V"))
    log, used = with_requested_names(read_las(renamed), ["nphi", "ILD"], ["NPHI=PHIE"])
    assert used == {"NPHI": "PHIE", "ILD": "ILD"}
    assert log.mnemonics == original.mnemonics and log.units == original.units
    np.testing.assert_array_equal(log.matrix(["NPHI", "ILD"]), original.matrix(["NPHI", "ILD"]))
    same, used = with_requested_names(original, ["NPHI"])
    assert same is original and used == {"NPHI": "NPHI"}
