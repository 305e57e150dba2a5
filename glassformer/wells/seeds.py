"""One seed of a well experiment as a task of plain arguments: the one loop over seeds is an engine's.

``glassformer train`` fits one seed, ``glassformer compare --seeds N`` and the well demonstrations
retrain every network once per seed.  :func:`fit_seed` is one such fit -- settings as a dict, the
seed, the training and test logs, the folder to save into -- and returns the metrics and the saved
model folder; :func:`seed_tasks` lists the tasks of a run folder, and
:class:`glassformer.wells.experiment.WellExperiment` runs them on a :mod:`glassformer.parallel`
engine.  The model never crosses between processes: a worker saves it as ``.npz`` + JSON and the
caller loads it (:func:`load_fitted`).  Each seed draws only from its own seed, and every engine
computes with one BLAS thread, so the metrics and the saved models are those of a serial run, bit
for bit.

Folders: the first seed's model is the run's ``model/`` (and ``model_lstm/``); every other seed's
is ``seeds/seed_<seed>/model`` (and ``model_lstm``), each usable by ``glassformer predict``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .evaluation import evaluate_split
from .last_good import fit_or_keep_last_good
from .member_fit import fit_with_members
from .model import WellModel, with_seed

__all__ = ["fit_seed", "load_fitted", "seed_tasks"]


def load_fitted(model_dir):
    """A fitted well model from its folder, with the LSTM saved beside it (``<model_dir>_lstm``) when there is one
    (:meth:`WellModel.load <glassformer.wells.WellModel.load>`).

    Raises
    ------
    ModelFileError
        No readable model in ``model_dir`` (or a damaged LSTM or baseline beside it).
    """
    return WellModel.load(model_dir)


def fit_seed(task: dict) -> dict:
    """Fit one seed of a well experiment and score it on both splits (an engine task).

    Parameters
    ----------
    task : dict
        ``spec`` (:meth:`WellModel.spec <glassformer.wells.WellModel.spec>`), ``seed`` (int), ``train`` and ``test`` (lists of
        :class:`~glassformer.data.WellLog`, cut to their intervals), optional ``val`` (validation
        logs for the networks' early stopping), ``model_dir`` (folder to save
        the fitted model into), ``rows`` (bool: return the per-depth predictions) and
        ``keep_last_good`` (a run folder: when training diverges, its last good model is saved
        into ``<run>/model`` before the error propagates; None to just raise), optional
        ``callbacks`` (training-loop callbacks of the transformer, e.g. checkpoints: objects of
        this process, so only on the serial engine), optional ``members`` (the seeds of the
        transformer's members: the task's transformer draws from the first, and is then replaced by
        their mean, :func:`~glassformer.wells.member_fit.use_member_mean`).

    Returns
    -------
    dict
        ``seed``, ``metrics`` (``{"train": ..., "test": ...}``, per model), ``parameters``,
        ``seconds`` (fit time per model, s), ``n_train_windows``, ``model_dir``, and ``rows``
        (``(train_rows, test_rows)`` DataFrames, or None).

    Raises
    ------
    DivergenceError
        Training diverged.
    """
    fitted = with_seed(WellModel.from_spec(task["spec"]), int(task["seed"]))
    callbacks = task.get("callbacks") or ()
    if task.get("keep_last_good"):
        fit_or_keep_last_good(fitted, task["train"], Path(task["keep_last_good"]), callbacks, task.get("val"),
                              members=task.get("members"))
    else:
        fit_with_members(fitted, task["train"], task.get("members"), task.get("val"), callbacks)
    train_rows, train_metrics = evaluate_split(fitted, task["train"], "train")
    test_rows, test_metrics = evaluate_split(fitted, task["test"], "test")
    fitted.save(task["model_dir"], overwrite=True)
    return {"seed": int(task["seed"]), "metrics": {"train": train_metrics, "test": test_metrics},
            "parameters": fitted.parameter_counts(), "seconds": dict(fitted.fit_seconds_),
            "n_train_windows": int(fitted.n_train_windows_), "model_dir": str(task["model_dir"]),
            "rows": (train_rows, test_rows) if task.get("rows") else None}


def seed_tasks(wm, train_logs: Sequence, test_logs: Sequence, seeds: Sequence[int], out, *,
               quiet: bool = False, val_logs: Sequence = (), callbacks: Sequence = (), members=None) -> list[dict]:
    """The :func:`fit_seed` tasks of a run folder ``out``: the first seed into ``out/model``, the others
    into ``out/seeds/seed_<seed>/model``; ``quiet`` switches the networks' progress bars off;
    ``members``: seed -> the seeds of its transformer's members (none: one transformer per seed).

    The first seed keeps its last good model when it diverges, and carries ``callbacks`` (the
    checkpoints of ``glassformer train``, a resume): they are objects of this process, so the
    tasks then run on the serial engine only.
    """
    spec = wm.spec()
    if quiet:
        spec = {**spec, **{k: {**spec[k], "params": {**spec[k]["params"], "progress": False}}
                           for k in ("model", "lstm") if spec[k] is not None}}
    out = Path(out)
    return [{"spec": spec, "seed": int(seed), "train": list(train_logs), "test": list(test_logs),
             "val": list(val_logs),
             "model_dir": str(out / "model" if i == 0 else out / "seeds" / f"seed_{int(seed)}" / "model"),
             "rows": i == 0, "keep_last_good": str(out) if i == 0 else None,
             "callbacks": list(callbacks) if i == 0 else [], "members": (members or {}).get(int(seed))}
            for i, seed in enumerate(seeds)]

