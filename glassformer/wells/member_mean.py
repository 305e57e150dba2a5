"""The transformer of a fitted well model replaced by the mean of several seeds' transformers.

One transformer's blind-well error depends on its seed (on the Volve F wells, 15/9-F-11 B scores
1.32, 1.12 and 0.79 log10 mD for seeds 42, 0 and 1); the mean of a few members trained from
different seeds on the same windows removes most of that lottery (Lakshminarayanan, Pritzel and
Blundell 2017).  On those wells, chosen by nested blind-well cross-validation among d_model 16 and
32, 30 and 60 epochs, one seed or a 5-member mean, a 5-member mean won the inner folds of every
outer fold, and its held-out error was below the single fit's at both widths, so ``glassformer cv``
predicts with it by default (``--members``).

:func:`fit_member_mean` trains the members side by side (:func:`~glassformer.wells.fit_ensemble`
with ``batched=True``, one ensemble path for every command), on the data ``WellModel.fit``
prepares, so member 0 is the well model's own transformer fitted alone with the first seed.
:class:`MemberMean` is a window regressor like the transformer it stands in for: the well model's
``predict_log``, the blend and every table use it unchanged.
"""

from __future__ import annotations

import tempfile

import numpy as np

from .ensemble import fit_ensemble
from .model import WellModel

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
    """The mean of ``len(seeds)`` transformers with ``wm``'s settings, trained side by side on ``train_logs``.

    ``wm`` is the (fitted or unfitted) well model whose transformer settings, windows, scalers and
    early stopping the members share; it is not changed.  Only the transformers are trained (no
    LSTM, no tree ensembles).

    Raises
    ------
    InputError
        Fewer than two seeds, or settings that cannot be trained side by side.
    DataFileError
        As :meth:`WellModel.fit`.
    """
    spec = {**wm.spec(), "lstm": None, "tree_baselines": False}
    with tempfile.TemporaryDirectory() as tmp:
        ens = fit_ensemble(WellModel.from_spec(spec), list(train_logs), folder=tmp, seeds=list(seeds),
                           calibrate=False, batched=True)
    return MemberMean([m.model_ for m in ens.members], [int(s) for s in seeds])
