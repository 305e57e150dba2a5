"""The training loop shared by every glassformer model (regressors, LSTM, seq2seq, language model).

The loop knows nothing about transformers.  It needs

* ``params`` -- what it trains: a Module, Parameters, or ``(name, Parameter)`` pairs (the names
  appear in divergence messages and checkpoints);
* ``step(batch) -> float`` -- forward, the loss and backward on one mini-batch (a tuple of arrays
  sliced from the training data), *adding* gradients into ``param.grad``; returns the batch loss;
* ``optimizer`` -- a :mod:`glassformer.train.optim` optimizer over the same parameters.

:meth:`Trainer.fit` is the loop and nothing else; the comments on the right are the hook points
where callbacks (:mod:`glassformer.train.callbacks`) run::

    for epoch in epochs:                                         on_epoch_begin
        for batch in the epoch's permutation of the rows:
            zero the gradients; loss = step(batch)               on_step_error (if step raised)
            clip the global gradient norm (grad_clip)            on_before_update
            set the scheduled learning rate; optimizer.step()    on_batch_end
        val_loss = eval_step(val)                                on_step_error (if it raised)
                                                                 on_epoch_losses
        record the epoch in the history                          on_epoch_end
                                                                 on_train_end, then teardown

Per epoch it draws one permutation of the training rows from ``numpy.random.default_rng(seed)``
(the order of the chapter's demonstration 2: the next depth; Pyrcz 2024) and walks it in
mini-batches of ``batch_size`` rows (None = one full batch and no shuffling, as in demonstration 1:
seven depths).  The epoch's training loss is the mean of its batch losses (the chapter's "mean
batch MSE").

Early stopping, checkpoints and resume, the divergence guard, the progress bar and the clean stop
on SIGINT/SIGTERM are callbacks; :func:`~glassformer.train.standard_callbacks` builds the list the
estimators use from their hyperparameters.

The loop itself is the generator :meth:`Trainer.run`: where it needs ``step(batch)`` or the
validation loss it yields the request and is sent the answer.  :meth:`Trainer.fit` answers with
``step`` and ``eval_step`` (:func:`run_to_end`); the members of an ensemble trained as one model
(:mod:`glassformer.models.members`) each run their own loop and have their requests answered
together.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Sequence

import numpy as np

from ..errors import InputError
from ._checks import check_batch_size, check_epochs, count_rows, named_params
from .callbacks import as_callback, hook_table
from .history import History
from .clipping import clip_global_norm
from .optim import Optimizer
from .standard import standard_callbacks

__all__ = ["Trainer", "run_to_end", "total_updates"]

#: Training data up to this many bytes is gathered in the epoch's order once per epoch, and each
#: batch sliced from it; larger data is gathered batch by batch (no second copy of it in memory).
GATHER_BYTES = 64 * 2 ** 20


def run_to_end(run, answer):
    """Drive a :meth:`Trainer.run` generator to its end, answering every request with ``answer(kind, data)``.

    An exception raised by ``answer`` is thrown into the loop at its request, as if ``step`` had
    raised there (so ``on_step_error`` and the loop's own handling see it).  Returns the history.
    """
    reply, error = None, None
    while True:
        try:
            kind, data = run.throw(error) if error is not None else run.send(reply)
        except StopIteration as done:
            return done.value
        try:
            reply, error = answer(kind, data), None
        except BaseException as exc:          # KeyboardInterrupt too: the loop records the interruption
            reply, error = None, exc


def total_updates(n_rows: int, batch_size: int | None, epochs: int) -> int:
    """Optimizer updates in a run: ``epochs x ceil(n_rows / batch_size)`` (one per epoch for a full batch).

    What a decaying schedule needs as ``total_steps`` (:func:`~glassformer.train.make_schedule`).

    Raises
    ------
    InputError
        ``epochs`` or ``batch_size`` out of range (the Trainer's own checks).
    """
    batch_size, epochs = check_batch_size(batch_size), check_epochs(epochs)
    return epochs * (1 if batch_size is None else math.ceil(n_rows / batch_size))


class Trainer:
    """Mini-batch gradient descent for any model with hand-written backward passes.

    Parameters
    ----------
    params : Module, iterable of Parameter, or iterable of (name, Parameter)
        What is trained (each Parameter once).  Unnamed Parameters are called ``param[i]``.
    step : callable ``step(batch) -> float``
        Forward, loss and backward on one batch (a tuple of arrays); the trainer zeroes the
        gradients before each call.
    optimizer : glassformer.train.optim.Optimizer
        Over the same parameters; build one by name with :func:`~glassformer.train.make_optimizer`.
    epochs : int >= 0, default 100
        Passes over the training data.
    batch_size : int or None
        Rows per update; None = the full batch, in order.
    shuffle : bool, default True
        Permute the rows every epoch with ``numpy.random.default_rng(seed).permutation``.
    seed : int, default 42
    grad_clip : float > 0 or None
        Scale the gradients so that their global L2 norm is at most this (Pascanu et al. 2013).
    schedule : object with ``lr_at(update)`` or None
        The learning rate of each update, counted from 0 (:func:`~glassformer.train.make_schedule`);
        None leaves ``optimizer.lr`` alone.
    eval_step : callable ``eval_step(batch) -> float``, optional
        Loss without backward, for the validation data (default: ``step`` with its gradients discarded).
    model : Module, optional
        Switched between ``train()`` and ``eval()``; its ``state_dict`` and dropout generators go
        into checkpoints; the divergence guard searches it for the first non-finite tensor.
    callbacks : list, optional
        Callback objects (:class:`~glassformer.train.Callback`) or plain functions
        ``fn(epoch, logs)`` run at the end of every epoch (returning True stops training).  None
        (the default) means :func:`~glassformer.train.standard_callbacks` ``()``: the divergence
        guard and a clean stop on SIGINT/SIGTERM.  A list replaces that; build it as
        ``standard_callbacks(...) + [your callbacks]``.

    Attributes
    ----------
    history : History
        Per-epoch record of the last :meth:`fit`.
    epoch, batch : int
        During ``fit``: the epoch running (0-based) and the updates of it already done.
    n_batches, n_rows, global_step : int
        Updates per epoch, training rows, updates done in the whole run.
    batch_losses : list of float
        Losses of the updates of the running epoch.
    grad_norm : float or None
        Global gradient norm of the last batch before clipping (None without ``grad_clip``).
    validating : bool
        Whether ``fit`` was given validation data.
    stop_training : bool
        Set by a callback to end ``fit`` after the current epoch.
    resumed : dict or None
        The trainer state of the checkpoint this run resumed from (set by ``ResumeFrom``).

    Raises
    ------
    InputError
        Bad ``epochs``, ``batch_size``, ``grad_clip``, ``optimizer``, ``schedule`` or callbacks.
    """

    def __init__(self, params, step: Callable, optimizer, *, epochs: int = 100, batch_size: int | None = None,
                 shuffle: bool = True, seed: int = 42, grad_clip: float | None = None, schedule=None,
                 eval_step: Callable | None = None, model=None, callbacks: Sequence | None = None):
        self.named_params = named_params(params, "Trainer", unnamed="param[{}]")
        self.params = [p for _, p in self.named_params]
        self.step, self.eval_step, self.model = step, eval_step, model
        if not isinstance(optimizer, Optimizer):
            raise InputError(f"Trainer: optimizer must be a glassformer optimizer (e.g. SGD(params, lr=0.01); "
                             f"by name: make_optimizer), got {optimizer!r}")
        self.optimizer = optimizer
        self._same_params = {id(p) for p in self.params} == {id(p) for p in optimizer.params}
        self.epochs, self.batch_size = check_epochs(epochs), check_batch_size(batch_size)
        self.shuffle, self.seed = bool(shuffle), seed
        if grad_clip is not None and not float(grad_clip) > 0:
            raise InputError(f"Trainer: grad_clip must be None or > 0, got {grad_clip!r}")
        self.grad_clip = None if grad_clip is None else float(grad_clip)
        if schedule is not None and not callable(getattr(schedule, "lr_at", None)):
            raise InputError(f"Trainer: schedule must be None or an object with lr_at(update) "
                             f"(by name: make_schedule), got {schedule!r}")
        self.schedule = schedule
        cbs = standard_callbacks() if callbacks is None else callbacks
        self.callbacks = [as_callback(cb, f"Trainer: callbacks[{i}]") for i, cb in enumerate(cbs)]
        self.history = History()
        self.resumed = None

    # --- the loop ----------------------------------------------------------------------------
    def fit(self, train: tuple, val: tuple | None = None) -> History:
        """Train on ``train`` (a tuple of arrays with equal leading length; None entries pass through).

        ``val``: validation data in the same form, scored with ``eval_step`` after every epoch.

        Returns
        -------
        History
            Also kept as ``self.history``.

        Raises
        ------
        InputError
            Arrays of unequal length, or no rows.
        Whatever a callback raises
            :class:`~glassformer.errors.DivergenceError` from the divergence guard,
            :class:`~glassformer.train.TrainingInterrupted` on SIGINT/SIGTERM,
            :class:`~glassformer.errors.ModelFileError` from a checkpoint that cannot be resumed.
        """
        return run_to_end(self.run(train, val), self.answer)

    def run(self, train: tuple, val: tuple | None = None):
        """:meth:`fit` as a generator: yields ``("step", batch)`` and ``("eval", data)`` requests and
        expects each loss sent back (what :meth:`answer` computes); returns the history."""
        train = tuple(train)
        self._begin(train, val)
        try:
            self._call("on_train_begin")
            self._seconds_before = self.history.seconds if self.resumed is not None else 0.0
            while self.epoch < self.epochs and not self.stop_training:
                yield from self._run_epoch(train, val)
            if self.model is not None:
                self.model.train()
            self._call("on_train_end", self.history)
        except KeyboardInterrupt:
            self.history.stop_reason = "interrupted"
            raise
        finally:
            self.history.seconds = self._elapsed()
            self._call("teardown")
        return self.history

    def answer(self, kind: str, data: tuple) -> float:
        """The loss a :meth:`run` request asks for: ``step(batch)``, or the validation loss of ``data``."""
        if kind == "step":
            return self.step(data)
        if self.eval_step is not None:
            return self.eval_step(data)
        value = self.step(data)
        for p in self.params:
            p.grad.fill(0.0)
        return value

    def _begin(self, train: tuple, val) -> None:
        self.n_rows = count_rows(train, "Trainer")
        self.n_batches = total_updates(self.n_rows, self.batch_size, 1)
        self.rng = np.random.default_rng(self.seed)
        self.epoch_rng_state = self.rng.bit_generator.state
        self.history = History()
        self.epoch, self.batch, self.batch_losses, self.global_step = 0, 0, [], 0
        self.validating, self.stop_training, self.resumed, self.grad_norm = val is not None, False, None, None
        self._hooks = hook_table(self.callbacks)
        self._t0, self._seconds_before = time.perf_counter(), 0.0

    def _run_epoch(self, train: tuple, val) -> None:
        epoch = self.epoch
        if self.batch == 0:
            self.epoch_rng_state = self.rng.bit_generator.state    # where a checkpoint of this epoch resumes
            self.batch_losses = []
        self._call("on_epoch_begin", epoch)
        with np.errstate(over="ignore", invalid="ignore"):          # overflow is the divergence guard's to report
            loss = yield from self._run_batches(train)
            val_loss = (yield from self._evaluate(val)) if val is not None else float("nan")
        logs = {"loss": loss, "val_loss": val_loss, "lr": float(self.optimizer.lr), "step": self.global_step}
        self._call("on_epoch_losses", epoch, logs)
        self._record(epoch, logs)
        for fn in self._hooks["on_epoch_end"]:
            if fn(self, epoch, logs):
                self.history.stop_reason = "callback"
                self.stop_training = True

    def _run_batches(self, data: tuple) -> float:
        """The epoch's updates from ``self.batch`` on; returns the mean batch loss of the whole epoch.

        Updates before ``self.batch`` were done before a checkpoint (a resumed run): the epoch's
        permutation is still drawn (same generator state, same order) and those batches skipped.
        """
        if self.model is not None:
            self.model.train()
        n = self.n_rows
        if self.batch_size is None or (self.batch_size >= n and not self.shuffle):
            order, slices = None, [None]
        else:
            order = self.rng.permutation(n) if self.shuffle else np.arange(n)
            slices = [slice(s, s + self.batch_size) for s in range(0, n, self.batch_size)]
            if sum(a.nbytes for a in data if a is not None) <= GATHER_BYTES:
                # The epoch's rows gathered in one call per array: each batch is then a slice of them
                # (the same rows in the same order), not a gather of its own.
                data, order = self._take(data, order), None
        before_update, batch_end = self._hooks["on_before_update"], self._hooks["on_batch_end"]
        for b in range(self.batch, len(slices)):
            sl = slices[b]
            batch = data if sl is None else self._take(data, sl if order is None else order[sl])
            for g in self._grads():
                g.fill(0.0)
            loss = yield from self._step(batch)
            if self.grad_clip is not None:
                self.grad_norm = self._clip()
            for fn in before_update:
                fn(self, batch, loss)
            if self.schedule is not None:
                self.optimizer.lr = float(self.schedule.lr_at(self.global_step))
            self.optimizer.step()
            self.global_step += 1
            self.batch_losses.append(loss)
            self.batch = b + 1
            for fn in batch_end:
                fn(self, loss)
        return float(np.mean(self.batch_losses))

    def _step(self, batch):
        try:
            return float((yield ("step", batch)))
        except (InputError, FloatingPointError) as exc:
            # Layers refuse non-finite inputs: a callback (the divergence guard) may explain the failure.
            self._call("on_step_error", lambda: self.step(batch), exc, "training")
            raise

    def _grads(self) -> list:
        """The gradient arrays: one when the optimizer holds exactly these parameters in a flat array."""
        flat = self.optimizer.fused() if self._same_params else None
        return [flat.grad] if flat is not None else [p.grad for p in self.params]

    def _clip(self) -> float:
        """Scale the gradients to a global L2 norm of at most ``grad_clip``; return the norm before."""
        return clip_global_norm(self._grads(), self.grad_clip)

    def _evaluate(self, data: tuple):
        if self.model is not None:
            self.model.eval()
        try:
            return float((yield ("eval", data)))
        except (InputError, FloatingPointError) as exc:
            self._call("on_step_error", lambda: self.answer("eval", data), exc, "validation")
            raise
        finally:
            if self.model is not None:
                self.model.train()

    def _record(self, epoch: int, logs: dict) -> None:
        """Append the epoch to the history; the epoch is complete: the state a checkpoint resumes from."""
        h = self.history
        h.epoch.append(epoch)
        h.train_loss.append(logs["loss"])
        h.val_loss.append(logs["val_loss"])
        h.lr.append(logs["lr"])
        self.epoch, self.batch, self.batch_losses = epoch + 1, 0, []
        self.epoch_rng_state = self.rng.bit_generator.state
        h.seconds = self._elapsed()

    def _call(self, hook: str, *args) -> None:
        for fn in self._hooks[hook]:
            fn(self, *args)

    def _elapsed(self) -> float:
        return self._seconds_before + time.perf_counter() - self._t0

    # --- data --------------------------------------------------------------------------------
    @staticmethod
    def _take(data: tuple, idx) -> tuple:
        return tuple([None if a is None else a[idx] for a in data])

    # --- parameters and state, for callbacks -------------------------------------------------
    def snapshot(self, into: list | None = None) -> list:
        """Copies of the parameters' values (into the arrays of ``into`` when given, a previous snapshot)."""
        if into is None:
            return [p.data.copy() for p in self.params]
        for buf, p in zip(into, self.params):
            np.copyto(buf, p.data)
        return into

    def restore(self, snapshot: list) -> None:
        """Copy a :meth:`snapshot` back into the parameters, in place."""
        for buf, p in zip(snapshot, self.params):
            np.copyto(p.data, buf)

    def state(self) -> dict:
        """The loop's resumable state, JSON-able (callbacks add theirs in checkpoints).

        Keys: ``epoch`` (last completed epoch, -1 before the first), ``next_epoch`` and ``batch``
        (updates already done in ``next_epoch``), ``batch_losses`` (their losses), ``global_step``,
        ``rng`` (the shuffling generator's ``bit_generator.state`` at the start of ``next_epoch``),
        ``history``, ``stop_training``, and the run's shape (``epochs``, ``n_rows``, ``batch_size``,
        ``shuffle``, ``seed``), which a resumed run must share.
        """
        return {"epoch": self.epoch - 1, "next_epoch": self.epoch, "batch": self.batch,
                "batch_losses": list(self.batch_losses), "global_step": self.global_step,
                "rng": self.epoch_rng_state, "history": self.history.to_dict(),
                "stop_training": bool(self.stop_training), "epochs": self.epochs, "n_rows": self.n_rows,
                "batch_size": self.batch_size, "shuffle": self.shuffle, "seed": self.seed}

    def load_state(self, state: dict) -> None:
        """Continue from a :meth:`state` (of a checkpoint): next epoch and batch, generator, history.

        The whole dict is kept as :attr:`resumed`, where callbacks find their own state.
        """
        self.epoch, self.batch = int(state["next_epoch"]), int(state["batch"])
        self.batch_losses = [float(v) for v in state.get("batch_losses") or []]
        self.global_step = int(state["global_step"])
        self.epoch_rng_state = state["rng"]
        if state["rng"] is not None:
            self.rng.bit_generator.state = state["rng"]
        self.history = History.from_dict(state["history"])
        if self.history.stop_reason == "interrupted":
            self.history.stop_reason = "completed"
        self.stop_training = bool(state.get("stop_training", False))
        self.resumed = state
