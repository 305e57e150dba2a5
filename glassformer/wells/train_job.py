"""``glassformer train`` as a request the library checks, plans and runs.

The command line fills a :class:`~glassformer.wells.requests.TrainRequest` and hands it here; a
script does the same without click::

    plan = plan_train(TrainRequest(inputs=("PHIF", "VSH"), target="KLOGH", out="runs/f11b",
                                   wells=WellsRequest(data=("F-11B.las",), test_depth=("4300:4744.8",))))
    metrics = run_train(plan)

:func:`plan_train` applies every rule about the combination of settings (the target is not an
input, ``--jobs`` needs an ensemble, a target or core plugs, ...), reads the wells and builds the
model before any file is written; :func:`run_train` runs the plan as a
:class:`~glassformer.wells.experiment.WellExperiment`, and ``--resume`` is checked against the
options that wrote the checkpoint (:func:`run_signature`).  What a run reports goes through
:mod:`glassformer.reporting`.  (:mod:`.compare_job` does the same for ``glassformer compare``.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from .. import io
from ..data import describe_use, parse_units
from ..data.volve import ATTRIBUTION, is_volve
from ..errors import InputError, ModelFileError
from ..models import SequenceRegressor
from ..parallel import make_engine
from ..reporting import say, warn
from ..runs import check_out_folder
from ..train import ResumeFrom, SaveCheckpoint
from .dataset import WellDataset, build_dataset
from .experiment import run_well_experiment
from .member_mean import DEFAULT_MEMBERS
from .model import WellModel
from .option_values import input_names, positional_options
from .plugs_request import check_plugs_request, run_ensemble_request, run_plugs_request
from .requests import ReadingRequest, TrainRequest, WellsRequest

__all__ = ["TrainPlan", "attribution_of", "load_resume", "members_of", "plan_train", "read_dataset", "run_signature",
           "run_train", "test_logs_of", "transformer_of"]

#: Options of ``train`` that may differ between an interrupted run and its ``--resume`` (they do not change the result).
_RESUME_FREE = ("out", "overwrite", "progress", "resume", "checkpoint_every")
_NO_TEST_NOTE = "note: no --test-depth / --test-data given: the 'test' metrics are on the training interval"


# --------------------------------------------------------------------------- reading the wells
def read_dataset(wells: WellsRequest, reading: ReadingRequest, *, inputs, target, window: int | None,
                 val_data=None) -> WellDataset:
    """The wells of a request, each cut to its role's interval (:func:`~glassformer.wells.build_dataset`).

    ``val_data``: the validation wells to read (default: ``wells.validation_data``).  Curves read
    under another name are reported as notes, the checks of validation and test wells as warnings.

    Raises
    ------
    InputError
        No training wells (neither ``data`` nor ``manifest``).
    DataFileError
        A well that cannot be read or cut (the message names the file, curve and depth).
    """
    if not wells.data and not wells.manifest:
        raise InputError("give the training wells with --data FILE (repeatable) or --manifest FILE")
    ds = build_dataset(list(wells.data), inputs=inputs, target=target, test_data=list(wells.test_data),
                       val_data=list(wells.validation_data if val_data is None else val_data),
                       train_depth=wells.train_depth, test_depth=wells.test_depth, manifest=wells.manifest,
                       aliases=list(wells.aliases), window=window, units=parse_units(reading.units),
                       depth_column=reading.depth_column, sheet=reading.sheet)
    for well, used in ds.curves_used.items():
        for asked, curve in used.items():
            if asked != curve:
                say(f"note: well {well}: {describe_use(asked, curve, wells.aliases)}")
    for line in ds.warnings:
        warn(line)
    return ds


def test_logs_of(ds: WellDataset) -> list:
    """The test logs, or the training logs (with a note saying so) when no test data were given."""
    if ds.test:
        return ds.test
    say(_NO_TEST_NOTE)
    return ds.train


def attribution_of(logs) -> str | None:
    """The Volve licence line when any of ``logs`` is a Volve well, else None."""
    return ATTRIBUTION if any(map(is_volve, logs)) else None


# --------------------------------------------------------------------------- glassformer train
@dataclass
class TrainPlan:
    """A checked ``train`` request, ready to run.

    Attributes
    ----------
    request : TrainRequest
    kind : {"single", "ensemble", "core"}
        One transformer (a mean of ``--members``) beside the baselines, a deep ensemble on the log
        target, or a run on core plugs (each run by :func:`run_train`).
    names : list of str
        The input curves.
    model : SequenceRegressor
        The (unfitted) transformer of the request's settings.
    wm : WellModel or None
        The well model (not for ``"core"``, which builds its own on the core target).
    dataset : WellDataset or None
        The wells read, each cut to its interval (not for ``"core"``).
    test_logs : list
        The test logs (the training logs when none were given).
    callbacks : list
        The transformer's checkpoints and the resume of an interrupted run (``"single"``).
    """

    request: TrainRequest
    kind: str
    names: list
    model: Any
    wm: WellModel | None = None
    dataset: WellDataset | None = None
    test_logs: list = field(default_factory=list)
    callbacks: list = field(default_factory=list)


def plan_train(request: TrainRequest) -> TrainPlan:
    """Check ``request`` whole and read its wells; nothing is written.

    Raises
    ------
    InputError
        A rule of the request broken (one line naming the options): core options without
        ``--core``, ``--jobs``/``--scheduler`` without an ensemble
        (:func:`~glassformer.wells.plugs_request.check_plugs_request`), no ``--target`` without
        ``--core``, a target that is also an input, a learning rate that is not a finite number
        > 0, a non-empty ``--out`` without ``--overwrite``, a checkpoint of other options.
    DataFileError, ModelFileError
        Wells or a checkpoint that cannot be read.
    """
    check_plugs_request(request)                 # the options of core plugs and ensembles, --jobs, --resume
    plugs = request.plugs
    names = input_names(request.inputs)
    model = transformer_of(request)
    if plugs.core is not None:
        check_out_folder(request.out, overwrite=request.overwrite)
        return TrainPlan(request, "core", names, model)
    target = request.target
    if target is None:
        raise InputError("Missing option '--target' (or give --core to learn from core plugs).")
    callbacks, resuming_here = _checkpoints(request)
    check_out_folder(request.out, overwrite=request.overwrite or resuming_here)   # created once the inputs are valid
    if str(target).strip().upper() in {m.upper() for m in names}:
        raise InputError(f"--target {target} is also one of --inputs {' '.join(names)}; the model would "
                         "see the answer (choose inputs without the target)")
    ensemble = bool(plugs.ensemble)               # an ensemble reads and calibrates on its validation data itself
    ds = read_dataset(request.wells, request.reading, inputs=names, target=target, window=request.transformer.window,
                      val_data=() if ensemble else None)
    test_logs = test_logs_of(ds)
    t = request.transformer
    wm = WellModel(names, target, log_target=request.log_target, window=t.window, stride=t.stride,
                   positions=t.positions, model=model.set_params(progress=t.progress),
                   validation=request.wells.validation_split)
    return TrainPlan(request, "ensemble" if ensemble else "single", names, model, wm=wm, dataset=ds,
                     test_logs=test_logs, callbacks=callbacks)


def run_train(plan: TrainPlan) -> dict:
    """Run a plan of :func:`plan_train` into ``plan.request.out``; returns the metrics.

    ``"single"``: one transformer -- the mean of ``--members`` members, by default 5 -- beside the
    baselines (:func:`~glassformer.wells.run_well_experiment`, with the first member's checkpoints);
    ``"ensemble"`` and ``"core"``: a deep ensemble on the log target or a run
    on core plugs (:mod:`glassformer.wells.plugs_request`), their members on the request's engine.

    Raises
    ------
    DivergenceError
        Training diverged (the last good model is in ``out/model``).
    TrainingInterrupted
        SIGINT or SIGTERM: a checkpoint was saved into ``out/checkpoint``.
    """
    request, ds = plan.request, plan.dataset
    if plan.kind == "single":
        return run_well_experiment(request.out, ds.train, plan.test_logs, plan.wm, title="glassformer train",
                                   boundary=ds.boundary, attribution=attribution_of([*ds.train, *ds.val, *ds.test]),
                                   overwrite=True, callbacks=plan.callbacks, val_logs=ds.val,
                                   config=_train_config(request, ds), members=members_of(request))
    with make_engine(jobs=request.engine.jobs, scheduler=request.engine.scheduler) as engine:
        if plan.kind == "core":
            return run_plugs_request(request, names=plan.names, model=plan.model, engine=engine)
        return run_ensemble_request(request, train_logs=ds.train, test_logs=plan.test_logs, logs=ds.wells,
                                    wm=plan.wm, engine=engine)


def members_of(request: TrainRequest) -> int:
    """How many transformers' mean a one-transformer ``train`` predicts with (``--members``, default 5)."""
    return DEFAULT_MEMBERS if request.members is None else int(request.members)


def transformer_of(request: TrainRequest) -> SequenceRegressor:
    """The (unfitted, silent) transformer of ``request.transformer``.

    Raises
    ------
    InputError
        A learning rate that is not a finite number > 0; a positional encoding whose options do
        not fit (:func:`~glassformer.wells.option_values.positional_options`); settings the
        estimator refuses (:meth:`~glassformer.models.SequenceRegressor.check_params`).
    """
    t = request.transformer
    if not (math.isfinite(t.lr) and t.lr > 0):
        raise InputError(f"--lr: the learning rate must be a finite number > 0, got {t.lr}")
    model = SequenceRegressor(d_model=t.d_model, num_heads=t.heads, num_layers=t.layers, positional=t.positional,
                              positional_options=positional_options(t.positional, t.wavelengths, t.positions,
                                                                    t.window, t.d_model),
                              lr=t.lr, epochs=t.epochs, random_state=t.seed, progress=False)
    return model.check_params()          # the estimator's own rules (d_model and heads), before any file is written


def _checkpoints(request: TrainRequest) -> tuple[list, bool]:
    """The checkpoint callback, the resume from ``--resume`` when given, and whether it resumes into ``--out``."""
    callbacks = [SaveCheckpoint(Path(request.out) / "checkpoint", every=request.checkpoint_every,
                                config={"command": "train", "options": run_signature(request)})]
    if request.resume is None:
        return callbacks, False
    ck, folder = load_resume(request.resume, request)
    return [*callbacks, ResumeFrom(ck)], Path(folder).resolve().parent == Path(request.out).resolve()


def _train_config(request: TrainRequest, ds: WellDataset) -> dict:
    """What ``train`` read, for config.json: the files, intervals and aliases given, and the curves used."""
    w = request.wells
    return {"command": "train", **{k: [str(p) for p in getattr(w, k)] for k in ("data", "test_data", "validation_data")},
            "manifest": w.manifest, "train_depth": list(w.train_depth), "test_depth": list(w.test_depth),
            "aliases": list(w.aliases), "curves_used": ds.curves_used}


# --------------------------------------------------------------------------- resuming an interrupted train
def _options(request) -> dict:
    """A request's values by option name (its groups flattened)."""
    flat = {}
    for f in fields(request):
        value = getattr(request, f.name)
        flat.update({g.name: getattr(value, g.name) for g in fields(value)} if is_dataclass(value)
                    else {f.name: value})
    return flat


def run_signature(request: TrainRequest) -> dict:
    """The ``train`` options that must match for ``--resume`` (file paths made absolute), JSON-able."""
    sig = {}
    for key, value in _options(request).items():
        if key in _RESUME_FREE:
            continue
        if key in ("data", "test_data", "validation_data", "pretrain_data"):
            value = [str(Path(v).resolve()) for v in value]
        elif key == "manifest" and value:
            value = str(Path(value).resolve())
        sig[key] = list(value) if isinstance(value, tuple) else value
    return sig


def load_resume(resume, request: TrainRequest):
    """Read ``--resume DIR`` (a checkpoint folder or a run folder holding ``checkpoint/``) and check it fits
    ``request``; returns ``(checkpoint, its folder)``.

    Raises
    ------
    ModelFileError
        Unreadable checkpoint, or one not written by ``glassformer train``.
    InputError
        The checkpoint was written with other options (the message lists them).
    """
    folder = Path(resume)
    if (folder / "checkpoint" / "checkpoint.json").exists() or (folder / "checkpoint" / "checkpoint.npz").exists():
        folder = folder / "checkpoint"
    ck = io.load_checkpoint(folder)
    saved = (ck.config or {}).get("options") if isinstance(ck.config, dict) else None
    if not isinstance(saved, dict):
        raise ModelFileError(f"--resume {resume}: the checkpoint was not written by `glassformer train`")
    differ = [f"--{k.replace('_', '-')} is {saved.get(k)!r} there, {v!r} here" for k, v in run_signature(request).items()
              if saved.get(k) != v]
    if differ:
        raise InputError(f"--resume {resume}: the checkpoint was written with other options "
                         f"({'; '.join(differ)}); rerun with the options of the interrupted run")
    return ck, folder
