"""A clean stop on SIGINT (Ctrl-C) and SIGTERM: finish the update, save a checkpoint, raise.

:class:`StopOnSignal` replaces the two handlers while ``fit`` runs (main thread only; elsewhere
Python does not deliver signals).  A signal sets a flag; after the current update the callback
saves a checkpoint through the run's :class:`~glassformer.train.SaveCheckpoint` (when it has one)
and raises :class:`TrainingInterrupted`.  A second signal while the first is pending interrupts at
once (``KeyboardInterrupt``), so a stuck run can still be stopped.  The previous handlers are
restored when ``fit`` returns or raises.
"""

from __future__ import annotations

import signal
import threading

from .callbacks import Callback
from .checkpoint import SaveCheckpoint

__all__ = ["StopOnSignal", "TrainingInterrupted"]


class TrainingInterrupted(KeyboardInterrupt):
    """SIGINT (Ctrl-C) or SIGTERM stopped :meth:`Trainer.fit` cleanly, between two updates.

    A subclass of ``KeyboardInterrupt``, so an interactive session sees the usual Ctrl-C.  When the
    run has a :class:`~glassformer.train.SaveCheckpoint` the state at the interruption was saved
    there first; resuming from it continues bit-identically.

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


class StopOnSignal(Callback):
    """Turn SIGINT/SIGTERM during ``fit`` into a checkpoint and :class:`TrainingInterrupted`.

    Parameters
    ----------
    signals : tuple of int, default (SIGINT, SIGTERM)
    """

    order = 100

    def __init__(self, signals=(signal.SIGINT, signal.SIGTERM)):
        self.signals = tuple(signals)
        self.pending = None
        self._previous = {}

    def on_train_begin(self, trainer) -> None:
        self.pending = None
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in self.signals:
            try:
                self._previous[sig] = signal.signal(sig, self._handler)
            except (ValueError, OSError):   # not allowed here (an embedded interpreter)
                pass

    def _handler(self, signum, frame) -> None:
        if self.pending is not None:
            raise KeyboardInterrupt(f"second signal {signum} while stopping")
        self.pending = signum

    def on_batch_end(self, trainer, loss: float) -> None:
        if self.pending is not None and trainer.batch < trainer.n_batches:
            self._stop(trainer)

    def on_epoch_end(self, trainer, epoch: int, logs: dict):
        if self.pending is not None and trainer.epoch < trainer.epochs and not trainer.stop_training:
            self._stop(trainer)

    def teardown(self, trainer) -> None:
        for sig, old in self._previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        self._previous = {}

    def _stop(self, trainer) -> None:
        saver = next((cb for cb in trainer.callbacks if isinstance(cb, SaveCheckpoint)), None)
        trainer.history.stop_reason = "interrupted"          # recorded in the checkpoint; reset on resume
        if saver is not None:
            saver.save(trainer)
        folder = None if saver is None else saver.path
        where = f"after epoch {trainer.epoch} of {trainer.epochs}" + \
            (f" (+{trainer.batch} of {trainer.n_batches} updates of the next)" if trainer.batch else "")
        saved = f"checkpoint saved to {folder}" if folder is not None else "no checkpoint folder configured"
        raise TrainingInterrupted(f"training interrupted by {_signal_name(self.pending)} {where}; {saved}",
                                  signum=self.pending, epoch=trainer.epoch, batch=trainer.batch, checkpoint=folder,
                                  where=where)
