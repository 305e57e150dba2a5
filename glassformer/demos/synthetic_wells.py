"""The scale-up the chapter announces but never defines: 100 synthetic well logs, 80 to train, 20 to test.

Wells from :func:`glassformer.data.synthetic.synthetic_wells` (seeded, documented there): layered
facies (sand, shaly sand, shale), porosity with a compaction trend and correlated noise, shale
volume, and permeability from a facies-dependent porosity transform minus a *cross-depth* term
(permeability drops near shale contacts, up to ``cement_length_m`` away), so the context of
neighbouring depths matters and a local porosity transform cannot explain all of it.

Inputs PHI and VSH (v/v), target log10 PERM (log10 mD).  Wells are split 80/20 with
``split_by_sequence(100, 0.8, seed=42)``; scaling is fitted on the training wells only.  The
transformer is compared with a bidirectional LSTM, the field's porosity-permeability transform and
the training mean on the 20 test wells (RMSE, MAE in log10 mD, R², parameter count, fit time):
the same windows, scaling, split, training loop and early-stopping rule for both networks, each
retrained with ``seeds`` (default 42, 0, 1) and reported as mean ± sd.
"""

from __future__ import annotations


from ..data.synthetic import split_by_sequence, synthetic_wells
from ..models import LSTMRegressor, SequenceRegressor
from ..reporting import say
from ..wells import WellModel, run_well_experiment

#: Seeds of the comparison (initialisation, shuffling, validation split of both networks).
SEEDS = (42, 0, 1)


def run(out="glassformer_runs/synthetic-wells", *, epochs: int = 30, n_wells: int = 100, window: int = 32,
        seeds=SEEDS, lstm: bool = True) -> dict:
    """Train on 80 synthetic wells, test on 20; write the run folder and return the metrics."""
    say(f"Synthetic wells: {n_wells} wells (seeded generator), 80/20 split by well, inputs PHI, VSH -> log10 PERM")
    wells = synthetic_wells(n_wells=n_wells, seed=13)
    tr, te = split_by_sequence(len(wells), 0.8, seed=42)
    train_logs = [wells[i] for i in sorted(tr)]
    test_logs = [wells[i] for i in sorted(te)]
    wm = WellModel(["PHI", "VSH"], "PERM", window=window, model=SequenceRegressor(epochs=epochs),
                   lstm=LSTMRegressor(epochs=epochs) if lstm else None)
    return run_well_experiment(out, train_logs, test_logs, wm, title="Synthetic wells (80 train / 20 test)",
                               seeds=seeds, config={"demo": "synthetic-wells", "generator": "synthetic_wells(seed=13)",
                                                  "split": "split_by_sequence(n, 0.8, seed=42)"})
