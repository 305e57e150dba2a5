"""One seed of a well experiment as a task of plain arguments, so that seeds run on any engine.

``glassformer compare --seeds N`` retrains every network once per seed.  :func:`fit_seed` is one
such fit -- settings as a dict, the seed, the training and test logs, the folder to save into --
and returns the metrics and the saved model folder; :func:`fit_seeds` maps it over the seeds on a
:mod:`glassformer.parallel` engine and rebuilds the first seed's fitted model from its folder.
The model never crosses between processes: a worker saves it as ``.npz`` + JSON and the caller
loads it.  Each seed draws only from its own seed, and every engine computes with one BLAS thread,
so the metrics and the saved models are those of a serial run, bit for bit.

Folders: the first seed's model is the run's ``model/`` (and ``model_lstm/``); every other seed's
is ``seeds/seed_<seed>/model`` (and ``model_lstm``), each usable by ``glassformer predict``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from .evaluation import evaluate_split
from .last_good import fit_or_keep_last_good
from .model import WellModel, with_seed

__all__ = ["fit_seed", "fit_seeds", "load_fitted"]


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
        into ``<run>/model`` before the error propagates; None to just raise).

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
    if task.get("keep_last_good"):
        fit_or_keep_last_good(fitted, task["train"], Path(task["keep_last_good"]), (), task.get("val"))
    else:
        fitted.fit(task["train"], val_logs=task.get("val"))
    train_rows, train_metrics = evaluate_split(fitted, task["train"], "train")
    test_rows, test_metrics = evaluate_split(fitted, task["test"], "test")
    fitted.save(task["model_dir"], overwrite=True)
    return {"seed": int(task["seed"]), "metrics": {"train": train_metrics, "test": test_metrics},
            "parameters": fitted.parameter_counts(), "seconds": dict(fitted.fit_seconds_),
            "n_train_windows": int(fitted.n_train_windows_), "model_dir": str(task["model_dir"]),
            "rows": (train_rows, test_rows) if task.get("rows") else None}


def seed_tasks(wm, train_logs: Sequence, test_logs: Sequence, seeds: Sequence[int], out, *,
               quiet: bool = False, val_logs: Sequence = ()) -> list[dict]:
    """The :func:`fit_seed` tasks of a run folder ``out``: the first seed into ``out/model``, the others
    into ``out/seeds/seed_<seed>/model``; ``quiet`` switches the networks' progress bars off."""
    spec = wm.spec()
    if quiet:
        spec = {**spec, **{k: {**spec[k], "params": {**spec[k]["params"], "progress": False}}
                           for k in ("model", "lstm") if spec[k] is not None}}
    out = Path(out)
    return [{"spec": spec, "seed": int(seed), "train": list(train_logs), "test": list(test_logs),
             "val": list(val_logs),
             "model_dir": str(out / "model" if i == 0 else out / "seeds" / f"seed_{int(seed)}" / "model"),
             "rows": i == 0, "keep_last_good": str(out) if i == 0 else None}
            for i, seed in enumerate(seeds)]


def fit_seeds(engine, wm, train_logs: Sequence, test_logs: Sequence, seeds: Sequence[int], out, *,
              echo: Callable = print, val_logs: Sequence = ()) -> tuple[list, tuple]:
    """Every seed of a well experiment on ``engine``; what :func:`~glassformer.wells.run_well_experiment` needs.

    Returns
    -------
    (runs, first)
        ``runs``: one ``{"seed", "metrics", "parameters", "seconds"}`` per seed, in seed order;
        ``first``: ``(fitted, train_rows, test_rows, train_metrics, test_metrics)`` of the first
        seed, its model loaded back from ``out/model``.

    Raises
    ------
    DivergenceError
        A seed diverged (the first seed's last good model is then in ``out/model``).
    """
    tasks = seed_tasks(wm, train_logs, test_logs, seeds, out, quiet=engine.n_workers > 1, val_logs=val_logs)
    results = engine.map(fit_seed, tasks)
    runs = [{k: r[k] for k in ("seed", "metrics", "parameters", "seconds")} for r in results]
    if len(results) > 1:
        for r in results:
            test = r["metrics"]["test"]
            echo(f"  seed {r['seed']}: " + ", ".join(f"{k} RMSE {v['rmse']:.4f}" for k, v in test.items()
                                                     if v["rmse"] is not None))
    head = results[0]
    fitted = load_fitted(head["model_dir"])
    fitted.n_train_windows_ = head["n_train_windows"]
    fitted.fit_seconds_ = dict(head["seconds"])
    train_rows, test_rows = head["rows"]
    return runs, (fitted, train_rows, test_rows, head["metrics"]["train"], head["metrics"]["test"])
