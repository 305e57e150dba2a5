"""Every engine returns what the serial engine returns, bit for bit, and keeps going past bad items.

The engines are real: a joblib (loky) pool of 2 processes and a Dask ``LocalCluster`` with 2
process workers on 127.0.0.1, each started once for this module.  The tasks do real work: train a
small transformer on demonstration 2's data ("the next depth") from a seed, or load a saved model
folder and predict.  The task functions are top-level functions of this module, which the worker
processes import by name.
"""

from __future__ import annotations

import functools
import logging
import os

import numpy as np
import pytest

from glassformer import SequenceRegressor
from glassformer.data.synthetic import neighbor_dataset
from glassformer.errors import CurveNotFoundError, InputError
from glassformer.parallel import SerialEngine, TaskOutcome, make_engine

pytest.importorskip("distributed", reason="the Dask engine needs the distributed extra")


# --------------------------------------------------------------------------- tasks (run in workers)
def _small_model(seed: int, epochs: int = 4) -> SequenceRegressor:
    return SequenceRegressor(d_model=8, num_heads=2, d_ff=16, attn_out_proj=True, positional="sinusoidal",
                             optimizer="adam", lr=0.01, batch_size=16, epochs=epochs, init="torch", random_state=seed)


def fit_and_predict(seed: int) -> dict:
    """An ensemble member: seeded data, seeded initialisation and shuffling, a few Adam epochs."""
    X, y = neighbor_dataset(n_sequences=48, seq_length=7, seed=seed)         # (48, 7, 1) each
    model = _small_model(seed).fit(X, y)
    return {"pred": model.predict(X[:8]), "loss": np.asarray(model.history_.train_loss)}


def predict_from_folder(model_dir: str, seed: int) -> np.ndarray:
    """Batch prediction: the model travels as its .npz + JSON folder, the data as a seed."""
    X, _ = neighbor_dataset(n_sequences=32, seq_length=7, seed=seed)
    return SequenceRegressor.load(model_dir).predict(X)


def fails_on_multiples_of_three(i: int) -> float:
    if i % 3 == 0:
        raise CurveNotFoundError(f"well W-{i}.las: curve 'PHIF' not found;\navailable: DEPT, GR")
    return float(np.sqrt(i))


def blas_threads_here(_) -> dict:
    from threadpoolctl import threadpool_info

    blas = {d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"}
    return {"pid": os.getpid(), "blas": sorted(blas)}


def exits_on_two(i: int) -> int:
    if i == 2:
        os._exit(3)  # a worker killed outright (out of memory, a crash in a C library)
    return i


def pid(_) -> int:
    return os.getpid()


def malloc_trim_here(_) -> str | None:
    return os.environ.get("MALLOC_TRIM_THRESHOLD_")


# --------------------------------------------------------------------------- engines
@pytest.fixture(scope="module")
def pool():
    with make_engine(jobs=2) as engine:
        yield engine


@pytest.fixture(scope="module")
def cluster():
    with make_engine(scheduler="local", jobs=2) as engine:
        yield engine


@pytest.fixture(params=["serial", "joblib", "dask"])
def engine(request, pool, cluster):
    return {"serial": SerialEngine(), "joblib": pool, "dask": cluster}[request.param]


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory) -> str:
    X, y = neighbor_dataset(n_sequences=48, seq_length=7, seed=5)
    folder = tmp_path_factory.mktemp("parallel") / "model"
    _small_model(5, epochs=6).fit(X, y).save(folder)
    return str(folder)


# --------------------------------------------------------------------------- identical results
def test_the_engines_are_what_they_say(pool, cluster):
    assert pool.kind == "joblib" and pool.n_workers == 2
    assert cluster.kind == "dask" and cluster.n_workers == 2
    assert cluster.describe() == "Dask LocalCluster on 127.0.0.1, 2 workers, 1 BLAS thread(s) per task"
    # the work really leaves this process, and spreads over both workers
    for engine in (pool, cluster):
        pids = set(engine.map(pid, range(12)))
        assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert SerialEngine().map(pid, range(3)) == [os.getpid()] * 3


def test_training_in_workers_equals_serial_bit_for_bit(pool, cluster):
    seeds = [3, 11, 42]
    serial = SerialEngine().map(fit_and_predict, seeds)
    # the task is not trivial: the loss falls and different seeds give different models
    for out in serial:
        assert out["loss"][-1] < out["loss"][0] and np.isfinite(out["pred"]).all()
    assert not np.array_equal(serial[0]["pred"], serial[1]["pred"])
    for engine in (pool, cluster):
        for got, want in zip(engine.map(fit_and_predict, seeds), serial):
            assert got["pred"].dtype == want["pred"].dtype == np.float64
            assert got["pred"].tobytes() == want["pred"].tobytes(), engine.describe()
            assert got["loss"].tobytes() == want["loss"].tobytes(), engine.describe()


def test_workers_load_the_saved_model_folder_and_predict_identically(pool, cluster, saved_model):
    task = functools.partial(predict_from_folder, saved_model)
    direct = [SequenceRegressor.load(saved_model).predict(neighbor_dataset(32, 7, seed=s)[0]) for s in (1, 2)]
    serial = SerialEngine().map(task, [1, 2])
    assert all(np.allclose(a, b, rtol=1e-12, atol=1e-14) for a, b in zip(serial, direct))
    for engine in (pool, cluster):
        got = engine.map(task, [1, 2])
        assert [g.tobytes() for g in got] == [s.tobytes() for s in serial], engine.describe()


def test_a_client_of_a_running_cluster_gives_the_same_results():
    import dask  # the distributed extra, optional
    import distributed

    from glassformer.parallel.cluster import _pre_spawn_environ

    one = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": _pre_spawn_environ(dask)}):
        running = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                           dashboard_address=":0", silence_logs=logging.CRITICAL, env=one)
    with running:
        with make_engine(scheduler=running.scheduler_address) as remote:
            assert remote.kind == "dask" and remote.n_workers == 2
            got = remote.map(fit_and_predict, [7])
        with distributed.Client(running, set_as_default=False) as client:   # closing a client leaves it running
            assert len(client.scheduler_info()["workers"]) == 2
    want = SerialEngine().map(fit_and_predict, [7])
    assert got[0]["pred"].tobytes() == want[0]["pred"].tobytes()


def test_each_worker_computes_with_one_blas_thread(pool, cluster):
    for engine in (pool, cluster):
        rows = engine.map(blas_threads_here, range(6))
        assert all(r["blas"] == [1] for r in rows), rows
        assert all(r["pid"] != os.getpid() for r in rows)


def test_local_cluster_workers_keep_the_default_malloc_settings(cluster):
    """Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in new workers, which made NumPy training 4x slower there."""
    assert cluster.map(malloc_trim_here, range(4)) == [None] * 4


def test_the_serial_engine_limits_blas_only_while_a_task_runs():
    from threadpoolctl import threadpool_info

    before = [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]
    assert SerialEngine().map(blas_threads_here, [0])[0]["blas"] == [1]
    assert SerialEngine(blas_threads=None).map(blas_threads_here, [0])[0]["blas"] == sorted(set(before))
    assert [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"] == before


# --------------------------------------------------------------------------- fault tolerance
def test_one_failing_task_leaves_a_row_and_the_others_complete(engine):
    seen = []
    outcomes = engine.run(fails_on_multiples_of_three, range(7), on_outcome=seen.append)
    assert [o.index for o in outcomes] == list(range(7))
    assert sorted(o.index for o in seen) == list(range(7))        # each reported once, as it arrived
    for o in outcomes:
        assert isinstance(o, TaskOutcome) and o.seconds >= 0 and o.worker
        if o.index % 3 == 0:
            assert not o.ok and o.status == "error" and o.value is None
            assert o.error == f"CurveNotFoundError: well W-{o.index}.las: curve 'PHIF' not found; available: DEPT, GR"
            assert o.error_type == "CurveNotFoundError" and "Traceback" in o.traceback
        else:
            assert o.ok and o.error == "" and o.value == np.sqrt(o.index)


def test_map_raises_the_task_error_itself(engine):
    with pytest.raises(CurveNotFoundError, match="W-3.las: curve 'PHIF' not found"):
        engine.map(fails_on_multiples_of_three, [1, 2, 3, 4])


def test_empty_input_and_refused_task_functions(engine):
    assert engine.map(pid, []) == [] and engine.run(pid, iter(())) == []

    def nested(x):
        return x

    for bad in (lambda x: x, nested, engine.describe, functools.partial(nested)):
        with pytest.raises(InputError, match="top-level function"):
            engine.run(bad, [1])


def test_a_dying_dask_worker_fails_only_its_task(cluster):
    outcomes = cluster.run(exits_on_two, range(6))
    assert [o.status for o in outcomes] == ["ok", "ok", "error", "ok", "ok", "ok"]
    assert outcomes[2].error.startswith("KilledWorker:") and outcomes[2].error.count("\n") == 0
    assert [o.value for o in outcomes if o.ok] == [0, 1, 3, 4, 5]
    assert cluster.map(pid, [0]), "the nanny restarts the worker"


def test_a_dying_pool_worker_gives_a_row_for_every_task(pool):
    outcomes = pool.run(exits_on_two, range(6))
    assert [o.index for o in outcomes] == list(range(6))
    assert outcomes[2].status == "error" and outcomes[2].error.startswith("TerminatedWorkerError:")
    assert all(o.value == o.index for o in outcomes if o.ok)
    assert pool.map(pid, range(2)), "the pool starts new workers for the next call"
