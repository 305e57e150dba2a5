"""Training survives faults: checkpoints, SIGINT/SIGTERM, bit-identical --resume, divergence.

The CLI tests run on a small synthetic CSV well written into tmp_path (800 samples at 0.1 m).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glassformer import io
from glassformer.cli import main
from glassformer.errors import DivergenceError, ModelFileError
from glassformer.models import SequenceRegressor
from glassformer.train import ResumeFrom, SaveCheckpoint, TrainingInterrupted

REPO = Path(__file__).resolve().parents[2]

KW = dict(d_model=8, num_heads=2, d_ff=16, optimizer="adam", lr=1e-2, batch_size=8, epochs=10,
          positional="sinusoidal", dropout=0.1, early_stopping_patience=4, validation_fraction=0.2,
          random_state=3, init="torch")


def _data(n=40, seq=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, seq, 2))
    y = X.sum(-1, keepdims=True) + 0.1 * rng.standard_normal((n, seq, 1))
    y[0, 3] = np.nan
    return X, y


def _same_params(a, b):
    sa, sb = a.network_.state_dict(), b.network_.state_dict()
    assert list(sa) == list(sb)
    for k in sa:
        np.testing.assert_array_equal(sa[k], sb[k], err_msg=k)


@pytest.fixture(scope="module")
def reference():
    X, y = _data()
    return SequenceRegressor.chapter_model(**KW).fit(X, y)


def _signal_at_update(model, k, signum):
    """Make ``model`` send ``signum`` to this process just before its ``k``-th training step."""
    orig, count = model._train_step, [0]

    def step(batch):
        count[0] += 1
        if count[0] == k:
            os.kill(os.getpid(), signum)
        return orig(batch)

    model._train_step = step


# ------------------------------------------------------------------------------ the Trainer
@pytest.mark.parametrize("k, signum", [(1, signal.SIGINT), (7, signal.SIGTERM), (13, signal.SIGINT)])
def test_signal_saves_checkpoint_and_resume_is_bit_identical(reference, tmp_path, k, signum):
    """4 updates per epoch: k=1 stops after the first update, 7 mid-epoch 1, 13 after the first of epoch 3."""
    X, y = _data()
    sentinel = signal.getsignal(signum)
    m = SequenceRegressor.chapter_model(**KW)
    _signal_at_update(m, k, signum)
    with pytest.raises(TrainingInterrupted) as info:
        m.fit(X, y, checkpoint_dir=tmp_path / "ck")
    exc = info.value
    assert isinstance(exc, KeyboardInterrupt)
    assert exc.exit_status == 128 + signum and exc.signum == signum
    assert (exc.epoch, exc.batch) == divmod(k, 4)            # stopped right after the k-th update
    assert exc.checkpoint == tmp_path / "ck"
    assert signal.getsignal(signum) is sentinel               # previous handlers restored
    assert m.history_.stop_reason == "interrupted"
    ck = io.load_checkpoint(tmp_path / "ck")                  # loadable, and says where it stopped
    assert ck.trainer_state["next_epoch"] == k // 4 and ck.trainer_state["batch"] == k % 4
    assert ck.trainer_state["global_step"] == k
    assert len(ck.trainer_state["batch_losses"]) == k % 4
    resumed = SequenceRegressor.chapter_model(**KW).fit(X, y, resume_from=tmp_path / "ck")
    _same_params(resumed, reference)
    assert resumed.history_.train_loss == reference.history_.train_loss
    assert resumed.history_.val_loss == reference.history_.val_loss
    assert resumed.history_.stop_reason == reference.history_.stop_reason
    assert resumed.history_.best_epoch == reference.history_.best_epoch


def test_periodic_checkpoints_resume_through_early_stopping(tmp_path):
    """Every 2 epochs; a run resumed from an early checkpoint ends where early stopping ended the original."""
    X, y = _data(seed=1)
    kw = dict(KW, lr=5e-3, epochs=40, early_stopping_patience=3)
    ref = SequenceRegressor.chapter_model(**kw).fit(X, y)
    assert ref.history_.stop_reason == "early_stopping"      # so the best-weights state matters
    assert (len(ref.history_), ref.history_.best_epoch) == (10, 6)
    seen = []
    m = SequenceRegressor.chapter_model(**kw).fit(X, y, checkpoint_dir=tmp_path / "ck", checkpoint_every=2,
                                    callbacks=[lambda epoch, logs: seen.append(
                                        io.load_checkpoint(tmp_path / "ck").trainer_state["epoch"]
                                        if (tmp_path / "ck" / "checkpoint.json").exists() else None)])
    _same_params(m, ref)
    assert seen == [None, 1, 1, 3, 3, 5, 5, 7, 7, 9]
    # interrupted mid epoch 7, one epoch after the best: the best weights travel in the checkpoint
    m1 = SequenceRegressor.chapter_model(**kw)
    _signal_at_update(m1, 30, signal.SIGINT)                # stops after update 30, the 2nd of epoch 7
    with pytest.raises(TrainingInterrupted):
        m1.fit(X, y, callbacks=[SaveCheckpoint(tmp_path / "ck2", every=2)])
    ts = io.load_checkpoint(tmp_path / "ck2").trainer_state
    assert (ts["next_epoch"], ts["batch"], ts["wait"], ts["history"]["best_epoch"]) == (7, 2, 0, 6)
    assert ts["best_params"] is not None
    r = SequenceRegressor.chapter_model(**kw).fit(X, y, callbacks=[ResumeFrom(tmp_path / "ck2")])
    _same_params(r, ref)
    assert r.history_.best_epoch == ref.history_.best_epoch and r.history_.stop_reason == "early_stopping"


def test_resume_refuses_a_checkpoint_of_another_run(tmp_path):
    X, y = _data()
    kw = dict(KW, epochs=2)
    SequenceRegressor.chapter_model(**kw).fit(X, y, checkpoint_dir=tmp_path / "ck")
    with pytest.raises(ModelFileError, match=r"another run \(epochs: checkpoint 2, this run 3\)"):
        SequenceRegressor.chapter_model(**dict(kw, epochs=3)).fit(X, y, resume_from=tmp_path / "ck")
    with pytest.raises(ModelFileError, match=r"n_rows: checkpoint 32, this run 24"):
        SequenceRegressor.chapter_model(**kw).fit(X[:30], y[:30], resume_from=tmp_path / "ck")
    with pytest.raises(ModelFileError, match="does not fit this model"):
        SequenceRegressor.chapter_model(**dict(kw, d_model=4, num_heads=1, d_ff=8)).fit(X, y, resume_from=tmp_path / "ck")
    with pytest.raises(ModelFileError, match="no checkpoint found"):
        SequenceRegressor.chapter_model(**kw).fit(X, y, resume_from=tmp_path / "nothing")


def test_no_handlers_outside_the_main_thread_and_none_left_behind():
    X, y = _data(n=10)
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    errors = []

    def work():
        try:
            SequenceRegressor.chapter_model(**dict(KW, epochs=2, validation_fraction=None)).fit(X, y)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert errors == []
    SequenceRegressor.chapter_model(**dict(KW, epochs=1)).fit(X, y)
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_regressor_save_killed_halfway_keeps_the_previous_model(tmp_path, monkeypatch):
    X, y = _data(n=10)
    m = SequenceRegressor.chapter_model(**dict(KW, epochs=1)).fit(X, y)
    m.save(tmp_path / "m")
    before = {p.name: p.read_bytes() for p in (tmp_path / "m").iterdir()}
    m2 = SequenceRegressor.chapter_model(**dict(KW, epochs=2)).fit(X, y)
    real = np.lib.format.write_array
    calls = []

    def dying(fh, arr, **kw):              # dies after the first array has been written
        if calls:
            raise OSError(28, "No space left on device")
        calls.append(1)
        return real(fh, arr, **kw)

    monkeypatch.setattr(np.lib.format, "write_array", dying)
    with pytest.raises(OSError, match="No space"):
        m2.save(tmp_path / "m", overwrite=True)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in (tmp_path / "m").iterdir()} == before   # no temp file left either
    _same_params(SequenceRegressor.load(tmp_path / "m"), m)


# ------------------------------------------------------------------------------ the CLI
@pytest.fixture(scope="module")
def well_csv(tmp_path_factory):
    rng = np.random.default_rng(7)
    n = 800
    depth = 1000 + 0.1 * np.arange(n)
    phi = 0.2 + 0.08 * np.sin(depth / 3) + 0.02 * rng.standard_normal(n)
    vsh = np.clip(0.3 - 0.5 * (phi - 0.2) + 0.05 * rng.standard_normal(n), 0, 1)
    k = 10 ** (12 * phi - 1 + 0.2 * rng.standard_normal(n))
    k[100:110] = np.nan
    path = tmp_path_factory.mktemp("well") / "synthetic_well.csv"
    pd.DataFrame({"DEPTH": depth, "PHIF": phi, "VSH": vsh, "KLOGH": k}).to_csv(path, index=False)
    return path


def _train_args(csv, out, epochs=40):
    # lr 1e-4: the validation loss keeps improving, so early stopping cannot end the run before the signal
    return ["train", "--data", str(csv), "--inputs", "PHIF", "VSH", "--target", "KLOGH", "--log-target",
            "--train-depth", "1000:1040", "--test-depth", "1060:1079", "--window", "16", "--epochs", str(epochs),
            "--d-model", "8", "--lr", "1e-4", "--seed", "5", "--out", str(out), "--no-progress"]


def _model_arrays(run):
    with np.load(Path(run) / "model" / "model.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def test_sigint_to_cli_subprocess_then_resume_reaches_the_uninterrupted_result(well_csv, tmp_path, capsys):
    run = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "glassformer", *_train_args(well_csv, run)], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (run / "checkpoint" / "checkpoint.json").exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no checkpoint appeared"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("glassformer: interrupted by SIGINT after epoch ")
    assert f"checkpoint saved to {run / 'checkpoint'}; resume with: glassformer train " in lines[0]
    ck = io.load_checkpoint(run / "checkpoint")              # loadable
    stopped = ck.trainer_state["next_epoch"]
    assert 1 <= stopped < 40 and ck.trainer_state["history"]["stop_reason"] == "interrupted"
    assert not (run / "model").exists()

    # resume with exactly the command the message printed (plus a cheaper checkpoint period)
    resume_cmd = shlex.split(lines[0].split("resume with: ", 1)[1])
    assert resume_cmd[:2] == ["glassformer", "train"] and resume_cmd[-2:] == ["--resume", str(run / "checkpoint")]
    i = resume_cmd.index("--inputs")                         # the documented form, not --inputs PHIF --inputs VSH
    assert resume_cmd[i:i + 3] == ["--inputs", "PHIF", "VSH"] and resume_cmd.count("--inputs") == 1
    assert main(resume_cmd[1:] + ["--checkpoint-every", "1000"]) == 0
    assert main(_train_args(well_csv, tmp_path / "ref") + ["--checkpoint-every", "1000"]) == 0
    capsys.readouterr()
    ref, got = _model_arrays(tmp_path / "ref"), _model_arrays(run)
    assert list(ref) == list(got)
    for k in ref:
        assert ref[k].dtype == np.float64
        np.testing.assert_array_equal(got[k], ref[k], err_msg=k)
    hist = json.loads((run / "metrics.json").read_text())["training"]
    assert hist["epochs_run"] == 40 and hist["stop_reason"] == "completed"


def test_cli_resume_with_other_options_is_refused(well_csv, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(_train_args(well_csv, run, epochs=1)) == 0
    capsys.readouterr()
    args = _train_args(well_csv, run, epochs=1)
    args[args.index("--lr") + 1] = "1e-3"
    assert main(args + ["--resume", str(run / "checkpoint")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--lr is 0.0001 there, 0.001 here" in err[0]
    (tmp_path / "fake").mkdir()
    assert main(_train_args(well_csv, tmp_path / "other", epochs=1) + ["--resume", str(tmp_path / "fake")]) == 2
    assert "no checkpoint found" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()            # a run refused on its inputs leaves no folder


def test_cli_divergence_exits_2_names_the_layer_and_keeps_the_last_good_model(well_csv, tmp_path, capsys):
    run = tmp_path / "run"
    args = _train_args(well_csv, run, epochs=3)
    args[args.index("--lr") + 1] = "1e300"
    rc = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert "training diverged at epoch 0" in err[0] and "non-finite values first produced by encoder.layers.0" in err[0]
    assert f"The last good model was saved to {run / 'model'}" in err[0]
    from glassformer.wells import WellModel

    wm = WellModel.load(run)                            # usable by `glassformer predict`
    fresh = SequenceRegressor.chapter_model(**{**wm.model_.get_params(), "warm_start": False})
    fresh.build_network(wm.model_.n_features_in_)
    _same_params(wm.model_, fresh)                          # diverged in epoch 0: the initial weights
    assert wm.model_.history_.stop_reason == "diverged"
    out = tmp_path / "pred.csv"
    assert main(["predict", "--model", str(run), "--data", str(well_csv), "--out", str(out)]) == 0
    assert np.isfinite(pd.read_csv(out)["KLOGH_PRED"].dropna()).all()


def test_divergence_error_names_first_layer_and_tensor():
    X, y = _data(n=16)
    m = SequenceRegressor.chapter_model(**dict(KW, lr=1e300, epochs=3, validation_fraction=None, dropout=0.0))
    with pytest.raises(DivergenceError, match=r"diverged at epoch 0 .*encoder\.layers\.0\.\S+ \(\w+\): output") as info:
        m.fit(X, y)
    assert info.value.epoch == 0 and info.value.where.startswith("encoder.layers.0.")
    initial = SequenceRegressor.chapter_model(**dict(KW, lr=1e300, epochs=3, validation_fraction=None, dropout=0.0))
    initial.build_network(2)
    _same_params(m, initial)


def test_cli_finite_runaway_exits_2_and_keeps_the_last_good_model(well_csv, tmp_path, capsys):
    """lr 1e6 (Adam, clipped): losses ~1e25 that never overflow are stopped by the growth guard."""
    run = tmp_path / "run"
    args = _train_args(well_csv, run, epochs=10)
    args[args.index("--lr") + 1] = "1e6"
    rc = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert "training diverged at epoch " in err[0] and "exceeds 10000 x the initial loss" in err[0]
    assert "lower the learning rate (lr / --lr)" in err[0] and "grad_clip" not in err[0]
    assert f"The last good model was saved to {run / 'model'}" in err[0]
    from glassformer.wells import WellModel

    wm = WellModel.load(run)
    hist = wm.model_.history_
    assert hist.stop_reason == "diverged" and all(v <= 1e4 * 10 for v in hist.train_loss)
    if "start of training" in err[0]:                        # epoch 0 or 1 ran away: the initial weights
        fresh = SequenceRegressor.chapter_model(**{**wm.model_.get_params(), "warm_start": False})
        fresh.build_network(wm.model_.n_features_in_)
        _same_params(wm.model_, fresh)
    out = tmp_path / "pred.csv"
    assert main(["predict", "--model", str(run), "--data", str(well_csv), "--out", str(out)]) == 0
    assert np.isfinite(pd.read_csv(out)["KLOGH_PRED"].dropna()).all()


def test_checkpoint_keeps_the_growth_guards_reference_loss(tmp_path):
    X, y = _data()
    m = SequenceRegressor.chapter_model(**dict(KW, epochs=2))
    orig, losses = m._train_step, []
    m._train_step = lambda batch: losses.append(float(orig(batch))) or losses[-1]
    m.fit(X, y, checkpoint_dir=tmp_path / "ck")
    assert len(losses) == 8                                   # 2 epochs x 4 batches
    assert io.load_checkpoint(tmp_path / "ck").trainer_state["reference_loss"] == losses[0]   # the first batch's
