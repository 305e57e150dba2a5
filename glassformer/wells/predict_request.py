"""What ``glassformer predict`` asks, as one request object, checked and run: one well, or a batch of wells.

::

    from glassformer.wells.predict_request import PredictRequest, run_prediction

    outcome = run_prediction(PredictRequest(model_dir="runs/f11b", data=("wells/*.las",), out_dir="pred"))
    outcome.exit_status          # 0: every well predicted, 3: some failed (their manifest rows say why)

The command line fills the request from its options (:meth:`PredictRequest.from_options`); a
script builds it directly.  :func:`run_prediction` checks it (the rules of the options together),
loads the model once (:class:`~glassformer.wells.predictor.Predictor`) and predicts the one well
(:func:`~glassformer.wells.prediction.predict_well`) or the batch
(:func:`~glassformer.wells.batch.plan_batch`, :func:`~glassformer.wells.batch.execute_batch`) with
it.  What it did is reported through :mod:`glassformer.reporting`; what the user must know before
trusting a prediction comes back as :attr:`PredictionOutcome.warnings`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from tqdm.auto import tqdm

from ..data import parse_units
from ..errors import InputError
from ..parallel import make_engine
from ..reporting import say
from .batch import EXIT_FAILED, EXIT_OK, execute_batch, expand_inputs, plan_batch
from .prediction import predict_well
from .predictor import Predictor
from .requests import EngineRequest, ReadingRequest

__all__ = ["PredictRequest", "PredictionOutcome", "run_prediction"]


@dataclass(frozen=True)
class PredictRequest:
    """``glassformer predict``: the target log of one well (``out``), or of many (``out_dir``), from a saved model.

    Attributes
    ----------
    model_dir : str
        A run folder written by ``glassformer train`` (or its ``model/``), or a deep ensemble.
    data : tuple of str
        Well files or glob patterns (``'wells/*.las'``).
    out, out_dir : str or None
        The output file of one well (``.las``/``.csv``), or the folder of a batch; exactly one.
    fmt : {"las", "csv"} or None
        A batch's output format (default las).
    depth_range : (top, base) or None
        Only this interval of each well, in the file's depth unit.
    aliases : tuple of ``"NAME=CURVE"``
    depth_unit : {"m", "ft"} or None
        Convert the wells' depths to this unit first.
    use : str or None
        Write this model's prediction (its name in the run's tables) instead of the transformer's.
    every : bool
        Also write one curve per model of the run.
    resample, keep, overwrite, resume, progress
        As the options of the same names.
    reading : ReadingRequest
        Stated units, depth column and sheet of the wells.
    engine : EngineRequest
        Where a batch's wells run.
    """

    model_dir: str
    data: tuple
    out: str | None = None
    out_dir: str | None = None
    fmt: str | None = None
    depth_range: tuple | None = None
    aliases: tuple = ()
    depth_unit: str | None = None
    use: str | None = None
    every: bool = False
    resample: bool = False
    keep: str = "all"
    overwrite: bool = False
    resume: bool = False
    progress: bool = True
    reading: ReadingRequest = field(default_factory=ReadingRequest)
    engine: EngineRequest = field(default_factory=EngineRequest)

    @classmethod
    def from_options(cls, params: Mapping[str, Any]) -> "PredictRequest":
        """The request of ``glassformer predict``'s option values (click's ``ctx.params``)."""
        own = {k: (tuple(v) if isinstance(v, list) else v) for k, v in params.items()
               if k in cls.__dataclass_fields__ and k not in ("reading", "engine")}
        return cls(**own, reading=ReadingRequest.pick(params), engine=EngineRequest.pick(params))

    def check(self) -> list:
        """The well files the request names (patterns expanded), once the options are checked together.

        Raises
        ------
        InputError
            Neither or both of ``out`` and ``out_dir``; batch options with ``out``; several files,
            the input file, an existing file (without ``overwrite``) or a suffix other than .csv/.las
            for ``out``; a pattern matching no file.
        """
        if (self.out is None) == (self.out_dir is None):
            raise InputError("give --out FILE (one well) or --out-dir DIR (a batch of wells), not "
                             + ("both" if self.out else "neither"))
        if self.out is not None:
            batch_only = {"--format": self.fmt, "--resume": self.resume, "--jobs": self.engine.jobs,
                          "--scheduler": self.engine.scheduler}
            given = [name for name, value in batch_only.items() if value]
            if given:
                raise InputError(f"{', '.join(given)} apply to a batch (--out-dir DIR), not to --out FILE")
        files = expand_inputs(self.data)
        if self.out is not None:
            _check_output(Path(self.out), files, self.overwrite)
        return files


def _check_output(out: Path, files: list, overwrite: bool) -> None:
    if len(files) > 1:
        raise InputError(f"--out {out} writes one well, but --data names {len(files)} files; use --out-dir DIR "
                         "for a batch")
    data = files[0]
    if out.resolve() == Path(data).resolve() or (out.exists() and out.samefile(data)):
        raise InputError(f"--out {out} would replace the input well --data {data}; choose another output file")
    if out.exists() and not overwrite:
        raise InputError(f"--out {out} already exists; pass --overwrite to replace it")
    if out.suffix.lower() not in (".csv", ".las"):
        raise InputError(f"--out {out}: use a .csv or .las file name")


@dataclass
class PredictionOutcome:
    """What :func:`run_prediction` did.

    Attributes
    ----------
    predictor : Predictor
        The model, loaded once.
    rows : list of dict
        One manifest row per well (:data:`glassformer.wells.batch.MANIFEST_COLUMNS`).
    warnings : list of str
        What the checks of a single well found that the user must know (a batch writes them into
        each output's header).
    exit_status : int
        0 every well predicted, 3 some wells of a batch failed.
    """

    predictor: Predictor
    rows: list
    warnings: list = field(default_factory=list)
    exit_status: int = EXIT_OK

    @property
    def failed(self) -> list:
        """The rows of the wells that failed."""
        return [r for r in self.rows if r["status"] != "ok"]


def run_prediction(request: PredictRequest) -> PredictionOutcome:
    """Check ``request``, load its model once and predict its well or its batch of wells.

    Reports what it wrote through :func:`glassformer.reporting.say` (and the notes of a single
    well's checks: aliases used, depths converted, resampling).

    Raises
    ------
    InputError, ModelFileError
        A request that cannot run (:meth:`PredictRequest.check`), a model that cannot be read, a
        ``use`` the run has no model for; for a single well, everything
        :func:`~glassformer.wells.prediction.predict_well` raises.
    ClusterError
        The Dask scheduler of a batch cannot be reached.
    KeyboardInterrupt
        A batch interrupted: its manifest lists the wells finished (``resume`` finishes it).
    """
    files = request.check()
    predictor = Predictor.load(request.model_dir, use=request.use, every=request.every)
    options = {"depth_range": request.depth_range, "check": True, "aliases": list(request.aliases),
               "depth_unit": request.depth_unit, "resample": request.resample, "keep": request.keep,
               "reading": {"units": parse_units(request.reading.units), "depth_column": request.reading.depth_column,
                           "sheet": request.reading.sheet}}
    if request.out is not None:
        return _one_well(predictor, files[0], Path(request.out), options)
    return _batch(predictor, files, request, options)


def _one_well(predictor: Predictor, data, out: Path, options: dict) -> PredictionOutcome:
    done = predict_well(predictor, data, out, overwrite=True, **options)
    for line in done.notes:
        say(f"note: {line}")
    row = done.row
    label = f"{predictor.curve}, model {predictor.model_name}"
    say(f"Wrote {out} (well {row['well']}): {row['samples_predicted']} of {row['samples']} depths predicted "
        f"({label}, {predictor.unit or 'no unit'}); {done.summary}")
    return PredictionOutcome(predictor, [row], done.warnings)


def _batch(predictor: Predictor, files: list, request: PredictRequest, options: dict) -> PredictionOutcome:
    out_dir = request.out_dir
    plan = plan_batch(predictor, files, out_dir, fmt=request.fmt or "las", resume=request.resume,
                      overwrite=request.overwrite, **options)
    kept = len(files) - len(plan["jobs"])
    with make_engine(jobs=request.engine.jobs, scheduler=request.engine.scheduler) as engine:
        say(f"Predicting {len(plan['jobs'])} well(s) into {out_dir} on {engine.describe()}"
            + (f"; {kept} already done (--resume)" if kept else ""))
        with tqdm(total=len(plan["jobs"]), unit="well", disable=not request.progress, file=sys.stderr,
                  leave=False) as bar:
            rows = execute_batch(plan, engine, on_row=lambda row: bar.update(1))
    outcome = PredictionOutcome(predictor, rows, exit_status=EXIT_FAILED if any(r["status"] != "ok" for r in rows)
                                else EXIT_OK)
    say(f"Wrote {len(rows) - len(outcome.failed)} of {len(rows)} well(s) to {out_dir} (manifest.csv, manifest.json)")
    flagged = sum(r.get("samples_flagged") or 0 for r in rows if r["status"] == "ok")
    if flagged:
        say(f"{flagged} depth(s) have inputs outside the training range: samples_flagged in the manifest, "
            "the _OOR curve in each output")
    return outcome
