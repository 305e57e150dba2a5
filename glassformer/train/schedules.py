"""Learning-rate schedules: warmup with cosine or linear decay, Noam, constant.

A :class:`Schedule` gives the learning rate of the ``step``-th optimizer update, counted from 1
(``lr_at(1)`` is the first update's rate); :class:`Scheduler` drives an optimizer's ``lr`` from one.
:func:`make_schedule` builds one by name for :class:`~glassformer.train.Trainer`, which counts
its updates from 0.
"""

from __future__ import annotations

import math

from ..errors import InputError
from ._checks import check_int, check_number
from .optim import Optimizer

__all__ = ["ConstantLR", "Noam", "Schedule", "Scheduler", "WarmupCosine", "WarmupLinear", "make_schedule"]


class Schedule:
    """A learning rate as a function of the 1-based optimizer step: ``lr_at(step)``."""

    def lr_at(self, step: int) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_step(self, step) -> int:
        return check_int(step, "step", f"{type(self).__name__}.lr_at", minimum=1)

    def config(self) -> dict:
        """JSON-able ``{"name": class name, **arguments}`` describing the schedule."""
        return {"name": type(self).__name__, **self._args}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._args.items())})"


class ConstantLR(Schedule):
    """The same learning rate at every step.

    Parameters
    ----------
    lr : float > 0
    """

    def __init__(self, lr: float):
        self.lr = check_number(lr, "lr", "ConstantLR", strict=True)
        self._args = {"lr": self.lr}

    def lr_at(self, step: int) -> float:
        self._check_step(step)
        return self.lr


def _check_warmup(where, base_lr, warmup_steps, total_steps, min_lr):
    base_lr = check_number(base_lr, "base_lr", where, strict=True)
    warmup_steps = check_int(warmup_steps, "warmup_steps", where, minimum=0)
    total_steps = check_int(total_steps, "total_steps", where, minimum=1)
    if warmup_steps > total_steps:
        raise InputError(f"{where}: warmup_steps ({warmup_steps}) must not exceed total_steps ({total_steps})")
    min_lr = check_number(min_lr, "min_lr", where)
    if min_lr > base_lr:
        raise InputError(f"{where}: min_lr ({min_lr:g}) must not exceed base_lr ({base_lr:g})")
    return base_lr, warmup_steps, total_steps, min_lr


class _Warmup(Schedule):
    """Linear warmup ``base_lr * step / warmup_steps`` up to step ``warmup_steps``, then a decay."""

    def __init__(self, base_lr, warmup_steps, total_steps, min_lr=0.0):
        (self.base_lr, self.warmup_steps, self.total_steps,
         self.min_lr) = _check_warmup(type(self).__name__, base_lr, warmup_steps, total_steps, min_lr)
        self._args = {"base_lr": self.base_lr, "warmup_steps": self.warmup_steps,
                      "total_steps": self.total_steps, "min_lr": self.min_lr}

    def lr_at(self, step: int) -> float:
        step = self._check_step(step)
        if step <= self.warmup_steps:
            return self.base_lr * step / self.warmup_steps
        span = self.total_steps - self.warmup_steps
        progress = 1.0 if span == 0 else min(1.0, (step - self.warmup_steps) / span)
        return self.min_lr + (self.base_lr - self.min_lr) * self._decay(progress)

    def _decay(self, progress: float) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


class WarmupCosine(_Warmup):
    """Linear warmup, then half-cosine decay to ``min_lr`` (Loshchilov & Hutter, 2017, eq. 5).

    ``lr(s) = base_lr * s / warmup_steps`` for ``s <= warmup_steps``; afterwards
    ``min_lr + (base_lr - min_lr) * (1 + cos(pi * p)) / 2`` with
    ``p = (s - warmup_steps) / (total_steps - warmup_steps)`` clipped to 1, so ``lr = min_lr`` from
    ``total_steps`` on.  Steps ``s`` count from 1.

    Parameters
    ----------
    base_lr : float > 0
    warmup_steps : int >= 0
    total_steps : int >= max(1, warmup_steps)
    min_lr : float in [0, base_lr], default 0
    """

    def _decay(self, progress):
        return 0.5 * (1.0 + math.cos(math.pi * progress))


class WarmupLinear(_Warmup):
    """Linear warmup, then linear decay to ``min_lr`` at ``total_steps`` (same arguments as
    :class:`WarmupCosine`; the decay factor is ``1 - p``)."""

    def _decay(self, progress):
        return 1.0 - progress


class Noam(Schedule):
    """The schedule of Vaswani et al. (2017), section 5.3, eq. (3).

    ``lr(s) = factor * d_model**-0.5 * min(s**-0.5, s * warmup_steps**-1.5)`` with ``s`` counted
    from 1: linear growth for ``warmup_steps`` steps, peak ``factor / sqrt(d_model * warmup_steps)``
    at ``s = warmup_steps``, then decay as ``1 / sqrt(s)``.

    Parameters
    ----------
    d_model : int >= 1
    warmup_steps : int >= 1
    factor : float > 0, default 1
    """

    def __init__(self, d_model: int, warmup_steps: int, factor: float = 1.0):
        self.d_model = check_int(d_model, "d_model", "Noam", minimum=1)
        self.warmup_steps = check_int(warmup_steps, "warmup_steps", "Noam", minimum=1)
        self.factor = check_number(factor, "factor", "Noam", strict=True)
        self._args = {"d_model": self.d_model, "warmup_steps": self.warmup_steps, "factor": self.factor}

    def lr_at(self, step: int) -> float:
        s = self._check_step(step)
        return self.factor * self.d_model ** -0.5 * min(s ** -0.5, s * self.warmup_steps ** -1.5)


class Scheduler:
    """Drives ``optimizer.lr`` from a :class:`Schedule`.

    On construction the optimizer's lr is set for its next step (``lr_at(last_step + 1)``); call
    :meth:`step` after each ``optimizer.step()`` to move to the following one.

    Parameters
    ----------
    optimizer : Optimizer
    schedule : Schedule
    last_step : int >= 0, default 0
        Number of optimizer steps already taken (for resuming).
    """

    def __init__(self, optimizer: Optimizer, schedule: Schedule, last_step: int = 0):
        if not isinstance(optimizer, Optimizer):
            raise InputError(f"Scheduler: optimizer must be a glassformer Optimizer, got {type(optimizer).__name__}")
        if not isinstance(schedule, Schedule):
            raise InputError(f"Scheduler: schedule must be a Schedule, got {type(schedule).__name__}")
        self.optimizer = optimizer
        self.schedule = schedule
        self.last_step = check_int(last_step, "last_step", "Scheduler", minimum=0)
        self.optimizer.lr = self.schedule.lr_at(self.last_step + 1)

    @property
    def lr(self) -> float:
        """The learning rate the optimizer will use on its next step."""
        return self.optimizer.lr

    def step(self) -> float:
        """Advance by one optimizer step; set and return the lr for the next step."""
        self.last_step += 1
        self.optimizer.lr = self.schedule.lr_at(self.last_step + 1)
        return self.optimizer.lr

    def state_dict(self) -> dict:
        """JSON-able state: ``{"last_step": int, "schedule": schedule.config()}``."""
        return {"last_step": self.last_step, "schedule": self.schedule.config()}

    def load_state_dict(self, state: dict) -> None:
        """Restore ``last_step`` and re-set the optimizer's lr accordingly."""
        self.last_step = check_int(state.get("last_step") if isinstance(state, dict) else None,
                              "last_step", "Scheduler.load_state_dict", minimum=0)
        self.optimizer.lr = self.schedule.lr_at(self.last_step + 1)


# --------------------------------------------------------------------------- by name, for the Trainer
def make_schedule(name, *, lr: float, warmup_steps: int = 0, total_steps: int = 1, **options):
    """A learning-rate schedule with ``lr_at(update)``, updates counted from 0 as the Trainer does.

    Names: ``None``/``"constant"`` (constant after linear warmup; None when there is no warmup:
    the optimizer's ``lr`` is left alone), ``"cosine"`` (:class:`WarmupCosine` to 0), ``"linear"``
    (:class:`WarmupLinear` to 0), ``"noam"`` (Vaswani et al. 2017, eq. 3, scaled so that its peak
    equals ``lr``).  An object with ``lr_at`` passes through unchanged.

    Parameters
    ----------
    name : None, str or object with ``lr_at(step)``
    lr : float > 0
        The peak learning rate.
    warmup_steps : int >= 0
        Updates of linear warmup.
    total_steps : int
        Updates of the whole run (``epochs x updates_per_epoch``), where the decays reach their end.
    **options
        Passed to :class:`WarmupCosine` / :class:`WarmupLinear` (``min_lr``).

    Raises
    ------
    InputError
        For an unknown name or an out-of-range setting.
    """
    if name is not None and not isinstance(name, str):
        return name
    key = (name or "constant").lower()
    warm = int(warmup_steps or 0)
    total = max(int(total_steps), warm + 1)
    if key == "constant":
        return _WarmupConstant(lr, warm) if warm else None
    if key == "cosine":
        return _FromZero(WarmupCosine(lr, warm, total, **options))
    if key == "linear":
        return _FromZero(WarmupLinear(lr, warm, total, **options))
    if key == "noam":
        # Noam's peak is factor / sqrt(d_model * warmup); with d_model=1 the factor below makes it lr.
        warm = max(warm, 1)
        return _FromZero(Noam(1, warm, factor=lr * math.sqrt(warm)))
    raise InputError(f"schedule must be None, 'constant', 'cosine', 'linear' or 'noam', got {name!r}")


class _FromZero:
    """Adapter: the schedules above count updates from 1, the Trainer from 0."""

    def __init__(self, schedule: Schedule):
        self.schedule = schedule

    def lr_at(self, step: int) -> float:
        return self.schedule.lr_at(step + 1)


class _WarmupConstant:
    """Linear warmup from lr/warmup to lr over ``warmup_steps`` updates (counted from 0), then constant."""

    def __init__(self, lr: float, warmup_steps: int):
        self.lr, self.warmup_steps = float(lr), int(warmup_steps)

    def lr_at(self, step: int) -> float:
        return self.lr * min(1.0, (step + 1) / self.warmup_steps)
