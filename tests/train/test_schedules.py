"""Learning-rate schedules: hand-computed values, the Scheduler driving an optimizer, make_schedule."""

import math

import numpy as np
import pytest

from glassformer.errors import InputError
from glassformer.nn import Parameter
from glassformer.train.optim import SGD
from glassformer.train.schedules import (ConstantLR, Noam, Scheduler, WarmupCosine, WarmupLinear,
                                         make_schedule)


def test_noam_by_hand():
    s = Noam(d_model=512, warmup_steps=4000)
    assert s.lr_at(1) == pytest.approx(512 ** -0.5 * 4000 ** -1.5, rel=1e-15)
    assert s.lr_at(4000) == pytest.approx(512 ** -0.5 * 4000 ** -0.5, rel=1e-15)  # the peak
    assert s.lr_at(8000) == pytest.approx(512 ** -0.5 * 8000 ** -0.5, rel=1e-15)
    assert s.lr_at(4000) == pytest.approx(6.987712429686844e-4, rel=1e-12)
    assert Noam(4, 10, factor=2.0).lr_at(5) == pytest.approx(2 * 0.5 * 5 * 10 ** -1.5, rel=1e-15)
    with pytest.raises(InputError, match="step"):
        s.lr_at(0)
    with pytest.raises(InputError, match="warmup_steps"):
        Noam(512, 0)


def test_warmup_cosine_and_linear_by_hand():
    c = WarmupCosine(base_lr=1.0, warmup_steps=4, total_steps=12, min_lr=0.1)
    assert [c.lr_at(s) for s in (1, 2, 4)] == [0.25, 0.5, 1.0]
    assert c.lr_at(8) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi / 2)))  # halfway: 0.55
    assert c.lr_at(8) == pytest.approx(0.55)
    assert c.lr_at(12) == pytest.approx(0.1) and c.lr_at(50) == pytest.approx(0.1)
    lin = WarmupLinear(base_lr=2.0, warmup_steps=2, total_steps=6)
    assert [lin.lr_at(s) for s in (1, 2, 3, 4, 6, 9)] == pytest.approx([1.0, 2.0, 1.5, 1.0, 0.0, 0.0])
    assert WarmupCosine(1.0, 0, 2).lr_at(1) == pytest.approx(0.5)
    assert ConstantLR(0.3).lr_at(99) == 0.3
    with pytest.raises(InputError, match="warmup_steps"):
        WarmupCosine(1.0, 10, 5)
    with pytest.raises(InputError, match="min_lr"):
        WarmupLinear(1.0, 1, 5, min_lr=2.0)
    with pytest.raises(InputError, match="base_lr"):
        WarmupCosine(0.0, 1, 5)


def test_scheduler_drives_optimizer_lr_and_resumes():
    p = Parameter([0.0])
    opt = SGD([p], lr=1.0)
    sched = Scheduler(opt, WarmupLinear(base_lr=1.0, warmup_steps=2, total_steps=4))
    used = []
    for _ in range(5):
        used.append(opt.lr)
        p.grad[...] = 1.0
        opt.step()
        sched.step()
    assert used == pytest.approx([0.5, 1.0, 0.5, 0.0, 0.0])
    np.testing.assert_allclose(p.data, [-2.0])
    state = sched.state_dict()
    assert state == {"last_step": 5, "schedule": {"name": "WarmupLinear", "base_lr": 1.0, "warmup_steps": 2,
                                                  "total_steps": 4, "min_lr": 0.0}}
    opt2 = SGD([p], lr=1.0)
    sched2 = Scheduler(opt2, Noam(4, 2))
    sched2.load_state_dict({"last_step": 1})
    assert opt2.lr == pytest.approx(Noam(4, 2).lr_at(2))


def test_make_schedule_counts_updates_from_zero():
    """The Trainer's update 0 is a schedule's step 1: warmup 4 of lr 0.1 gives 0.025, 0.05, 0.075, 0.1, 0.1."""
    warm = make_schedule(None, lr=0.1, warmup_steps=4, total_steps=10)
    assert [warm.lr_at(u) for u in range(5)] == pytest.approx([0.025, 0.05, 0.075, 0.1, 0.1])
    assert make_schedule("constant", lr=0.1) is None            # no warmup: the optimizer's lr stands
    cos = make_schedule("cosine", lr=1.0, warmup_steps=2, total_steps=6)
    # step s = u + 1: warmup 0.5, 1.0; then (1 + cos(pi (s - 2) / 4)) / 2 -> 0.853553, 0.5, 0.146447, 0
    assert [cos.lr_at(u) for u in range(6)] == pytest.approx([0.5, 1.0, 0.8535533905932737, 0.5,
                                                               0.14644660940672624, 0.0])
    lin = make_schedule("linear", lr=2.0, warmup_steps=2, total_steps=6, min_lr=1.0)
    assert [lin.lr_at(u) for u in range(6)] == pytest.approx([1.0, 2.0, 1.75, 1.5, 1.25, 1.0])
    noam = make_schedule("noam", lr=0.01, warmup_steps=4)
    assert noam.lr_at(3) == pytest.approx(0.01)                # the peak, at the 4th update, equals lr
    assert noam.lr_at(0) == pytest.approx(0.01 / 4) and noam.lr_at(15) == pytest.approx(0.01 / 2)
    own = ConstantLR(0.3)
    assert make_schedule(own, lr=1.0) is own
    with pytest.raises(InputError, match="schedule must be"):
        make_schedule("step", lr=0.1)
