"""Training the members of a :class:`~glassformer.wells.member_mean.MemberMean` beside a fitted well model.

:func:`fit_member_mean` keeps the fitted well model's own transformer as member 0 and trains the
others side by side (:func:`~glassformer.wells.fit_ensemble` with ``batched=True``, one ensemble path
for every command) on the data ``WellModel.fit`` prepares, so each member is the well model fitted
alone with its seed and none is trained twice.  :func:`use_member_mean` puts the mean in the well
model's place, as ``glassformer train`` and ``glassformer cv`` do.  Settings that cannot be trained
side by side (a learned or per-head positional encoding, dropout, another mixer) train the members
one after another, with the same result.
"""

from __future__ import annotations

import tempfile
import time

from ..errors import InputError
from ..models.members import side_by_side_refusal
from .baselines import BLEND, BLEND_WEIGHTS
from .ensemble import fit_ensemble
from .member_mean import MemberMean
from .model import WellModel, with_seed

__all__ = ["fit_member_mean", "fit_with_members", "seed_first_member", "use_member_mean"]


def fit_member_mean(wm: WellModel, train_logs, seeds, val_logs=None) -> MemberMean:
    """The mean of ``len(seeds)`` transformers with ``wm``'s settings: ``wm``'s own, fitted on ``train_logs``
    with ``seeds[0]``, and one more per further seed, trained side by side on the same windows.

    ``wm`` is a well model fitted on ``train_logs`` (early stopping on ``val_logs`` when given) whose
    transformer drew from ``seeds[0]`` (member 0, so it is not trained again); it is not changed.
    Only the further transformers are trained (no LSTM, no tree ensembles), with ``wm``'s windows,
    scalers and early stopping, side by side where the settings allow it, so each equals the well
    model fitted alone with its seed (float64: bit for bit).

    Raises
    ------
    InputError
        Fewer than two seeds, or ``wm`` not fitted with ``seeds[0]``.
    DataFileError
        As :meth:`WellModel.fit`.
    DivergenceError
        A further member diverged.
    """
    seeds = [int(s) for s in seeds]
    own = getattr(wm, "model_", None)
    if len(seeds) < 2 or own is None or own.random_state != seeds[0]:
        raise InputError(f"fit_member_mean: needs a well model fitted with the first of at least 2 seeds, got seeds "
                         f"{seeds} and a transformer {'not fitted' if own is None else f'of seed {own.random_state}'}")
    spec = {**wm.spec(), "lstm": None, "tree_baselines": False}
    others, val_logs = seeds[1:], list(val_logs or ())
    if len(others) == 1:                          # an ensemble needs two members: the one left alone
        fitted = [with_seed(WellModel.from_spec(spec), others[0]).fit(list(train_logs), val_logs=val_logs or None)]
    else:                                         # side by side when the settings allow it, else one by one
        with tempfile.TemporaryDirectory() as tmp:
            fitted = fit_ensemble(WellModel.from_spec(spec), list(train_logs), val_logs, folder=tmp, seeds=others,
                                  calibrate=False, batched=side_by_side_refusal(own) is None).members
    return MemberMean([own, *(m.model_ for m in fitted)], seeds)


def use_member_mean(wm: WellModel, train_logs, seeds, val_logs=None) -> WellModel:
    """Replace the transformer of ``wm`` (fitted with ``seeds[0]``) by the mean of members from ``seeds``
    (:func:`fit_member_mean`); its fit time and the blend's then count every member.  Returns ``wm``.

    Raises
    ------
    As :func:`fit_member_mean`.
    """
    t0 = time.perf_counter()
    wm.model_ = fit_member_mean(wm, train_logs, seeds, val_logs)
    wm.fit_seconds_["transformer"] += time.perf_counter() - t0
    if BLEND in wm.fit_seconds_:                  # the blend costs its members' fits
        wm.fit_seconds_[BLEND] = sum(wm.fit_seconds_[n] for n in BLEND_WEIGHTS)
    return wm


def seed_first_member(wm: WellModel, members) -> WellModel:
    """``wm`` with its transformer drawing from ``members[0]`` when it will be the first of several members
    (its tree ensembles keep their seed); returns ``wm``."""
    if len(members or ()) > 1:
        wm.set_params(model__random_state=int(members[0]))
    return wm


def fit_with_members(wm: WellModel, train_logs, members, val_logs=None, callbacks=()) -> WellModel:
    """Fit ``wm`` on ``train_logs`` (:meth:`WellModel.fit`), its transformer the mean of the transformers drawn
    from ``members`` when there are several (:func:`seed_first_member`, :func:`use_member_mean`); ``callbacks``
    go to the first member's training loop.  Returns ``wm``.

    Raises
    ------
    As :meth:`WellModel.fit` and :func:`fit_member_mean`.
    """
    seed_first_member(wm, members).fit(train_logs, val_logs=val_logs, callbacks=callbacks)
    if len(members or ()) > 1:
        use_member_mean(wm, train_logs, members, val_logs)
    return wm
