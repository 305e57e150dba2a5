"""Each callback on its own, on a one-parameter problem whose every number can be worked out by hand.

The problem: a parameter ``p`` starting at 0 whose gradient is always -1, trained by SGD with
``lr=1``, so ``p`` is the number of updates done; the loss is whatever the test makes of ``p``.
"""

from __future__ import annotations

import math
import os
import signal

import numpy as np
import pytest

from glassformer import io
from glassformer.errors import DivergenceError, InputError
from glassformer.nn import Parameter
from glassformer.train import (Callback, DivergenceGuard, EarlyStopping, PrintLoss, ProgressBar, ResumeFrom,
                               SaveCheckpoint, StopOnSignal, Trainer, TrainingInterrupted, standard_callbacks)
from glassformer.train.callbacks import hook_table
from glassformer.train.optim import SGD


def counter(loss=lambda p: 1.0, val=None, **kw):
    """``(p, trainer)``: every update adds 1 to p; ``loss(p)`` is the batch loss, ``val(p)`` the validation loss."""
    p = Parameter(np.zeros(1))

    def step(batch):
        p.grad += -1.0
        return loss(p.data[0])

    eval_step = None if val is None else (lambda batch: val(p.data[0]))
    kw.setdefault("callbacks", [])
    return p, Trainer([p], step, SGD([p], lr=1.0), eval_step=eval_step, **kw)


class Recorder(Callback):
    """Writes down every hook call with what the trainer says at that moment."""

    def __init__(self, order=0):
        self.order, self.calls = order, []

    def on_train_begin(self, trainer):
        self.calls.append(("train_begin", trainer.epoch))

    def on_epoch_begin(self, trainer, epoch):
        self.calls.append(("epoch_begin", epoch))

    def on_before_update(self, trainer, batch, loss):
        self.calls.append(("before_update", trainer.global_step))

    def on_batch_end(self, trainer, loss):
        self.calls.append(("batch_end", trainer.batch))

    def on_epoch_losses(self, trainer, epoch, logs):
        self.calls.append(("epoch_losses", len(trainer.history)))

    def on_epoch_end(self, trainer, epoch, logs):
        self.calls.append(("epoch_end", len(trainer.history)))

    def on_train_end(self, trainer, history):
        self.calls.append(("train_end", len(history)))

    def teardown(self, trainer):
        self.calls.append(("teardown", trainer.epoch))


# ------------------------------------------------------------------ the hook points
def test_hooks_run_at_their_points_in_order():
    rec = Recorder()
    p, tr = counter(epochs=2, batch_size=1, shuffle=False, callbacks=[rec])
    tr.fit((np.zeros(2),))
    per_epoch = lambda e: [("epoch_begin", e), ("before_update", 2 * e), ("batch_end", 1),   # noqa: E731
                           ("before_update", 2 * e + 1), ("batch_end", 2),
                           ("epoch_losses", e), ("epoch_end", e + 1)]                        # recorded in between
    assert rec.calls == [("train_begin", 0), *per_epoch(0), *per_epoch(1), ("train_end", 2), ("teardown", 2)]
    assert p.data[0] == 4.0


def test_hook_table_keeps_only_defined_hooks_sorted_by_order():
    class Late(Callback):
        order = 7

        def on_epoch_end(self, trainer, epoch, logs):
            return None

    late, early, plain = Late(), Recorder(order=-3), Recorder()
    table = hook_table([late, plain, early])
    assert [fn.__self__ for fn in table["on_epoch_end"]] == [early, plain, late]
    assert [fn.__self__ for fn in table["on_batch_end"]] == [early, plain]      # Late has no batch hook
    assert table["on_step_error"] == []                                          # nobody defines it


def test_a_stop_on_signal_placed_first_still_acts_last():
    # the ProgressBar (order 50) must have counted the epoch before StopOnSignal (100) raises
    bar, stop = ProgressBar(), StopOnSignal()
    table = hook_table([stop, bar])
    assert [fn.__self__ for fn in table["on_epoch_end"]] == [bar, stop]


# ------------------------------------------------------------------ PrintLoss
def test_print_loss_offsets():
    lines = []
    _, tr = counter(loss=lambda p: p, epochs=6, callbacks=[PrintLoss(3, "{epoch1}/{epochs} {loss:g}", offset=1,
                                                                       echo=lines.append)])
    tr.fit((np.zeros(1),))
    assert lines == ["3/6 2", "6/6 5"]          # full batch: epoch e's loss is p = e before its update


# ------------------------------------------------------------------ EarlyStopping
def test_early_stopping_restores_the_best_epochs_parameters():
    # after epoch e, p = e + 1; validation (p - 2)^2: 1, 0, 1, 4 -> best epoch 1 (p = 2), patience 2 ends at epoch 3
    es = EarlyStopping(2)
    p, tr = counter(val=lambda p: (p - 2.0) ** 2, epochs=20, callbacks=[es])
    hist = tr.fit((np.zeros(1),), (np.zeros(1),))
    assert hist.val_loss == [1.0, 0.0, 1.0, 4.0]
    assert (hist.best_epoch, hist.stop_reason, len(hist)) == (1, "early_stopping", 4)
    assert p.data[0] == 2.0 and (es.best, es.wait) == (0.0, 2)


def test_early_stopping_min_delta_and_training_loss_without_validation():
    # no validation data: the training loss 10 - 0.5 p is watched: 10, 9.5, 9, 8.5; none is below the best (10)
    # by more than min_delta 2, so epoch 0 stays the best and patience 3 stops after epoch 3
    p, tr = counter(loss=lambda p: 10.0 - 0.5 * p, epochs=20, callbacks=[EarlyStopping(3, min_delta=2.0)])
    hist = tr.fit((np.zeros(1),))
    assert hist.train_loss == [10.0, 9.5, 9.0, 8.5] and hist.best_epoch == 0
    assert p.data[0] == 1.0                      # the parameters after epoch 0
    with pytest.raises(InputError, match="patience"):
        EarlyStopping(0)


# ------------------------------------------------------------------ DivergenceGuard
def test_guard_nonfinite_loss_keeps_the_start_of_the_epoch():
    # 3 updates per epoch; the loss is NaN once p >= 4: epoch 1's second batch (update step 4)
    p, tr = counter(loss=lambda p: math.nan if p >= 4 else 1.0, epochs=5, batch_size=1, shuffle=False,
                    callbacks=[DivergenceGuard()])
    with pytest.raises(DivergenceError) as info:
        tr.fit((np.zeros(3),))
    assert str(info.value) == ("training diverged at epoch 1 (update step 4): non-finite loss nan. Parameters "
                               "restored to their values at the start of epoch 1; lower the learning rate (lr / --lr).")
    assert (info.value.epoch, info.value.where) == (1, "loss")
    assert p.data[0] == 3.0 and tr.history.stop_reason == "diverged" and len(tr.history) == 1


def test_guard_nonfinite_gradient_met_while_clipping():
    p = Parameter(np.zeros(2))

    def step(batch):
        p.grad += [-1.0, -np.inf if p.data[0] >= 2 else -1.0]
        return 1.0

    tr = Trainer([("w", p)], step, SGD([p], lr=1.0), epochs=3, grad_clip=10.0, callbacks=[DivergenceGuard()])
    with pytest.raises(DivergenceError, match=r"epoch 2 \(update step 2\): non-finite gradient \(w: grad\)\. "
                                              r".*start of epoch 2;") as info:
        tr.fit((np.zeros(1),))
    assert info.value.where == "w: grad"
    np.testing.assert_array_equal(p.data, [2.0, 2.0])


def test_guard_passes_other_step_errors_through_and_unguarded_runs_go_on():
    def failing(batch):
        raise FloatingPointError("not about parameters")

    q = Parameter(np.zeros(1))
    with pytest.raises(FloatingPointError, match="not about parameters") as info:
        Trainer([q], failing, SGD([q], lr=1.0), epochs=1, callbacks=[DivergenceGuard()]).fit((np.zeros(1),))
    assert not isinstance(info.value, DivergenceError)      # no model to search: the error stands as raised
    p, tr = counter(loss=lambda p: math.nan, epochs=2)      # no guard: nothing stops the run
    assert np.isnan(tr.fit((np.zeros(1),)).train_loss).all() and p.data[0] == 2.0


def test_guard_catches_an_overflow_in_the_last_update():
    p = Parameter(np.zeros(1))

    def step(batch):
        p.grad += -1e308
        return 1.0

    tr = Trainer([p], step, SGD([p], lr=10.0), epochs=1, callbacks=[DivergenceGuard()])
    with pytest.raises(DivergenceError, match=r"in the last update: parameter param\[0\] is non-finite") as info:
        with np.errstate(over="ignore"):
            tr.fit((np.zeros(1),))
    assert (info.value.epoch, info.value.where) == (0, "param[0]: data") and p.data[0] == 0.0


def test_growth_guard_restore_point_is_the_previous_epochs_start():
    # full batch: epoch e's loss is 10 ** p with p = e; the reference is epoch 0's first batch (1);
    # factor 50: 1, 10 pass, 100 does not -> epoch 2 fails, the start of epoch 1 (p = 1) is restored
    guard = DivergenceGuard(50.0)
    p, tr = counter(loss=lambda p: 10.0 ** p, epochs=10, callbacks=[guard])
    with pytest.raises(DivergenceError, match=r"epoch 2 .*loss 100 exceeds 50 x the initial loss 1 .*"
                                              r"start of epoch 1;"):
        tr.fit((np.zeros(1),))
    assert p.data[0] == 1.0 and guard.reference == 1.0 and tr.history.train_loss == [1.0, 10.0]
    for bad in (1.0, float("nan"), "x", False):
        with pytest.raises(InputError, match="divergence_factor"):
            DivergenceGuard(bad)


def test_growth_guard_after_a_mid_epoch_resume_restores_the_resume_point(tmp_path):
    # 2 updates per epoch, batch losses 10 ** p: 1, 10 | 100, (stop after update 3, resume) 1000 -> epoch 1's
    # mean 550 > 20 x 1 fails before a full epoch of the resumed run passed -> back to the resume point p = 3
    class StopAfter(Callback):
        def on_batch_end(self, trainer, loss):
            if trainer.global_step == 3:
                SaveCheckpoint(tmp_path / "ck").save(trainer)
                raise KeyboardInterrupt

    kw = dict(loss=lambda p: 10.0 ** p, epochs=6, batch_size=1, shuffle=False)
    _, tr = counter(callbacks=[DivergenceGuard(1e6), StopAfter()], **kw)
    with pytest.raises(KeyboardInterrupt):
        tr.fit((np.zeros(2),))
    p, tr2 = counter(callbacks=[DivergenceGuard(20.0), ResumeFrom(tmp_path / "ck")], **kw)
    with pytest.raises(DivergenceError, match=r"epoch 1 .*loss 550 exceeds 20 x the initial loss 1 .*"
                                              r"start of epoch 1 \(its resumed part\);"):
        tr2.fit((np.zeros(2),))
    assert p.data[0] == 3.0


# ------------------------------------------------------------------ SaveCheckpoint and ResumeFrom
def test_resume_from_runs_first_and_continues_bit_identically(tmp_path):
    kw = dict(loss=lambda p: 1.0 / (1.0 + p), epochs=4, batch_size=2, seed=7)
    ref_p, ref = counter(**kw)
    ref.fit((np.arange(5),))
    _, first = counter(callbacks=[SaveCheckpoint(tmp_path / "ck", every=3)], **kw)
    first.fit((np.arange(5),))                    # the checkpoint holds the state after epoch 2 (3 epochs done)
    rec = Recorder()
    p, resumed = counter(callbacks=[rec, ResumeFrom(tmp_path / "ck")], **kw)
    hist = resumed.fit((np.arange(5),))
    assert rec.calls[0] == ("train_begin", 3)      # ResumeFrom (order -100) ran before the recorder (0)
    assert p.data[0] == ref_p.data[0] == 12.0 and hist.train_loss == ref.history.train_loss
    assert io.load_checkpoint(tmp_path / "ck").trainer_state["next_epoch"] == 3
    with pytest.raises(InputError, match="every must be an integer >= 1"):
        SaveCheckpoint(tmp_path, every=0)


# ------------------------------------------------------------------ StopOnSignal
def test_stop_on_signal_after_the_update_without_a_checkpoint_folder():
    # 4 updates per epoch; SIGTERM arrives during update 6: the stop comes right after it (epoch 1, batch 2)
    p = Parameter(np.zeros(1))
    before = signal.getsignal(signal.SIGTERM)

    def step(batch):
        p.grad += -1.0
        if p.data[0] == 5.0:
            os.kill(os.getpid(), signal.SIGTERM)
        return 1.0

    tr = Trainer([p], step, SGD([p], lr=1.0), epochs=3, batch_size=1, callbacks=[StopOnSignal()])
    with pytest.raises(TrainingInterrupted) as info:
        tr.fit((np.zeros(4),))
    exc = info.value
    assert (exc.epoch, exc.batch, exc.checkpoint, exc.exit_status) == (1, 2, None, 143)
    assert str(exc) == ("training interrupted by SIGTERM after epoch 1 of 3 (+2 of 4 updates of the next); "
                        "no checkpoint folder configured")
    assert p.data[0] == 6.0 and tr.history.stop_reason == "interrupted"
    assert signal.getsignal(signal.SIGTERM) is before


def test_stop_on_signal_in_an_epochs_last_update_lets_the_epoch_finish():
    # SIGINT during update 8, the last of epoch 1: the epoch is scored and recorded, then training stops
    p = Parameter(np.zeros(1))

    def step(batch):
        p.grad += -1.0
        if p.data[0] == 7.0:
            os.kill(os.getpid(), signal.SIGINT)
        return 1.0

    tr = Trainer([p], step, SGD([p], lr=1.0), epochs=3, batch_size=1, callbacks=[StopOnSignal()])
    with pytest.raises(TrainingInterrupted, match=r"by SIGINT after epoch 2 of 3; no checkpoint") as info:
        tr.fit((np.zeros(4),))
    assert (info.value.epoch, info.value.batch) == (2, 0) and len(tr.history) == 2 and p.data[0] == 8.0


# ------------------------------------------------------------------ ProgressBar
def test_progress_bar_counts_epochs_and_is_closed_even_when_fit_raises(capsys):
    bar = ProgressBar()
    seen = []

    class Look(Callback):
        order = 60

        def on_epoch_end(self, trainer, epoch, logs):
            seen.append((bar.bar.n, bar.bar.total))

    counter(epochs=3, callbacks=[bar, Look()])[1].fit((np.zeros(1),))
    assert seen == [(1, 3), (2, 3), (3, 3)] and bar.bar is None
    assert "training" in capsys.readouterr().err


def test_progress_bar_shows_the_losses_of_the_epoch_it_counts(capsys):
    bar = ProgressBar(min_interval=-1.0)                    # post every epoch
    shown = []
    real_update = None

    def watch(n=1):
        shown.append((bar.bar.n + n, bar.bar.postfix))
        return real_update(n)

    class Hook(Callback):
        order = 40                                            # before the bar: wrap its update once it exists

        def on_epoch_begin(self, trainer, epoch):
            nonlocal real_update
            if real_update is None:
                real_update = bar.bar.update
                bar.bar.update = watch

    losses = iter([3.0, 2.0, 1.0])
    counter(loss=lambda p: next(losses), epochs=3, callbacks=[bar, Hook()])[1].fit((np.zeros(1),))
    assert [n for n, _ in shown] == [1, 2, 3]
    assert all(post is not None and f"loss={3 - i:.4g}" in post for i, (_, post) in enumerate(shown)), shown
    _, tr = counter(loss=lambda p: math.nan, epochs=3, callbacks=[bar, DivergenceGuard()])
    with pytest.raises(DivergenceError):
        tr.fit((np.zeros(1),))
    assert bar.bar is None


# ------------------------------------------------------------------ standard_callbacks
def test_standard_callbacks_follow_the_settings(tmp_path):
    kinds = lambda cbs: [type(cb).__name__ for cb in cbs]   # noqa: E731
    assert kinds(standard_callbacks()) == ["DivergenceGuard", "StopOnSignal"]
    full = standard_callbacks(early_stopping_patience=3, divergence_factor=None, progress=True,
                              checkpoint_dir=tmp_path, checkpoint_every=2, checkpoint_config={"a": 1},
                              resume_from=tmp_path, handle_signals=False)
    assert kinds(full) == ["ResumeFrom", "DivergenceGuard", "EarlyStopping", "SaveCheckpoint", "ProgressBar"]
    assert full[1].divergence_factor is None and full[2].patience == 3
    assert (full[3].every, full[3].config) == (2, {"a": 1})
    _, tr = counter(epochs=1, callbacks=None)        # the Trainer's default list
    assert kinds(tr.callbacks) == ["DivergenceGuard", "StopOnSignal"]
