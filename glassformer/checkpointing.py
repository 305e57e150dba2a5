"""Checkpoints, resume and clean stops on SIGINT/SIGTERM for :class:`~glassformer.training.Trainer`.

Fault tolerance (issue 9): periodic checkpoints (``checkpoint_dir``/``checkpoint_every`` or the
:class:`SaveCheckpoint` callback) hold the model, the optimizer, the epoch *and batch* reached, the
shuffling generator's state at the start of that epoch, module generators (dropout), the history and
the early-stopping state with its best weights.  ``resume_from`` (or :class:`ResumeFrom`) continues
from one and reaches bit-identically the parameters of an uninterrupted run.  During ``fit`` (main
thread only) SIGINT and SIGTERM finish the current update, save a checkpoint and raise
:class:`TrainingInterrupted` (a ``KeyboardInterrupt``); the previous handlers are restored after.
"""

from __future__ import annotations

import math
import signal
import threading
from pathlib import Path

import numpy as np

from .history import History

__all__ = ["CheckpointMixin", "ResumeFrom", "SaveCheckpoint", "SignalGuard", "TrainingInterrupted"]


class SaveCheckpoint:
    """Callback writing a resumable checkpoint every ``every`` epochs (atomic, replaces the last one).

    Saved with :func:`glassformer.io.save_checkpoint` into ``path`` (a folder receiving
    ``checkpoint.npz`` + ``checkpoint.json``): the model's ``state_dict``, the optimizer's state and
    :meth:`Trainer.checkpoint_state` (epoch, batch, shuffling-generator state, history, early-stopping
    state and best weights).  Resume with ``Trainer(..., resume_from=path)`` or the :class:`ResumeFrom`
    callback.  A trainer holding this callback also saves here when SIGINT/SIGTERM stops it.
    """

    def __init__(self, path, every: int = 1, config: dict | None = None):
        self.path, self.every, self.config = path, max(1, int(every)), dict(config or {})

    def on_epoch_end(self, trainer, epoch: int, logs: dict):
        if (epoch + 1) % self.every == 0:
            trainer.save_checkpoint(self.path, config=self.config)
        return None


class ResumeFrom:
    """Callback restoring a checkpoint (a folder or :class:`~glassformer.io.Checkpoint`) when training begins.

    Equivalent to ``Trainer(..., resume_from=checkpoint)``; useful where only callbacks reach the
    trainer (e.g. ``SequenceRegressor.fit(callbacks=...)``).
    """

    def __init__(self, checkpoint):
        self.checkpoint = checkpoint

    def on_train_begin(self, trainer):
        trainer.load_checkpoint(self.checkpoint)

class TrainingInterrupted(KeyboardInterrupt):
    """SIGINT (Ctrl-C) or SIGTERM stopped :meth:`Trainer.fit` cleanly, between two updates.

    A subclass of ``KeyboardInterrupt``, so an interactive session sees the usual Ctrl-C.  When the
    trainer has a checkpoint folder (``checkpoint_dir`` or a :class:`SaveCheckpoint` callback) the
    state at the interruption was saved there first; resuming from it continues bit-identically.

    Attributes
    ----------
    signum : int
        The signal received (``signal.SIGINT`` = 2, ``signal.SIGTERM`` = 15).
    epoch : int
        Epochs completed (= the 0-based epoch that was running); ``batch`` updates of it were done.
    batch : int
    where : str
        ``"after epoch 5 of 30"`` or ``"after epoch 5 of 30 (+3 of 8 updates of the next)"``.
    checkpoint : Path or None
        Folder holding ``checkpoint.npz``/``checkpoint.json``, or None when no checkpoint was configured.
    exit_status : int
        ``128 + signum``, the shell convention (130 for SIGINT, 143 for SIGTERM).
    """

    def __init__(self, message: str, *, signum: int, epoch: int, batch: int, checkpoint=None, where: str = ""):
        super().__init__(message)
        self.signum, self.epoch, self.batch, self.checkpoint = int(signum), int(epoch), int(batch), checkpoint
        self.where = where
        self.exit_status = 128 + self.signum

    @property
    def signal_name(self) -> str:
        """``"SIGINT"``, ``"SIGTERM"`` (or ``"signal N"``)."""
        return _signal_name(self.signum)


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class SignalGuard:
    """Inside ``with``: SIGINT/SIGTERM set ``trainer._signal`` instead of raising (main thread only).

    A second signal of either kind while the first is pending restores the default behaviour at once
    (``KeyboardInterrupt``), so a stuck run can still be stopped.  The previous handlers are restored
    on exit.
    """

    def __init__(self, trainer, enabled: bool):
        self.trainer = trainer
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.previous = {}

    def _handler(self, signum, frame):
        if self.trainer._signal is not None:
            raise KeyboardInterrupt(f"second signal {signum} while stopping")
        self.trainer._signal = signum

    def __enter__(self):
        self.trainer._signal = None
        if self.enabled:
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    self.previous[sig] = signal.signal(sig, self._handler)
                except (ValueError, OSError):  # not allowed here (embedded interpreter)
                    pass
        return self

    def __exit__(self, *exc):
        for sig, old in self.previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        self.previous = {}
        return False


class CheckpointMixin:
    """The checkpoint, resume and signal side of :class:`~glassformer.training.Trainer`.

    Reads and writes the trainer's loop state (``_epoch``, ``_batch``, ``_batch_losses``, ``rng``,
    ``_epoch_rng_state``, early-stopping ``_best``/``_wait``/``_best_snap``, ``history``) and its
    settings (``model``, ``named_params``, ``optimizer``, ``checkpoint_dir``, ``callbacks``, ...).
    """

    def _module_rngs(self) -> dict:
        """Every ``numpy.random.Generator`` held by a module (dropout masks), by ``"path:attribute"``."""
        out = {}
        if self.model is None or not hasattr(self.model, "named_modules"):
            return out
        for path, mod in self.model.named_modules():
            for attr, value in vars(mod).items():
                if isinstance(value, np.random.Generator):
                    out[f"{path}:{attr}"] = value
        return out

    def checkpoint_state(self) -> dict:
        """The trainer's resumable state as a JSON-able dict (arrays for the best weights).

        Keys: ``epoch`` (last completed epoch, -1 before the first), ``next_epoch`` and ``batch``
        (updates already done in ``next_epoch``), ``batch_losses`` (their losses), ``global_step``,
        ``rng`` (the shuffling generator's ``bit_generator.state`` at the start of ``next_epoch``),
        ``module_rngs``, ``history``, early-stopping ``best``/``wait``/``best_params``, the growth
        guard's ``reference_loss`` (the first batch's loss, None before it) and the run's
        shape (``epochs``, ``n_rows``, ``batch_size``, ``shuffle``, ``seed``) checked on resume.
        """
        best = self._best if math.isfinite(self._best) else None
        best_params = None
        if self._best_snap is not None:
            best_params = {name: a.copy() for (name, _), a in zip(self.named_params, self._best_snap)}
        return {"epoch": self._epoch - 1, "next_epoch": self._epoch, "batch": self._batch,
                "batch_losses": list(self._batch_losses), "global_step": self.global_step,
                "rng": self._epoch_rng_state,
                "module_rngs": {k: g.bit_generator.state for k, g in self._module_rngs().items()},
                "history": self.history.to_dict(), "best": best, "wait": self._wait,
                "best_params": best_params, "stop_training": bool(self.stop_training),
                "epochs": self.epochs, "n_rows": self._n, "batch_size": self.batch_size,
                "shuffle": self.shuffle, "seed": self.seed, "reference_loss": self._ref_loss}

    def save_checkpoint(self, path, *, config: dict | None = None) -> Path:
        """Write the model, optimizer and :meth:`checkpoint_state` atomically into folder ``path``.

        Returns the ``checkpoint.npz`` written (see :func:`glassformer.io.save_checkpoint`).
        """
        from . import io

        model_state = dict(self.model.state_dict()) if self.model is not None and hasattr(self.model, "state_dict") \
            else {name: p.data.copy() for name, p in self.named_params}
        return io.save_checkpoint(path, model_state=model_state, optimizer_state=self.optimizer.state_dict(),
                                  trainer_state=self.checkpoint_state(), config=dict(config or {}))

    def load_checkpoint(self, checkpoint) -> None:
        """Restore a checkpoint (folder, file or :class:`~glassformer.io.Checkpoint`) before the loop runs.

        Called by :meth:`fit` for ``resume_from`` (or by :class:`ResumeFrom`); the next epoch and batch,
        parameters, optimizer, generators, history and early-stopping state all come from it.

        Raises
        ------
        ModelFileError
            Unreadable checkpoint, or one written for another run (epochs, rows, batch size, seed or
            parameters differ; the message names what differs).
        """
        from . import io
        from .errors import ModelFileError, StateDictError

        ck = checkpoint if isinstance(checkpoint, io.Checkpoint) else io.load_checkpoint(checkpoint)
        where = f"resume from {checkpoint if not isinstance(checkpoint, io.Checkpoint) else 'checkpoint'}"
        ts = ck.trainer_state
        if "next_epoch" not in ts or "batch" not in ts:
            raise ModelFileError(f"{where}: the checkpoint has no resumable trainer state (next_epoch, batch)")
        mine = {"epochs": self.epochs, "n_rows": self._n, "batch_size": self.batch_size,
                "shuffle": self.shuffle, "seed": self.seed}
        differ = [f"{k}: checkpoint {ts.get(k)!r}, this run {v!r}" for k, v in mine.items() if ts.get(k) != v]
        if differ:
            raise ModelFileError(f"{where}: the checkpoint belongs to another run ({'; '.join(differ)})")
        try:
            if self.model is not None and hasattr(self.model, "load_state_dict"):
                self.model.load_state_dict(ck.model_state)
            else:
                self._load_named(ck.model_state, where)
            self.optimizer.load_state_dict(ck.optimizer_state)
        except StateDictError as exc:
            raise ModelFileError(f"{where}: the checkpoint does not fit this model ({exc})") from None
        self._epoch, self._batch = int(ts["next_epoch"]), int(ts["batch"])
        self._batch_losses = [float(v) for v in ts.get("batch_losses") or []]
        self.global_step = int(ts["global_step"])
        self._epoch_rng_state = ts["rng"]
        if ts["rng"] is not None:
            self.rng.bit_generator.state = ts["rng"]
        gens = self._module_rngs()
        for key, state in (ts.get("module_rngs") or {}).items():
            if key in gens:
                gens[key].bit_generator.state = state
        self.history = History.from_dict(ts["history"])
        if self.history.stop_reason == "interrupted":
            self.history.stop_reason = "completed"
        self._best = math.inf if ts.get("best") is None else float(ts["best"])
        self._wait = int(ts.get("wait") or 0)
        best_params = ts.get("best_params")
        self._best_snap = None
        if best_params is not None:
            self._best_snap = [np.array(best_params[name], dtype=p.data.dtype) for name, p in self.named_params]
        self.stop_training = bool(ts.get("stop_training", False))
        ref = ts.get("reference_loss")
        if ref is None and self._batch_losses and self._epoch == 0:   # older checkpoints: the first batch's loss
            ref = self._batch_losses[0]
        if ref is None and self.history.train_loss:                  # ... or else the first epoch's mean loss
            ref = self.history.train_loss[0]
        self._ref_loss = None if ref is None else float(ref)
        self._resumed = True

    def _load_named(self, state: dict, where: str) -> None:
        from .errors import ModelFileError

        for name, p in self.named_params:
            if name not in state or np.shape(state[name]) != p.data.shape:
                raise ModelFileError(f"{where}: parameter {name!r} missing or of another shape in the checkpoint")
            np.copyto(p.data, state[name])

    def _stop_if_signalled(self) -> None:
        """After an update: on a pending SIGINT/SIGTERM save a checkpoint (if configured) and stop."""
        signum = self._signal
        if signum is None:
            return
        folder = self._checkpoint_folder()
        self.history.stop_reason = "interrupted"          # recorded in the checkpoint; reset on resume
        if folder is not None:
            self.save_checkpoint(folder, config=self._checkpoint_config())
        where = f"after epoch {self._epoch} of {self.epochs}" + \
            (f" (+{self._batch} of {self._n_batches} updates of the next)" if self._batch else "")
        saved = f"checkpoint saved to {folder}" if folder is not None else "no checkpoint folder configured"
        raise TrainingInterrupted(f"training interrupted by {_signal_name(signum)} {where}; {saved}",
                                  signum=signum, epoch=self._epoch, batch=self._batch, checkpoint=folder,
                                  where=where)

    def _checkpoint_folder(self):
        if self.checkpoint_dir is not None:
            return Path(self.checkpoint_dir)
        for cb in self.callbacks:
            if isinstance(cb, SaveCheckpoint):
                return Path(cb.path)
        return None

    def _checkpoint_config(self) -> dict:
        if self.checkpoint_dir is not None:
            return dict(self.checkpoint_config)
        for cb in self.callbacks:
            if isinstance(cb, SaveCheckpoint):
                return dict(cb.config)
        return {}
