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
from pathlib import Path
import warnings

import numpy as np
import pandas as pd

from .. import plots
from ..data import estimate_depth_shifts
from ..errors import InputError
from ..runs import prepare_run_dir, write_csv, write_figures, write_json

__all__ = ["SHIFTS_FILE", "read_shifts", "run_plugs_match"]

SHIFTS_FILE = "shifts.json"


def run_plugs_match(out, log, plugs, *, curve: str = "PHIF", window: float = 2.0, min_plugs: int = 10,
                    reference: dict | None = None, echo=print, overwrite: bool = True):
    """Estimate the per-run depth shifts of ``core`` against ``log`` and write them into ``out``.

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
    echo(str(match))
    for note in notes:
        echo(f"note: {note}")
    return match


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
