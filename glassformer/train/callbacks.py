"""Callbacks: everything :meth:`Trainer.fit <glassformer.train.Trainer.fit>` does besides the loop.

A callback is an object with any of the hook methods of :class:`Callback` (subclassing it is
optional).  At every hook point the callbacks run in ascending ``order`` (a class attribute,
default 0; ties keep the list's order), so the standard ones fall into place wherever a list puts
them: ``ResumeFrom`` (-100) restores a checkpoint before anyone else starts, the
``DivergenceGuard`` (-50) checks the final parameters before ``EarlyStopping`` (-20) restores the
best ones, ``SaveCheckpoint`` (-10) writes after early stopping has updated its state, user
callbacks (0) and the ``ProgressBar`` (50) follow, and ``StopOnSignal`` (100) acts last.  Only
the hooks a callback defines are called, so a callback without batch hooks costs nothing per
update.

This module holds the base class and the callbacks about the record of a run: :class:`PrintLoss`,
:class:`EarlyStopping` and :class:`ProgressBar`.  The divergence guard, checkpoints and signal
handling have modules of their own (``guard``, ``checkpoint``, ``signals``).
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np
from tqdm.auto import tqdm

from ..errors import InputError

__all__ = ["Callback", "EarlyStopping", "PrintLoss", "ProgressBar", "as_callback", "hook_table"]


class Callback:
    """Base class of the training callbacks: the hook points, in the order one run calls them.

    ``logs`` holds the epoch's ``loss`` (mean batch loss), ``val_loss`` (NaN without validation
    data), ``lr`` (of the last update) and ``step`` (updates so far).  A hook may raise to end
    training (e.g. :class:`~glassformer.errors.DivergenceError`).

    Attributes
    ----------
    order : int
        Position among the callbacks at every hook point (ascending).
    """

    order = 0

    def on_train_begin(self, trainer) -> None:
        """``fit`` has set up a fresh run (``trainer.resumed`` is set once a checkpoint was restored)."""

    def on_epoch_begin(self, trainer, epoch: int) -> None:
        """Before the epoch's first update (``trainer.batch`` > 0 in a run resumed mid-epoch)."""

    def on_step_error(self, trainer, rerun: Callable, exc: Exception, phase: str) -> None:
        """``step`` (``phase="training"``) or the validation pass (``"validation"``) raised ``exc``,
        an InputError or FloatingPointError; ``rerun()`` repeats the failing call.  Returning lets
        ``exc`` propagate unchanged."""

    def on_before_update(self, trainer, batch: tuple, loss: float) -> None:
        """After ``step`` and gradient clipping, before the optimizer update (``trainer.grad_norm``
        is the norm before clipping)."""

    def on_batch_end(self, trainer, loss: float) -> None:
        """After the update; ``trainer.batch`` of ``trainer.n_batches`` updates of the epoch are done."""

    def on_epoch_losses(self, trainer, epoch: int, logs: dict) -> None:
        """The epoch's losses are known and not yet recorded: raising here keeps it out of the history."""

    def on_epoch_end(self, trainer, epoch: int, logs: dict):
        """The epoch is recorded (``trainer.epoch`` is the next one); return True to stop training."""

    def on_train_end(self, trainer, history) -> None:
        """After the last epoch, when ``fit`` succeeds."""

    def teardown(self, trainer) -> None:
        """Last of all, whether ``fit`` succeeded or raised (release what ``on_train_begin`` took)."""


HOOKS = ("on_train_begin", "on_epoch_begin", "on_step_error", "on_before_update", "on_batch_end",
         "on_epoch_losses", "on_epoch_end", "on_train_end", "teardown")


class _EpochFunction(Callback):
    """A plain function ``fn(epoch, logs)`` run at the end of every epoch (True stops training)."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def on_epoch_end(self, trainer, epoch: int, logs: dict):
        return self.fn(epoch, logs)


def as_callback(cb, where: str):
    """``cb`` itself when it has a hook method, a plain function wrapped as an epoch-end callback.

    Raises
    ------
    InputError
        Neither a hook method nor callable.
    """
    if any(hasattr(cb, name) for name in HOOKS):
        return cb
    if callable(cb):
        return _EpochFunction(cb)
    raise InputError(f"{where} must have a hook method ({', '.join(HOOKS)}) or be a function "
                     f"fn(epoch, logs), got {cb!r}")


def hook_table(callbacks) -> dict:
    """``{hook: [bound methods]}``: for each hook, the callbacks that define it, in ascending ``order``.

    Hooks inherited unchanged from :class:`Callback` (which do nothing) are left out.
    """
    table = {name: [] for name in HOOKS}
    for cb in sorted(callbacks, key=lambda c: getattr(c, "order", 0)):
        for name in HOOKS:
            fn = getattr(cb, name, None)
            if fn is not None and getattr(type(cb), name, None) is not getattr(Callback, name):
                table[name].append(fn)
    return table


class PrintLoss(Callback):
    """Print the training (and validation) loss every ``every`` epochs.

    ``fmt`` is formatted with ``epoch``, ``epoch1`` (1-based), ``epochs``, ``loss``, ``val_loss``
    and ``lr``; ``offset=0`` prints at epochs 0, every, 2*every, ... (demonstration 1: seven
    depths), ``offset=1`` at 1-based epochs every, 2*every, ... (demonstration 2: the next depth).
    """

    def __init__(self, every: int, fmt: str = "Epoch {epoch:5d} | loss {loss:.6f}", *, offset: int = 0,
                 echo: Callable = print):
        self.every, self.fmt, self.offset, self.echo = int(every), fmt, int(offset), echo

    def on_epoch_end(self, trainer, epoch: int, logs: dict):
        if (epoch + self.offset) % self.every == 0:
            self.echo(self.fmt.format(epoch=epoch, epoch1=epoch + 1, epochs=trainer.epochs,
                                      loss=logs["loss"], val_loss=logs.get("val_loss", float("nan")),
                                      lr=logs.get("lr", float("nan"))))


class EarlyStopping(Callback):
    """Stop when the monitored loss has not improved for ``patience`` epochs; keep the best parameters.

    The monitored loss is the validation loss when ``fit`` has validation data, else the training
    loss.  An epoch improves when its loss is below the best so far minus ``min_delta``; the
    parameters after the best epoch are copied then and restored when training ends (also after
    a stop for another reason).  ``history.best_epoch`` names that epoch, ``history.stop_reason``
    becomes ``"early_stopping"`` when patience runs out.  The state travels in checkpoints.

    Parameters
    ----------
    patience : int >= 1
    min_delta : float, default 0

    Raises
    ------
    InputError
        ``patience`` < 1.
    """

    order = -20

    def __init__(self, patience: int, min_delta: float = 0.0):
        if isinstance(patience, bool) or int(patience) < 1:
            raise InputError(f"EarlyStopping: patience (early_stopping_patience) must be an integer >= 1, "
                             f"got {patience!r}")
        self.patience, self.min_delta = int(patience), float(min_delta)

    def on_train_begin(self, trainer) -> None:
        state = trainer.resumed or {}
        self.best = math.inf if state.get("best") is None else float(state["best"])
        self.wait = int(state.get("wait") or 0)
        saved = state.get("best_params")
        self.best_params = None if saved is None else \
            [np.array(saved[name], dtype=p.data.dtype) for name, p in trainer.named_params]

    def on_epoch_end(self, trainer, epoch: int, logs: dict):
        watched = logs["val_loss"] if trainer.validating else logs["loss"]
        if watched < self.best - self.min_delta:
            self.best, self.wait = watched, 0
            trainer.history.best_epoch = epoch
            self.best_params = trainer.snapshot(self.best_params)
        else:
            self.wait += 1
            if self.wait >= self.patience:
                trainer.history.stop_reason = "early_stopping"
                trainer.stop_training = True

    def on_train_end(self, trainer, history) -> None:
        if self.best_params is not None:
            trainer.restore(self.best_params)

    def checkpoint_state(self, trainer) -> dict:
        """``best`` (None before the first epoch), ``wait`` and ``best_params`` (by parameter name)."""
        best_params = None
        if self.best_params is not None:
            best_params = {name: a.copy() for (name, _), a in zip(trainer.named_params, self.best_params)}
        return {"best": self.best if math.isfinite(self.best) else None, "wait": self.wait,
                "best_params": best_params}


class ProgressBar(Callback):
    """A tqdm progress bar over epochs (on stderr) showing the latest losses, closed when ``fit`` ends."""

    order = 50

    def __init__(self, desc: str = "training", min_interval: float = 0.5):
        self.desc, self.min_interval = desc, float(min_interval)
        self.bar = None

    def on_train_begin(self, trainer) -> None:
        self.bar = tqdm(total=trainer.epochs, initial=trainer.epoch, desc=self.desc, unit="epoch", leave=False,
                        mininterval=self.min_interval)
        self._posted = 0.0

    def on_epoch_end(self, trainer, epoch: int, logs: dict):
        now = time.perf_counter()
        if now - self._posted > self.min_interval:        # at most twice a second: each postfix costs a redraw
            self._posted = now
            post = {"loss": f"{logs['loss']:.4g}"}
            if trainer.validating:
                post["val"] = f"{logs['val_loss']:.4g}"
            self.bar.set_postfix(post, refresh=False)
        self.bar.update(1)                                 # after the postfix, so the bar shows this epoch's losses

    def teardown(self, trainer) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
