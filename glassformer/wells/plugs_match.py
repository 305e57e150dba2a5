"""Depth matching as a step of its own: the per-run shifts, their correlation curves and figures, in a folder.

:func:`run_plugs_match` is what ``glassformer core-match`` runs: it estimates each core run's
depth shift (:func:`~glassformer.data.estimate_depth_shifts`: the shift that best correlates
core porosity with a log porosity curve), and writes

* ``shifts.json`` -- the shift, correlation and status of every run (what
  ``glassformer train --core --shifts FILE`` reads back with :func:`read_shifts`);
* ``correlations.csv`` -- one row per candidate shift, one column of Pearson correlations per run;
* ``figures/depth_match.png`` (correlation against shift per run) and
  ``figures/core_on_log.png`` (core porosity on the log, as measured and shifted).

No model is trained and no permeability is read, so a practitioner with any number of cores
can check the shifts before training.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .. import plots
from ..data import estimate_depth_shifts, read_plugs, read_well
from ..data.volve import CORE_POROSITY
from ..errors import InputError
from ..reporting import say
from ..runs import check_out_folder, prepare_run_dir, write_csv, write_figures, write_json

__all__ = ["PlugsMatchRequest", "SHIFTS_FILE", "read_shifts", "run_plugs_match"]

SHIFTS_FILE = "shifts.json"


def run_plugs_match(out, log, plugs, *, curve: str = "PHIF", window: float = 2.0, min_plugs: int = 10,
                    reference: dict | None = None, overwrite: bool = True):
    """Estimate the per-run depth shifts of ``plugs`` against ``log`` and write them into ``out``.

    Parameters
    ----------
    out : the folder (created; refused when non-empty unless ``overwrite``).
    log : WellLog holding ``curve``; plugs : PlugTable with core porosity.
    curve, window, min_plugs : see :func:`~glassformer.data.estimate_depth_shifts`.
    reference : run -> known shift, drawn on the figure (e.g. published corrections).

    Returns
    -------
    DepthMatch

    Raises
    ------
    InputError, CurveNotFoundError, DepthError
        From :func:`~glassformer.data.estimate_depth_shifts` (no core porosity, no such curve,
        differing depth units, bad window).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        match = estimate_depth_shifts(plugs, log, curve=curve, window=window, min_plugs=min_plugs)
    notes = [" ".join(str(w.message).split()) for w in caught if issubclass(w.category, UserWarning)]
    out = prepare_run_dir(out, overwrite=overwrite)
    doc = {**match.to_dict(), "well": log.name, "core": plugs.source, "notes": notes,
           "shifts": {str(r.run): r.shift for r in match.runs}}
    write_json(out / SHIFTS_FILE, doc)
    table = {"shift": match.candidates}
    for r, row in zip(match.runs, match.correlations):
        table[f"run {r.run}"] = row
    write_csv(out / "correlations.csv", pd.DataFrame(table))
    shifted = plugs.shifted(match)
    write_figures(out, depth_unit=log.depth_unit, extra={
        "depth_match": lambda: plots.plot_depth_match(match, reference=reference,
                                                      title=f"{log.name}: core porosity against {match.curve}"),
        "core_on_log": lambda: plots.plot_plugs_on_log(
            log.depth, log.curve(match.curve), plugs.depth, plugs.porosity, shifted_depth=shifted.depth,
            run=plugs.run_labels, curve=match.curve, depth_unit=log.depth_unit)})
    say(str(match))
    for note in notes:
        say(f"note: {note}")
    return match


@dataclass(frozen=True)
class PlugsMatchRequest:
    """``glassformer core-match``: the cored well ``data`` (holding ``match_depth``), its plug table ``core`` and
    the folder ``out``; the other fields as the options of the same names (depths and windows in the files' unit)."""

    data: str
    core: str
    out: str
    core_depth: str = "DEPTH"
    core_porosity: str = CORE_POROSITY
    core_porosity_unit: str | None = None
    core_run: str = "auto"
    match_depth: str = "PHIF"
    shift_window: float = 2.0
    min_plugs: int = 10
    overwrite: bool = False

    @classmethod
    def from_options(cls, params: Mapping[str, Any]) -> "PlugsMatchRequest":
        """The request of ``glassformer core-match``'s option values (click's ``ctx.params``)."""
        return cls(**{name: params[name] for name in cls.__dataclass_fields__ if name in params})

    def run(self):
        """Read the well and the plug table, then :func:`run_plugs_match` into ``out``; returns the DepthMatch.

        Raises
        ------
        InputError, DataFileError, CurveNotFoundError, DepthError
            A non-empty ``out`` without ``overwrite``, and every error of reading and matching (before
            anything is written).
        """
        check_out_folder(self.out, overwrite=self.overwrite)
        log = read_well(self.data)
        table = read_plugs(self.core, depth=self.core_depth, porosity=self.core_porosity, permeability=None,
                           run=self.core_run, porosity_unit=self.core_porosity_unit)
        return run_plugs_match(self.out, log, table, curve=self.match_depth, window=self.shift_window,
                               min_plugs=self.min_plugs, overwrite=True)


def read_shifts(path) -> dict:
    """Run label (text) -> depth shift, from a ``shifts.json`` written by :func:`run_plugs_match` (or its folder).

    Raises
    ------
    InputError
        The file is not such a description, or a shift is not a finite number.
    """
    path = Path(path)
    if path.is_dir():
        path = path / SHIFTS_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        shifts = {str(k): float(v) for k, v in dict(doc["shifts"]).items()}
    except FileNotFoundError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{path}: not a shifts file written by glassformer core-match ({exc})") from None
    bad = [k for k, v in shifts.items() if not np.isfinite(v)]
    if bad:
        raise InputError(f"{path}: the shift of run {bad[0]} is not a finite number")
    return shifts
