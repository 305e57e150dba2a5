"""Core plugs as a sparse target on a log: hand-made merges, the split by cores, masked training windows."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data import PlugTable, WellLog
from glassformer.errors import DataFileError, InputError
from glassformer.wells import WellModel, prepare_cored_well, split_plugs
from glassformer.wells.plugs_experiment import _without_held_out
from glassformer.wells.ensemble import _windows, prepare


def _log(n=80):
    depth = 100.0 + 0.5 * np.arange(n)                       # 100.0 ... 139.5 m
    phi = 0.15 + 0.05 * np.sin(depth / 3.0)
    return WellLog(name="HAND", depth=depth, curves={"PHIF": phi, "VSH": 0.5 - phi, "KLOGH": 10 ** (8 * phi)},
                   units={"PHIF": "V/V", "VSH": "V/V", "KLOGH": "mD"})


#: Plugs: (depth m, run, core porosity v/v, core permeability mD).  Depths sit on samples or within
#: 0.1 m of one (tolerance 0.25 m = half the 0.5 m step); the log sample each lands on is written out.
PLUGS = [(101.0, 1, 0.10, 5.0), (102.1, 1, 0.12, 8.0), (103.4, 1, 0.14, 20.0),        # samples 2, 4, 7
         (110.0, 2, 0.20, 100.0), (111.0, 2, 0.18, 60.0), (112.6, 2, 0.16, 40.0),     # samples 20, 22, 25
         (120.0, 3, 0.22, 300.0), (121.9, 3, 0.21, 200.0), (123.0, 3, 0.19, 90.0),    # samples 40, 44, 46
         (130.5, 4, 0.11, 6.0), (131.5, 4, 0.13, 12.0), (132.4, 4, 0.15, 30.0)]       # samples 61, 63, 65
SAMPLES = {1: [2, 4, 7], 2: [20, 22, 25], 3: [40, 44, 46], 4: [61, 63, 65]}


def _core():
    d, r, p, k = (np.array(v) for v in zip(*PLUGS))
    return PlugTable(depth=d, porosity=p, permeability=k, run=r.astype(object),
                     columns={"depth": "DEPTH", "run": "CORE_NO", "porosity": "CPOR", "permeability": "CKHL"},
                     source="hand.csv")


@pytest.fixture()
def cw():
    return prepare_cored_well(_log(), _core(), shifts=None)


def test_the_target_exists_exactly_at_the_plug_samples(cw):
    k = cw.log.curve("CKHL")
    expected = np.full(80, np.nan)
    expected[[i for run in SAMPLES.values() for i in run]] = [p[3] for p in PLUGS]
    np.testing.assert_array_equal(k, expected)                    # NaN everywhere else
    assert cw.target == "CKHL" and cw.porosity == "CPOR"
    assert cw.log.curve("CPOR")[44] == 0.21
    assert cw.match.shifts == {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}    # matching disabled: as measured
    assert [cw.run_of_sample[i] for i in (2, 20, 40, 61, 0)] == [1, 2, 3, 4, None]


def test_default_split_cycles_train_test_train_validation(cw):
    split = split_plugs(cw, ["PHIF", "VSH"])
    assert split.cores == {"train": [1, 3], "validation": [4], "test": [2]}
    assert split.counts() == {"train": 6, "validation": 3, "test": 3}
    assert np.flatnonzero(split.masks["test"]).tolist() == SAMPLES[2]
    train = split.log_for(cw, "train").curve("CKHL")
    assert np.flatnonzero(np.isfinite(train)).tolist() == SAMPLES[1] + SAMPLES[3]


def test_named_cores_and_depth_intervals(cw):
    split = split_plugs(cw, ["PHIF"], test_cores=["4"], validation_cores=[1])
    assert split.cores == {"train": [2, 3], "validation": [1], "test": [4]}
    by_depth = split_plugs(cw, ["PHIF"], test_depth=(119.0, 124.0), validation_cores=[2])
    assert np.flatnonzero(by_depth.masks["test"]).tolist() == SAMPLES[3]


def test_bad_splits_are_refused_with_the_runs_named(cw):
    with pytest.raises(InputError, match="test core.s. 9 not in the core table; its cores are 1, 2, 3, 4"):
        split_plugs(cw, ["PHIF"], test_cores=[9], validation_cores=[1])
    with pytest.raises(InputError, match="validation cores"):
        split_plugs(cw, ["PHIF"], test_cores=[2])
    with pytest.raises(InputError, match="both test and validation"):
        split_plugs(cw, ["PHIF"], test_cores=[2], validation_depth=(109.0, 111.0))
    with pytest.raises(DataFileError, match="no train plug"):
        split_plugs(cw, ["PHIF"], test_cores=[1, 2], validation_cores=[3, 4])


def test_plugs_without_inputs_are_left_out(cw):
    phi = cw.log.curve("PHIF").copy()
    phi[[20, 22]] = np.nan                                         # two plugs of core 2 lose an input
    cw.log.curves["PHIF"] = phi
    split = split_plugs(cw, ["PHIF", "VSH"])
    assert np.flatnonzero(split.masks["test"]).tolist() == [25]


def test_training_windows_hold_targets_only_at_training_plugs(cw):
    """Windows are cut from the whole log (inputs at every depth); the target is NaN except at the
    training plugs, so the masked loss sees those plugs and nothing else."""
    split = split_plugs(cw, ["PHIF", "VSH"])
    wm, *_ = prepare(WellModel(["PHIF", "VSH"], "CKHL", window=8), [split.log_for(cw, "train")])
    X, Y, P = _windows(wm, [split.log_for(cw, "train")])
    parts = wm.windows(split.log_for(cw, "train"), stride=4, with_target=True, pad_last=False)
    _, y_all, _, idx_all = parts[0]
    keep = np.isfinite(y_all).any(axis=(1, 2))
    idx = idx_all[keep]                                            # (n_windows, 8) sample index of every entry
    finite = np.isfinite(Y[..., 0])
    assert X.shape == (keep.sum(), 8, 2) and np.isfinite(X).all()
    assert set(idx[finite].tolist()) == set(SAMPLES[1] + SAMPLES[3])
    assert not set(idx[~finite].tolist()) & set(SAMPLES[1] + SAMPLES[3])
    # the scaled target at a plug is the plug's log10 permeability, standardised on the training plugs
    logk = np.log10([p[3] for p in PLUGS if p[1] in (1, 3)])
    z = (logk - logk.mean()) / logk.std()
    at = {i: v for i, v in zip(SAMPLES[1] + SAMPLES[3], z)}
    for w, t in zip(*np.nonzero(finite)):
        assert Y[w, t, 0] == pytest.approx(at[idx[w, t]], abs=1e-12)


def test_pretraining_log_blanks_the_held_out_cores(cw):
    split = split_plugs(cw, ["PHIF", "VSH"])                        # test core 2 (110-112.5 m), validation 4
    pre = _without_held_out(cw, split, "KLOGH")
    blank = ~np.isfinite(pre.curve("KLOGH"))
    assert np.flatnonzero(blank).tolist() == list(range(20, 26)) + list(range(61, 66))
    np.testing.assert_array_equal(pre.curve("KLOGH")[~blank], cw.log.curve("KLOGH")[~blank])


def test_19a_default_split(shared_data):
    """15/9-19 A: 424 plug samples with PHIF, VSH and SW after depth matching (cores 1-5 and the
    top of core 6; core 7 lies below the end of the inputs); in depth order the cores cycle
    through train, test, train, validation."""
    import warnings

    from glassformer.data import read_plugs, read_well

    log = read_well(shared_data / "real" / "15_9-19_A_CPI.las")
    core = read_plugs(shared_data / "real" / "15_9-19A-CORE.csv", depth="OrigDepth", run="CORE_NO",
                      porosity_unit="%")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cw = prepare_cored_well(log, core)
    assert len(cw.notes) == 2 and "run(s) 6, 7" in cw.notes[0]
    split = split_plugs(cw, ["PHIF", "VSH", "SW"])
    assert split.cores == {"train": [1, 3, 5], "validation": [4], "test": [2, 6]}
    assert split.counts() == {"train": 255, "validation": 82, "test": 87}
    assert cw.shifts()["1"] == pytest.approx(1.791, abs=1e-3)
