"""Deep ensembles of well models: K members from different seeds, P10/P50/P90 per depth, calibrated.

Every member is the same :class:`~glassformer.wells.WellModel` (the same windows, scalers,
baselines and data) with its transformer trained from its own seed (Lakshminarayanan, Pritzel
and Blundell, 2017).  The data are prepared once, by :func:`prepare`, which is
:meth:`WellModel.fit_data <glassformer.wells.WellModel.fit_data>`, the preparation of
``WellModel.fit``: scalers fitted on the whole training logs, early stopping on the validation
logs given or else on the deepest block of each training log, windows cut from the rest.  So
member k is the well model fitted alone with seed k, whichever way the members are trained.

Training one member is one top-level function of plain data, :func:`fit_member`, so any
:mod:`glassformer.parallel` engine can map it over the members; the default engine runs them one
after the other.  ``fit_ensemble(..., batched=True)`` instead trains them side by side as one
model with a leading member axis (:func:`glassformer.models.members.fit_members`), with NumPy's
per-call cost paid once for all of them -- a gain for small models and small batches, where that
cost dominates.  Only the training differs between the two ways, and not in its numbers: side by
side, each member's rows go through the BLAS calls (one GEMM per member, never one across
members, so no sum changes its order) and element-wise operations it makes alone, so in float64
the members, their predictions and the P10/P50/P90 are equal bit for bit (the tests assert exact
equality, not a tolerance).  Each member is saved as a model folder
(``member_00``, ``member_01``, ...) that ``WellModel.load`` reads, beside ``ensemble.json``
(the seeds and the calibration)::

    from glassformer.wells import WellModel, fit_ensemble

    ens = fit_ensemble(WellModel(["PHIF", "VSH", "SW"], "KLOGH"), train_logs, validation_logs,
                       folder="runs/ensemble")             # 5 members, calibrated on the validation logs
    q = ens.predict_quantiles(well)                         # {"P10", "P50", "P90", "mean", "sd"}: (n_samples,)

Pretraining (:func:`fit_pretrained_ensemble`): each member is first trained on a log-derived
curve (e.g. KLOGH over several wells), then fine-tuned from those weights on the real target
(``warm_start``), the usual remedy when the real target (core plugs) is scarce.
"""

from __future__ import annotations

import copy
import json
import os
import time
from pathlib import Path

import numpy as np

from .. import io
from ..errors import InputError, ModelFileError
from ..models import SequenceRegressor
from ..models.members import fit_members
from ..parallel import SerialEngine
from ..runs.folder import _clean
from .evaluation import training_summary
from .seed_order import seed_list
from .intervals import NOMINAL, ConformalScale, ensemble_quantiles
from .model import WellModel

__all__ = ["DeepEnsemble", "assemble_ensemble", "fit_ensemble", "fit_member", "fit_pretrained_ensemble", "fit_together",
           "member_seeds", "member_tasks"]

ENSEMBLE_FILE = "ensemble.json"
ENSEMBLE_VERSION = 1


def member_seeds(n_members: int, first: int = 42) -> list:
    """``n_members`` seeds: ``first``, then 0, 1, 2, ... (as ``--seeds`` of ``glassformer train``)."""
    if isinstance(n_members, bool) or not isinstance(n_members, (int, np.integer)) or n_members < 2:
        raise InputError(f"an ensemble needs at least 2 members (their spread is the uncertainty), got {n_members!r}")
    return seed_list(int(n_members), first)


def fit_member(task: dict) -> dict:
    """Train one ensemble member and save it; a top-level function of plain data for any engine.

    Parameters
    ----------
    task : dict
        ``params`` (the transformer's ``get_params()``), ``seed`` (its ``random_state``),
        ``X (n, T, n_inputs)``, ``Y (n, T, 1)`` (NaN: no target there), ``P`` (positions),
        optional ``X_val``, ``Y_val``, ``P_val`` (validation windows for early stopping),
        optional ``init`` (a saved model folder to continue from: fine-tuning with
        ``warm_start``), optional ``pretrain`` (a task of its own, trained first; the member then
        continues from it), ``out`` (the folder to write) and ``extra`` (metadata saved with it,
        e.g. the well model's scalers).

    Returns
    -------
    dict
        ``{"folder": str, "seed": int, "seconds": float, "training": {...}}``, and ``"pretrained"``
        (the pretraining task's result) with ``pretrain``.
    """
    pre = fit_member(task["pretrain"]) if task.get("pretrain") else None
    init = pre["folder"] if pre is not None else task.get("init")
    params = {**task["params"], "random_state": int(task["seed"])}
    if init:
        model = SequenceRegressor.load(init).set_params(**{**params, "warm_start": True})
    else:
        model = SequenceRegressor(**params)
    t0 = time.perf_counter()
    model.fit(task["X"], task["Y"], task["P"], X_val=task.get("X_val"), y_val=task.get("Y_val"),
              positions_val=task.get("P_val"))
    seconds = time.perf_counter() - t0
    model.save(task["out"], overwrite=True, extra=task.get("extra"))
    result = {"folder": str(task["out"]), "seed": int(task["seed"]), "seconds": seconds,
              "training": training_summary(model.history_, len(task["X"]))}
    if pre is not None:
        result["pretrained"] = pre
    return result


class DeepEnsemble:
    """Fitted well models that differ only in their seed, read together as P10/P50/P90.

    Parameters
    ----------
    members : list of fitted WellModel (at least 2), sharing inputs, target, scalers and windows.
    calibration : ConformalScale, optional
        Fitted by :meth:`calibrate`; without it the quantiles are the uncalibrated ones.
    info : dict, optional
        What to keep with the ensemble (seeds, fit times, how it was trained).
    folders : list of str, optional
        The members' model folders (written by :func:`fit_member`), saved in ``ensemble.json``.

    Notes
    -----
    Quantiles are Gaussian in the members' mean and sample sd (see :mod:`.intervals`), in the
    model's units (log10 mD with ``log_target``); P10 <= P50 <= P90 everywhere.
    """

    def __init__(self, members, calibration: ConformalScale | None = None, info: dict | None = None,
                 folders=None):
        members = list(members)
        if len(members) < 2:
            raise InputError(f"DeepEnsemble: at least 2 members are needed, got {len(members)}")
        self.members = members
        self.calibration = calibration
        self.info = dict(info or {})
        self.folders = None if folders is None else [str(f) for f in folders]

    @property
    def first(self) -> WellModel:
        return self.members[0]

    def __len__(self) -> int:
        return len(self.members)

    def predict_members(self, log) -> np.ndarray:
        """Every member's prediction of ``log``: ``(n_members, n_samples)``, model units, NaN where inputs miss."""
        return np.stack([m.predict_log(log) for m in self.members])            # (K, n_samples)

    def predict_quantiles(self, log, *, calibrated: bool = True, members=None) -> dict:
        """``{"mean", "sd", "P10", "P50", "P90"}`` per sample of ``log`` (each ``(n_samples,)``).

        ``calibrated``: use the conformal scale when the ensemble has one (else scale 1).
        ``members``: predictions already computed by :meth:`predict_members`.
        """
        preds = self.predict_members(log) if members is None else members
        cal = self.calibration if calibrated else None
        if cal is None or cal.score == "normalised":
            return ensemble_quantiles(preds, scale=self.scale if calibrated else 1.0)
        q = ensemble_quantiles(preds)                            # another score: its own bounds
        q["P10"], q["P90"] = cal.interval(q["mean"], q["sd"])
        return q

    @property
    def scale(self) -> float:
        """The conformal factor on the spread (1.0 before calibration)."""
        return float(self.calibration.scale_) if self.calibration is not None else 1.0

    def calibrate(self, logs, coverage: float = NOMINAL, score: str = "normalised",
                  floor: float = 0.0) -> "DeepEnsemble":
        """Fit the split-conformal calibration on the targets of ``logs`` (validation data, never the test data).

        ``score`` and ``floor``: see :class:`ConformalScale` (the normalised score by default).

        Raises
        ------
        InputError
            Too few target values in ``logs`` (see :class:`ConformalScale`).
        """
        y, mean, sd = [], [], []
        for g in logs:
            q = self.predict_quantiles(g, calibrated=False)
            y.append(self.first.target_values(g))
            mean.append(q["mean"])
            sd.append(q["sd"])
        self.calibration = ConformalScale(coverage, score, floor).fit(np.concatenate(y), np.concatenate(mean),
                                                                      np.concatenate(sd))
        return self

    # --- files --------------------------------------------------------------------------------
    def save(self, folder) -> Path:
        """Write ``ensemble.json`` into ``folder``, naming the members' folders relative to it.

        The members stay where :func:`fit_member` wrote them, so one set of members can be
        described from two places (a run's ``ensemble/`` pointing at ``ensembles/core/member_00``).
        """
        folder = Path(folder)
        if self.folders is None or len(self.folders) != len(self.members):
            raise InputError("DeepEnsemble.save: the members' folders are unknown (train with fit_ensemble)")
        names = [os.path.relpath(Path(f).resolve(), folder.resolve()) for f in self.folders]
        doc = {"format_version": ENSEMBLE_VERSION, "members": names, "info": self.info,
               "calibration": None if self.calibration is None else self.calibration.to_dict()}
        folder.mkdir(parents=True, exist_ok=True)
        io.atomic_write_text(folder / ENSEMBLE_FILE, json.dumps(_clean(doc), indent=1))
        return folder / ENSEMBLE_FILE

    @classmethod
    def load(cls, folder) -> "DeepEnsemble":
        """Read an ensemble folder (with ``ensemble.json``), or a run folder holding ``ensemble/``.

        Raises
        ------
        ModelFileError
            No ``ensemble.json`` there, or an unreadable one.
        """
        path = find_ensemble(folder)
        if path is None:
            raise ModelFileError(f"{folder}: no {ENSEMBLE_FILE} (not an ensemble written by glassformer)")
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            names = list(doc["members"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelFileError(f"{path}: not a readable ensemble description ({exc})") from None
        folders = [os.path.normpath(path.parent / name) for name in names]
        members = [WellModel.load(f) for f in folders]
        cal = doc.get("calibration")
        return cls(members, ConformalScale.from_dict(cal) if cal and cal.get("scale") else None, doc.get("info"),
                   folders=folders)


def find_ensemble(folder) -> Path | None:
    """``ensemble.json`` of an ensemble folder or of a run folder's ``ensemble/``; None when absent."""
    folder = Path(folder)
    for candidate in (folder / ENSEMBLE_FILE, folder / "ensemble" / ENSEMBLE_FILE):
        if candidate.is_file():
            return candidate
    return None


# --- fitting --------------------------------------------------------------------------------------
def prepare(wm: WellModel, train_logs, validation_logs=()) -> tuple:
    """A copy of ``wm`` with its scalers and baselines (those of the registry, trees included when
    ``wm.tree_baselines``) fitted on ``train_logs`` (no network yet), and the members' data.

    The data are :meth:`WellModel.fit_data`'s, the very preparation of ``WellModel.fit``: scalers
    on the whole training logs, the validation logs given or else the deepest blocks, the training
    windows of the rest and the validation windows.  Every way of training the members starts from
    them, so a member equals the well model fitted alone with its seed.

    Returns
    -------
    (WellModel, (X, Y, P), (X_val, Y_val, P_val) or None)
    """
    wm = copy.copy(wm)
    wm._check_settings()
    X, Y, P, val = wm.fit_data(list(train_logs), list(validation_logs) or None)
    wm.fit_baselines(list(train_logs))
    return wm, (X, Y, P), ((val["X_val"], val["y_val"], val.get("positions_val")) if val else None)


def _windows(wm: WellModel, logs):
    """Training windows ``(X, Y, P)`` of ``logs`` (those holding a target), positions shared when by index."""
    X, Y, P = wm._training_windows(list(logs))
    return X, Y, (P[0] if wm.positions == "index" else P)


def _tasks(wm: WellModel, train, val, seeds, folder: Path, params: dict, init=None) -> list:
    X, Y, P = train
    Xv, Yv, Pv = val if val is not None else (None, None, None)
    return [{"params": params, "seed": s, "X": X, "Y": Y, "P": P, "X_val": Xv, "Y_val": Yv, "P_val": Pv,
             "init": None if init is None else init[i], "out": str(folder / f"member_{i:02d}"),
             "extra": {"well_model": wm.to_dict()}} for i, s in enumerate(seeds)]


def fit_together(tasks: list) -> list:
    """:func:`fit_member` for every task at once: the members trained side by side as one model.

    The tasks share their data (``X``, ``Y``, ``P`` and validation windows) and differ in ``seed``
    and ``out``; each member is saved as :func:`fit_member` saves it.  ``seconds`` is the shared
    training time divided by the number of members.  See :mod:`glassformer.models.members`.
    """
    first = tasks[0]
    models = [SequenceRegressor(**{**task["params"], "random_state": int(task["seed"])}) for task in tasks]
    t0 = time.perf_counter()
    fit_members(models, first["X"], first["Y"], first["P"], X_val=first.get("X_val"), y_val=first.get("Y_val"),
                positions_val=first.get("P_val"))
    seconds = (time.perf_counter() - t0) / len(tasks)
    results = []
    for task, model in zip(tasks, models):
        model.save(task["out"], overwrite=True, extra=task.get("extra"))
        results.append({"folder": str(task["out"]), "seed": int(task["seed"]), "seconds": seconds,
                        "training": training_summary(model.history_, len(task["X"]))})
    return results


def _run(tasks, engine, batched: bool = False) -> list:
    if batched:
        return fit_together(tasks)
    if engine is None:
        engine = SerialEngine()
    return engine.map(fit_member, tasks)


def _members(wm: WellModel, results) -> list:
    """The fitted well models of ``results`` (each a copy of ``wm`` holding its member's network)."""
    members = []
    for r in results:
        m = copy.copy(wm)
        m.model_ = SequenceRegressor.load(r["folder"])
        m.lstm_ = None
        m.n_train_windows_ = r["training"]["n_train_windows"]
        m.fit_seconds_ = {**getattr(wm, "fit_seconds_", {}), "transformer": r["seconds"]}
        members.append(m)
    return members


def _public(results) -> list:
    """Member results without their absolute folder paths (``ensemble.json`` names the folders relatively)."""
    return [{k: v for k, v in r.items() if k not in ("folder", "pretrained")} for r in results]


def _model_params(wm: WellModel, **overrides) -> dict:
    """Every member's transformer parameters: those of ``wm``'s specification (the default transformer's when it
    names none), without progress bars."""
    model = wm.spec()["model"]
    params = model["params"] if model is not None else SequenceRegressor().get_params(deep=False)
    return {**params, "progress": False, **overrides}


def member_tasks(wm: WellModel, train_logs, validation_logs=(), *, folder, seeds, pretrain_logs=(),
                 pretrain_target: str | None = None, pretrain_epochs: int = 10, finetune_lr: float | None = None):
    """The work of an ensemble as plain-data tasks of :func:`fit_member`, one per seed.

    Parameters
    ----------
    wm : WellModel (unfitted); a copy gets its scalers and baselines fitted on ``train_logs``.
    train_logs, validation_logs : WellLog lists (validation: early stopping).
    folder : where the members are written (``member_00``, ...; pretrained ones in ``pretrained/``).
    seeds : list of int, one per member.
    pretrain_logs, pretrain_target, pretrain_epochs, finetune_lr : with ``pretrain_logs``, each task
        first pretrains on ``pretrain_target`` over them (see :func:`fit_pretrained_ensemble`).

    Returns
    -------
    (WellModel, list of dict, dict or None)
        The prepared well model, the tasks, and the pretraining's description (None without).
    """
    wm, train, val = prepare(wm, train_logs, validation_logs)
    folder = Path(folder)
    pretrained, pre_tasks = None, None
    if pretrain_logs:
        pre = copy.copy(wm)
        pre.target = pretrain_target
        pre_tasks = _tasks(pre, _windows(pre, pretrain_logs), None, seeds, folder / "pretrained",
                           _model_params(wm, epochs=int(pretrain_epochs)))
        lr = finetune_lr if finetune_lr is not None else _model_params(wm)["lr"] / 3
        pretrained = {"target": str(pretrain_target).upper(), "wells": [g.name for g in pretrain_logs],
                      "epochs": int(pretrain_epochs), "finetune_lr": lr}
    # Validation is the well model's choice (given logs or depth blocks), never the estimator's random windows.
    params = _model_params(wm, validation_fraction=None)
    if pretrained is not None:
        params["lr"] = pretrained["finetune_lr"]
    tasks = _tasks(wm, train, val, seeds, folder, params)
    for task, pre_task in zip(tasks, pre_tasks or ()):
        task["pretrain"] = pre_task
    return wm, tasks, pretrained


def assemble_ensemble(wm: WellModel, results, *, seeds, folder, validation_logs=(), calibrate: bool = True,
                      coverage: float = NOMINAL, pretrained: dict | None = None) -> DeepEnsemble:
    """The :class:`DeepEnsemble` of the results of :func:`member_tasks`' tasks, calibrated on ``validation_logs``
    (when ``calibrate``) and saved into ``folder``."""
    info = {"seeds": seeds, "members": _public(results), "pretrained": False}
    if pretrained is not None:
        pre_results = [r["pretrained"] for r in results]
        info["pretrained"] = {"target": pretrained["target"], "wells": pretrained["wells"],
                              "epochs": pretrained["epochs"],
                              "windows": pre_results[0]["training"]["n_train_windows"],
                              "finetune_lr": pretrained["finetune_lr"], "members": _public(pre_results)}
    ens = DeepEnsemble(_members(wm, results), info=info, folders=[r["folder"] for r in results])
    if calibrate and validation_logs:
        ens.calibrate(validation_logs, coverage)
    ens.save(folder)
    return ens


def fit_ensemble(wm: WellModel, train_logs, validation_logs=(), *, folder, n_members: int = 5, seeds=None,
                 engine=None, calibrate: bool = True, coverage: float = NOMINAL, batched: bool = False) -> DeepEnsemble:
    """Train ``n_members`` copies of ``wm`` from different seeds on the same windows; calibrate on validation.

    Parameters
    ----------
    wm : WellModel (unfitted; its transformer's settings are every member's).
    train_logs : WellLog list, cut to their training intervals (targets NaN where there are none).
    validation_logs : WellLog list, optional
        Early stopping for every member and the data the conformal scale is fitted on; without
        them the members stop early on ``wm.validation``'s deepest blocks, as ``wm.fit`` would
        (uncalibrated then).
    folder : where ``member_00``, ... and ``ensemble.json`` are written.
    seeds : list of int, optional (default :func:`member_seeds`).
    engine : a :mod:`glassformer.parallel` engine, optional (default: serial).
    batched : bool, default False
        Train the members side by side as one model (:func:`fit_together`; the engine is not used):
        the same preparation and the same members (see the module docstring), faster when the model
        is small.

    Returns
    -------
    DeepEnsemble, calibrated when ``calibrate`` and validation logs are given.

    Raises
    ------
    DataFileError
        No training window holds a target (see :meth:`WellModel.fit`).
    InputError
        ``batched`` with a model that cannot be trained side by side (the message says which setting).
    """
    seeds = member_seeds(n_members) if seeds is None else [int(s) for s in seeds]
    wm, tasks, _ = member_tasks(wm, train_logs, validation_logs, folder=folder, seeds=seeds)
    return assemble_ensemble(wm, _run(tasks, engine, batched), seeds=seeds, folder=folder,
                             validation_logs=validation_logs, calibrate=calibrate, coverage=coverage)


def fit_pretrained_ensemble(wm: WellModel, pretrain_logs, pretrain_target: str, train_logs, validation_logs=(), *,
                            folder, n_members: int = 5, seeds=None, engine=None, pretrain_epochs: int = 10,
                            finetune_lr: float | None = None, calibrate: bool = True,
                            coverage: float = NOMINAL) -> DeepEnsemble:
    """Pretrain each member on ``pretrain_target`` over ``pretrain_logs``, then fine-tune it on ``wm.target``.

    The scalers are those of ``train_logs`` (inputs and the real target), so both stages see the
    same scaled inputs; the pretraining target goes through the same log10 and target scaler.
    Pretraining holds out a random tenth of its windows for early stopping (the transformer's
    ``validation_fraction``) and runs at most ``pretrain_epochs``; fine-tuning continues from the
    pretrained weights (``warm_start``) with ``finetune_lr`` (default a third of the
    transformer's ``lr``) and stops early on ``validation_logs``.  Pretrained members are kept in
    ``folder/pretrained``.  One task per member does both stages (:func:`fit_member`).

    Returns
    -------
    DeepEnsemble whose ``info["pretrained"]`` describes the pretraining.
    """
    seeds = member_seeds(n_members) if seeds is None else [int(s) for s in seeds]
    wm, tasks, pretrained = member_tasks(wm, train_logs, validation_logs, folder=folder, seeds=seeds,
                                         pretrain_logs=pretrain_logs, pretrain_target=pretrain_target,
                                         pretrain_epochs=pretrain_epochs, finetune_lr=finetune_lr)
    return assemble_ensemble(wm, _run(tasks, engine), seeds=seeds, folder=folder, validation_logs=validation_logs,
                             calibrate=calibrate, coverage=coverage, pretrained=pretrained)
