"""Batch prediction: one model over many wells, one output file per well and a manifest, on any engine.

::

    from glassformer.parallel import make_engine
    from glassformer.wells.batch import expand_inputs, run_batch

    files = expand_inputs(["wells/*.las", "more/W-7.csv"])
    with make_engine(jobs=2) as engine:                       # or scheduler="local" / "tcp://HOST:PORT"
        rows = run_batch("runs/f11b", files, "predictions", engine=engine)

The model is read once, into a :class:`~glassformer.wells.predictor.Predictor`, before any well
runs.  Each well is one task, :func:`predict_job`, which calls
:func:`~glassformer.wells.prediction.predict_file` with that predictor and plain arguments (paths,
the depth range): a serial batch predicts every well with the one loaded model; worker processes
receive it as its folder and checksum, re-read it from its ``.npz`` + JSON files, read the well and
write its output themselves, so nothing but paths and the manifest rows crosses between processes.  Every
engine runs each task with one BLAS thread, so the output files of a parallel batch are
byte-identical to those of a serial one.

A bad file never stops the batch: its row in the manifest says why (status ``error`` and a
one-line message naming the file and the problem) and the other wells are written.  Outputs are
written atomically, so an interrupted batch leaves only complete files, and ``resume=True`` skips
the wells whose output exists and whose manifest row says ``ok``.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Callable, Sequence

from ..errors import InputError
from ..parallel import SerialEngine
from .manifest import MANIFEST_COLUMNS, Manifest
from .prediction import OUTPUT_FORMATS, manifest_row, predict_file
from .predictor import Predictor

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "MANIFEST_COLUMNS", "execute_batch", "expand_inputs",
           "output_paths", "plan_batch", "predict_job", "run_batch"]

#: Exit statuses of ``glassformer predict`` (documented in its --help and the README).
EXIT_OK, EXIT_USAGE, EXIT_FAILED = 0, 2, 3


def expand_inputs(patterns: Sequence[str], option: str = "--data") -> list[Path]:
    """The well files named by ``patterns``: glob patterns (``*``, ``?``, ``[...]``, ``**``) and plain paths.

    Patterns are expanded here, not by the shell, so a quoted ``'wells/*.las'`` works on every
    shell.  The matches of each pattern are sorted by name; a file named twice is kept once, at
    its first place.

    Raises
    ------
    InputError
        A pattern that matches no file (the message names the pattern), a plain path that does
        not exist, or a folder (``option`` names the option in messages).
    """
    files, seen = [], set()
    for pattern in patterns:
        text = os.path.expanduser(str(pattern))
        if glob.has_magic(text):
            found = sorted(Path(p) for p in glob.glob(text, recursive=True) if not Path(p).is_dir())
            if not found:
                raise InputError(f"{option} {pattern!r} matches no file")
        else:
            path = Path(text)
            if path.is_dir():
                raise InputError(f"{option} {pattern}: is a folder; give its files, e.g. {option} '{path / '*.las'}'")
            if not path.exists():
                raise InputError(f"{option} {pattern}: no such file")
            found = [path]
        for path in found:
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                files.append(path)
    return files


def output_paths(files: Sequence[Path], out_dir, fmt: str = "las") -> list[Path]:
    """``out_dir / <file stem>.<fmt>`` for each well file.

    Raises
    ------
    InputError
        ``fmt`` is not "las" or "csv"; two wells would write the same output (stems equal up to
        case: both files are named); an output would replace its input well.
    """
    fmt = str(fmt).lower()
    if fmt not in OUTPUT_FORMATS:
        raise InputError(f"--format {fmt!r}: choose one of {', '.join(OUTPUT_FORMATS)}")
    out_dir = Path(out_dir)
    outputs, by_name = [], {}
    for path in files:
        out = out_dir / f"{Path(path).stem}.{fmt}"
        other = by_name.setdefault(out.name.lower(), path)
        if other is not path:
            raise InputError(f"{other} and {path} would both be written to {out}; predict them into separate "
                             "--out-dir folders, or rename one")
        if out.exists() and out.resolve() == Path(path).resolve():
            raise InputError(f"{out} would replace the input well {path}; choose another --out-dir")
        outputs.append(out)
    return outputs


def predict_job(job: dict) -> dict:
    """One well of a batch (the engine's task): :func:`~glassformer.wells.prediction.predict_file` of ``job``.

    ``job`` holds ``model`` (the batch's :class:`~glassformer.wells.predictor.Predictor`: the same
    object in this process, re-read from its folder in a worker), ``path``, ``out_path`` and the
    keyword arguments of :func:`~glassformer.wells.prediction.predict_well`; returns the well's
    manifest row.
    """
    return predict_file(**job)


def _refuse_existing(manifest: Manifest, outputs: Sequence[Path]) -> None:
    if manifest.exists():
        raise InputError(f"--out-dir {manifest.folder} holds an earlier batch ({manifest.json_path.name}); pass "
                         "--resume to finish it, or --overwrite to predict every well again")
    existing = [o for o in outputs if o.exists()]
    if existing:
        more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
        raise InputError(f"{existing[0]}{more} already exist(s); pass --overwrite to replace them")


def plan_batch(model, files: Sequence, out_dir, *, fmt: str = "las", depth_range: tuple | None = None,
               resume: bool = False, overwrite: bool = False, flag_samples: Callable | None = None,
               check: bool = True, aliases=(), depth_unit: str | None = None, reading: dict | None = None,
               resample: bool = False, keep: str = "all") -> dict:
    """Check a batch and list its work, writing nothing (see :func:`run_batch` for the arguments;
    ``reading``, ``resample`` and ``keep`` go to :func:`~glassformer.wells.prediction.predict_well`).

    Returns
    -------
    dict
        ``predictor`` (the model, loaded once), ``files``, ``outputs``, ``rows`` (the kept rows
        of an earlier batch, None for wells to run), ``jobs`` (the tasks, one per well to run, in
        input order, with ``index`` the position of each in ``files``) and ``manifest``.

    Raises
    ------
    InputError, ModelFileError
        As :func:`run_batch`, before anything is written or any worker started.
    """
    if not files:
        raise InputError("no well file to predict")
    files = [Path(f) for f in files]
    outputs = output_paths(files, out_dir, fmt)
    predictor = model if isinstance(model, Predictor) else Predictor.load(model)   # a bad model stops it here
    identity = predictor.identity
    settings = {"model_checksum": identity["checksum"], "format": str(fmt).lower(),
                "depth_range": list(depth_range) if depth_range is not None else None}
    if predictor.use is not None or predictor.every:     # a resumed batch must write the same curves
        settings.update(use=predictor.use, every=predictor.every)
    manifest = Manifest(out_dir, settings, about={"model": identity["folder"]})
    done = manifest.completed() if resume else {}
    if not (resume or overwrite):
        _refuse_existing(manifest, outputs)
    rows = [_kept_row(done.get(o.name), f) for f, o in zip(files, outputs)]
    index = [i for i, row in enumerate(rows) if row is None]
    jobs = [{"model": predictor, "path": os.path.abspath(files[i]),
             "out_path": os.path.abspath(outputs[i]), "depth_range": depth_range, "overwrite": True,
             "flag_samples": flag_samples, "check": check, "aliases": list(aliases), "depth_unit": depth_unit,
             "reading": dict(reading or {}), "resample": resample, "keep": keep}
            for i in index]
    return {"predictor": predictor, "files": files, "outputs": outputs, "rows": rows, "jobs": jobs, "index": index,
            "manifest": manifest}


def execute_batch(plan: dict, engine=None, on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """Run the jobs of :func:`plan_batch` on ``engine`` (default serial); returns every row, in input order.

    The manifest is rewritten as wells finish and once more at the end, also when the batch is
    interrupted (Ctrl-C), so it always lists the wells done.
    """
    engine = engine if engine is not None else SerialEngine()
    files, outputs, rows, index, manifest = (plan[k] for k in ("files", "outputs", "rows", "index", "manifest"))
    rows = list(rows)
    manifest.about["engine"] = engine.describe()
    manifest.folder.mkdir(parents=True, exist_ok=True)

    def record(outcome) -> None:
        i = index[outcome.index]
        rows[i] = _row(outcome, files[i], outputs[i])
        manifest.update(rows)
        if on_row is not None:
            on_row(rows[i])

    try:
        engine.run(predict_job, plan["jobs"], on_outcome=record)
    finally:                                          # also on Ctrl-C: the rows finished so far
        manifest.write(rows)
    return rows


def run_batch(model, files: Sequence, out_dir, *, fmt: str = "las", depth_range: tuple | None = None,
              engine=None, resume: bool = False, overwrite: bool = False, flag_samples: Callable | None = None,
              on_row: Callable[[dict], None] | None = None, check: bool = True, aliases=(),
              depth_unit: str | None = None) -> list[dict]:
    """Predict every well of ``files`` with ``model``: one output each, and the manifest.

    Parameters
    ----------
    model : Predictor, or str or Path
        The model loaded once (:meth:`~glassformer.wells.predictor.Predictor.load`), or its folder:
        a run folder written by ``glassformer train`` (or its ``model/`` sub-folder).  Worker
        processes re-read the folder, so on a cluster it must be on a file system every worker sees.
    files : sequence of paths
        Well files (``.las``/``.csv``), e.g. from :func:`expand_inputs`.
    out_dir : str or Path
        Receives ``<stem>.<fmt>`` per well, ``manifest.csv`` and ``manifest.json`` (created).
    fmt : {"las", "csv"}, default "las"
    depth_range : (top, base), optional
        Predict only this interval of every well (file depth unit).
    engine : glassformer.parallel.Engine, optional
        Where the wells run (default: one after another in this process).
    resume : bool, default False
        Skip the wells whose output exists and whose manifest row says ``ok``; predict the rest.
    overwrite : bool, default False
        Replace the outputs and manifest of an earlier batch in ``out_dir``.
    flag_samples : callable, optional
        The out-of-range check given to :func:`~glassformer.wells.prediction.predict_file`.
    on_row : callable, optional
        Called in this process with each finished well's row (progress).
    check, aliases, depth_unit : optional
        Check every well against the model before predicting it (units, depth unit, step, training
        ranges), with curve aliases and a depth conversion, as
        :func:`~glassformer.wells.prediction.predict_file` takes them (``glassformer predict`` does).

    Returns
    -------
    list of dict
        One manifest row per file, in input order (:data:`MANIFEST_COLUMNS`); ``output`` is the
        file name inside ``out_dir``; failed wells have ``status="error"`` and the message.

    Raises
    ------
    InputError
        An earlier batch or existing outputs in ``out_dir`` without ``resume``/``overwrite``; a
        resume whose model, format or depth range differ from the earlier batch's; clashing or
        self-replacing outputs; no file.
    ModelFileError
        No readable model in ``model`` (checked before any well runs).
    """
    plan = plan_batch(model, files, out_dir, fmt=fmt, depth_range=depth_range, resume=resume,
                      overwrite=overwrite, flag_samples=flag_samples, check=check, aliases=aliases,
                      depth_unit=depth_unit)
    return execute_batch(plan, engine, on_row)


def _kept_row(row: dict | None, path) -> dict | None:
    """A completed row of the earlier batch, kept when it is for the same input file."""
    if row is None or os.path.realpath(row.get("file", "")) != os.path.realpath(path):
        return None
    return {key: row.get(key) for key in MANIFEST_COLUMNS}


def _row(outcome, path, out) -> dict:
    if outcome.ok:
        return {**outcome.value, "file": str(path), "output": Path(out).name}
    return manifest_row(path, out, seconds=outcome.seconds, status="error", error=outcome.error)
