"""`glassformer train` predicts with the mean of five transformers by default (``--members``).

The mean is recomputed here from each saved member's own prediction, member 0 is checked against a
one-transformer run of the same seed, the files round trip (a member replaced is refused), and the
members' fit with validation wells is compared with well models fitted alone (float64).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main
from glassformer.data import read_well
from glassformer.errors import DivergenceError, ModelFileError
from glassformer.io.archive import _meta_digest
from glassformer.models import SequenceRegressor
from glassformer.wells import WellModel, with_seed
from glassformer.wells.baselines import BLEND
from glassformer.wells.last_good import fit_or_keep_last_good
from glassformer.wells.member_fit import fit_member_mean, use_member_mean
from glassformer.wells.member_mean import MemberMean

DEPTH_A = 1000.0 + 0.5 * np.arange(240)        # 1000 .. 1119.5 m
DEPTH_B = 2000.0 + 0.5 * np.arange(160)        # 2000 .. 2079.5 m
TINY = ["--inputs", "PHIF", "VSH", "SW", "--target", "KLOGH", "--log-target", "--window", "8", "--epochs", "2",
        "--d-model", "4", "--heads", "1", "--no-progress"]
COLUMN = "transformer_log10_mD"
CSV = 1e-5                                      # predictions.csv keeps 6 significant digits


@pytest.fixture(scope="module")
def wells(tmp_path_factory, las_writer):
    folder = tmp_path_factory.mktemp("wells")
    return folder, las_writer(folder / "well_a.las", "15/9-A-1", DEPTH_A, seed=1), \
        las_writer(folder / "well_b.las", "15/9-B-2", DEPTH_B, seed=2)


@pytest.fixture(scope="module")
def default_run(wells):
    folder, a, b = wells
    out = folder / "five"
    assert main(["train", "--data", str(a), "--test-data", str(b), "--out", str(out), *TINY]) == 0
    return out


def _test_rows(out):
    rows = pd.read_csv(out / "predictions.csv")
    return rows[rows["split"] == "test"].sort_values("depth")


def test_train_writes_five_members_and_says_so(default_run, capsys):
    model = default_run / "model"
    assert sorted(p.name.split(".")[0] for p in (model / "members").iterdir()) == ["seed_0", "seed_1", "seed_2", "seed_3"]
    config = json.loads((default_run / "config.json").read_text())
    assert config["transformer_members"] == {"42": [42, 0, 1, 2, 3]}
    assert config["well_model"]["transformer_members"] == [42, 0, 1, 2, 3]
    metrics = json.loads((default_run / "metrics.json").read_text())
    assert metrics["comparison"]["members"] == 5
    assert "The transformer is the mean of 5 members" in metrics["comparison"]["note"]
    assert metrics["training"]["member"] == "the first of 5 members (seed 42)"
    assert [m["seed"] for m in metrics["training_members"]] == [42, 0, 1, 2, 3]
    assert metrics["training_members"][0]["epochs_run"] == metrics["training"]["epochs_run"]
    wm = WellModel.load(default_run)
    assert isinstance(wm.model_, MemberMean) and wm.model_.seeds == [42, 0, 1, 2, 3]
    assert [m.random_state for m in wm.model_.members] == [42, 0, 1, 2, 3]
    # the members differ only in their seed, and every one counts in the parameters
    params = [{k: v for k, v in m.get_params().items() if k != "random_state"} for m in wm.model_.members]
    assert all(p == params[0] for p in params)
    assert metrics["test"]["transformer"]["n"] > 0
    one = wm.model_.members[0].network_.num_parameters()
    assert wm.parameter_counts()["transformer"] == 5 * one


def test_the_runs_transformer_is_the_mean_of_its_members(default_run, wells):
    _, _, b = wells
    wm = WellModel.load(default_run)
    test = read_well(b)
    each = np.array([wm.predict_log(test, model=m) for m in wm.model_.members])       # (5, n_samples)
    assert np.ptp(each[:, np.isfinite(each).all(axis=0)], axis=0).max() > 1e-3      # five different networks
    rows = _test_rows(default_run)
    at = np.searchsorted(test.depth, rows["depth"].to_numpy())
    mean = each.mean(axis=0)[at]
    np.testing.assert_allclose(rows[COLUMN].to_numpy(), mean, rtol=0, atol=CSV)
    boosting = wm.predict_all(test, ["gradient boosting"])["gradient boosting"][at]
    column = "transformer_boosting_blend_log10_mD"
    np.testing.assert_allclose(rows[column].to_numpy(), 0.5 * mean + 0.5 * boosting, rtol=0, atol=CSV)
    assert BLEND in wm.model_names()


def test_predict_writes_the_same_mean(default_run, wells, tmp_path, capsys):
    folder, _, b = wells
    out = tmp_path / "b_pred.csv"
    capsys.readouterr()
    assert main(["predict", "--model", str(default_run), "--data", str(b), "--out", str(out)]) == 0
    assert "depths predicted (KLOGH_PRED, model transformer (mean of 5 members), mD)" in capsys.readouterr().out
    written = pd.read_csv(out, comment="#").sort_values("DEPTH")
    rows = _test_rows(default_run)
    np.testing.assert_allclose(written["KLOGH_PRED_LOG10"].to_numpy(), rows[COLUMN].to_numpy(), rtol=0, atol=CSV)


def test_members_1_is_the_first_member_alone(default_run, wells):
    folder, a, b = wells
    out = folder / "one"
    assert main(["train", "--data", str(a), "--test-data", str(b), "--out", str(out), "--members", "1", *TINY]) == 0
    assert not (out / "model" / "members").exists()
    assert "transformer_members" not in json.loads((out / "config.json").read_text())
    single = WellModel.load(out)
    assert isinstance(single.model_, SequenceRegressor)
    first = WellModel.load(default_run).model_.members[0]
    test = read_well(b)
    np.testing.assert_array_equal(single.predict_log(test), single.predict_log(test, model=first))
    rows = _test_rows(out)
    mean_rows = _test_rows(default_run)
    assert np.abs(rows[COLUMN].to_numpy() - mean_rows[COLUMN].to_numpy()).max() > 1e-4


def test_members_with_an_ensemble_is_refused(wells, capsys):
    folder, a, b = wells
    code = main(["train", "--data", str(a), "--test-data", str(b), "--out", str(folder / "refused"),
                 "--ensemble", "3", "--members", "2", *TINY])
    assert code == 2
    err = capsys.readouterr().err
    assert "--members averages the transformers of one run; with --ensemble K" in err
    assert not (folder / "refused").exists()


# --------------------------------------------------------------------------- the library, float64
def _wm():
    return WellModel(["PHIF", "VSH"], "KLOGH", window=8,
                     model=SequenceRegressor(d_model=4, num_heads=1, epochs=2, batch_size=8, dtype="float64"))


@pytest.fixture(scope="module")
def logs(wells):
    _, a, b = wells
    well_a, well_b = read_well(a), read_well(b)
    return [well_a.interval(1000, 1080)], [well_a.interval(1080.5, 1119.5)], well_b


def test_members_with_validation_wells_equal_models_fitted_alone(logs):
    train, val, test = logs
    host = with_seed(_wm(), 7).fit(train, val_logs=val)
    mean = fit_member_mean(host, train, [7, 3, 5], val_logs=val)
    alone = [with_seed(_wm(), s).fit(train, val_logs=val) for s in (3, 5)]
    expected = np.mean([host.predict_log(test), *(m.predict_log(test) for m in alone)], axis=0)
    got = host.predict_log(test, model=mean)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert [len(m.history_) for m in mean.members[1:]] == [len(m.model_.history_) for m in alone]


def test_member_files_round_trip_and_a_changed_member_is_refused(logs, tmp_path):
    train, _, test = logs
    wm = use_member_mean(with_seed(_wm(), 42).fit(train), train, [42, 0, 1])
    folder = tmp_path / "model"
    wm.save(folder)
    back = WellModel.load(folder)
    assert isinstance(back.model_, MemberMean) and back.model_.seeds == [42, 0, 1]
    np.testing.assert_array_equal(back.predict_log(test), wm.predict_log(test))
    seed_0, seed_1 = (next((folder / "members").glob(f"seed_{s}.*")).name for s in (0, 1))
    # member seed 0 replaced by seed 1's files: each file pair is whole, but not the member saved
    changed = tmp_path / "changed"
    shutil.copytree(folder, changed)
    for name in ("model.json", "model.npz"):
        shutil.copy(changed / "members" / seed_1 / name, changed / "members" / seed_0 / name)
    with pytest.raises(ModelFileError, match=f"{seed_0}: this transformer member is not the one saved"):
        WellModel.load(changed)
    shutil.rmtree(changed / "members" / seed_0)
    shutil.copytree(folder / "members" / seed_0, changed / "members" / seed_0)
    (changed / "members" / seed_1 / "model.json").unlink()
    with pytest.raises(ModelFileError, match=f"{seed_1}/model.json: no readable checksum"):
        WellModel.load(changed)
    shutil.rmtree(changed / "members" / seed_1)
    with pytest.raises(ModelFileError, match=f"{seed_1}: this transformer member is missing"):
        WellModel.load(changed)
    # other members saved over the folder: only theirs remain
    other = use_member_mean(with_seed(_wm(), 42).fit(train), train, [42, 5])
    other.save(folder)
    assert [p.name.split(".")[0] for p in (folder / "members").iterdir()] == ["seed_5"]
    np.testing.assert_array_equal(WellModel.load(folder).predict_log(test), other.predict_log(test))
    # one transformer saved over the folder: the members of the earlier save are removed
    single = with_seed(_wm(), 42).fit(train)
    single.save(folder)
    assert not (folder / "members").exists()
    assert isinstance(WellModel.load(folder).model_, SequenceRegressor)


def test_a_diverging_member_leaves_the_first_one_saved(logs, tmp_path, monkeypatch):
    train, _, test = logs

    def diverge(*args, **kwargs):
        raise DivergenceError("training diverged at epoch 1: loss is nan", epoch=1)

    monkeypatch.setattr("glassformer.wells.member_fit.fit_ensemble", diverge)
    wm = with_seed(_wm(), 42)
    with pytest.raises(DivergenceError, match=r"seeds 0, 1\)\. The member of seed 42, trained alone, was saved to"):
        fit_or_keep_last_good(wm, train, tmp_path, callbacks=(), members=[42, 0, 1])
    saved = WellModel.load(tmp_path / "model")
    assert isinstance(saved.model_, SequenceRegressor)
    np.testing.assert_array_equal(saved.predict_log(test), wm.predict_log(test))


@pytest.mark.parametrize("setting", [{"positional": "rotary"}, {"dropout": 0.1}])
def test_settings_that_cannot_be_batched_train_the_members_one_by_one(logs, setting):
    train, _, test = logs

    def wm():
        return WellModel(["PHIF", "VSH"], "KLOGH", window=8,
                         model=SequenceRegressor(d_model=4, num_heads=1, epochs=2, batch_size=8, dtype="float64",
                                                 **setting))

    host = with_seed(wm(), 42).fit(train)
    mean = fit_member_mean(host, train, [42, 0, 1])
    alone = [with_seed(wm(), s).fit(train) for s in (0, 1)]
    expected = np.mean([host.predict_log(test), *(m.predict_log(test) for m in alone)], axis=0)
    np.testing.assert_allclose(host.predict_log(test, model=mean), expected, rtol=0, atol=1e-12)


def _files(folder):
    """relative path -> bytes of every file under ``folder`` (None for a folder)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else None for p in folder.rglob("*")}


def test_a_save_dying_halfway_leaves_the_previous_model_whole(logs, tmp_path, monkeypatch):
    train, _, test = logs
    first = use_member_mean(with_seed(_wm(), 42).fit(train), train, [42, 0, 1])
    folder = tmp_path / "model"
    first.save(folder)
    before = _files(folder)
    second = use_member_mean(with_seed(_wm(), 42).fit(train), train, [42, 3, 4])
    real, calls = SequenceRegressor.save, []

    def dying(self, directory, **kwargs):         # the second member's folder is made, then the disk is full
        calls.append(directory)
        if len(calls) == 2:
            Path(directory).mkdir(parents=True, exist_ok=True)
            raise OSError(28, "No space left on device")
        return real(self, directory, **kwargs)

    monkeypatch.setattr(SequenceRegressor, "save", dying)
    with pytest.raises(OSError, match="No space left"):
        second.save(folder)
    monkeypatch.undo()
    assert _files(folder) == before                # the first member written is removed again, nothing else moved
    np.testing.assert_array_equal(WellModel.load(folder).predict_log(test), first.predict_log(test))


def test_ctrl_c_while_training_the_other_members_resumes_to_the_same_run(default_run, wells, monkeypatch, capsys):
    folder, a, b = wells
    out = folder / "interrupted"
    args = ["train", "--data", str(a), "--test-data", str(b), "--out", str(out), *TINY]

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("glassformer.wells.last_good.use_member_mean", ctrl_c)
    capsys.readouterr()
    assert main(args) == 130
    monkeypatch.undo()
    line = capsys.readouterr().err.strip()
    assert line.startswith("glassformer: interrupted after the first transformer finished") and "\n" not in line
    command = line.split("resume with: ")[1].split()
    assert command[:2] == ["glassformer", "train"] and command[-2:] == ["--resume", str(out / "checkpoint")]
    assert main(command[1:]) == 0
    np.testing.assert_array_equal(_test_rows(out)[COLUMN].to_numpy(), _test_rows(default_run)[COLUMN].to_numpy())


def test_a_member_folder_outside_members_is_refused(logs, tmp_path):
    train, _, _ = logs
    folder = tmp_path / "model"
    use_member_mean(with_seed(_wm(), 42).fit(train), train, [42, 0, 1]).save(folder)
    meta = json.loads((folder / "model.json").read_text())
    meta["config"]["extra"]["members"]["folders"][0] = "../elsewhere"
    meta["checksum"]["meta"] = _meta_digest(meta)      # a consistent file, as a hand-made one would be
    (folder / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ModelFileError, match=r"member folder '\.\./elsewhere' is not a folder of"):
        WellModel.load(folder)


def test_a_transform_on_an_input_that_is_not_porosity_is_warned_about(wells, capsys):
    folder, a, b = wells
    common = ["--data", str(a), "--test-data", str(b), "--members", "1", *TINY[4:]]   # inputs given below
    assert main(["train", "--inputs", "VSH", "PHIF", "--out", str(folder / "vsh_first"), *common]) == 0
    said = capsys.readouterr()
    slope = json.loads((folder / "vsh_first" / "config.json").read_text())["well_model"]["baselines"][
        "porosity-permeability transform"]["slope"]
    assert slope < 0 and (f"warning: the porosity-permeability transform is fitted on VSH, the first of the inputs, "
                          f"and falls as it rises (slope {slope:.3g})") in said.out + said.err
    assert main(["train", "--inputs", "PHIF", "VSH", "--out", str(folder / "phif_first"), *common]) == 0
    assert "porosity-permeability transform is fitted on" not in "".join(capsys.readouterr())
