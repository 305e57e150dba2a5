"""Checkpoints and bit-identical resume for :class:`~glassformer.train.Trainer`.

:class:`SaveCheckpoint` writes, every ``every`` epochs, the model, the optimizer, the epoch *and
batch* reached, the shuffling generator's state at the start of that epoch, the modules' own
generators (dropout), the history and the callbacks' states (early stopping's best weights, the
divergence guard's reference loss).  :class:`ResumeFrom` continues from one and reaches
bit-identically the parameters of an uninterrupted run.  When SIGINT/SIGTERM stops training,
:class:`~glassformer.train.StopOnSignal` saves through the run's ``SaveCheckpoint`` too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import io
from ..errors import ModelFileError, StateDictError
from ._checks import check_int
from .callbacks import Callback

__all__ = ["ResumeFrom", "SaveCheckpoint", "checkpoint_state", "load_checkpoint", "save_checkpoint"]


class SaveCheckpoint(Callback):
    """Write a resumable checkpoint every ``every`` epochs (atomic, replacing the previous one).

    Parameters
    ----------
    path : str or Path
        Folder receiving ``checkpoint.npz`` + ``checkpoint.json`` (:func:`glassformer.io.save_checkpoint`).
    every : int >= 1, default 1
        Epochs between checkpoints.
    config : dict, optional
        JSON-able description of the run stored with it (e.g. the command-line options).

    Raises
    ------
    InputError
        ``every`` < 1.
    """

    order = -10

    def __init__(self, path, every: int = 1, config: dict | None = None):
        self.path = Path(path)
        self.every = check_int(every, "every", "SaveCheckpoint", minimum=1, unit="epochs")
        self.config = dict(config or {})

    def on_epoch_end(self, trainer, epoch: int, logs: dict):
        if (epoch + 1) % self.every == 0:
            self.save(trainer)

    def save(self, trainer) -> Path:
        """Write the checkpoint of ``trainer`` now; returns the ``checkpoint.npz`` written."""
        return save_checkpoint(trainer, self.path, config=self.config)


class ResumeFrom(Callback):
    """Continue training from a checkpoint (a folder or :class:`~glassformer.io.Checkpoint`).

    Restored when training begins, before every other callback starts: parameters, optimizer,
    next epoch and batch, generators, history and the callbacks' states.  The run must have the
    checkpoint's data and settings (epochs, rows, batch size, shuffling, seed).

    Raises (from ``fit``)
    ---------------------
    ModelFileError
        Unreadable checkpoint, or one written for another run or model (the message says what differs).
    """

    order = -100

    def __init__(self, checkpoint):
        self.checkpoint = checkpoint

    def on_train_begin(self, trainer) -> None:
        load_checkpoint(trainer, self.checkpoint)


def module_generators(model) -> dict:
    """Every ``numpy.random.Generator`` held by a module (dropout masks), by ``"path:attribute"``."""
    out = {}
    if model is None or not hasattr(model, "named_modules"):
        return out
    for path, mod in model.named_modules():
        for attr, value in vars(mod).items():
            if isinstance(value, np.random.Generator):
                out[f"{path}:{attr}"] = value
    return out


def checkpoint_state(trainer) -> dict:
    """:meth:`Trainer.state` plus ``module_rngs`` and what each callback's ``checkpoint_state`` adds.

    JSON-able apart from arrays of best weights (``best_params``).
    """
    state = trainer.state()
    state["module_rngs"] = {k: g.bit_generator.state for k, g in module_generators(trainer.model).items()}
    for cb in trainer.callbacks:
        if hasattr(cb, "checkpoint_state"):
            state.update(cb.checkpoint_state(trainer))
    return state


def save_checkpoint(trainer, path, *, config: dict | None = None) -> Path:
    """Write the model, optimizer and :func:`checkpoint_state` of ``trainer`` atomically into folder ``path``.

    Returns the ``checkpoint.npz`` written (see :func:`glassformer.io.save_checkpoint`).
    """
    model = trainer.model
    model_state = dict(model.state_dict()) if model is not None and hasattr(model, "state_dict") \
        else {name: p.data.copy() for name, p in trainer.named_params}
    return io.save_checkpoint(path, model_state=model_state, optimizer_state=trainer.optimizer.state_dict(),
                              trainer_state=checkpoint_state(trainer), config=dict(config or {}))


def load_checkpoint(trainer, checkpoint) -> None:
    """Restore a checkpoint (folder, file or :class:`~glassformer.io.Checkpoint`) into ``trainer`` before its loop.

    Raises
    ------
    ModelFileError
        Unreadable checkpoint, or one written for another run (epochs, rows, batch size, shuffling,
        seed or parameters differ; the message names what differs).
    """
    ck = checkpoint if isinstance(checkpoint, io.Checkpoint) else io.load_checkpoint(checkpoint)
    where = f"resume from {checkpoint if not isinstance(checkpoint, io.Checkpoint) else 'checkpoint'}"
    ts = ck.trainer_state
    if "next_epoch" not in ts or "batch" not in ts:
        raise ModelFileError(f"{where}: the checkpoint has no resumable trainer state (next_epoch, batch)")
    mine = {"epochs": trainer.epochs, "n_rows": trainer.n_rows, "batch_size": trainer.batch_size,
            "shuffle": trainer.shuffle, "seed": trainer.seed}
    differ = [f"{k}: checkpoint {ts.get(k)!r}, this run {v!r}" for k, v in mine.items() if ts.get(k) != v]
    if differ:
        raise ModelFileError(f"{where}: the checkpoint belongs to another run ({'; '.join(differ)})")
    try:
        if trainer.model is not None and hasattr(trainer.model, "load_state_dict"):
            trainer.model.load_state_dict(ck.model_state)
        else:
            _load_named(trainer.named_params, ck.model_state, where)
        trainer.optimizer.load_state_dict(ck.optimizer_state)
    except StateDictError as exc:
        raise ModelFileError(f"{where}: the checkpoint does not fit this model ({exc})") from None
    trainer.load_state(ts)
    gens = module_generators(trainer.model)
    for key, state in (ts.get("module_rngs") or {}).items():
        if key in gens:
            gens[key].bit_generator.state = state


def _load_named(named_params, state: dict, where: str) -> None:
    for name, p in named_params:
        if name not in state or np.shape(state[name]) != p.data.shape:
            raise ModelFileError(f"{where}: parameter {name!r} missing or of another shape in the checkpoint")
        np.copyto(p.data, state[name])
