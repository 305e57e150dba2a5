"""One experiment protocol: an experiment yields tasks, an engine runs them, one writer makes the run folder.

Every job that writes a run folder -- train, compare, cross-validation, sweep, a deep ensemble, a
run on core plugs -- is an :class:`Experiment`: it checks its inputs before anything is written
(:meth:`~Experiment.check`), lists its independent pieces of work as plain-data tasks
(:meth:`~Experiment.tasks`, each run by the top-level function :attr:`~Experiment.task`), and
turns the tasks' results into a :class:`RunResult` (:meth:`~Experiment.collect`).
:func:`run_experiment` drives any of them the same way, on any engine of
:mod:`glassformer.parallel` (serial by default), and :func:`write_run_folder` is the single place
where a result becomes ``config.json``, ``metrics.json``, ``predictions.csv``, figures, the tables
the user reads and ``report.html``.

A new kind of experiment is one module: a class with these three methods and a task function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from ..models import run_config_defaults
from ..parallel import SerialEngine
from ..report import write_report
from ..reporting import say, warn
from .figures import write_figures
from .folder import prepare_run_dir, write_csv, write_json

__all__ = ["Experiment", "RunResult", "run_experiment", "write_run_folder"]


@dataclass
class RunResult:
    """Everything an experiment found, in the form the run-folder writer needs.

    Attributes
    ----------
    metrics : dict
        Written to ``metrics.json`` and returned by :func:`run_experiment`.
    config : dict
        Every setting used, written to ``config.json``.
    predictions : pandas.DataFrame or None
        One row per depth sample (``predictions.csv``).
    tables : list of str
        Shown to the user in this order (formatted tables, verdicts, recommendations).
    warnings : list of str
        Problems the user should act on, shown after the tables as ``warning: ...``.
    figures : dict
        Keyword arguments of :func:`glassformer.runs.write_figures` (``history``, ``depth_unit``, ...).
    extra_figures : dict
        Figure name -> callable returning a Figure or Axes (saved as ``figures/<name>.png``).
    csv : dict
        Further tables, file name -> pandas.DataFrame (e.g. ``{"sweep.csv": frame}``).
    defaults : dict or None
        ``{config key: {parameter: default}}`` for the report (which settings differ from defaults);
        None: the estimators' own defaults (:func:`glassformer.models.run_config_defaults`).
    """

    metrics: dict
    config: dict
    predictions: Any = None
    tables: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    figures: dict = field(default_factory=dict)
    extra_figures: dict = field(default_factory=dict)
    csv: dict = field(default_factory=dict)
    defaults: Mapping | None = None


class Experiment(Protocol):
    """What every experiment offers :func:`run_experiment`."""

    #: The top-level function that runs one task: ``task(item) -> result`` (plain data in, plain data out).
    task: Callable[[Any], Any]

    def check(self) -> None:
        """Refuse bad inputs (raise :class:`~glassformer.errors.InputError`) before any file is written."""

    def tasks(self, out: Path) -> list:
        """The independent pieces of work, as plain data (paths, seeds, logs, specifications)."""

    def collect(self, results: list, out: Path) -> RunResult:
        """Turn the tasks' results (in task order) into a :class:`RunResult`."""


def run_experiment(experiment: Experiment, out, *, engine=None, overwrite: bool = True, report: bool = True) -> dict:
    """Run ``experiment`` on ``engine`` and write its run folder ``out``.

    Parameters
    ----------
    experiment : Experiment
    out : str or Path
        The run folder (created; a non-empty one is refused unless ``overwrite``).
    engine : glassformer.parallel.Engine, optional
        Runs the tasks (default: :class:`~glassformer.parallel.SerialEngine`, in this process).
        Every engine gives the serial engine's numbers.
    report : bool, default True
        Also write ``report.html``.

    Returns
    -------
    dict
        The metrics, as written to ``metrics.json``.

    Raises
    ------
    InputError
        Bad inputs (before the folder is created) or a non-empty ``out`` without ``overwrite``.
    """
    experiment.check()
    out = prepare_run_dir(out, overwrite=overwrite)
    results = (engine if engine is not None else SerialEngine()).map(experiment.task, experiment.tasks(out))
    result = experiment.collect(results, out)
    write_run_folder(out, result, report=report)
    return result.metrics


def write_run_folder(out, result: RunResult, *, report: bool = True) -> Path:
    """Write ``result`` into the run folder ``out`` and show its tables and warnings; returns the folder.

    Files: ``config.json``, ``metrics.json``, ``predictions.csv`` (when there are predictions),
    each of ``result.csv``, ``figures/*.png`` and ``report.html`` (when ``report``).  Each file is
    written atomically.
    """
    out = Path(out)
    write_json(out / "config.json", result.config)
    write_json(out / "metrics.json", result.metrics)
    if result.predictions is not None:
        write_csv(out / "predictions.csv", result.predictions)
    for name, frame in result.csv.items():
        write_csv(out / name, frame)
    write_figures(out, **result.figures, extra=result.extra_figures)
    for table in result.tables:
        say(table)
    for line in result.warnings:
        warn(line)
    if report:
        write_report(out, result.defaults if result.defaults is not None else run_config_defaults())
    return out
