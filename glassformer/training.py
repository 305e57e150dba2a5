"""The training loop shared by every glassformer model (regressor, LSTM, seq2seq).

The loop knows nothing about transformers.  It needs

* ``params`` -- the list of :class:`~glassformer.nn.Parameter` to optimise;
* ``step(batch) -> float`` -- runs forward, the loss and backward on one mini-batch (a tuple of
  arrays sliced from the training data), *adding* gradients into ``param.grad``, and returns the
  batch loss;
* optionally ``eval_step(batch) -> float`` -- the loss without backward (validation);
* optionally ``model`` -- a :class:`~glassformer.nn.Module`, switched between ``train()`` and
  ``eval()`` and searched for the first non-finite tensor when training diverges.

Per epoch it draws one permutation of the training rows from ``numpy.random.default_rng(seed)``
(exactly seed 000's ``train_transformer_sequences`` order), walks it in mini-batches of
``batch_size`` rows (``None`` = one full batch, no shuffling: seed 000's demonstration 1), and for
each batch: zero the gradients, ``step``, check the loss is finite, clip the global gradient norm
(when asked), set the scheduled learning rate and update.  The epoch's training loss is the mean
of its batch losses (the seed's "mean batch MSE").

Divergence guard: a non-finite loss -- or a layer refusing a non-finite input, or a non-finite
gradient met while clipping -- stops training with :class:`~glassformer.errors.DivergenceError`.
The failing batch is re-run with every module's output watched (:func:`locate_nonfinite`), and the
message names the first module, in call order, whose output went non-finite (e.g.
``encoder.layers.0.linear2 (Linear): output``) -- or, when a tensor computed *inside* a module
overflowed, the first module that failed on finite inputs (``encoder.layers.0.self_attn
(MultiheadAttention): an intermediate tensor``); its ``where`` attribute holds the same text.  The
validation pass after each epoch is guarded the same way.  The parameters are restored to their
values at the start of that epoch (or of its resumed part), the last state known to give finite
losses.

Growth guard: a loss can also run away while staying finite (``lr=1e6`` gives mean losses of
1e24 that never overflow).  When an epoch's mean training loss exceeds ``divergence_factor``
(default 1e4) times the *reference loss* -- the loss of the run's first batch, i.e. of the initial
parameters -- training stops with :class:`~glassformer.errors.DivergenceError` as well.  The
reference is the untrained model's loss rather than the best loss so far: a model that has fitted
well can legitimately jump by orders of magnitude above its (tiny) best loss on a noisy mini-batch
or a learning-rate spike, but a loss 1e4 times that of random initial weights is never progress.
Here the parameters are restored to their values at the start of the previous epoch, the last
epoch whose loss passed the guard (the start of training if it is the first epoch): the start of
the failing epoch already gave the runaway loss (with full batches it is exactly where that loss
was measured); in a resumed run, before a full epoch has passed, it is the resume point.  The
reference loss is kept in checkpoints.  The guard is skipped when the reference loss is not > 0
(e.g. a log-likelihood).

Fault tolerance (issue 9) -- checkpoints, resume and SIGINT/SIGTERM -- lives in
:mod:`glassformer.checkpointing`; the history record in :mod:`glassformer.history`; locating the
first non-finite tensor in :mod:`glassformer.divergence`.

Early stopping (``early_stopping_patience``) watches the validation loss (the training loss when
there is no validation data) and restores the best parameters at the end.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from .checkpointing import CheckpointMixin, ResumeFrom, SaveCheckpoint, SignalGuard, TrainingInterrupted
from .divergence import Diverged, find_nonfinite, first_nonfinite_grad, locate_nonfinite
from .errors import DivergenceError, InputError
from .history import History

__all__ = ["History", "PrintLoss", "ResumeFrom", "SaveCheckpoint", "Trainer", "TrainingInterrupted", "find_nonfinite",
           "locate_nonfinite", "make_optimizer", "make_schedule"]


# ---------------------------------------------------------------------------------------------
# optimizers and schedules by name
# ---------------------------------------------------------------------------------------------
def make_optimizer(name, params, *, lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
                   betas=(0.9, 0.999), eps: float = 1e-8, nesterov: bool = False):
    """Build ``glassformer.optim`` SGD / Adam / AdamW by name (an optimizer object passes through).

    Raises
    ------
    InputError
        For an unknown name.
    """
    from . import optim

    if not isinstance(name, str):
        return name
    key = name.lower()
    if key == "sgd":
        return optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov)
    if key == "adam":
        return optim.Adam(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
    if key == "adamw":
        return optim.AdamW(params, lr=lr, betas=tuple(betas), eps=eps,
                           weight_decay=0.01 if weight_decay is None else weight_decay)
    raise InputError(f"optimizer must be 'sgd', 'adam' or 'adamw', got {name!r}")


def make_schedule(name, *, lr: float, warmup_steps: int = 0, total_steps: int = 1, **options):
    """Build a learning-rate schedule with ``lr_at(step)`` by name.

    Names: ``None``/``"constant"`` (constant after linear warmup), ``"cosine"`` (warmup then cosine
    decay to ``min_lr``), ``"linear"`` (warmup then linear decay), ``"noam"`` (Vaswani et al. 2017,
    eq. 3, scaled so its peak equals ``lr``).  An object with ``lr_at`` passes through.
    """
    from . import optim

    if name is not None and not isinstance(name, str):
        return name
    key = (name or "constant").lower()
    warm = int(warmup_steps or 0)
    total = max(int(total_steps), warm + 1)
    if key == "constant":
        return _WarmupConstant(lr, warm) if warm else None
    if key == "cosine":
        return _FromOne(optim.WarmupCosine(lr, warm, total, **options))
    if key == "linear":
        return _FromOne(optim.WarmupLinear(lr, warm, total, **options))
    if key == "noam":
        # Noam's peak is factor / sqrt(d_model * warmup); with d_model=1 the factor below makes it lr.
        warm = max(warm, 1)
        return _FromOne(optim.Noam(1, warm, factor=lr * math.sqrt(warm)))
    raise InputError(f"schedule must be None, 'constant', 'cosine', 'linear' or 'noam', got {name!r}")


class _FromOne:
    """Adapter: glassformer.optim schedules count update steps from 1, the trainer from 0."""

    def __init__(self, schedule):
        self.schedule = schedule

    def lr_at(self, step: int) -> float:
        return self.schedule.lr_at(step + 1)


class _WarmupConstant:
    """Linear warmup from lr/warmup to lr over ``warmup_steps`` updates, then constant."""

    def __init__(self, lr: float, warmup_steps: int):
        self.lr, self.warmup_steps = float(lr), int(warmup_steps)

    def lr_at(self, step: int) -> float:
        return self.lr * min(1.0, (step + 1) / self.warmup_steps)


# ---------------------------------------------------------------------------------------------
# callbacks
# ---------------------------------------------------------------------------------------------
class PrintLoss:
    """Callback printing the training (and validation) loss every ``every`` epochs.

    ``fmt`` is formatted with ``epoch``, ``epoch1`` (1-based), ``epochs``, ``loss``, ``val_loss``
    and ``lr``; ``offset=0`` prints at epochs 0, every, 2*every, ... (seed 000 demonstration 1),
    ``offset=1`` at 1-based epochs every, 2*every, ... (demonstration 2).
    """

    def __init__(self, every: int, fmt: str = "Epoch {epoch:5d} | loss {loss:.6f}", *, offset: int = 0,
                 echo: Callable = print):
        self.every, self.fmt, self.offset, self.echo = int(every), fmt, int(offset), echo

    def on_epoch_end(self, trainer, epoch: int, logs: dict):
        if (epoch + self.offset) % self.every == 0:
            self.echo(self.fmt.format(epoch=epoch, epoch1=epoch + 1, epochs=trainer.epochs,
                                      loss=logs["loss"], val_loss=logs.get("val_loss", float("nan")),
                                      lr=logs.get("lr", float("nan"))))


# ---------------------------------------------------------------------------------------------
# the trainer
# ---------------------------------------------------------------------------------------------
class Trainer(CheckpointMixin):
    """Mini-batch gradient descent for any model with hand-written backward passes.

    Parameters
    ----------
    params : list of Parameter
        What the optimizer updates (``model.parameters()``).
    step : callable ``step(batch) -> float``
        Forward, loss and backward on one batch (a tuple of arrays); gradients are zeroed by the
        trainer before each call.
    optimizer : glassformer.optim optimizer or {"sgd", "adam", "adamw"}, default "sgd"
    lr, momentum, weight_decay, betas : optimizer settings (used when ``optimizer`` is a name).
    epochs : int
        Passes over the training data.
    batch_size : int or None
        Rows per update; None = full batch (no shuffling).
    shuffle : bool, default True
        Permute the rows every epoch with ``numpy.random.default_rng(seed).permutation``.
    seed : int, default 42
    grad_clip : float or None
        Clip the global L2 norm of all gradients to this value (Pascanu et al., 2013).
    schedule : None, name or object with ``lr_at(step)``; warmup_steps : int
        Learning-rate schedule over update steps (see :func:`make_schedule`).
    eval_step : callable ``eval_step(batch) -> float``, optional
        Loss without backward, for validation (default: ``step`` with gradients discarded).
    early_stopping_patience : int or None
        Stop after this many epochs without improvement of the monitored loss by more than
        ``min_delta``; the best parameters are restored at the end.
    model : Module, optional
        Switched to ``train()`` / ``eval()``; searched for the first non-finite tensor on divergence.
    progress : bool, default False
        Show a tqdm progress bar over epochs (on stderr).
    callbacks : iterable
        Objects with any of ``on_train_begin(trainer)``, ``on_epoch_end(trainer, epoch, logs)``
        (returning True stops training) and ``on_train_end(trainer, history)``, or plain callables
        ``fn(epoch, logs)``.  ``logs`` has ``loss``, ``val_loss``, ``lr``, ``step``.
    checkpoint_dir : str or Path, optional
        Folder for ``checkpoint.npz`` + ``checkpoint.json`` (:func:`glassformer.io.save_checkpoint`,
        atomic), written every ``checkpoint_every`` epochs and when a signal stops training.
    checkpoint_every : int, default 1
        Epochs between periodic checkpoints.
    checkpoint_config : dict, optional
        JSON-able run description stored in the checkpoint (e.g. the command-line options).
    resume_from : str, Path or glassformer.io.Checkpoint, optional
        Continue from this checkpoint (same data, seed, epochs and batch size): the result is
        bit-identical to an uninterrupted run.
    handle_signals : bool, default True
        During :meth:`fit`, in the main thread, turn SIGINT/SIGTERM into a clean stop after the
        current update (checkpoint, then :class:`TrainingInterrupted`).  A second signal interrupts
        at once.  Previous handlers are restored when ``fit`` returns.
    divergence_factor : float > 1 or None, default 1e4
        Growth guard: stop with :class:`DivergenceError` when an epoch's mean training loss exceeds
        this many times the loss of the first batch (the initial parameters); None turns it off.

    Raises
    ------
    DivergenceError
        From :meth:`fit` when a loss or gradient is non-finite, or the training loss grows beyond
        ``divergence_factor`` times its initial value (parameters restored, see the module docstring).
    """

    def __init__(self, params: Sequence, step: Callable, *, optimizer="sgd", lr: float = 0.01,
                 momentum: float = 0.0, weight_decay: float = 0.0, betas=(0.9, 0.999),
                 epochs: int = 100, batch_size: int | None = None, shuffle: bool = True, seed: int = 42,
                 grad_clip: float | None = None, schedule=None, warmup_steps: int = 0,
                 eval_step: Callable | None = None, early_stopping_patience: int | None = None,
                 min_delta: float = 0.0, model=None, progress: bool = False, callbacks: Iterable = (),
                 named_params: Sequence | None = None, checkpoint_dir=None, checkpoint_every: int = 1,
                 checkpoint_config: dict | None = None, resume_from=None, handle_signals: bool = True,
                 divergence_factor: float | None = 1e4):
        self.params = list(params)
        if not self.params:
            raise InputError("Trainer: params is empty")
        self.named_params = list(named_params) if named_params is not None else \
            [(f"param[{i}]", p) for i, p in enumerate(self.params)]
        self.step = step
        self.eval_step = eval_step
        try:
            self.lr = float(lr)
        except (TypeError, ValueError):
            raise InputError(f"Trainer: lr must be a finite number > 0, got {lr!r}") from None
        self.optimizer = make_optimizer(optimizer, self.params, lr=self.lr, momentum=momentum,
                                        weight_decay=weight_decay, betas=betas)
        if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 0:
            raise InputError(f"Trainer: epochs must be an integer >= 0, got {epochs!r}")
        self.epochs = int(epochs)
        if batch_size is not None and (isinstance(batch_size, bool) or int(batch_size) < 1):
            raise InputError(f"Trainer: batch_size must be None or an integer >= 1, got {batch_size!r}")
        self.batch_size = None if batch_size is None else int(batch_size)
        self.shuffle = bool(shuffle)
        self.seed = seed
        if grad_clip is not None and not float(grad_clip) > 0:
            raise InputError(f"Trainer: grad_clip must be None or > 0, got {grad_clip!r}")
        self.grad_clip = None if grad_clip is None else float(grad_clip)
        self.schedule_spec = schedule
        self.warmup_steps = int(warmup_steps or 0)
        if early_stopping_patience is not None and int(early_stopping_patience) < 1:
            raise InputError(f"Trainer: early_stopping_patience must be None or >= 1, "
                             f"got {early_stopping_patience!r}")
        self.patience = None if early_stopping_patience is None else int(early_stopping_patience)
        self.min_delta = float(min_delta)
        self.model = model
        self.progress = bool(progress)
        self.callbacks = list(callbacks)
        self.checkpoint_dir = None if checkpoint_dir is None else Path(checkpoint_dir)
        if isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, (int, np.integer)) \
                or checkpoint_every < 1:
            raise InputError(f"Trainer: checkpoint_every must be an integer >= 1 (epochs), got {checkpoint_every!r}")
        self.checkpoint_every = int(checkpoint_every)
        self.checkpoint_config = dict(checkpoint_config or {})
        self.resume_from = resume_from
        self.handle_signals = bool(handle_signals)
        if divergence_factor is not None:
            try:
                ok = float(divergence_factor) > 1 and math.isfinite(float(divergence_factor))
            except (TypeError, ValueError):
                ok = False
            if isinstance(divergence_factor, bool) or not ok:
                raise InputError(f"Trainer: divergence_factor must be None or a finite number > 1, "
                                 f"got {divergence_factor!r}")
        self.divergence_factor = None if divergence_factor is None else float(divergence_factor)
        self._ref_loss = None
        self.global_step = 0
        self.history = History()
        self.stop_training = False
        self._signal = None

    # --- data --------------------------------------------------------------------------------
    @staticmethod
    def _n_rows(data: tuple) -> int:
        n = None
        for a in data:
            if a is None:
                continue
            if n is None:
                n = len(a)
            elif len(a) != n:
                raise InputError(f"Trainer: all training arrays need the same number of rows, "
                                 f"got {[None if x is None else len(x) for x in data]}")
        if not n:
            raise InputError("Trainer: no training rows")
        return n

    @staticmethod
    def _take(data: tuple, idx) -> tuple:
        return tuple(None if a is None else a[idx] for a in data)

    # --- parameter snapshots -----------------------------------------------------------------
    def _snapshot(self, into=None):
        if into is None:
            return [p.data.copy() for p in self.params]
        for buf, p in zip(into, self.params):
            np.copyto(buf, p.data)
        return into

    def _restore(self, snap) -> None:
        for buf, p in zip(snap, self.params):
            np.copyto(p.data, buf)

    # --- one epoch ---------------------------------------------------------------------------
    def _grad_norm_sq(self) -> float:
        total = 0.0
        for p in self.params:
            g = p.grad.ravel()
            total += float(np.dot(g, g))
        return total

    def _update(self) -> None:
        """Clipping (with its finite check), schedule and optimizer step for the gradients just computed.

        Without clipping the gradients are not inspected: a non-finite gradient makes the next
        forward pass non-finite, which the loss check catches (and :meth:`fit` checks the
        parameters once more after the last update).
        """
        if self.grad_clip is not None:
            self._clip()
        if self._schedule is not None:
            self.optimizer.lr = float(self._schedule.lr_at(self.global_step))
        self.optimizer.step()
        self.global_step += 1

    def _clip(self) -> None:
        sq = self._grad_norm_sq()
        if not math.isfinite(sq):
            where = first_nonfinite_grad(self.named_params)
            if where is not None:
                raise Diverged(f"non-finite gradient ({where})", where)
            # Every gradient is finite but the sum of squares overflowed: rescale to get the norm.
            big = max(float(np.max(np.abs(p.grad), initial=0.0)) for p in self.params)
            sq = big * big * sum(float(np.sum((p.grad / big) ** 2)) for p in self.params)
        norm = math.sqrt(sq)
        if norm > self.grad_clip:
            scale = self.grad_clip / (norm + 1e-6)
            for p in self.params:
                p.grad *= scale

    def _run_epoch(self, data: tuple, n: int, rng) -> float:
        """One epoch from batch ``self._batch`` on; returns the mean batch loss of the whole epoch.

        Batches before ``self._batch`` were done before a checkpoint (resumed run): the epoch's
        permutation is still drawn (same generator state, same order) and those batches skipped.
        After every update the pending signal is checked (see :meth:`_stop_if_signalled`).
        """
        if self.model is not None:
            self.model.train()
        params = self.params
        if self.batch_size is None or (self.batch_size >= n and not self.shuffle):
            slices = [None]
            order = None
        else:
            order = rng.permutation(n) if self.shuffle else np.arange(n)
            slices = [slice(s, s + self.batch_size) for s in range(0, n, self.batch_size)]
        self._n_batches = len(slices)
        for b in range(self._batch, len(slices)):
            batch = data if slices[b] is None else self._take(data, order[slices[b]])
            for p in params:
                p.grad.fill(0.0)
            try:
                loss = float(self.step(batch))
            except (InputError, FloatingPointError) as exc:
                # Layers refuse non-finite inputs: a blown-up parameter shows up as such an error
                # in the layer after the one that overflowed.  Locate it; re-raise anything else.
                where = locate_nonfinite(self.model, lambda: self.step(batch))
                if where is None:
                    raise
                raise Diverged(f"non-finite values first produced by {where} ({exc})", where) from None
            if not math.isfinite(loss):
                # Inner layers do not scan their inputs (Module.check_inputs), so a blown-up
                # parameter usually shows up here first: re-run the batch watching every layer.
                where = locate_nonfinite(self.model, lambda: self.step(batch))
                if where is not None:
                    raise Diverged(f"non-finite loss {loss}: non-finite values first produced by {where}", where)
                where = find_nonfinite(self.model)
                raise Diverged(f"non-finite loss {loss}" + (f"; first non-finite tensor: {where}" if where
                                                             else ""), where or "loss")
            if self._ref_loss is None:
                self._ref_loss = loss          # the initial parameters' loss: the growth guard's reference
            self._update()
            self._batch_losses.append(loss)
            self._batch = b + 1
            if b + 1 < len(slices):
                self._stop_if_signalled()
        return float(np.mean(self._batch_losses))

    def _evaluate(self, data: tuple) -> float:
        if self.model is not None:
            self.model.eval()

        def run():
            if self.eval_step is not None:
                return self.eval_step(data)
            value = self.step(data)
            for p in self.params:
                p.grad.fill(0.0)
            return value

        try:
            loss = run()
        except (InputError, FloatingPointError) as exc:
            # The epoch's last update overflowed: the validation pass is the first to see it.
            where = locate_nonfinite(self.model, run)
            if where is None:
                raise
            raise Diverged(f"non-finite values first produced by {where} in the validation pass ({exc})",
                            where) from None
        finally:
            if self.model is not None:
                self.model.train()
        return float(loss)

    def _check_growth(self, epoch: int, loss: float, prev_good, prev_label: str) -> None:
        """The growth guard: raise DivergenceError if ``loss`` exceeds divergence_factor x the reference loss.

        ``prev_good`` holds the parameters at the start of the previous epoch (of training for epoch 0,
        or of the resumed part when the run was resumed), which are restored.
        """
        ref, factor = self._ref_loss, self.divergence_factor
        if factor is None or ref is None or not ref > 0 or not loss > factor * ref:
            return
        self._restore(prev_good)
        if self.model is not None:
            self.model.clear_cache()
        self.history.stop_reason = "diverged"
        raise DivergenceError(
            f"training diverged at epoch {epoch} (update step {self.global_step}): the mean training loss "
            f"{loss:.4g} exceeds {factor:g} x the initial loss {ref:.4g} (the loss grows without bound). "
            f"Parameters restored to their values at the start of {prev_label}; lower the learning rate (lr / --lr).",
            epoch=epoch, where="training loss")

    # --- the loop ----------------------------------------------------------------------------
    def fit(self, train: tuple, val: tuple | None = None) -> History:
        """Train on ``train`` (tuple of arrays with equal leading length; None entries pass through).

        With ``resume_from`` (or a :class:`ResumeFrom` callback) training continues from the
        checkpoint's epoch and batch and reaches bit-identically the parameters of an uninterrupted
        run.  While it runs (main thread only, ``handle_signals=True``), SIGINT and SIGTERM stop it
        after the current update: a checkpoint is saved (when a folder is configured) and
        :class:`TrainingInterrupted` is raised; the previous signal handlers are restored on return.

        Returns
        -------
        History
            Also kept as ``self.history``.

        Raises
        ------
        DivergenceError
            Non-finite loss or gradient; the parameters are those at the start of the failing epoch
            (or of the resumed part of it).
        TrainingInterrupted
            SIGINT/SIGTERM received (a ``KeyboardInterrupt``).
        ModelFileError
            ``resume_from`` cannot be read or belongs to another run.
        """
        train = tuple(train)
        n = self._n = self._n_rows(train)
        rng = self.rng = np.random.default_rng(self.seed)
        n_batches = 1 if self.batch_size is None else math.ceil(n / self.batch_size)
        self._schedule = make_schedule(self.schedule_spec, lr=self.lr, warmup_steps=self.warmup_steps,
                                       total_steps=self.epochs * n_batches)
        self.history = History()
        self.global_step = 0
        self.stop_training = False
        self._epoch, self._batch, self._batch_losses = 0, 0, []
        self._epoch_rng_state = rng.bit_generator.state
        self._best, self._best_snap, self._wait = math.inf, None, 0
        self._resumed = False
        self._ref_loss = None
        monitor_val = val is not None
        t0 = time.perf_counter()
        if self.resume_from is not None:
            self.load_checkpoint(self.resume_from)
        for cb in self.callbacks:
            if hasattr(cb, "on_train_begin"):
                cb.on_train_begin(self)
        hist = self.history
        seconds_before = hist.seconds if self._resumed else 0.0
        last_good = self._snapshot()
        prev_good = self._snapshot()           # start of the previous epoch: the growth guard's fallback
        # What those snapshots are, for the messages: the start of training, of an epoch, or of a resumed part.
        prev_label = last_label = ("training" if self._epoch == 0 and self._batch == 0 else
                                   f"epoch {self._epoch}" + (" (its resumed part)" if self._batch else ""))
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=self.epochs, initial=self._epoch, desc="training", unit="epoch", leave=False,
                       mininterval=0.5)
        last_post = 0.0
        try:
            with SignalGuard(self, self.handle_signals):
                while self._epoch < self.epochs and not self.stop_training:
                    epoch = self._epoch
                    if self._batch == 0:
                        self._epoch_rng_state = rng.bit_generator.state   # resume point of this epoch
                        self._batch_losses = []
                    if self._batch == 0 and epoch > 0:
                        prev_good, last_good, prev_label = last_good, prev_good, last_label
                        last_label = f"epoch {epoch}"
                    self._snapshot(last_good)          # the state to fall back to if this epoch diverges
                    try:
                        with np.errstate(over="ignore", invalid="ignore"):   # overflow is reported below
                            loss = self._run_epoch(train, n, rng)
                            val_loss = self._evaluate(val) if val is not None else float("nan")
                    except Diverged as exc:
                        self._restore(last_good)
                        if self.model is not None:
                            self.model.clear_cache()
                        hist.stop_reason = "diverged"
                        raise DivergenceError(
                            f"training diverged at epoch {epoch} (update step {self.global_step}): {exc.msg}. "
                            f"Parameters restored to their values at the start of epoch {epoch}; "
                            f"lower the learning rate (lr / --lr).",
                            epoch=epoch, where=exc.where) from None
                    self._check_growth(epoch, loss, prev_good, prev_label)
                    lr_now = float(getattr(self.optimizer, "lr", self.lr))
                    hist.epoch.append(epoch)
                    hist.train_loss.append(loss)
                    hist.val_loss.append(val_loss)
                    hist.lr.append(lr_now)
                    logs = {"loss": loss, "val_loss": val_loss, "lr": lr_now, "step": self.global_step}
                    if self.patience is not None:
                        watched = val_loss if monitor_val else loss
                        if watched < self._best - self.min_delta:
                            self._best, self._wait, hist.best_epoch = watched, 0, epoch
                            self._best_snap = self._snapshot(self._best_snap)
                        else:
                            self._wait += 1
                            if self._wait >= self.patience:
                                hist.stop_reason = "early_stopping"
                                self.stop_training = True
                    # The epoch is complete: the state a checkpoint written now resumes from.
                    self._epoch, self._batch, self._batch_losses = epoch + 1, 0, []
                    self._epoch_rng_state = rng.bit_generator.state
                    hist.seconds = seconds_before + time.perf_counter() - t0
                    folder = self.checkpoint_dir
                    if folder is not None and (epoch + 1) % self.checkpoint_every == 0:
                        self.save_checkpoint(folder, config=self.checkpoint_config)
                    for cb in self.callbacks:
                        stop = cb.on_epoch_end(self, epoch, logs) if hasattr(cb, "on_epoch_end") else \
                            (cb(epoch, logs) if callable(cb) else None)
                        if stop:
                            hist.stop_reason = "callback"
                            self.stop_training = True
                    if bar is not None:
                        bar.update(1)
                        now = time.perf_counter()
                        if now - last_post > 0.5:
                            last_post = now
                            post = {"loss": f"{loss:.4g}"}
                            if val is not None:
                                post["val"] = f"{val_loss:.4g}"
                            bar.set_postfix(post, refresh=False)
                    if self._epoch < self.epochs and not self.stop_training:
                        self._stop_if_signalled()
        except KeyboardInterrupt:
            hist.stop_reason = "interrupted"
            raise
        finally:
            if bar is not None:
                bar.close()
            hist.seconds = seconds_before + time.perf_counter() - t0
        bad = [name for name, p in self.named_params if not np.isfinite(p.data).all()]
        if bad:                             # the very last update overflowed: nothing checked it yet
            self._restore(last_good)
            hist.stop_reason = "diverged"
            raise DivergenceError(f"training diverged in the last update: parameter {bad[0]} is non-finite. "
                                  f"Parameters restored to their values at the start of the last epoch; "
                                  f"lower the learning rate (lr / --lr).",
                                  epoch=len(hist) - 1, where=f"{bad[0]}: data")
        if self._best_snap is not None:
            self._restore(self._best_snap)
        if self.model is not None:
            self.model.train()
        for cb in self.callbacks:
            if hasattr(cb, "on_train_end"):
                cb.on_train_end(self, hist)
        return hist
