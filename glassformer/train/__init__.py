"""Training: the loop, its callbacks, optimizers, learning-rate schedules and losses, in NumPy.

==============  ==========================================================================
module          contents
==============  ==========================================================================
``trainer``     ``Trainer``: epochs -> batches -> zero grads -> step -> clip -> update
``callbacks``   ``Callback`` (the hook points), ``PrintLoss``, ``EarlyStopping``, ``ProgressBar``
``guard``       ``DivergenceGuard``: non-finite values and runaway losses, with the layer to blame
``divergence``  ``locate_nonfinite``, ``find_nonfinite``: the first module or tensor gone non-finite
``checkpoint``  ``SaveCheckpoint``, ``ResumeFrom``: bit-identical resume
``signals``     ``StopOnSignal``, ``TrainingInterrupted``: a clean stop on SIGINT/SIGTERM
``standard``    ``standard_callbacks``: the list the estimators build from their hyperparameters
``history``     ``History``: the per-epoch record
``optim``       ``SGD``, ``Adam``, ``AdamW``, ``make_optimizer``
``clipping``    ``clip_grad_norm`` (PyTorch's), ``clip_global_norm`` (the trainer's)
``schedules``   ``WarmupCosine``, ``WarmupLinear``, ``Noam``, ``ConstantLR``, ``Scheduler``, ``make_schedule``
``losses``      ``MSELoss`` (NaN targets skipped), ``CrossEntropyLoss`` (label smoothing, ignore_index)
==============  ==========================================================================

A run by hand::

    from glassformer.train import Trainer, PrintLoss, standard_callbacks
    from glassformer.train.optim import Adam

    trainer = Trainer(model.named_parameters(), step, Adam(model.parameters(), lr=1e-3), epochs=50,
                      batch_size=32, model=model,
                      callbacks=standard_callbacks(early_stopping_patience=5) + [PrintLoss(10)])
    history = trainer.fit((X, y), (X_val, y_val))
"""

from . import losses, optim, schedules
from .callbacks import Callback, EarlyStopping, PrintLoss, ProgressBar
from .checkpoint import ResumeFrom, SaveCheckpoint
from .divergence import find_nonfinite, locate_nonfinite
from .guard import DivergenceGuard
from .history import History
from .optim import make_optimizer
from .schedules import make_schedule
from .signals import StopOnSignal, TrainingInterrupted
from .standard import standard_callbacks
from .trainer import Trainer, total_updates

__all__ = [
    "Callback", "DivergenceGuard", "EarlyStopping", "History", "PrintLoss", "ProgressBar", "ResumeFrom",
    "SaveCheckpoint", "StopOnSignal", "Trainer", "TrainingInterrupted", "find_nonfinite", "locate_nonfinite",
    "losses", "make_optimizer", "make_schedule", "optim", "schedules", "standard_callbacks", "total_updates",
]
