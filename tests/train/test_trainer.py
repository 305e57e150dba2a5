"""The training loop: batching and shuffling order, optimizers, clipping, schedules, and the standard
callbacks working together through it (early stopping, the divergence guard, checkpoints, user callbacks)."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import DivergenceError, InputError
from glassformer.models import SequenceRegressor
from glassformer.nn import Linear, Parameter
from glassformer.train import (History, PrintLoss, SaveCheckpoint, Trainer, find_nonfinite, locate_nonfinite,
                               make_optimizer, make_schedule, standard_callbacks)
from glassformer.train.losses import MSELoss
from glassformer.train.optim import SGD


def linear_problem(n=20, w=2.0, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 1))
    return x, w * x


def make_trainer(model, *, optimizer="sgd", lr=0.01, momentum=0.0, weight_decay=0.0, schedule=None,
                 warmup_steps=0, total_steps=1, early_stopping_patience=None, callbacks=(), **kw):
    """A Trainer for ``model`` on (x, y) batches, set up as the estimators set theirs up."""
    loss = MSELoss()

    def step(batch):
        x, y = batch
        out = model.forward(x)
        value = loss.forward(out, y)
        model.backward(loss.backward())
        return value

    def eval_step(batch):
        x, y = batch
        with model.no_cache():
            return float(np.mean((model.forward(x) - y) ** 2))

    opt = make_optimizer(optimizer, model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    sched = make_schedule(schedule, lr=lr, warmup_steps=warmup_steps, total_steps=total_steps)
    cbs = standard_callbacks(early_stopping_patience=early_stopping_patience) + list(callbacks)
    return Trainer(list(model.named_parameters()), step, opt, schedule=sched, eval_step=eval_step, model=model,
                   callbacks=cbs, **kw)


def test_minibatch_order_is_the_seeds_permutation():
    seen = []

    def step(batch):
        (idx,) = batch
        seen.append(idx.copy())
        p.grad += 0.0
        return 1.0

    p = Parameter(np.zeros(1))
    Trainer([p], step, SGD([p], lr=0.01), epochs=3, batch_size=32, seed=42).fit((np.arange(100),))
    rng = np.random.default_rng(42)
    want = []
    for _ in range(3):
        order = rng.permutation(100)
        want += [order[s:s + 32] for s in range(0, 100, 32)]
    assert len(seen) == len(want) == 12
    for a, b in zip(seen, want):
        np.testing.assert_array_equal(a, b)


def test_batches_gathered_per_epoch_or_per_batch_are_the_same_rows(monkeypatch):
    """Small data is gathered in the epoch's order once and sliced; data above GATHER_BYTES is gathered
    batch by batch: the batches (rows, order, None entries) and the trained parameters are the same."""
    import glassformer.train.trainer as trainer_module

    x = np.arange(50.0)[:, None] * np.ones((1, 3))
    y = np.arange(50.0)[:, None]

    def run():
        seen = []
        lin = Linear(3, 1, rng=0)

        def step(batch):
            xb, yb, none = batch
            seen.append((xb.copy(), yb.copy(), none))
            loss = MSELoss()
            value = loss.forward(lin(xb), yb)
            lin.backward(loss.backward())
            return value
        Trainer(list(lin.named_parameters()), step, SGD(lin.parameters(), lr=1e-4), epochs=2, batch_size=16,
                seed=3).fit((x, y, None))
        return seen, lin.weight.data.copy()

    gathered, w_gathered = run()
    monkeypatch.setattr(trainer_module, "GATHER_BYTES", 0)
    per_batch, w_per_batch = run()
    assert len(gathered) == len(per_batch) == 8
    for (xa, ya, na), (xb, yb, nb) in zip(gathered, per_batch):
        np.testing.assert_array_equal(xa, xb)
        np.testing.assert_array_equal(ya, yb)
        assert na is None and nb is None
    np.testing.assert_array_equal(w_gathered, w_per_batch)
    order = np.random.default_rng(3).permutation(50)
    np.testing.assert_array_equal(gathered[0][1][:, 0], order[:16])        # the seed's first batch


def test_full_batch_sgd_is_plain_gradient_descent():
    x, y = linear_problem()
    m = Linear(1, 1, rng=0)
    w0, b0 = m.weight.data.copy(), m.bias.data.copy()
    hist = make_trainer(m, epochs=1, lr=0.1).fit((x, y))
    r = (x @ w0.T + b0) - y
    gw = 2 * (r * x).mean()
    np.testing.assert_allclose(m.weight.data, w0 - 0.1 * gw, rtol=1e-12)
    assert hist.train_loss[0] == pytest.approx(float(np.mean(r ** 2)))


@pytest.mark.parametrize("opt", ["sgd", "adam", "adamw"])
def test_optimizers_fit_a_line(opt):
    x, y = linear_problem()
    m = Linear(1, 1, rng=0)
    lr = {"sgd": 0.1, "adam": 0.05, "adamw": 0.05}[opt]
    hist = make_trainer(m, optimizer=opt, lr=lr, epochs=300, batch_size=8, momentum=0.5 if opt == "sgd" else 0.0,
                        weight_decay=0.0).fit((x, y))
    assert hist.train_loss[-1] < 1e-3 * hist.train_loss[0]
    assert m.weight.data[0, 0] == pytest.approx(2.0, abs=0.02)


def test_gradient_clipping_limits_the_step():
    x, y = linear_problem(w=100.0)
    m = Linear(1, 1, rng=0)
    before = np.concatenate([m.weight.data.ravel(), m.bias.data])
    make_trainer(m, epochs=1, lr=1.0, grad_clip=0.5).fit((x, y))
    after = np.concatenate([m.weight.data.ravel(), m.bias.data])
    assert np.linalg.norm(after - before) == pytest.approx(0.5, rel=1e-5)


def test_warmup_schedule_sets_the_learning_rate():
    x, y = linear_problem(n=8)
    m = Linear(1, 1, rng=0)
    hist = make_trainer(m, epochs=6, lr=0.1, warmup_steps=4, total_steps=6).fit((x, y))
    np.testing.assert_allclose(hist.lr, [0.025, 0.05, 0.075, 0.1, 0.1, 0.1])
    m2 = Linear(1, 1, rng=0)
    hist2 = make_trainer(m2, epochs=10, lr=0.1, warmup_steps=2, schedule="cosine", total_steps=10).fit((x, y))
    assert hist2.lr[1] == pytest.approx(0.1) and hist2.lr[-1] == pytest.approx(0.0, abs=1e-12)


def test_early_stopping_restores_the_best_weights():
    x, y = linear_problem(w=2.0)
    m = Linear(1, 1, rng=0)
    m.weight.data[...] = 0.0
    m.bias.data[...] = 0.0
    snaps = []
    cb = lambda epoch, logs: snaps.append((m.weight.data.copy(), m.bias.data.copy()))  # noqa: E731
    # Validation wants the opposite slope: it gets worse every epoch, so epoch 0 is best.
    hist = make_trainer(m, epochs=50, lr=0.05, early_stopping_patience=3, callbacks=[cb]).fit((x, y), (x, -y))
    assert hist.stop_reason == "early_stopping"
    assert hist.best_epoch == 0 and len(hist) == 4
    assert np.all(np.diff(hist.val_loss) > 0)
    np.testing.assert_array_equal(m.weight.data, snaps[0][0])
    np.testing.assert_array_equal(m.bias.data, snaps[0][1])


def test_regressor_early_stopping_with_validation_data():
    rng = np.random.default_rng(0)
    X = rng.random((40, 7, 1))
    y = rng.random((40, 7, 1))          # pure noise: validation cannot keep improving
    m = SequenceRegressor.chapter_model(epochs=200, optimizer="adam", lr=0.05, batch_size=8,
                                        early_stopping_patience=5, validation_fraction=0.25)
    m.fit(X, y)
    h = m.history_
    assert h.stop_reason == "early_stopping"
    assert h.best_epoch == int(np.argmin(h.val_loss))
    assert len(h) == h.best_epoch + 6


# These two are about the non-finite path; the runaway-loss guard (divergence_factor) would stop
# them earlier (epoch 1, loss 1e10 > 1e4 x 0.23), so it is switched off: see test_growth_guard_*.
def test_divergence_guard_names_the_layer_and_keeps_good_parameters():
    rng = np.random.default_rng(0)
    X, y = rng.random((16, 7, 1)), rng.random((16, 7, 1))
    m = SequenceRegressor.chapter_model(lr=1e3, epochs=50, divergence_factor=None)
    seen = []
    cb = lambda epoch, logs: seen.append({k: v.copy() for k, v in m.network_.state_dict().items()})  # noqa: E731
    with pytest.raises(DivergenceError) as info:
        m.fit(X, y, callbacks=[cb])
    err = info.value
    assert err.where and ("encoder.layers.0" in err.where or "head" in err.where)
    assert err.where in str(err) and f"epoch {err.epoch}" in str(err)
    assert err.epoch == len(seen)
    for k, v in m.network_.state_dict().items():          # parameters of the last completed epoch
        assert np.isfinite(v).all()
        np.testing.assert_array_equal(v, seen[-1][k])
    assert m.history_.stop_reason == "diverged"


def test_huge_learning_rate_reports_nonfinite_loss_location():
    rng = np.random.default_rng(0)
    X, y = rng.random((16, 7, 1)), rng.random((16, 7, 1))
    m = SequenceRegressor.chapter_model(lr=1e6, epochs=50, divergence_factor=None)
    with pytest.raises(DivergenceError, match=r"\(Linear\): output|: grad"):
        m.fit(X, y)
    assert all(np.isfinite(p.data).all() for p in m.network_.parameters())


def test_locate_and_find_nonfinite():
    m = SequenceRegressor.chapter_model().build_network(1)
    X = np.random.default_rng(0).random((2, 7, 1))
    m.encoder.layers[0].linear2.weight.data[0, 0] = np.inf
    where = locate_nonfinite(m, lambda: m.forward(X))
    assert where == "encoder.layers.0.linear2 (Linear): output"
    assert "forward" not in m.encoder.layers[0].linear2.__dict__     # wrappers removed
    m2 = SequenceRegressor.chapter_model().build_network(1)
    m2.forward(X)
    assert find_nonfinite(m2) is None
    m2.encoder.layers[0].norm2._cache["xhat"][0, 0, 0] = np.nan
    assert find_nonfinite(m2) == "encoder.layers.0.norm2: xhat"


def test_callbacks_print_and_stop(capsys):
    x, y = linear_problem()
    m = Linear(1, 1, rng=0)
    lines = []
    stopper = type("Stop", (), {"on_epoch_end": lambda self, tr, epoch, logs: epoch == 4})()
    hist = make_trainer(m, epochs=20, lr=0.01,
                        callbacks=[PrintLoss(2, "E{epoch} {loss:.3f}", echo=lines.append), stopper]).fit((x, y))
    assert len(hist) == 5 and hist.stop_reason == "callback"
    assert lines == [f"E{e} {hist.train_loss[e]:.3f}" for e in (0, 2, 4)]


def test_history_round_trip_and_bad_arguments():
    h = History(epoch=[0, 1], train_loss=[1.0, 0.5], val_loss=[float("nan"), 0.4], lr=[0.1, 0.1])
    d = h.to_dict()
    assert d["val_loss"][0] is None
    back = History.from_dict(d)
    assert back.train_loss == h.train_loss and np.isnan(back.val_loss[0])
    p = Parameter(np.zeros(1))
    with pytest.raises(InputError):
        make_optimizer("rmsprop", [p], lr=0.01)
    with pytest.raises(InputError, match="optimizer must be a glassformer optimizer"):
        Trainer([p], lambda b: 0.0, "sgd")
    with pytest.raises(InputError, match="schedule must be None or an object with lr_at"):
        Trainer([p], lambda b: 0.0, SGD([p], lr=0.01), schedule="cosine")
    with pytest.raises(InputError):
        Trainer([p], lambda b: 0.0, SGD([p], lr=0.01), batch_size=0)
    with pytest.raises(InputError, match="same number of rows"):
        Trainer([p], lambda b: 0.0, SGD([p], lr=0.01), epochs=1).fit((np.zeros(3), np.zeros(4)))
    with pytest.raises(InputError, match=r"callbacks\[0\] must have a hook method"):
        Trainer([p], lambda b: 0.0, SGD([p], lr=0.01), callbacks=[42])


def test_checkpoint_callback_writes_resumable_state(tmp_path):
    from glassformer import io

    x, y = linear_problem()
    m = Linear(1, 1, rng=0)
    tr = make_trainer(m, epochs=5, lr=0.1, batch_size=5, callbacks=[SaveCheckpoint(tmp_path / "ck", every=2)])
    tr.fit((x, y))
    ck = io.load_checkpoint(tmp_path / "ck")
    assert ck.trainer_state["epoch"] == 3 and ck.trainer_state["global_step"] == 16
    assert len(ck.trainer_state["history"]["train_loss"]) == 4
    assert set(ck.model_state) == {"weight", "bias"}


# ------------------------------------------------------------------ growth guard (finite runaway losses)
def _runaway(lr=1.0, **kw):
    """A loss 10**p whose gradient always pushes p up: epoch e (full batch) sees p = e * lr, loss 10**(e*lr)."""
    p = Parameter(np.zeros(1))

    def step(batch):
        p.grad += -1.0
        return float(10.0 ** p.data[0])

    std = {k: kw.pop(k) for k in ("divergence_factor", "checkpoint_dir", "resume_from") if k in kw}
    callbacks = standard_callbacks(**std) + list(kw.pop("callbacks", ()))
    return p, Trainer([p], step, SGD([p], lr=lr), callbacks=callbacks, **kw)


def test_growth_guard_stops_a_finite_runaway_and_keeps_the_previous_epochs_start():
    p, tr = _runaway(epochs=10, divergence_factor=100.0)
    with pytest.raises(DivergenceError) as info:
        tr.fit((np.zeros(4),))
    err = info.value
    # losses 1, 10, 100 pass (<= 100 x 1); epoch 3's 1000 does not
    assert err.epoch == 3 and err.where == "training loss"
    msg = str(err)
    assert "epoch 3" in msg and "1000" in msg and "100 x the initial loss 1" in msg
    assert "start of epoch 2" in msg and "lower the learning rate (lr / --lr)" in msg
    assert p.data[0] == 2.0                      # the start of epoch 2 (loss 100), not of epoch 3 (loss 1000)
    assert tr.history.train_loss == [1.0, 10.0, 100.0] and tr.history.stop_reason == "diverged"


def test_growth_guard_in_the_first_epoch_keeps_the_initial_parameters():
    # two batches per epoch: losses 1 then 1e9 -> mean 5e8 > 1e4 x 1 (default factor)
    p, tr = _runaway(lr=9.0, epochs=3, batch_size=1, shuffle=False)
    with pytest.raises(DivergenceError, match=r"epoch 0 .*5e\+08 exceeds 10000 x the initial loss 1 .*"
                                              r"start of training"):
        tr.fit((np.zeros(2),))
    assert p.data[0] == 0.0


def test_growth_guard_off_and_bad_factor():
    p, tr = _runaway(epochs=5, divergence_factor=None)
    hist = tr.fit((np.zeros(4),))
    assert hist.train_loss == [1.0, 10.0, 100.0, 1000.0, 10000.0] and p.data[0] == 5.0
    for bad in (1.0, 0.5, float("inf"), "big", True):
        with pytest.raises(InputError, match="divergence_factor"):
            _runaway(divergence_factor=bad)


def test_huge_learning_rate_with_clipping_stays_finite_but_is_stopped():
    """Adam at lr 1e6 with clipping (what `glassformer train --lr 1e6` runs): losses ~1e24, never inf."""
    rng = np.random.default_rng(0)
    X, y = rng.random((64, 7, 1)), rng.random((64, 7, 1))
    kw = dict(optimizer="adam", lr=1e6, grad_clip=1.0, batch_size=16, epochs=10, random_state=0)
    m = SequenceRegressor.chapter_model(**kw)
    starts = []

    class Watch:
        def on_train_begin(self, trainer):
            starts.append({k: v.copy() for k, v in m.network_.state_dict().items()})

        def on_epoch_end(self, trainer, epoch, logs):
            starts.append({k: v.copy() for k, v in m.network_.state_dict().items()})   # = start of epoch + 1

    with pytest.raises(DivergenceError) as info:
        m.fit(X, y, callbacks=[Watch()])
    err = info.value
    assert err.where == "training loss" and np.isfinite(m.history_.train_loss).all()
    e = err.epoch
    assert e == len(m.history_) and m.history_.stop_reason == "diverged"
    assert e == 0 and "start of training" in str(err)    # the first epoch's later batches already run away
    expect = starts[max(e - 1, 0)]                 # start of the previous epoch (of training if e == 0)
    for k, v in m.network_.state_dict().items():
        np.testing.assert_array_equal(v, expect[k], err_msg=k)


def test_growth_guard_reference_survives_a_resume(tmp_path):
    # two updates per epoch at lr 0.5: batch losses 1, 3.16 | 10, 31.6 | 100, 316 | ... reference = 1 (first batch)
    stop_after_1 = lambda epoch, logs: epoch == 1   # noqa: E731
    p, tr = _runaway(lr=0.5, epochs=6, batch_size=1, shuffle=False, divergence_factor=150.0,
                     checkpoint_dir=tmp_path / "ck", callbacks=[stop_after_1])
    tr.fit((np.zeros(2),))
    assert p.data[0] == 2.0
    p2, tr2 = _runaway(lr=0.5, epochs=6, batch_size=1, shuffle=False, divergence_factor=150.0,
                       resume_from=tmp_path / "ck")
    with pytest.raises(DivergenceError, match=r"epoch 2 .*loss 208.1 exceeds 150 x the initial loss 1 "
                                              r".*start of epoch 2; "):
        tr2.fit((np.zeros(2),))      # epoch 2's mean 208 > 150 x 1; it would pass 150 x 2.08 (the first epoch's mean)
    assert p2.data[0] == 2.0


def test_the_loop_is_a_generator_whose_requests_fit_answers():
    x, y = linear_problem()
    histories = []
    for by_hand in (False, True):
        m = Linear(1, 1, rng=0)
        trainer = make_trainer(m, epochs=3, batch_size=8)
        if not by_hand:
            histories.append(trainer.fit((x, y), (x[:5], y[:5])))
            continue
        run, kinds = trainer.run((x, y), (x[:5], y[:5])), []
        request = next(run)
        while True:                                       # what fit does: answer every request
            kinds.append(request[0])
            try:
                request = run.send(trainer.answer(*request))
            except StopIteration as done:
                histories.append(done.value)
                break
        assert kinds == (["step"] * 3 + ["eval"]) * 3     # 20 rows in batches of 8, then validation
    assert histories[0].train_loss == histories[1].train_loss and histories[0].val_loss == histories[1].val_loss
