"""Porosity-like curves as a fraction (v/v) or in percent: the checks of their scale.

Porosity, shale volume and water saturation are written either as a volume fraction (0 to 1) or
in percent (0 to 100), and files often get the header wrong or leave it out.  A factor of 100 on
an input makes every prediction meaningless, so these checks refuse a curve whose values
contradict its unit (:func:`check_fraction_range`, :func:`check_percent_range`), refuse a
unitless fraction beside unitless percent (:func:`check_unitless_scales` between wells,
:func:`check_unitless_record` against a model) and convert v/v and % into each other where both
units are stated (:func:`convert_units`).  ``glassformer.wells.checks`` runs them before every
prediction and for every validation and test well.
"""

from __future__ import annotations

import numpy as np

from ..data.units import fraction_percent_factor, volume_fraction_kind
from ..errors import DataFileError

__all__ = ["DENSITY_RANGE", "FRACTION_TOLERANCE", "PERCENT_ABOVE", "check_density_range", "check_fraction_range",
           "check_percent_range",
           "check_unitless_record", "check_unitless_scales", "convert_units", "finite_values",
           "fraction_looks_like_percent", "refuse_fraction_values", "where"]

#: How far beyond [0, 1] a volume fraction may stray (rounding, slightly negative computed porosity).
FRACTION_TOLERANCE = 0.05
# Units that say "volume fraction" outright; UNITLESS, 1 and - also label ratios (an Archie exponent M ~ 2).
_VOLUME_FRACTION = frozenset({"V/V", "FRAC", "FRACTION", "DEC", "DECIMAL", "M3/M3", "FT3/FT3"})
#: A value above which a porosity-like curve cannot be a fraction (v/v), rounding included: it reads as percent.
PERCENT_ABOVE = 1.5
#: Bulk densities of rocks and their fluids in g/cc, widely: from gas-bearing coal (~1.2) and water (1.0)
#: to pyrite (~5); a curve stated in g/cc whose median lies outside is not a density.
DENSITY_RANGE = (0.8, 5.5)
_DENSITY = frozenset({"G/CC", "G/CM3"})


def where(log) -> str:
    """The file a log was read from, else its well name: how every message names a well."""
    return log.source or log.name


def fraction_looks_like_percent(record: dict, log, X) -> list:
    """Refuse an input whose median exceeds 1 where the model was trained on a fraction (v/v): it looks like percent.

    Parameters
    ----------
    record : the model's training record (``glassformer.wells.checks.training_record``)
    log : WellLog, its curves renamed to the model's inputs and converted where the file states % or v/v
    X : ndarray (n_samples, n_inputs), the inputs of ``log`` in the record's order

    Returns
    -------
    list of str
        A warning per such curve whose unit the file states, of a kind not known to be a fraction
        or percent (``_check_units`` warns about the unit string too).

    Raises
    ------
    DataFileError
        Such a curve without a unit in the file, or with one that reads as a fraction (UNITLESS, ``1``,
        ``-``: not held to [0, 1]); the message names the file, the curve, its median and range, and the
        fix (``--unit CURVE=%`` converts it, or convert the file).  A curve whose file states % is
        converted before this check and never reaches it.
    """
    out = []
    for j, (name, info) in enumerate(record["inputs"].items()):
        col = X[:, j][np.isfinite(X[:, j])]
        if not (info.get("kind") == "fraction" and col.size and np.median(col) > 1.0):
            continue
        mine = str(log.units.get(name, "")).strip()
        seen = f"(median {np.median(col):.4g}, range {col.min():.4g} to {col.max():.4g})"
        if mine and volume_fraction_kind(mine) != "fraction":
            out.append(f"{where(log)}: curve {name} has a median of {np.median(col):.4g}, but the model was trained "
                       f"on {info['unit']} (a fraction, 0 to 1): the curve looks like percent; convert it first")
            continue
        raise DataFileError(f"{where(log)}: curve {name} {_said(mine)} and looks like percent {seen}, but the model "
                            f"was trained on {info['unit']} (a fraction, 0 to 1); pass --unit {name}=% to convert it, "
                            f"or convert the file's {name} to {info['unit']}")
    return out


def check_fraction_range(log, names) -> None:
    """Refuse a curve of ``names`` whose unit says volume fraction but whose values leave [0, 1].

    Volume-fraction units are V/V, FRAC(TION), DEC(IMAL), M3/M3 and FT3/FT3 (any case); UNITLESS,
    ``1`` and ``-`` are not held to [0, 1], since files also write them for ratios and exponents.

    Parameters
    ----------
    log : WellLog
    names : curve mnemonics to check (others of the log are not looked at)

    Raises
    ------
    DataFileError
        More than :data:`FRACTION_TOLERANCE` below 0 or above 1 anywhere; the message names the
        file, the curve, its unit, how many samples and their range, and says that the curve
        looks like percent (``--unit CURVE=%`` states it).
    """
    for name, unit, values in _stated_in(log, names, _VOLUME_FRACTION):
        bad = (values < -FRACTION_TOLERANCE) | (values > 1.0 + FRACTION_TOLERANCE)
        if bad.any():
            hint = ("it looks like percent: convert it to a fraction, or state its unit with --unit "
                    f"{name}=%" if values.max() > 1.0 + FRACTION_TOLERANCE else "check the curve")
            raise DataFileError(f"{where(log)}: curve {name} is in {unit} (a fraction, 0 to 1) but "
                                f"{int(bad.sum())} of {values.size} samples lie outside [0, 1] (range {values.min():.4g} to "
                                f"{values.max():.4g}); {hint}")


def _stated_in(log, names, spellings):
    """``(name, unit, finite values)`` of each curve of ``names`` whose stated unit is one of ``spellings``."""
    for name in names:
        unit = str(log.units.get(name, "")).strip()
        if name in log.curves and unit.upper() in spellings:
            values = np.asarray(log.curves[name], dtype=np.float64)
            yield name, unit, values[np.isfinite(values)]


def check_density_range(log, names) -> None:
    """Refuse a curve of ``names`` stated in g/cc (or g/cm3) whose median lies outside :data:`DENSITY_RANGE`.

    A porosity column headed ``(g/cc)`` by mistake would otherwise be trained on as a density and
    every correctly labelled well refused against it.

    Raises
    ------
    DataFileError
        Naming the file, the curve, the stated unit, the median and range of the values, and the fix.
    """
    low, high = DENSITY_RANGE
    for name, unit, values in _stated_in(log, names, _DENSITY):
        if values.size and not low <= np.median(values) <= high:
            raise DataFileError(f"{where(log)}: curve {name} is stated in {unit} (a density) but its values are not "
                                f"densities (median {np.median(values):.4g}, range {values.min():.4g} to "
                                f"{values.max():.4g}; rocks lie between {low:g} and {high:g} g/cc): correct the unit "
                                f"in the file's header, or state it with --unit {name}=UNIT")


def refuse_fraction_values(log, name: str, said: str) -> None:
    """Raise DataFileError when every finite value of curve ``name`` lies in [0, 1]: a fraction, not percent."""
    values = np.asarray(log.curves[name], dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size and values.min() >= 0.0 and values.max() <= 1.0:
        raise DataFileError(f"{where(log)}: curve {name} {said}, but all {values.size} of its values lie in [0, 1] "
                            f"(range {values.min():.4g} to {values.max():.4g}): it looks like a fraction; convert "
                            f"it to percent (x 100), or state its unit with --unit {name}=v/v if it is a fraction")


def check_percent_range(log, names) -> None:
    """Refuse a curve of ``names`` whose unit says percent but whose values all lie in [0, 1].

    Porosity, shale volume or saturation in percent that never exceeds 1 % is nearly always a
    fraction under a wrong header (``Por (%)`` over 0.05-0.30): predictions on inputs 100 times
    too small are not predictions.

    Parameters
    ----------
    log : WellLog
    names : curve mnemonics to check (others of the log are not looked at)

    Raises
    ------
    DataFileError
        Every finite value in [0, 1]; the message names the file, the curve, its unit, the count
        and the range, and the fix (convert, or ``--unit CURVE=v/v``).
    """
    for name in names:
        unit = str(log.units.get(name, "")).strip()
        if name in log.curves and unit and volume_fraction_kind(unit) == "percent":
            refuse_fraction_values(log, name, f"is in {unit} (percent, 0 to 100)")


def _scale(low: float, high: float) -> str | None:
    """"fraction" for values within [0, 1]; "percent" for values reaching above :data:`PERCENT_ABOVE` but
    within 0 to 100 (with :data:`FRACTION_TOLERANCE`); None otherwise (another kind of curve)."""
    if low >= 0.0 and high <= 1.0:
        return "fraction"
    tol = 100.0 * FRACTION_TOLERANCE
    return "percent" if high > PERCENT_ABOVE and low >= -tol and high <= 100.0 + tol else None


def _said(unit: str) -> str:
    return f"is in {unit}" if unit else "has no unit"


def check_unitless_scales(logs, names) -> None:
    """Refuse wells where a curve of ``names`` lies in [0, 1] in one and reaches above 1.5 in another, a
    unit missing in at least one of the two: a fraction (v/v) beside percent, a factor of about 100 apart.

    Raises
    ------
    DataFileError
        One line naming both files, the curve, both value ranges and the fix: each file's unit in its
        header (``--unit`` states one unit for every file), after which the validation and test
        wells are converted to the training wells' unit.
    """
    for name in names:
        seen = []
        for g in logs:
            values = finite_values(g, name)
            if values.size and _scale(values.min(), values.max()):
                seen.append((g, str(g.units.get(name, "")).strip(), values, _scale(values.min(), values.max())))
        pair = next(((a, b) for a in seen if a[3] == "fraction" for b in seen
                     if b[3] == "percent" and not (a[1] and b[1])), None)
        if pair is None:
            continue
        (f, fu, fv, _), (p, pu, pv, _) = pair
        raise DataFileError(f"curve {name} differs by a factor of about 100 between wells: in {where(f)} it {_said(fu)} "
                            f"and lies in [0, 1] (range {fv.min():.4g} to {fv.max():.4g}), in {where(p)} it "
                            f"{_said(pu)} and reaches {pv.max():.4g} (range {pv.min():.4g} to {pv.max():.4g}): a "
                            f"fraction beside percent; state each file's unit in its header ({name} (v/v) in "
                            f"{where(f)}, {name} (%) in {where(p)}; --unit states one unit for every file), and "
                            "validation and test wells are converted to the training wells' unit")


def check_unitless_record(record: dict, log) -> None:
    """Refuse a well whose input lies in [0, 1] where the model's unitless training range reaches above 1.5,
    or the reverse: a fraction beside percent (today's range check would merely flag every depth)."""
    for name, info in record["inputs"].items():
        low, high = info.get("low", np.nan), info.get("high", np.nan)
        if str(info.get("unit") or "").strip() or name not in log.curves or not np.isfinite([low, high]).all():
            continue
        values, mine = finite_values(log, name), str(log.units.get(name, "")).strip()
        model = _scale(low, high)
        well = _scale(values.min(), values.max()) if values.size else None
        if {model, well} != {"fraction", "percent"}:
            continue
        model_unit, well_unit = ("%", "v/v") if model == "percent" else ("v/v", "%")
        raise DataFileError(f"{where(log)}: curve {name} {_said(mine)} and lies in {values.min():.4g} to "
                            f"{values.max():.4g}, but the model was trained on {name} without a unit over {low:.4g} to "
                            f"{high:.4g} (0.5-99.5 percentiles): a {'fraction' if well == 'fraction' else 'percent'} "
                            f"curve beside a {'percent' if model == 'percent' else 'fraction'} one, a factor of about "
                            f"100; retrain with the unit stated (--unit {name}={model_unit}, or a header "
                            f"{name} ({model_unit})), then predict with --unit {name}={well_unit}, which converts the well")


def convert_units(record: dict, log, against: str = "the model") -> tuple:
    """``(scaled curves, their units, notes)``: inputs of ``log`` stated in v/v where ``record`` states % (or
    the reverse), scaled to the record's unit (x 100 or / 100), each said in a note naming ``against``.

    Other pairs of units are left to the unit checks of ``check_inputs``; the log itself is not changed.
    """
    scaled, units, notes = {}, {}, []
    for name, info in record["inputs"].items():
        mine, theirs = str(log.units.get(name, "")).strip(), str(info.get("unit") or "").strip()
        factor = fraction_percent_factor(mine, theirs) if name in log.curves else None
        if factor is None:
            continue
        scaled[name], units[name] = np.asarray(log.curves[name]) * factor, theirs
        notes.append(f"{where(log)}: {name} converted from {mine} to {theirs} "
                     f"({'x 100' if factor > 1 else '/ 100'}) to match {against}")
    return scaled, units, notes


def finite_values(log, name: str) -> np.ndarray:
    """The finite values of curve ``name`` of ``log``, shape ``(n,)``; empty when the log lacks it."""
    if name not in log.curves:
        return np.empty(0)
    values = np.asarray(log.curves[name], dtype=np.float64)
    return values[np.isfinite(values)]
