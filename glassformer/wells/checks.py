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
* a gap-free run of the inputs shorter than the model's window ``T`` is warned about
  (:func:`short_run_warnings`): it is predicted with one shorter window, which the transformer never
  saw in training;
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
  one whose median exceeds 1 for a model trained on a fraction looks like percent and is refused
  (:func:`~glassformer.wells.scale_checks.fraction_looks_like_percent`): ``--unit CURVE=%`` converts it;
* an input stated in v/v for a model trained on % (or the reverse) is converted (x 100 or / 100) and
  a note says so (:func:`convert_units`); units that cannot be converted stay refused;
* a curve without a stated unit whose values all lie in [0, 1] beside one (another well, or the
  model's training range) whose values reach above :data:`PERCENT_ABOVE` is refused
  (:func:`check_unitless_scales`): a fraction beside percent, a factor of about 100 apart.

The checks of a porosity-like curve's scale (fraction or percent) live in
:mod:`glassformer.wells.scale_checks` and are re-exported here.  ``glassformer predict`` reports
what these return; batch prediction reuses them, and
:func:`check_wells` holds the validation and test wells of ``train``, ``cv``, ``compare``,
``sweep`` and the core workflow to the same rules against the training wells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data import WellLog
from ..data.units import unit_quantity, volume_fraction_kind
from ..data.windows import contiguous_runs
from ..errors import DataFileError, DepthError
from .scale_checks import (FRACTION_TOLERANCE, PERCENT_ABOVE, check_density_range, check_fraction_range,
                           check_percent_range, check_unitless_record, check_unitless_scales, convert_units,
                           fraction_looks_like_percent, refuse_fraction_values, where)

__all__ = ["FEET_TO_METRES", "FRACTION_TOLERANCE", "InputCheck", "STEP_TOLERANCE", "check_fraction_range",
           "check_inputs", "check_percent_range", "check_unitless_scales", "check_wells", "convert_depth",
           "convert_units", "PERCENT_ABOVE", "logs_target_unit", "short_run_warnings", "target_unit",
           "training_record"]
#: Short runs listed by depth in a merged warning; the rest are counted.
SHORT_RUNS_LISTED = 3

#: Metres per international foot.
FEET_TO_METRES = 0.3048
#: Relative difference of sample step above which a warning is given.
STEP_TOLERANCE = 0.05
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


def _check_units(record: dict, log) -> list:
    """Refuse inputs in a unit of another kind or quantity (g/cc for a model trained on v/v), and unlabelled
    fractions for a model trained on percent; warnings for other unit strings that differ."""
    warnings = []
    for name, info in record["inputs"].items():
        mine = str(log.units.get(name, "")).strip()
        theirs = str(info.get("unit") or "").strip()
        if not mine and info.get("kind") == "percent" and name in log.curves:
            refuse_fraction_values(log, name, f"has no unit and the model was trained on {theirs} (percent)")
        if not mine or not theirs:
            continue
        measures, trained = unit_quantity(mine), unit_quantity(theirs)
        if measures and trained and measures != trained:
            raise DataFileError(f"{where(log)}: curve {name} is in {mine} (a {measures}) but the model was trained on "
                                f"{theirs} (a {trained}); check the curve read for {name} (--alias) or its stated "
                                f"unit (--unit {name}=UNIT)")
        a, b = _unit_kind(mine), info.get("kind")
        if a and b and a != b:
            raise DataFileError(f"{where(log)}: curve {name} is in {mine} ({a}) but the model was trained on "
                                f"{theirs} ({b}); convert the curve to {theirs} first")
        if not (a and b) and mine.upper() != theirs.upper():
            warnings.append(f"{where(log)}: curve {name} is in {mine!r}, the model was trained on {theirs!r}; "
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
    return [f"{where(log)}: no unit in the file for {', '.join(assumed)}; taken to be the units the model was trained "
            f"on ({listing}); --unit CURVE=UNIT states them"]


def _check_depth(record: dict, log, positions: str, depth_unit: str | None):
    """``(log, notes)``: converted when asked; refused when depth positions meet another depth unit."""
    notes, model_unit = [], record.get("depth_unit") or "m"
    if depth_unit and depth_unit != log.depth_unit:
        notes.append(f"{where(log)}: depths converted from {log.depth_unit} to {depth_unit} "
                     f"({'x 0.3048' if depth_unit == 'm' else '/ 0.3048'}), as --depth-unit asks")
        log = convert_depth(log, depth_unit)
    if positions == "depth" and log.depth_unit != model_unit:
        raise DepthError(f"{where(log)}: depth is in {log.depth_unit} but the model was trained with depth "
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
    return [f"{where(log)} is sampled every {step:.4g} {model_unit}, the model was trained on samples every "
            f"{trained:.4g} {model_unit}{span}"]


def short_run_warnings(log, names, window: int | None) -> list:
    """One warning when a gap-free run of inputs ``names`` in ``log`` is shorter than ``window`` samples.

    The model predicts such a run with one window as long as the run (``WellModel.windows``), a
    length the transformer never saw in training, and its values there shift; the tree models
    predict depth by depth and do not care.

    Parameters
    ----------
    log : WellLog (its curves named as ``names``)
    names : the model's input mnemonics; a depth where any is missing ends a run
    window : the model's window ``T`` in samples; None or 0 checks nothing

    Returns
    -------
    list of str
        ``[]``, or one line naming the file, the run's sample count and depths (the first
        :data:`SHORT_RUNS_LISTED` runs, the rest counted, when several are short) and the window.
    """
    if not window or not len(log):
        return []
    complete = np.isfinite(log.matrix(list(names)).astype(np.float64)).all(axis=1)
    short = [(a, b) for a, b in contiguous_runs(complete) if b - a < window]
    if not short:
        return []
    unit = log.depth_unit

    def run(a, b):
        return f"{b - a} sample{'s' if b - a > 1 else ''} at {log.depth[a]:g}-{log.depth[b - 1]:g} {unit}"

    why = ("the transformer sees shorter windows than it was trained on; its values there are less reliable than "
           "the tree models'")
    if len(short) == 1:
        return [f"{where(log)}: {run(*short[0])}, fewer than the model's window of {window}: {why}"]
    listed = ", ".join(run(a, b) for a, b in short[:SHORT_RUNS_LISTED])
    more = f" and {len(short) - SHORT_RUNS_LISTED} more" if len(short) > SHORT_RUNS_LISTED else ""
    total = sum(b - a for a, b in short)
    return [f"{where(log)}: {len(short)} gap-free runs ({total} samples: {listed}{more}) are shorter than the "
            f"model's window of {window}: {why}"]


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
        percent whose values all lie in [0, 1] (:func:`check_percent_range`); an input in g/cc whose
        values are not densities (:func:`~glassformer.wells.scale_checks.check_density_range`); a curve in a
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
        check_density_range(g, names[:-1])      # the inputs: a target of another kind may be headed g/cc
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
            raise DepthError(f"{where(g)}: depth is in {g.depth_unit} but the training wells' depth is in "
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
        The model's window, to say how long it is in depth when the step differs, and to warn about
        gap-free runs shorter than it (:func:`short_run_warnings`).
    check_step : bool, default True
        Warn when the well's sample step differs from the training step, and about runs shorter than
        ``window``; False when the well is to be resampled onto the model's step anyway (the caller
        then checks the runs of the resampled well).

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
        trained on percent, whose values all lie in [0, 1] (:func:`check_percent_range`); an input
        without a unit whose median exceeds 1 for a model trained on a fraction
        (:func:`~glassformer.wells.scale_checks.fraction_looks_like_percent`).
    DepthError
        Depth positions and a depth unit other than the model's, without ``depth_unit``.
    """
    if record is None:
        return InputCheck(log, warnings=[f"the model records no training units or ranges (saved by an older "
                                         f"glassformer): {where(log)} is predicted unchecked"],
                          out_of_range=np.full(len(log), np.nan), checked=False)
    check_fraction_range(log, list(record["inputs"]))
    check_percent_range(log, list(record["inputs"]))
    check_density_range(log, list(record["inputs"]))
    check_unitless_record(record, log)
    scaled, units, converted = convert_units(record, log)
    log = log._copy(curves={**log.curves, **scaled}, units={**log.units, **units}) if scaled else log
    warnings = _check_units(record, log)
    log, notes = _check_depth(record, log, positions, depth_unit)
    notes = [*converted, *notes]
    warnings += _check_step(record, log, window) if check_step else []
    warnings += short_run_warnings(log, list(record["inputs"]), window) if check_step else []
    flag, counts, X = _flag_ranges(record, log)
    warnings += fraction_looks_like_percent(record, log, X)
    return InputCheck(log, notes, warnings, flag, counts, assumed=_assumed_units(record, log))
