"""The divergence guard: stop a run whose loss went non-finite or grows without bound, keep good parameters.

Non-finite values: a non-finite batch loss -- or a layer refusing a non-finite input, or a
non-finite gradient met while clipping -- stops training with
:class:`~glassformer.errors.DivergenceError`.  The failing batch is re-run with every module's
output watched (:func:`~glassformer.train.divergence.locate_nonfinite`), and the message names
the first module, in call order, whose output went non-finite (e.g. ``encoder.layers.0.linear2
(Linear): output``) -- or, when a tensor computed *inside* a module overflowed, the first module
that failed on finite inputs (``encoder.layers.0.self_attn (MultiheadAttention): an intermediate
tensor``); the error's ``where`` attribute holds the same text.  The validation pass after each
epoch is guarded the same way.  The parameters are restored to their values at the start of that
epoch (or of its resumed part), the last state known to give finite losses.

Growth: a loss can also run away while staying finite (``lr=1e6`` gives mean losses of 1e24 that
never overflow).  When an epoch's mean training loss exceeds ``divergence_factor`` (default 1e4)
times the *reference loss* -- the loss of the run's first batch, i.e. of the initial parameters --
training stops with :class:`~glassformer.errors.DivergenceError` as well.  The reference is the
untrained model's loss rather than the best loss so far: a model that has fitted well can
legitimately jump by orders of magnitude above its (tiny) best loss on a noisy mini-batch or a
learning-rate spike, but a loss 1e4 times that of random initial weights is never progress.  Here
the parameters are restored to their values at the start of the previous epoch, the last epoch
whose loss passed the guard (the start of training if it is the first epoch): the start of the
failing epoch already gave the runaway loss (with full batches it is exactly where that loss was
measured); in a resumed run, before a full epoch has passed, it is the resume point.  The
reference loss is kept in checkpoints.  The growth check is skipped when the reference loss is not
> 0 (e.g. a log-likelihood).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DivergenceError, InputError
from .callbacks import Callback
from .divergence import find_nonfinite, first_nonfinite_grad, locate_nonfinite

__all__ = ["DivergenceGuard"]

_ADVICE = "lower the learning rate (lr / --lr)."


class DivergenceGuard(Callback):
    """Stop with :class:`~glassformer.errors.DivergenceError` on non-finite values or a runaway loss.

    See the module docstring for what is checked and which parameters are kept.

    Parameters
    ----------
    divergence_factor : float > 1 or None, default 1e4
        The growth check's limit, as a multiple of the first batch's loss; None turns the growth
        check off (non-finite values are always checked).

    Raises
    ------
    InputError
        ``divergence_factor`` not None and not a finite number > 1.
    """

    order = -50

    def __init__(self, divergence_factor: float | None = 1e4):
        if divergence_factor is not None:
            try:
                ok = float(divergence_factor) > 1 and math.isfinite(float(divergence_factor))
            except (TypeError, ValueError):
                ok = False
            if isinstance(divergence_factor, bool) or not ok:
                raise InputError(f"DivergenceGuard: divergence_factor must be None or a finite number > 1, "
                                 f"got {divergence_factor!r}")
        self.divergence_factor = None if divergence_factor is None else float(divergence_factor)

    # --- state: the reference loss and two restore points --------------------------------------
    def on_train_begin(self, trainer) -> None:
        state = trainer.resumed or {}
        ref = state.get("reference_loss")
        if ref is None and trainer.batch_losses and trainer.epoch == 0:   # older checkpoints: the first batch's loss
            ref = trainer.batch_losses[0]
        if ref is None and trainer.history.train_loss:                   # ... or else the first epoch's mean loss
            ref = trainer.history.train_loss[0]
        self.reference = None if ref is None else float(ref)
        self._last_good = self._prev_good = None

    def on_epoch_begin(self, trainer, epoch: int) -> None:
        if self._last_good is None:
            # The run's first epoch: both restore points are the start of training or of the resumed part.
            self._last_good, self._prev_good = trainer.snapshot(), trainer.snapshot()
            self._prev_label = self._last_label = (
                "training" if epoch == 0 and trainer.batch == 0 else
                f"epoch {epoch}" + (" (its resumed part)" if trainer.batch else ""))
        if trainer.batch == 0 and epoch > 0:
            self._prev_good, self._last_good = self._last_good, self._prev_good
            self._prev_label, self._last_label = self._last_label, f"epoch {epoch}"
        trainer.snapshot(self._last_good)          # the state to fall back to if this epoch diverges

    def checkpoint_state(self, trainer) -> dict:
        """``reference_loss``: the first batch's loss (None before it)."""
        return {"reference_loss": self.reference}

    # --- non-finite values ---------------------------------------------------------------------
    def on_before_update(self, trainer, batch: tuple, loss: float) -> None:
        if not math.isfinite(loss):
            self._nonfinite_loss(trainer, batch, loss)
        if self.reference is None:
            self.reference = loss           # the initial parameters' loss: the growth check's reference
        norm = trainer.grad_norm
        if norm is not None and not math.isfinite(norm):
            where = first_nonfinite_grad(trainer.named_params)
            if where is not None:
                self._fail(trainer, f"non-finite gradient ({where})", where)

    def _nonfinite_loss(self, trainer, batch: tuple, loss: float) -> None:
        # Inner layers do not scan their inputs (Module.check_inputs), so a blown-up parameter
        # usually shows up in the loss first: re-run the batch watching every layer.
        where = locate_nonfinite(trainer.model, lambda: trainer.step(batch))
        if where is not None:
            self._fail(trainer, f"non-finite loss {loss}: non-finite values first produced by {where}", where)
        where = find_nonfinite(trainer.model)
        self._fail(trainer, f"non-finite loss {loss}" + (f"; first non-finite tensor: {where}" if where else ""),
                   where or "loss")

    def on_step_error(self, trainer, rerun, exc: Exception, phase: str) -> None:
        # Layers refuse non-finite inputs: a blown-up parameter shows up as such an error in the layer
        # after the one that overflowed (in the validation pass when the epoch's last update did it).
        where = locate_nonfinite(trainer.model, rerun)
        if where is None:
            return                          # not a divergence: the error stands as raised
        during = " in the validation pass" if phase == "validation" else ""
        self._fail(trainer, f"non-finite values first produced by {where}{during} ({exc})", where)

    def _fail(self, trainer, detail: str, where: str):
        epoch = trainer.epoch
        self._give_up(trainer, self._last_good)
        raise DivergenceError(
            f"training diverged at epoch {epoch} (update step {trainer.global_step}): {detail}. "
            f"Parameters restored to their values at the start of epoch {epoch}; {_ADVICE}",
            epoch=epoch, where=where) from None

    # --- growth ----------------------------------------------------------------------------------
    def on_epoch_losses(self, trainer, epoch: int, logs: dict) -> None:
        ref, factor, loss = self.reference, self.divergence_factor, logs["loss"]
        if factor is None or ref is None or not ref > 0 or not loss > factor * ref:
            return
        self._give_up(trainer, self._prev_good)
        raise DivergenceError(
            f"training diverged at epoch {epoch} (update step {trainer.global_step}): the mean training loss "
            f"{loss:.4g} exceeds {factor:g} x the initial loss {ref:.4g} (the loss grows without bound). "
            f"Parameters restored to their values at the start of {self._prev_label}; {_ADVICE}",
            epoch=epoch, where="training loss")

    # --- the last update -------------------------------------------------------------------------
    def on_train_end(self, trainer, history) -> None:
        bad = [name for name, p in trainer.named_params if not np.isfinite(p.data).all()]
        if bad and self._last_good is not None:    # the very last update overflowed: nothing checked it yet
            self._give_up(trainer, self._last_good)
            raise DivergenceError(f"training diverged in the last update: parameter {bad[0]} is non-finite. "
                                  f"Parameters restored to their values at the start of the last epoch; {_ADVICE}",
                                  epoch=len(history) - 1, where=f"{bad[0]}: data")

    @staticmethod
    def _give_up(trainer, snapshot) -> None:
        trainer.restore(snapshot)
        if trainer.model is not None:
            trainer.model.clear_cache()
        trainer.history.stop_reason = "diverged"
