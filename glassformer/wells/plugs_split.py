"""Core plugs as targets on a well log, and which plugs train, validate and test.

:func:`prepare_cored_well` matches the core depths to the log (per core run, by correlating
core porosity with a log porosity curve), merges the plugs onto the log's depth grid and adds
the core curves to the log: the permeability column becomes a sparse target curve, NaN wherever
no plug fell.  The log's inputs exist at every depth, so windows are cut as for any log and the
NaN targets are masked out of the loss (:class:`~glassformer.wells.WellModel`).

:func:`split_plugs` says which plugs train, which validate (early stopping and the calibration of
the P10-P90 interval) and which test, by whole cores (run numbers) or by depth intervals.  A
role's log is the whole log with the target kept only at that role's plugs
(:meth:`PlugSplit.log_for`), so every model sees the inputs everywhere and is scored at the
held-out plugs only.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..data import PlugTable, WellLog, estimate_depth_shifts, merge_plugs
from ..errors import DataFileError, InputError

__all__ = ["PlugSplit", "CoredWell", "DEFAULT_CYCLE", "prepare_cored_well", "split_plugs"]

#: Roles of the cores in depth order when the user names none: they cycle through this pattern.
DEFAULT_CYCLE = ("train", "test", "train", "validation")

#: With fewer cores than :data:`DEFAULT_CYCLE` names, the share of a core's plugs (its deepest ones)
#: held out as a block inside the core: validation in each training core, and with one core the
#: test block below the validation block.
BLOCK_FRACTION = 0.2


@dataclass(eq=False)
class CoredWell:
    """A well log with core plugs merged onto its depth grid.

    Attributes
    ----------
    log : WellLog
        The log plus the core curves: ``target`` (core permeability, mD) and ``porosity``
        (core porosity, v/v) when the table has one, NaN where no plug fell.
    on_log : PlugsOnLog
        The merge (plugs per sample, run of each sample, the merge report).
    match : DepthMatch or None
        The depth shifts applied (None: no core porosity to match, shifts given as numbers or none).
    table : PlugTable
        The core table as read (driller's depths).
    target, porosity : str
        Curve names of the core permeability and porosity in ``log`` (porosity None without one).
    notes : list of str
        Warnings met on the way (runs with too few plugs, plugs averaged on one sample).
    """

    log: WellLog
    on_log: object
    match: object
    table: PlugTable
    target: str
    porosity: str | None
    notes: list = field(default_factory=list)

    @property
    def run_of_sample(self) -> np.ndarray:
        """Run label of each log sample holding plugs, ``(n_samples,)``; None where no plug fell."""
        labels = np.array([None] * len(self.log), dtype=object)
        has = self.on_log.run_index >= 0
        labels[has] = [self.on_log.runs[i] for i in self.on_log.run_index[has]]
        return labels

    def shifts(self) -> dict:
        """Run label (text) -> depth shift applied (log unit)."""
        return {str(k): float(v["shift"]) for k, v in self.on_log.report.per_run.items()}


def prepare_cored_well(log: WellLog, plugs: PlugTable, *, match_curve: str | None = "PHIF", shifts="estimate",
                       shift_window: float = 2.0, min_plugs: int = 10, tolerance: float | None = None) -> CoredWell:
    """Depth-match ``plugs`` to ``log``, merge the plugs onto its grid and add the core curves.

    Parameters
    ----------
    log : WellLog
        The well's log (inputs, and optionally a log-derived permeability such as KLOGH).
    plugs : PlugTable
        From :func:`glassformer.data.read_plugs` with a permeability column.
    match_curve : str or None, default "PHIF"
        Log curve correlated with core porosity to estimate each run's shift.
    shifts : "estimate", None or mapping run -> float
        "estimate" (default): per-run shifts maximising the correlation (±``shift_window``);
        None: the core depths as measured; a mapping: these shifts (runs not named keep 0).
    shift_window, min_plugs : passed to :func:`~glassformer.data.estimate_depth_shifts`.
    tolerance : largest plug-to-sample distance, default half the log step.

    Returns
    -------
    CoredWell

    Raises
    ------
    InputError
        The core table has no permeability, or its curve names clash with the log's.
    DepthError
        No plug inside the log's depth range; core and log depth units differ.
    CurveNotFoundError
        ``match_curve`` is not in the log.
    """
    if not np.isfinite(plugs.permeability).any():
        raise InputError(f"{plugs.source}: the core table has no permeability to learn from")
    notes, match = [], None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        can_match = match_curve is not None and np.isfinite(plugs.porosity).any()
        if shifts == "estimate" and not can_match:
            raise InputError(f"{plugs.source}: depth matching needs core porosity and a log curve (--match-depth); "
                             "give the shifts, or none")
        if can_match and (shifts == "estimate" or shifts is None or isinstance(shifts, dict)):
            match = estimate_depth_shifts(plugs, log, curve=match_curve, window=shift_window, min_plugs=min_plugs)
            match = match.disabled() if shifts is None else (match.override(shifts) if isinstance(shifts, dict)
                                                                 else match)
        applied = match if match is not None else (shifts or None)
        on_log = merge_plugs(plugs, log, shifts=applied, tolerance=tolerance)
    notes = [" ".join(str(w.message).split()) for w in caught if issubclass(w.category, UserWarning)]
    names = {"target": plugs.columns.get("permeability", "CORE_PERMEABILITY").upper(),
             "porosity": plugs.columns.get("porosity", "CORE_POROSITY").upper()}
    clash = [n for n in names.values() if n in log.curves]
    if clash:
        raise InputError(f"{log.name}: the log already has a curve {clash[0]}, the name of a core column; "
                         "rename the core column")
    return CoredWell(log=on_log.add_to(log), on_log=on_log, match=match, table=plugs, target=names["target"],
                     porosity=names["porosity"] if np.isfinite(plugs.porosity).any() else None, notes=notes)


@dataclass(eq=False)
class PlugSplit:
    """Which log samples holding a core target train, validate and test.

    Attributes
    ----------
    masks : dict role -> bool array (n_samples,)
        ``"train"``, ``"validation"``, ``"test"``: disjoint; only samples with a core target and
        every input.
    cores : dict role -> list of run labels
        Runs with plugs in each role (by run or by interval).
    rule : str
        How the split was chosen, in words.
    """

    masks: dict
    cores: dict
    rule: str

    def counts(self) -> dict:
        return {role: int(m.sum()) for role, m in self.masks.items()}

    def log_for(self, cw: CoredWell, role: str) -> WellLog:
        """``cw.log`` with the core target kept only at the plugs of ``role`` (NaN elsewhere)."""
        return masked_target(cw.log, cw.target, self.masks[role])

    def describe(self, role: str) -> str:
        cores = ", ".join(map(str, self.cores[role]))
        return f"core{'s' if len(self.cores[role]) > 1 else ''} {cores} ({self.counts()[role]} plugs)"

    def to_dict(self) -> dict:
        return {"rule": self.rule, "cores": {k: [str(c) for c in v] for k, v in self.cores.items()},
                "plugs": self.counts()}


def masked_target(log: WellLog, target: str, keep: np.ndarray) -> WellLog:
    """A copy of ``log`` whose curve ``target`` is NaN outside ``keep`` (n_samples,)."""
    curves = dict(log.curves)
    curves[target] = np.where(keep, curves[target], np.nan)
    return WellLog(name=log.name, depth=log.depth, curves=curves, units=dict(log.units), depth_unit=log.depth_unit,
                   source=log.source, descriptions=dict(log.descriptions), depth_mnemonic=log.depth_mnemonic)


def split_plugs(cw: CoredWell, inputs, *, test_cores=None, validation_cores=None, test_depth=None,
                validation_depth=None) -> PlugSplit:
    """Assign every plug sample (core target and all ``inputs`` present) to train, validation or test.

    Parameters
    ----------
    cw : CoredWell
    inputs : the model's input curves (a plug without all of them cannot be predicted).
    test_cores, validation_cores : sequences of run labels (``2`` and ``"2"`` name one run), optional
    test_depth, validation_depth : (top, base) in the log's depth unit, optional
        A held-out depth interval instead of (or as well as) whole cores.

    With nothing given, the cores holding plugs, in depth order, cycle through
    :data:`DEFAULT_CYCLE` (train, test, train, validation, ...), so that the held-out cores lie
    between training cores.  With fewer than four such cores, blocks inside the cores are held
    out instead: two or three cores train, test(, train), and the deepest
    :data:`BLOCK_FRACTION` (20 %) of each training core's plugs validates; one core trains on
    its upper 60 % of plugs, validates on the next 20 % and tests on the deepest 20 %.  When the test
    plugs are given, the validation plugs must be too.

    Raises
    ------
    InputError
        Unknown run labels (the message lists the runs); a plug both test and validation; test
        given without validation.
    DataFileError
        A role without plugs.
    """
    labels = cw.run_of_sample
    usable = np.isfinite(cw.log.curve(cw.target)) & cw.log.valid_mask(list(inputs))
    runs = [r for r in cw.on_log.runs if (usable & (labels == r)).any()]
    runs.sort(key=lambda r: cw.log.depth[usable & (labels == r)][0])       # depth order
    has_test = bool(test_cores) or test_depth is not None
    has_val = bool(validation_cores) or validation_depth is not None
    if not (has_test or has_val) and len(runs) < len(DEFAULT_CYCLE):
        masks, rule = _blocks_inside_cores(labels, usable, runs)
    elif not (has_test or has_val):
        roles = {r: DEFAULT_CYCLE[i % len(DEFAULT_CYCLE)] for i, r in enumerate(runs)}
        masks = {role: usable & _one_of(labels, [r for r, x in roles.items() if x == role])
                 for role in ("train", "validation", "test")}
        rule = "cores in depth order cycle through " + ", ".join(DEFAULT_CYCLE)
    else:
        if not has_val:
            raise InputError("held-out plugs: give the validation cores (or depth) too; they stop training early "
                             "and calibrate the P10-P90 interval, so they cannot be the test plugs")
        if not has_test:
            raise InputError("held-out plugs: give the test cores (or depth) as well as the validation ones")
        test = _role_mask(cw, labels, usable, test_cores, test_depth, "test")
        val = _role_mask(cw, labels, usable, validation_cores, validation_depth, "validation")
        both = test & val
        if both.any():
            raise InputError(f"{int(both.sum())} plug sample(s) are both test and validation (first at "
                             f"{cw.log.depth[both][0]:g} {cw.log.depth_unit})")
        masks = {"train": usable & ~test & ~val, "validation": val, "test": test}
        rule = "given: " + "; ".join(f"{k} {v}" for k, v in (("test cores", test_cores), ("test depth", test_depth),
                                                           ("validation cores", validation_cores),
                                                           ("validation depth", validation_depth)) if v)
    cores = {role: [r for r in runs if (m & (labels == r)).any()] for role, m in masks.items()}
    for role, m in masks.items():
        if not m.any():
            raise DataFileError(f"no {role} plug: every role needs plugs with a core {cw.target} and inputs "
                                f"{', '.join(inputs)} (cores with such plugs: {', '.join(map(str, runs))})")
    return PlugSplit(masks=masks, cores=cores, rule=rule)


def _deepest(mask: np.ndarray, fraction: float) -> np.ndarray:
    """The deepest ``fraction`` (at least one) of the samples where ``mask`` holds (samples in depth order)."""
    idx = np.flatnonzero(mask)
    out = np.zeros_like(mask)
    out[idx[len(idx) - max(1, int(round(fraction * len(idx)))):]] = True
    return out


def _blocks_inside_cores(labels, usable, runs) -> tuple:
    """Default roles for one to three cores: whole cores train and test where there are two, and blocks inside them.

    Two or three cores: in depth order train, test(, train); the deepest :data:`BLOCK_FRACTION` of each
    training core's plugs validates.  One core: its deepest block tests, the block above it validates.
    """
    masks = {role: np.zeros_like(usable) for role in ("train", "validation", "test")}
    pct = f"{100 * BLOCK_FRACTION:g} %"
    if len(runs) == 1:
        core = usable & _one_of(labels, runs)
        masks["test"] = _deepest(core, BLOCK_FRACTION)
        masks["validation"] = _deepest(core & ~masks["test"], BLOCK_FRACTION / (1 - BLOCK_FRACTION))
        masks["train"] = core & ~masks["test"] & ~masks["validation"]
        return masks, (f"one core: the deepest {pct} of its plugs test, the {pct} above them validate, the rest "
                       "trains")
    cycle = ("train", "test", "train")[:len(runs)]
    for run, role in zip(runs, cycle):
        core = usable & _one_of(labels, [run])
        if role == "test":
            masks["test"] |= core
            continue
        held = _deepest(core, BLOCK_FRACTION)
        masks["validation"] |= held
        masks["train"] |= core & ~held
    return masks, (f"{len(runs)} cores in depth order: {', '.join(cycle)}; the deepest {pct} of the plugs of each "
                   "training core validate (too few cores to hold out a whole validation core)")


def _role_mask(cw, labels, usable, cores, depth, role) -> np.ndarray:
    mask = np.zeros(len(cw.log), dtype=bool)
    if cores:
        by_text = {str(r): r for r in cw.on_log.runs}
        unknown = [str(c) for c in cores if str(c) not in by_text]
        if unknown:
            raise InputError(f"{role} core(s) {', '.join(unknown)} not in the core table; its cores are "
                             f"{', '.join(map(str, cw.on_log.runs))}")
        mask |= _one_of(labels, [by_text[str(c)] for c in cores])
    if depth is not None:
        top, base = depth
        mask |= (cw.log.depth >= top) & (cw.log.depth <= base)
    return mask & usable


def _one_of(labels: np.ndarray, wanted) -> np.ndarray:
    """``labels[i] in wanted`` per sample (labels hold run labels and None, which do not sort together)."""
    wanted = list(wanted)
    return np.array([lab is not None and lab in wanted for lab in labels], dtype=bool)
