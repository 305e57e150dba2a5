"""Fitting a well model so that a diverged run still leaves a usable model behind."""

from __future__ import annotations

from pathlib import Path

from ..errors import DivergenceError
from .member_fit import seed_first_member, use_member_mean
from .model import WellModel

__all__ = ["fit_or_keep_last_good"]


def fit_or_keep_last_good(wm: WellModel, train_logs, out: Path, callbacks, val_logs=None, members=None) -> None:
    """Fit ``wm``; when training diverges, save its last good parameters (with baselines) into ``out/model``.

    The regressor restores its last good parameters itself; fitting the baselines makes the saved
    folder usable by ``glassformer predict``.  The DivergenceError is re-raised with a sentence
    saying where the model went.  ``members``: the seeds of the transformer's members (the first
    seeds ``wm``'s own, :func:`~glassformer.wells.member_fit.seed_first_member`; the mean,
    :func:`~glassformer.wells.member_fit.use_member_mean`); when one of the others diverges,
    ``wm`` fitted alone is the model saved.
    """
    try:
        seed_first_member(wm, members).fit(train_logs, val_logs=val_logs, callbacks=callbacks)
    except DivergenceError as exc:
        wm.model_.is_fitted_ = True
        wm.lstm_ = None
        wm.fit_baselines(train_logs)
        folder = Path(out) / "model"
        wm.save(folder, overwrite=True)
        history = wm.model_.history_
        untrained = " (the untrained initial weights: no epoch finished)" if history is None or len(history) == 0 \
            else ""
        raise DivergenceError(f"{exc} The last good model was saved to {folder}{untrained}; rerun into the same "
                              f"--out with --overwrite.", epoch=exc.epoch, where=exc.where) from None
    if len(members or ()) > 1:
        try:
            use_member_mean(wm, train_logs, members, val_logs)
        except DivergenceError as exc:
            folder = Path(out) / "model"
            wm.save(folder, overwrite=True)
            others = ", ".join(str(int(s)) for s in members[1:])
            raise DivergenceError(f"{exc} (training the further transformer members, seeds {others}). The member of "
                                  f"seed {members[0]}, trained alone, was saved to {folder}; rerun into the same --out "
                                  "with --overwrite and --members 1 to keep one transformer, or with another --seed.",
                                  epoch=exc.epoch, where=exc.where) from None
