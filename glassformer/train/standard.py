"""The standard callback list, built from the estimators' hyperparameters in one place.

``SequenceRegressor``, ``LSTMRegressor``, sequence-to-sequence and language-model training, the
demos and ``glassformer train`` all train through :func:`standard_callbacks`, so a setting such as
``divergence_factor`` or ``progress`` means the same everywhere.
"""

from __future__ import annotations

from .callbacks import EarlyStopping, ProgressBar
from .checkpoint import ResumeFrom, SaveCheckpoint
from .guard import DivergenceGuard
from .signals import StopOnSignal

__all__ = ["standard_callbacks"]


def standard_callbacks(*, early_stopping_patience: int | None = None, min_delta: float = 0.0,
                       divergence_factor: float | None = 1e4, progress: bool = False, checkpoint_dir=None,
                       checkpoint_every: int = 1, checkpoint_config: dict | None = None, resume_from=None,
                       handle_signals: bool = True) -> list:
    """The callbacks a training run normally has, as a list to pass to (and extend for) the Trainer.

    Parameters
    ----------
    early_stopping_patience : int or None
        :class:`~glassformer.train.EarlyStopping` with this patience and ``min_delta`` (None: none).
    divergence_factor : float > 1 or None, default 1e4
        :class:`~glassformer.train.DivergenceGuard`, always present (None turns off its growth check only).
    progress : bool, default False
        :class:`~glassformer.train.ProgressBar` over epochs.
    checkpoint_dir, checkpoint_every, checkpoint_config
        :class:`~glassformer.train.SaveCheckpoint` into ``checkpoint_dir`` (None: no checkpoints).
    resume_from : folder or glassformer.io.Checkpoint, optional
        :class:`~glassformer.train.ResumeFrom`: continue bit-identically from this checkpoint.
    handle_signals : bool, default True
        :class:`~glassformer.train.StopOnSignal`: SIGINT/SIGTERM save a checkpoint and stop cleanly.

    Returns
    -------
    list
        In the order the callbacks run (each has its ``order``, so extending the list is safe).

    Raises
    ------
    InputError
        An out-of-range setting (the message names it).
    """
    callbacks = [DivergenceGuard(divergence_factor)]
    if resume_from is not None:
        callbacks.insert(0, ResumeFrom(resume_from))
    if early_stopping_patience is not None:
        callbacks.append(EarlyStopping(early_stopping_patience, min_delta=min_delta))
    if checkpoint_dir is not None:
        callbacks.append(SaveCheckpoint(checkpoint_dir, every=checkpoint_every, config=checkpoint_config))
    if progress:
        callbacks.append(ProgressBar())
    if handle_signals:
        callbacks.append(StopOnSignal())
    return callbacks
