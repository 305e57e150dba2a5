"""`glassformer sweep`, `compare --seeds`, `cv` and `train --ensemble` on a Dask cluster equal their serial runs.

One real ``LocalCluster`` (2 process workers on 127.0.0.1, one thread each) is started for the
module and handed to the commands as ``--scheduler tcp://HOST:PORT``, as a user's own cluster
would be.  The well is hand-made (400 samples at 0.1 m); the fits are tiny (1 epoch).
"""

from __future__ import annotations

import json
import re
import os

import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main

distributed = pytest.importorskip("distributed", reason="the Dask engine needs the distributed extra")


@pytest.fixture(scope="module")
def cluster():
    """Process workers with one thread each and glibc's malloc defaults, as the README asks of a user's cluster."""
    import logging

    import dask

    from glassformer.parallel.cluster import _pre_spawn_environ

    one = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": _pre_spawn_environ(dask)}):
        c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                     dashboard_address=None, silence_logs=logging.CRITICAL, env=one)
    with c:
        yield c.scheduler_address


@pytest.fixture(scope="module")
def well(tmp_path_factory):
    rng = np.random.default_rng(11)
    depth = 2000 + 0.1 * np.arange(400)
    phi = 0.2 + 0.08 * np.sin(depth / 3) + 0.02 * rng.standard_normal(400)
    path = tmp_path_factory.mktemp("well") / "small.csv"
    pd.DataFrame({"DEPTH": depth, "PHIF": phi, "VSH": 0.3 - 0.5 * (phi - 0.2),
                  "KLOGH": 10 ** (12 * phi - 1 + 0.3 * np.sin(depth))}).to_csv(path, index=False)
    return path


def _without_times(obj):
    """Metrics without what differs between two runs of the same work: wall-clock times, and the run
    folder that the recommended predict command names."""
    if isinstance(obj, dict):
        return {k: _without_times(v) for k, v in obj.items() if k not in ("fit_s", "train_s", "train_s_sd", "seconds")}
    if isinstance(obj, list):
        return [_without_times(v) for v in obj]
    if isinstance(obj, str):
        return re.sub(r"--model \S+", "--model RUN", obj)
    return obj


def _model_bytes(folder) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("model.np*"))}


def test_sweep_on_a_cluster_equals_the_serial_sweep(cluster, well, tmp_path):
    args = ["sweep", "--data", str(well), "--inputs", "PHIF", "VSH", "--target", "KLOGH", "--log-target",
            "--train-depth", "2000:2025", "--val-depth", "2025:2030", "--test-depth", "2030:2039.9",
            "--d-model", "4", "8", "--heads", "2", "--window", "8", "--lr", "0.01", "--epochs", "1"]
    assert main([*args, "--out", str(tmp_path / "serial")]) == 0
    assert main([*args, "--out", str(tmp_path / "dask"), "--scheduler", cluster]) == 0
    serial, dask = (json.loads((tmp_path / n / "metrics.json").read_text()) for n in ("serial", "dask"))
    assert _without_times(dask) == _without_times(serial)
    assert len(serial["grid"]) == 2 and serial["selection"]["split"] == "validation"
    assert _model_bytes(tmp_path / "dask") == _model_bytes(tmp_path / "serial")
    assert len(_model_bytes(tmp_path / "serial")) == 3           # two settings and the chosen copy
    rows = pd.read_csv(tmp_path / "serial" / "sweep.csv")
    assert rows.loc[rows["chosen"], "val_rmse"].item() == rows["val_rmse"].min()


def test_sweep_needs_validation_data(well, tmp_path, capsys):
    assert main(["sweep", "--data", str(well), "--inputs", "PHIF", "--target", "KLOGH", "--train-depth", "2000:2025",
                 "--test-depth", "2030:2039", "--out", str(tmp_path / "o")]) == 2
    assert "sweep chooses on validation data: give --val-depth" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_validation_overlapping_training_is_refused_before_any_fit(well, tmp_path, capsys):
    assert main(["sweep", "--data", str(well), "--inputs", "PHIF", "--target", "KLOGH", "--train-depth", "2000:2025",
                 "--val-depth", "2020:2030", "--out", str(tmp_path / "o")]) == 2
    assert "--val-depth 2020:2030 overlaps --train-depth 2000:2025" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_compare_seeds_on_a_cluster_equal_the_serial_run(cluster, well, tmp_path):
    args = ["compare", "--data", str(well), "--inputs", "PHIF", "VSH", "--target", "KLOGH", "--train-depth",
            "2000:2025", "--test-depth", "2025:2035", "--window", "16", "--epochs", "1", "--hidden-size", "2",
            "--seeds", "2"]
    assert main([*args, "--out", str(tmp_path / "serial")]) == 0
    assert main([*args, "--out", str(tmp_path / "dask"), "--scheduler", cluster]) == 0
    serial, dask = (json.loads((tmp_path / n / "metrics.json").read_text()) for n in ("serial", "dask"))
    assert _without_times(dask) == _without_times(serial)
    assert serial["comparison"]["seeds"] == [42, 0]
    models = _model_bytes(tmp_path / "serial")
    assert sorted(models) == ["model/model.npz", "model_lstm/model.npz", "seeds/seed_0/model/model.npz",
                              "seeds/seed_0/model_lstm/model.npz"]
    assert _model_bytes(tmp_path / "dask") == models
    predictions = [(tmp_path / n / "predictions.csv").read_bytes() for n in ("serial", "dask")]
    assert predictions[0] == predictions[1]
    assert os.path.isfile(tmp_path / "dask" / "report.html")


@pytest.fixture(scope="module")
def wells(tmp_path_factory):
    """Three hand-made wells at different depths (the second and third shifted copies with other noise)."""
    rng = np.random.default_rng(12)
    root = tmp_path_factory.mktemp("wells")
    paths = []
    for i, top in enumerate((2000.0, 2600.0, 3100.0)):
        depth = top + 0.1 * np.arange(300)
        phi = 0.2 + 0.08 * np.sin(depth / (3 + i)) + 0.02 * rng.standard_normal(300)
        paths.append(root / f"W-{i + 1}.csv")
        pd.DataFrame({"DEPTH": depth, "PHIF": phi, "VSH": 0.3 - 0.5 * (phi - 0.2),
                      "KLOGH": 10 ** (12 * phi - 1 + 0.3 * np.sin(depth))}).to_csv(paths[-1], index=False)
    return paths


def test_cv_folds_on_a_cluster_equal_the_serial_run(cluster, wells, tmp_path):
    args = ["cv", *(a for p in wells for a in ("--data", str(p))), "--inputs", "PHIF", "VSH", "--target", "KLOGH",
            "--log-target", "--window", "8", "--epochs", "1", "--hidden-size", "2", "--d-model", "4"]
    assert main([*args, "--out", str(tmp_path / "serial")]) == 0
    assert main([*args, "--out", str(tmp_path / "dask"), "--scheduler", cluster]) == 0
    serial, dask = (json.loads((tmp_path / n / "metrics.json").read_text()) for n in ("serial", "dask"))
    assert _without_times(dask) == _without_times(serial)
    held_out = {r["well"] for r in serial["records"]}
    assert held_out == {"W-1", "W-2", "W-3"}, held_out


def test_ensemble_members_on_a_cluster_equal_the_serial_run(cluster, wells, tmp_path):
    args = ["train", "--data", str(wells[0]), "--validation-data", str(wells[1]), "--test-data", str(wells[2]),
            "--inputs", "PHIF", "VSH", "--target", "KLOGH", "--log-target", "--window", "8", "--epochs", "1",
            "--d-model", "4", "--ensemble", "2", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "serial")]) == 0
    assert main([*args, "--out", str(tmp_path / "dask"), "--scheduler", cluster]) == 0
    models = _model_bytes(tmp_path / "serial")
    assert sorted(models) == ["ensembles/log/member_00/model.npz", "ensembles/log/member_01/model.npz",
                              "model/model.npz"]
    assert _model_bytes(tmp_path / "dask") == models
    predictions = [(tmp_path / n / "predictions.csv").read_bytes() for n in ("serial", "dask")]
    assert predictions[0] == predictions[1]


def test_workers_with_dasks_malloc_trim_setting_are_warned_about(monkeypatch):
    """The Dask nanny's MALLOC_TRIM_THRESHOLD_ makes NumPy training several times slower: say so on connecting."""
    import logging

    from glassformer.parallel import make_engine

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")         # in-process workers share this environment
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None, silence_logs=logging.CRITICAL) as c:
        with pytest.warns(UserWarning, match=r"run with MALLOC_TRIM_THRESHOLD_ set .* --no-nanny"):
            with make_engine(scheduler=c.scheduler_address):
                pass
