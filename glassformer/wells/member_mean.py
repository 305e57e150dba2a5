"""The transformer of a fitted well model replaced by the mean of several seeds' transformers.

One transformer's blind-well error depends on its seed (on the Volve F wells, 15/9-F-11 B scores
1.32, 1.12 and 0.79 log10 mD for seeds 42, 0 and 1); the mean of a few members trained from
different seeds on the same windows removes most of that lottery (Lakshminarayanan, Pritzel and
Blundell 2017).  On those wells, chosen by nested blind-well cross-validation among d_model 16 and
32, 30 and 60 epochs, one seed or a 5-member mean, a 5-member mean won the inner folds of every
outer fold, and its held-out error was below the single fit's at both widths, so ``glassformer cv``
predicts with it by default (``--members``).

:func:`fit_member_mean` keeps the fitted well model's own transformer as member 0 and trains the
others side by side (:func:`~glassformer.wells.fit_ensemble` with ``batched=True``, one ensemble path
for every command) on the data ``WellModel.fit`` prepares, so each member is the well model fitted
alone with its seed and none is trained twice.
:class:`MemberMean` is a window regressor like the transformer it stands in for: the well model's
``predict_log``, the blend and every table use it unchanged.
"""

from __future__ import annotations

import tempfile

import numpy as np

from ..errors import InputError
from .ensemble import fit_ensemble
from .model import WellModel, with_seed

__all__ = ["DEFAULT_MEMBERS", "MemberMean", "fit_member_mean"]

#: Transformer members whose mean ``glassformer cv`` predicts with (the nested study's choice).
DEFAULT_MEMBERS = 5


class MemberMean:
    """The mean prediction of fitted transformers (``SequenceRegressor``) that share scalers and windows.

    Parameters
    ----------
    members : list of fitted SequenceRegressor (at least one), trained on the same windows.
    seeds : list of int, each member's seed (kept for the record).
    """

    def __init__(self, members, seeds):
        self.members = members
        self.seeds = seeds

    def predict(self, X, positions) -> np.ndarray:
        """The members' mean: ``X (n, T, n_inputs)`` -> ``(n, T, 1)`` in scaled target units (the scaler
        is affine, so the mean in scaled units is the mean in model units)."""
        return np.mean([m.predict(X, positions) for m in self.members], axis=0)   # (K, n, T, 1) -> (n, T, 1)

    def num_parameters(self) -> int:
        """Trainable values of all members together."""
        return int(sum(m.network_.num_parameters() for m in self.members))

    @property
    def history_(self) -> list:
        """The first member's training history (early stopping chose each member's own epoch)."""
        return self.members[0].history_


def fit_member_mean(wm: WellModel, train_logs, seeds) -> MemberMean:
    """The mean of ``len(seeds)`` transformers with ``wm``'s settings: ``wm``'s own, fitted on ``train_logs``
    with ``seeds[0]``, and one more per further seed, trained side by side on the same windows.

    ``wm`` is a well model fitted on ``train_logs`` whose transformer drew from ``seeds[0]`` (member 0, so
    it is not trained again); it is not changed.  Only the further transformers are trained (no LSTM, no
    tree ensembles), with ``wm``'s windows, scalers and early stopping, so each equals the well model
    fitted alone with its seed (float64: bit for bit).

    Raises
    ------
    InputError
        Fewer than two seeds, ``wm`` not fitted with ``seeds[0]``, or settings that cannot be trained
        side by side.
    DataFileError
        As :meth:`WellModel.fit`.
    """
    seeds = [int(s) for s in seeds]
    own = getattr(wm, "model_", None)
    if len(seeds) < 2 or own is None or own.random_state != seeds[0]:
        raise InputError(f"fit_member_mean: needs a well model fitted with the first of at least 2 seeds, got seeds "
                         f"{seeds} and a transformer {'not fitted' if own is None else f'of seed {own.random_state}'}")
    spec = {**wm.spec(), "lstm": None, "tree_baselines": False}
    others = seeds[1:]
    if len(others) == 1:                          # an ensemble needs two members: the one left alone
        fitted = [with_seed(WellModel.from_spec(spec), others[0]).fit(list(train_logs))]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            fitted = fit_ensemble(WellModel.from_spec(spec), list(train_logs), folder=tmp, seeds=others,
                                  calibrate=False, batched=True).members
    return MemberMean([own, *(m.model_ for m in fitted)], seeds)
