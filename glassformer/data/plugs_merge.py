"""Placing core plugs on a well log's depth grid: the sparse target curve and what happened to each plug.

Each plug goes to the log sample nearest its depth, provided that sample lies within
``tolerance`` (default half the log's median step, so every plug inside a regularly sampled log
finds a sample and none is stretched over a gap).  Plugs farther than that from every sample are
*unmatched*: counted, named and left out.

When several plugs of one run fall on the same sample they are averaged, and the report lists
each such sample (``on_shared_sample="raise"`` refuses instead).  Porosity is averaged
arithmetically.  Permeability is averaged arithmetically by default: plugs a few centimetres
apart sample thin layers that the log sample sees side by side, and for flow along layers the
effective permeability of parallel beds is their thickness-weighted arithmetic mean (Cardwell
and Parsons, 1945); ``permeability_mean="geometric"`` (the log-average) or ``"harmonic"`` (flow
across layers, for vertical plugs) are available.

Plugs of *different* runs never share a sample, so that every sample belongs to one core run
(held-out cores stay held out).  When two shifted runs meet on one sample (adjacent cores a
few centimetres apart after shifting), the plug nearest the sample keeps it and the other
run's plugs there are left out and listed in the report as ``overlap_lines``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ..errors import DepthError, InputError
from .plugs import PlugTable
from .welllog import WellLog

__all__ = ["PlugsOnLog", "MergeReport", "log_step", "merge_plugs"]

_MEANS = ("arithmetic", "geometric", "harmonic")


def log_step(depth: np.ndarray) -> float:
    """Median spacing of a depth axis, shape ``(n_samples,)`` -> float (0.0 for one sample)."""
    depth = np.asarray(depth, dtype=np.float64)
    return float(np.median(np.diff(depth))) if depth.size > 1 else 0.0


@dataclass(frozen=True)
class MergeReport:
    """What became of every plug when a core table was merged onto a log.

    Attributes
    ----------
    n_plugs, matched, unmatched : int
        Plugs in the table, placed on a sample, left out (farther than ``tolerance`` from any sample).
    unmatched_lines : tuple of int
        File lines of the unmatched plugs.
    shared_samples : tuple of (float, tuple of int)
        Each log sample that received several plugs: its depth and the file lines averaged there.
    averaged : int
        Plugs that went into a shared sample.
    overlap_lines : tuple of int
        File lines of plugs left out because a nearer plug of another run took their sample.
    per_run : dict
        Run label -> ``{"plugs", "matched", "unmatched", "averaged", "samples", "shift"}``.
    tolerance : float
        Largest plug-to-sample distance accepted, in the log's depth unit.
    """

    n_plugs: int
    matched: int
    unmatched: int
    unmatched_lines: tuple
    shared_samples: tuple
    averaged: int
    per_run: dict
    tolerance: float
    overlap_lines: tuple = ()
    depth_unit: str = "m"
    permeability_mean: str = "arithmetic"

    def __str__(self) -> str:
        u = self.depth_unit
        lines = [f"{self.n_plugs} plugs: {self.matched} on the log grid (within {self.tolerance:g} {u} "
                 f"of a sample), {self.unmatched} unmatched"]
        if self.overlap_lines:
            lines.append(f"{len(self.overlap_lines)} plug(s) left out where two runs met on one sample "
                         f"(lines {', '.join(map(str, self.overlap_lines))})")
        if self.shared_samples:
            lines.append(f"{len(self.shared_samples)} log sample(s) received several plugs "
                         f"({self.averaged} plugs averaged; permeability: {self.permeability_mean} mean)")
        lines.append(f"{'run':>6} {'shift':>8} {'plugs':>6} {'matched':>8} {'unmatched':>10} {'overlap':>8} "
                     f"{'averaged':>9} {'samples':>8}")
        for run, c in self.per_run.items():
            lines.append(f"{str(run):>6} {c['shift']:>+8.3f} {c['plugs']:>6} {c['matched']:>8} {c['unmatched']:>10} "
                         f"{c['overlap']:>8} {c['averaged']:>9} {c['samples']:>8}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready copy (run labels become text)."""
        return {"n_plugs": self.n_plugs, "matched": self.matched, "unmatched": self.unmatched,
                "unmatched_lines": [int(v) for v in self.unmatched_lines],
                "shared_samples": [{"depth": d, "lines": [int(v) for v in ls]} for d, ls in self.shared_samples],
                "averaged": self.averaged, "overlap_lines": [int(v) for v in self.overlap_lines],
                "tolerance": self.tolerance, "depth_unit": self.depth_unit,
                "permeability_mean": self.permeability_mean,
                "per_run": {str(k): dict(v) for k, v in self.per_run.items()}}


@dataclass(frozen=True, eq=False)
class PlugsOnLog:
    """Core measurements on a log's depth grid (NaN where no plug fell).

    Attributes
    ----------
    depth : array of shape (n_samples,)
        The log's depth axis.
    porosity : array of shape (n_samples,)
        Core porosity, fraction (v/v).
    permeability : array of shape (n_samples,)
        Core permeability, mD.
    n_plugs : array of int of shape (n_samples,)
        Plugs averaged into each sample (0 where none).
    run_index : array of int of shape (n_samples,)
        Index into ``runs`` of the run each sample's plugs came from; -1 where none.
    runs : tuple
        Run labels of the core table.
    plug_sample : array of int of shape (n_plugs,)
        Log sample each plug of the (shifted) table went to; -1 when unmatched.
    report : MergeReport
    names : dict
        Curve names for :meth:`add_to`: the core table's porosity and permeability columns.
    """

    depth: np.ndarray
    porosity: np.ndarray
    permeability: np.ndarray
    n_plugs: np.ndarray
    run_index: np.ndarray
    runs: tuple
    plug_sample: np.ndarray
    report: MergeReport
    names: dict = field(default_factory=dict)

    def add_to(self, log):
        """A copy of ``log`` with the core curves added (named after the core table's columns).

        Raises
        ------
        InputError
            If the log already has a curve of that name, or ``log`` has another depth axis.
        """
        if log.depth.shape != self.depth.shape or not np.array_equal(log.depth, self.depth):
            raise InputError(f"{log.name}: the core was merged onto another depth axis")
        curves = dict(log.curves)
        units = dict(log.units)
        for role, unit in (("porosity", "v/v"), ("permeability", "mD")):
            name = self.names.get(role, f"CORE_{role.upper()}").upper()
            if name in curves:
                raise InputError(f"{log.name}: the log already has a curve {name}; rename the core column")
            curves[name], units[name] = getattr(self, role), unit
        return WellLog(name=log.name, depth=log.depth, curves=curves, units=units, depth_unit=log.depth_unit,
                       source=log.source, descriptions=dict(log.descriptions), depth_mnemonic=log.depth_mnemonic)


def merge_plugs(plugs: PlugTable, log, *, shifts: Mapping | None = None, tolerance: float | None = None,
                on_shared_sample: str = "average", permeability_mean: str = "arithmetic") -> PlugsOnLog:
    """Merge the plugs of ``plugs`` onto the depth grid of ``log``.

    Parameters
    ----------
    plugs : PlugTable
    log : WellLog
        Its ``depth`` (n_samples,) is the target grid; its depth unit must be the core's.
    shifts : mapping of run -> float, or DepthMatch, optional
        Depth shifts added to each run's plug depths before merging (see
        :func:`glassformer.data.depth_matching.estimate_depth_shifts`); none by default.
    tolerance : float, optional
        Largest plug-to-sample distance; default half the log's median step.
    on_shared_sample : {"average", "raise"}
        What to do when several plugs of one run are nearest to one sample (plugs of different
        runs: the nearest plug's run keeps the sample, the others are left out and reported).
    permeability_mean : {"arithmetic", "geometric", "harmonic"}
        How plugs sharing a sample are averaged (porosity: always arithmetic).

    Returns
    -------
    PlugsOnLog
        The sparse curves on the log grid and the :class:`MergeReport`.

    Raises
    ------
    DepthError
        Depth units differ; no plug within the log's depth range (both ranges named); shared
        samples when ``on_shared_sample="raise"``.

    Warns
    -----
    UserWarning
        When plugs were averaged on a shared sample, or left out where two runs met.
    InputError
        A bad ``tolerance``, ``on_shared_sample`` or ``permeability_mean``.
    """
    _check_options(on_shared_sample, permeability_mean)
    if plugs.depth_unit != log.depth_unit:
        raise DepthError(f"{plugs.source}: core depths are in {plugs.depth_unit}, the log {log.name!r} is in "
                         f"{log.depth_unit}; convert one of them first")
    table = plugs.shifted(shifts) if shifts is not None else plugs
    tolerance = _tolerance(tolerance, log.depth)
    sample = _nearest_sample(table.depth, log.depth, tolerance)
    if (sample < 0).all():
        u = log.depth_unit
        raise DepthError(f"{plugs.source}: no plug lies within {tolerance:g} {u} of a sample of {log.name!r}: "
                         f"core {table.depth.min():g}-{table.depth.max():g} {u}, "
                         f"log {log.depth[0]:g}-{log.depth[-1]:g} {u}")
    run_of_plug = np.array([table.runs.index(r) for r in table.run_labels])  # (n_plugs,)
    overlap = _overlapping_runs(table.depth, log.depth, sample, run_of_plug)  # (n_plugs,) bool
    sample = np.where(overlap, -2, sample)  # -2: left out for overlap, -1: beyond tolerance
    matched = sample >= 0
    counts = np.bincount(sample[matched], minlength=len(log.depth))  # (n_samples,)
    shared = np.flatnonzero(counts > 1)
    if shared.size and on_shared_sample == "raise":
        s = shared[0]
        raise DepthError(f"{table.source}: {counts[s]} plugs ({table.rows(sample == s)}) fall on log sample "
                         f"{log.depth[s]:g} {log.depth_unit} of {log.name!r}; use on_shared_sample='average' "
                         f"or a smaller tolerance")
    porosity, permeability = _average(table, sample, len(log.depth), permeability_mean)
    run_index = np.full(len(log.depth), -1)
    run_index[sample[matched]] = run_of_plug[matched]
    report = _report(table, log, sample, shared, tolerance, shifts, permeability_mean)
    if shared.size or overlap.any():
        warnings.warn(f"{plugs.source}: {report.averaged} plugs averaged on {shared.size} shared log sample(s) "
                      f"of {log.name!r}, {int(overlap.sum())} left out where two runs met (see the merge report)",
                      UserWarning, stacklevel=2)
    sample = np.where(matched, sample, -1)
    names = {role: plugs.columns[role] for role in ("porosity", "permeability") if role in plugs.columns}
    return PlugsOnLog(depth=log.depth, porosity=porosity, permeability=permeability, n_plugs=counts,
                      run_index=run_index, runs=table.runs, plug_sample=sample, report=report, names=names)


def _check_options(on_shared_sample, permeability_mean):
    if on_shared_sample not in ("average", "raise"):
        raise InputError(f"merge_plugs: on_shared_sample must be 'average' or 'raise', got {on_shared_sample!r}")
    if permeability_mean not in _MEANS:
        raise InputError(f"merge_plugs: permeability_mean must be one of {', '.join(_MEANS)}, "
                         f"got {permeability_mean!r}")


def _tolerance(tolerance, depth) -> float:
    if tolerance is None:
        step = log_step(depth)
        if step == 0.0:
            raise InputError("merge_plugs: a log of one sample has no step; give tolerance")
        return 0.5 * step
    value = float(tolerance)
    if not (np.isfinite(value) and value >= 0):
        raise InputError(f"merge_plugs: tolerance must be a finite depth >= 0, got {tolerance!r}")
    return value


def _nearest_sample(plug_depth, log_depth, tolerance) -> np.ndarray:
    """Index of the nearest log sample per plug, -1 beyond ``tolerance``; ties go to the shallower sample."""
    right = np.clip(np.searchsorted(log_depth, plug_depth), 1, len(log_depth) - 1)  # (n_plugs,)
    left = right - 1
    if len(log_depth) == 1:
        right = left = np.zeros_like(right)
    d_left = np.abs(plug_depth - log_depth[left])
    d_right = np.abs(log_depth[right] - plug_depth)
    nearest = np.where(d_right < d_left, right, left)
    distance = np.minimum(d_left, d_right)
    slack = 1e-9 * max(1.0, float(np.abs(log_depth).max()))  # decimal round-off of typed depths
    return np.where(distance <= tolerance + slack, nearest, -1)


def _overlapping_runs(plug_depth, log_depth, sample, run_of_plug) -> np.ndarray:
    """True for plugs whose sample is taken by a nearer plug of another run, shape (n_plugs,)."""
    placed = np.flatnonzero(sample >= 0)
    owner = {}  # sample -> the plug nearest to it
    for p in placed:
        q = owner.get(sample[p])
        if q is None or abs(plug_depth[p] - log_depth[sample[p]]) < abs(plug_depth[q] - log_depth[sample[q]]):
            owner[sample[p]] = p
    dropped = np.zeros(sample.shape, dtype=bool)
    for p in placed:
        dropped[p] = run_of_plug[p] != run_of_plug[owner[sample[p]]]
    return dropped


def _average(table, sample, n_samples, permeability_mean):
    """Per-sample means of the plugs' porosity and permeability, NaN where no finite value."""
    ok = sample >= 0
    porosity = _grouped_mean(table.porosity[ok], sample[ok], n_samples)
    k = table.permeability[ok]
    with np.errstate(divide="ignore"):
        if permeability_mean == "arithmetic":
            permeability = _grouped_mean(k, sample[ok], n_samples)
        elif permeability_mean == "geometric":
            permeability = np.exp(_grouped_mean(np.log(k), sample[ok], n_samples))  # exp(-inf) = 0 for k = 0
        else:
            permeability = 1.0 / _grouped_mean(1.0 / k, sample[ok], n_samples)  # 1/inf = 0 for k = 0
    return porosity, permeability


def _grouped_mean(values, index, n) -> np.ndarray:
    finite = ~np.isnan(values)
    total = np.zeros(n)
    np.add.at(total, index[finite], values[finite])
    count = np.bincount(index[finite], minlength=n)
    with np.errstate(invalid="ignore"):
        out = total / count
    out[count == 0] = np.nan
    return out


def _report(table, log, sample, shared, tolerance, shifts, permeability_mean) -> MergeReport:
    shift_of = dict(getattr(shifts, "shifts", shifts) or {})
    shift_of = {str(k): float(v) for k, v in shift_of.items()}
    in_shared = np.isin(sample, shared) & (sample >= 0)
    per_run = {}
    for run in table.runs:
        mine = table.run_labels == run
        per_run[run] = {"plugs": int(mine.sum()), "matched": int((mine & (sample >= 0)).sum()),
                        "unmatched": int((mine & (sample == -1)).sum()),
                        "overlap": int((mine & (sample == -2)).sum()), "averaged": int((mine & in_shared).sum()),
                        "samples": int(np.unique(sample[mine & (sample >= 0)]).size),
                        "shift": shift_of.get(str(run), 0.0)}
    shared_samples = tuple((float(log.depth[s]), tuple(int(v) for v in table.line[sample == s])) for s in shared)
    return MergeReport(n_plugs=len(table), matched=int((sample >= 0).sum()), unmatched=int((sample == -1).sum()),
                       unmatched_lines=tuple(int(v) for v in table.line[sample == -1]), shared_samples=shared_samples,
                       averaged=int(in_shared.sum()), per_run=per_run, tolerance=tolerance,
                       overlap_lines=tuple(int(v) for v in table.line[sample == -2]),
                       depth_unit=log.depth_unit, permeability_mean=permeability_mean)
