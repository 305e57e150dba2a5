"""Inputs checked before a prediction is trusted: units, depth unit, sample step, training ranges.

A saved well model records what it was trained on (:func:`training_record`): the depth unit, the
sample step, each input's unit as the files wrote it (``V/V``, ``%``, ...) and each input's
training range (the 0.5 and 99.5 percentiles of the training samples).  :func:`check_inputs`
compares a well with that record before anything is predicted:

* an input whose unit is known in both and of another kind (porosity in % for a model trained
  on v/v) is refused: predictions on inputs 100 times too large are not predictions;
* a depth unit other than the model's is refused when positions are depths, unless the caller
  asks for the depths to be converted (ft <-> m, said in a note); with sample-index positions
  only the sample step matters;
* a sample step more than 5 % from the training step is warned about: a window of ``T`` samples
  then spans another length of rock;
* every sample with an input outside the training range is flagged (``out_of_range``), and the
  count is reported per input;
* a curve whose unit says it is a volume fraction (v/v, frac, dec: porosity, shale volume, water
  saturation) cannot lie outside [0, 1]: more than :data:`FRACTION_TOLERANCE` beyond it is refused
  (:func:`check_fraction_range`), naming the file, the curve, the count and the range -- such a
  curve is nearly always in percent under a wrong header, which ``--unit CURVE=%`` corrects;
* the other way round, a curve in percent whose values all lie in [0, 1] is a fraction under a
  wrong header (:func:`check_percent_range`), and so is a curve without a unit whose values all
  lie in [0, 1] given to a model trained on percent: both are refused;
* a curve without a unit is taken to be in the unit the model was trained on, and a warning says so;
* an input stated in v/v for a model trained on % (or the reverse) is converted (x 100 or / 100) and
  a note says so (:func:`convert_units`); units that cannot be converted stay refused;
* a curve without a stated unit whose values all lie in [0, 1] beside one (another well, or the
  model's training range) whose values reach above :data:`PERCENT_ABOVE` is refused
  (:func:`check_unitless_scales`): a fraction beside percent, a factor of about 100 apart.

``glassformer predict`` reports what these return; batch prediction reuses them, and
:func:`check_wells` holds the validation and test wells of ``train``, ``cv``, ``compare``,
``sweep`` and the core workflow to the same rules against the training wells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data import WellLog
from ..data.units import fraction_percent_factor, volume_fraction_kind
from ..errors import DataFileError, DepthError

__all__ = ["FEET_TO_METRES", "FRACTION_TOLERANCE", "InputCheck", "STEP_TOLERANCE", "check_fraction_range",
           "check_inputs", "check_percent_range", "check_unitless_scales", "check_wells", "convert_depth",
           "convert_units", "PERCENT_ABOVE", "logs_target_unit", "target_unit",
           "training_record"]

#: Metres per international foot.
FEET_TO_METRES = 0.3048
#: Relative difference of sample step above which a warning is given.
STEP_TOLERANCE = 0.05
#: How far beyond [0, 1] a volume fraction may stray (rounding, slightly negative computed porosity).
FRACTION_TOLERANCE = 0.05
# Units that say "volume fraction" outright; UNITLESS, 1 and - also label ratios (an Archie exponent M ~ 2).
_VOLUME_FRACTION = frozenset({"V/V", "FRAC", "FRACTION", "DEC", "DECIMAL", "M3/M3", "FT3/FT3"})
#: A value above which a porosity-like curve cannot be a fraction (v/v), rounding included: it reads as percent.
PERCENT_ABOVE = 1.5
#: Percentiles of the training samples that bound an input's training range.
RANGE_PERCENTILES = (0.5, 99.5)


def _unit_kind(unit: str) -> str | None:
    """"fraction"/"percent" for a stated volume-fraction unit; None when the file states none or another unit."""
    return volume_fraction_kind(unit) if str(unit or "").strip() else None


def training_record(logs, inputs, target: str | None = None) -> dict:
    """What a model was trained on: depth unit, sample step, each input's unit and training range.

    Parameters
    ----------
    logs : WellLog list (the training intervals, after curve aliases were resolved)
    inputs : input mnemonics
    target : target mnemonic, optional: its unit is recorded too (the unit predictions are in)

    Returns
    -------
    dict
        ``{"depth_unit": "m", "step": 0.1, "inputs": {name: {"unit": "V/V", "kind": "fraction",
        "low": p0.5, "high": p99.5}}}``; ``unit`` is the first unit a file states ("" if none),
        ``kind`` its classification (None when unknown), ``step`` the median step of the wells;
        with ``target``, ``"target": {"name": target, "unit": the first unit a file states}``.

    Raises
    ------
    DataFileError
        Two training wells state units of different kinds for one input (v/v in one, % in another).
    """
    logs = list(logs)
    record = {"depth_unit": logs[0].depth_unit, "step": float(np.median([g.step for g in logs if len(g) > 1]
                                                                       or [np.nan])), "inputs": {}}
    for name in inputs:
        stated = [(g, g.units.get(name, "")) for g in logs if str(g.units.get(name, "")).strip()]
        kinds = {(_unit_kind(u), u, g.label) for g, u in stated if _unit_kind(u)}
        if len({k for k, _, _ in kinds}) > 1:
            listing = "; ".join(f"{label}: {u}" for _, u, label in sorted(kinds, key=lambda t: t[2]))
            raise DataFileError(f"input curve {name} is in different units in the training wells ({listing}); "
                                "convert them to one unit first")
        values = np.concatenate([np.asarray(g.curve(name), dtype=np.float64) for g in logs])
        values = values[np.isfinite(values)]
        low, high = (np.percentile(values, RANGE_PERCENTILES) if values.size else (np.nan, np.nan))
        unit = stated[0][1] if stated else ""
        record["inputs"][name] = {"unit": unit, "kind": _unit_kind(unit), "low": float(low), "high": float(high)}
    if target is not None:
        stated = [str(g.units.get(target, "")).strip() for g in logs]
        record["target"] = {"name": target, "unit": next((u for u in stated if u), "")}
    return record


def target_unit(record: dict | None, *, log10: bool = False) -> str:
    """The unit of a model's predictions: its target's unit as the training files state it.

    ``MD`` (as LAS files write millidarcy) is written ``mD``;
    ``"mD"`` for a model whose record names no target (saved before targets were recorded: those
    were permeability models); ``""`` when no training file states one.  With ``log10``: ``"log10 mD"``,
    ``"log10 %"``, ``"log10"`` for a unitless target.
    """
    unit = "mD" if not record or "target" not in record else str(record["target"].get("unit") or "").strip()
    unit = "mD" if unit.upper() == "MD" else unit          # LAS files write millidarcy MD
    return (f"log10 {unit}" if unit else "log10") if log10 else unit


def logs_target_unit(logs, target: str, *, log10: bool = False) -> str:
    """:func:`target_unit` of the wells ``logs`` themselves (before a model records it): the first unit a
    file states for ``target``, ``mD`` for millidarcy; ``log10 <unit>`` with ``log10``."""
    stated = (str(g.units.get(target, "")).strip() for g in logs)
    return target_unit({"target": {"name": target, "unit": next((u for u in stated if u), "")}}, log10=log10)


def convert_depth(log, unit: str):
    """``log`` with its depths in ``unit`` ("m" or "ft"; a copy, the curves shared)."""
    if unit == log.depth_unit:
        return log
    if unit not in ("m", "ft"):
        raise DepthError(f"--depth-unit must be m or ft, got {unit!r}")
    factor = FEET_TO_METRES if unit == "m" else 1.0 / FEET_TO_METRES
    return WellLog(name=log.name, depth=log.depth * factor, curves=log.curves, units=log.units, depth_unit=unit,
                   source=log.source, descriptions=log.descriptions, depth_mnemonic=log.depth_mnemonic,
                   skipped=log.skipped)


@dataclass
class InputCheck:
    """What :func:`check_inputs` found.

    Attributes
    ----------
    log : WellLog
        The well to predict (depths converted when that was asked for).
    notes : list of str
        What was done (e.g. a depth conversion), to say to the user.
    warnings : list of str
        What the user must know before trusting the predictions (sample step, ranges, units).
    assumed : list of str
        The units taken from the model for inputs the well states none for (said to the user, not
        written into the output: most tables state no units).
    out_of_range : ndarray (n_samples,)
        1.0 where an input lies outside its training range, 0.0 where every input lies inside,
        NaN where an input is missing (nothing is predicted there).
    counts : dict
        Input mnemonic -> number of predicted samples (every input present) outside its training range.
    checked : bool
        False when the model records no training ranges (nothing could be flagged).
    """

    log: object
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    out_of_range: np.ndarray | None = None
    counts: dict = field(default_factory=dict)
    checked: bool = True
    assumed: list = field(default_factory=list)

    @property
    def n_flagged(self) -> int:
        """Samples with at least one input outside the training range."""
        return int(np.nansum(self.out_of_range)) if self.out_of_range is not None else 0

    def summary(self, target: str) -> str:
        """One sentence: how many predicted samples are flagged, by input."""
        if not self.checked:
            return "inputs not checked against training ranges (the model records none)"
        n_pred = int(np.isfinite(self.out_of_range).sum())
        by = ", ".join(f"{k} {v}" for k, v in self.counts.items() if v)
        return (f"{self.n_flagged} of {n_pred} predicted depths have inputs outside the training range "
                f"(0.5-99.5 percentiles; flag curve {target}_OOR)" + (f": {by}" if by else ""))


def _where(log) -> str:
    return log.source or log.name


def _check_units(record: dict, log) -> list:
    """Refuse inputs in a unit of another kind, and unlabelled fractions for a model trained on percent;
    warnings for other unit strings that differ."""
    warnings = []
    for name, info in record["inputs"].items():
        mine = str(log.units.get(name, "")).strip()
        theirs = str(info.get("unit") or "").strip()
        if not mine and info.get("kind") == "percent" and name in log.curves:
            _refuse_fraction_values(log, name, f"has no unit and the model was trained on {theirs} (percent)")
        if not mine or not theirs:
            continue
        a, b = _unit_kind(mine), info.get("kind")
        if a and b and a != b:
            raise DataFileError(f"{_where(log)}: curve {name} is in {mine} ({a}) but the model was trained on "
                                f"{theirs} ({b}); convert the curve to {theirs} first")
        if not (a and b) and mine.upper() != theirs.upper():
            warnings.append(f"{_where(log)}: curve {name} is in {mine!r}, the model was trained on {theirs!r}; "
                            "check that they are the same unit")
    return warnings


def _assumed_units(record: dict, log) -> list:
    """One warning naming the inputs the well states no unit for, and the training units they are taken to be in."""
    trained = {name: str(info.get("unit") or "").strip() for name, info in record["inputs"].items()}
    assumed = {name: unit for name, unit in trained.items()
               if unit and name in log.curves and not str(log.units.get(name, "")).strip()}
    if not assumed:
        return []
    listing = ", ".join(f"{name} in {unit}" for name, unit in assumed.items())
    return [f"{_where(log)}: no unit in the file for {', '.join(assumed)}; taken to be the units the model was trained "
            f"on ({listing}); --unit CURVE=UNIT states them"]


def _check_depth(record: dict, log, positions: str, depth_unit: str | None):
    """``(log, notes)``: converted when asked; refused when depth positions meet another depth unit."""
    notes, model_unit = [], record.get("depth_unit") or "m"
    if depth_unit and depth_unit != log.depth_unit:
        notes.append(f"{_where(log)}: depths converted from {log.depth_unit} to {depth_unit} "
                     f"({'x 0.3048' if depth_unit == 'm' else '/ 0.3048'}), as --depth-unit asks")
        log = convert_depth(log, depth_unit)
    if positions == "depth" and log.depth_unit != model_unit:
        raise DepthError(f"{_where(log)}: depth is in {log.depth_unit} but the model was trained with depth "
                         f"positions in {model_unit}; pass --depth-unit {model_unit} to convert the depths")
    return log, notes


def _check_step(record: dict, log, window: int | None) -> list:
    step, trained = log.step, record.get("step")
    if not (trained and np.isfinite(trained) and np.isfinite(step)):
        return []
    model_unit = record.get("depth_unit") or "m"
    if log.depth_unit != model_unit:             # index positions: compare the steps in one unit
        step = step * (FEET_TO_METRES if model_unit == "m" else 1.0 / FEET_TO_METRES)
    if abs(step - trained) <= STEP_TOLERANCE * trained:
        return []
    span = f": a window of {window} samples spans {window * step:.3g} {model_unit} here, " \
           f"{window * trained:.3g} {model_unit} in training" if window else ""
    return [f"{_where(log)} is sampled every {step:.4g} {model_unit}, the model was trained on samples every "
            f"{trained:.4g} {model_unit}{span}"]


def _flag_ranges(record: dict, log):
    names = list(record["inputs"])
    X = log.matrix(names).astype(np.float64)
    outside = np.zeros(X.shape, dtype=bool)
    for j, name in enumerate(names):
        info = record["inputs"][name]
        with np.errstate(invalid="ignore"):
            outside[:, j] = (X[:, j] < info["low"]) | (X[:, j] > info["high"])
    flag = outside.any(axis=1).astype(np.float64)
    complete = np.isfinite(X).all(axis=1)              # only these depths are predicted
    flag[~complete] = np.nan
    counts = {name: int(outside[complete, j].sum()) for j, name in enumerate(names)}
    return flag, counts, X


def _fraction_looks_like_percent(record: dict, log, X) -> list:
    """A fraction (v/v) cannot exceed 1: an unlabelled curve whose values do looks like percent."""
    out = []
    for j, (name, info) in enumerate(record["inputs"].items()):
        col = X[:, j][np.isfinite(X[:, j])]
        if info.get("kind") == "fraction" and col.size and np.median(col) > 1.0:
            out.append(f"{_where(log)}: curve {name} has a median of {np.median(col):.4g}, but the model was trained "
                       f"on {info['unit']} (a fraction, 0 to 1): the curve looks like percent; convert it first")
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
    for name in names:
        unit = str(log.units.get(name, "")).strip()
        if name not in log.curves or unit.upper() not in _VOLUME_FRACTION:
            continue
        values = np.asarray(log.curves[name], dtype=np.float64)
        values = values[np.isfinite(values)]
        bad = (values < -FRACTION_TOLERANCE) | (values > 1.0 + FRACTION_TOLERANCE)
        if bad.any():
            hint = ("it looks like percent: convert it to a fraction, or state its unit with --unit "
                    f"{name}=%" if values.max() > 1.0 + FRACTION_TOLERANCE else "check the curve")
            raise DataFileError(f"{_where(log)}: curve {name} is in {unit} (a fraction, 0 to 1) but "
                                f"{int(bad.sum())} of {values.size} samples lie outside [0, 1] (range {values.min():.4g} to "
                                f"{values.max():.4g}); {hint}")


def _refuse_fraction_values(log, name: str, said: str) -> None:
    """Raise DataFileError when every finite value of curve ``name`` lies in [0, 1]: a fraction, not percent."""
    values = np.asarray(log.curves[name], dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size and values.min() >= 0.0 and values.max() <= 1.0:
        raise DataFileError(f"{_where(log)}: curve {name} {said}, but all {values.size} of its values lie in [0, 1] "
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
            _refuse_fraction_values(log, name, f"is in {unit} (percent, 0 to 100)")


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
            values = _finite(g, name)
            if values.size and _scale(values.min(), values.max()):
                seen.append((g, str(g.units.get(name, "")).strip(), values, _scale(values.min(), values.max())))
        pair = next(((a, b) for a in seen if a[3] == "fraction" for b in seen
                     if b[3] == "percent" and not (a[1] and b[1])), None)
        if pair is None:
            continue
        (f, fu, fv, _), (p, pu, pv, _) = pair
        raise DataFileError(f"curve {name} differs by a factor of about 100 between wells: in {_where(f)} it {_said(fu)} "
                            f"and lies in [0, 1] (range {fv.min():.4g} to {fv.max():.4g}), in {_where(p)} it "
                            f"{_said(pu)} and reaches {pv.max():.4g} (range {pv.min():.4g} to {pv.max():.4g}): a "
                            f"fraction beside percent; state each file's unit in its header ({name} (v/v) in "
                            f"{_where(f)}, {name} (%) in {_where(p)}; --unit states one unit for every file), and "
                            "validation and test wells are converted to the training wells' unit")


def _check_unitless_record(record: dict, log) -> None:
    """Refuse a well whose input lies in [0, 1] where the model's unitless training range reaches above 1.5,
    or the reverse: a fraction beside percent (today's range check would merely flag every depth)."""
    for name, info in record["inputs"].items():
        low, high = info.get("low", np.nan), info.get("high", np.nan)
        if str(info.get("unit") or "").strip() or name not in log.curves or not np.isfinite([low, high]).all():
            continue
        values, mine = _finite(log, name), str(log.units.get(name, "")).strip()
        model = _scale(low, high)
        well = _scale(values.min(), values.max()) if values.size else None
        if {model, well} != {"fraction", "percent"}:
            continue
        model_unit, well_unit = ("%", "v/v") if model == "percent" else ("v/v", "%")
        raise DataFileError(f"{_where(log)}: curve {name} {_said(mine)} and lies in {values.min():.4g} to "
                            f"{values.max():.4g}, but the model was trained on {name} without a unit over {low:.4g} to "
                            f"{high:.4g} (0.5-99.5 percentiles): a {'fraction' if well == 'fraction' else 'percent'} "
                            f"curve beside a {'percent' if model == 'percent' else 'fraction'} one, a factor of about "
                            f"100; retrain with the unit stated (--unit {name}={model_unit}, or a header "
                            f"{name} ({model_unit})), then predict with --unit {name}={well_unit}, which converts the well")


def convert_units(record: dict, log, against: str = "the model") -> tuple:
    """``(scaled curves, their units, notes)``: inputs of ``log`` stated in v/v where ``record`` states % (or
    the reverse), scaled to the record's unit (x 100 or / 100), each said in a note naming ``against``.

    Other pairs of units are left to :func:`check_inputs`' refusal; the log itself is not changed.
    """
    scaled, units, notes = {}, {}, []
    for name, info in record["inputs"].items():
        mine, theirs = str(log.units.get(name, "")).strip(), str(info.get("unit") or "").strip()
        factor = fraction_percent_factor(mine, theirs) if name in log.curves else None
        if factor is None:
            continue
        scaled[name], units[name] = np.asarray(log.curves[name]) * factor, theirs
        notes.append(f"{_where(log)}: {name} converted from {mine} to {theirs} "
                     f"({'x 100' if factor > 1 else '/ 100'}) to match {against}")
    return scaled, units, notes


def _finite(log, name: str) -> np.ndarray:
    if name not in log.curves:
        return np.empty(0)
    values = np.asarray(log.curves[name], dtype=np.float64)
    return values[np.isfinite(values)]


def check_wells(train_logs, logs, names, *, window: int | None = None) -> list:
    """Hold validation and test wells to the checks :func:`check_inputs` makes before a prediction.

    Parameters
    ----------
    train_logs : WellLog list
        The training intervals (curves already renamed to ``names``).
    logs : WellLog list
        The validation and test wells (likewise).
    names : the input mnemonics, then the target's
    window : the model's window, to say how long it is in depth when a step differs

    Returns
    -------
    list of str
        Warnings (a sample step other than the training wells', a unit string that differs but
        whose kind is unknown), and notes of curves converted between v/v and % to the training
        wells' unit (:func:`convert_units`; the wells ``logs`` are changed in place), one line each,
        as ``glassformer predict`` writes them.

    Raises
    ------
    DataFileError
        A volume fraction outside [0, 1] in any well (:func:`check_fraction_range`); a curve in
        percent whose values all lie in [0, 1] (:func:`check_percent_range`); a curve in a
        unit of another kind than the training wells' (% against v/v), with
        :func:`check_inputs`'s message, when they cannot be converted; training wells in two kinds of
        unit; an input without a unit in [0, 1] in one well and above 1.5 in another
        (:func:`check_unitless_scales`).
    DepthError
        A depth unit other than the training wells'.
    """
    names = list(names)
    for g in [*train_logs, *logs]:
        check_fraction_range(g, names)
        check_percent_range(g, names)
    check_unitless_scales([*train_logs, *logs], names[:-1])     # inputs: a target (log10 mD) may well lie in [0, 1]
    record = training_record(train_logs, names)
    warnings = []
    for g in logs:
        scaled, units, notes = convert_units(record, g, "the training wells")
        g.curves.update(scaled)                 # each WellLog owns its dicts: the training wells are untouched
        g.units.update(units)
        warnings += notes
        warnings += _check_units(record, g)
        if g.depth_unit != record["depth_unit"]:
            raise DepthError(f"{_where(g)}: depth is in {g.depth_unit} but the training wells' depth is in "
                             f"{record['depth_unit']}; convert the depths first")
        warnings += _check_step(record, g, window)
    return warnings


def check_inputs(record: dict | None, log, *, positions: str = "index", depth_unit: str | None = None,
                 window: int | None = None, check_step: bool = True) -> InputCheck:
    """Check a well against a model's :func:`training_record` before predicting it.

    Parameters
    ----------
    record : dict or None
        The model's training record; None (a model saved before records existed) checks nothing
        and says so.
    log : WellLog
        The well, its curves already renamed to the model's inputs (curve aliases).
    positions : {"index", "depth"}
        The model's positions.
    depth_unit : {"m", "ft"} or None
        Convert the well's depths to this unit first (the user asked for it).
    window : int, optional
        The model's window, to say how long it is in depth when the step differs.
    check_step : bool, default True
        Warn when the well's sample step differs from the training step; False when the well is
        to be resampled onto the model's step anyway.

    Returns
    -------
    InputCheck

    Raises
    ------
    DataFileError
        An input's unit is known in both, of another kind, and not convertible (v/v and % are
        converted, :func:`convert_units`; the message names the file, the curve and both units); an
        input without a unit in [0, 1] for a model whose unitless training range reaches above 1.5,
        or the reverse; an input stated as a fraction outside [0, 1]
        (:func:`check_fraction_range`); an input stated in percent, or without a unit for a model
        trained on percent, whose values all lie in [0, 1] (:func:`check_percent_range`).
    DepthError
        Depth positions and a depth unit other than the model's, without ``depth_unit``.
    """
    if record is None:
        return InputCheck(log, warnings=[f"the model records no training units or ranges (saved by an older "
                                         f"glassformer): {_where(log)} is predicted unchecked"],
                          out_of_range=np.full(len(log), np.nan), checked=False)
    check_fraction_range(log, list(record["inputs"]))
    check_percent_range(log, list(record["inputs"]))
    _check_unitless_record(record, log)
    scaled, units, converted = convert_units(record, log)
    log = log._copy(curves={**log.curves, **scaled}, units={**log.units, **units}) if scaled else log
    warnings = _check_units(record, log)
    log, notes = _check_depth(record, log, positions, depth_unit)
    notes = [*converted, *notes]
    warnings += _check_step(record, log, window) if check_step else []
    flag, counts, X = _flag_ranges(record, log)
    warnings += _fraction_looks_like_percent(record, log, X)
    return InputCheck(log, notes, warnings, flag, counts, assumed=_assumed_units(record, log))
