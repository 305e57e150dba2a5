"""Tasks on a Dask cluster: a ``LocalCluster`` started here (``--scheduler local``) or a running one
(``--scheduler tcp://HOST:PORT``), through ``distributed.Client``.

A local cluster has process workers on 127.0.0.1 with one thread each, closed with the engine.  On
a cluster of your own, start the workers with ``--nthreads 1`` (tasks change the BLAS thread
limit of their process, which threads of one worker would share) and install the same glassformer
and NumPy on every machine: the engine checks the first when it connects and warns about the second.
Workers import the task functions by name and read models from the ``.npz`` + JSON folders the
items name, so those paths must be visible to every worker (a shared file system on a cluster).
"""

from __future__ import annotations

import logging
import os
import uuid
import warnings
from typing import Callable, Iterator

import numpy as np

from .._version import __version__
from ..errors import ClusterError, MissingDependencyError
from .engine import Engine, TaskOutcome, available_cores, check_jobs, failed_outcome

__all__ = ["DaskEngine", "import_distributed"]

#: What worker processes of a local cluster get in their environment before NumPy is imported.
_ONE_THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def import_distributed():
    """``distributed``, or :class:`MissingDependencyError` with the command that installs it."""
    try:
        import distributed   # optional dependency (the distributed extra): imported when a Dask engine starts
    except ImportError as exc:
        raise MissingDependencyError(
            "the Dask engine (scheduler 'local' or 'tcp://HOST:PORT') needs Dask, which is not installed: "
            f'pip install -e ".[distributed]" (or pip install "dask[distributed]"); {exc}') from None
    return distributed


def _pre_spawn_environ(dask) -> dict:
    """Dask's environment for new worker processes, without ``MALLOC_TRIM_THRESHOLD_``.

    Dask sets it to 64 KiB so that workers hand freed memory back to the system at once; glibc then
    also stops raising its mmap threshold, so every NumPy temporary above 128 KiB is mapped and
    unmapped afresh.  The training loop makes thousands of those: with the setting, fitting a well
    model in a Dask worker took 4 times as long (8.7 s instead of 2.0 s, measured with
    benchmarks/field_scale.py's ensemble member).
    """
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})
    environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    return environ


def worker_environment() -> dict:
    """Versions a worker runs, and its malloc trim setting (sent to every worker when the engine connects)."""
    return {"glassformer": __version__, "numpy": np.__version__,
            "malloc_trim": os.environ.get("MALLOC_TRIM_THRESHOLD_")}


class DaskEngine(Engine):
    """Tasks on a Dask cluster.

    Parameters
    ----------
    address : str or None
        ``"tcp://HOST:PORT"`` of a running scheduler, or None to start a ``LocalCluster``.
    n_workers : int or None
        Worker processes of the local cluster (None: one per core); must be None with ``address``.
    blas_threads : int or None, default 1
        BLAS/OpenMP threads per task (see :class:`~glassformer.parallel.Engine`).
    connect_timeout : float, default 5.0
        Seconds to wait for the scheduler, and then for at least one worker.

    Raises
    ------
    MissingDependencyError
        Dask is not installed (on :meth:`start`).
    ClusterError
        The scheduler cannot be reached within ``connect_timeout``, has no worker, or its workers
        cannot import glassformer or run another version of it (on :meth:`start`).
    """

    kind = "dask"

    def __init__(self, address: str | None = None, n_workers: int | None = None, blas_threads: int | None = 1,
                 connect_timeout: float = 5.0):
        super().__init__(blas_threads=blas_threads)
        self.address = address
        self.local_workers = check_jobs(n_workers, "n_workers")
        self.connect_timeout = connect_timeout
        self._cluster = None
        self._client = None

    # ----- lifecycle
    def start(self) -> "DaskEngine":
        """Start the local cluster or connect to ``address``, then check the workers; returns ``self``."""
        if self._client is not None:
            return self
        distributed = import_distributed()
        try:
            if self.address is None:
                self._start_local(distributed)
            else:
                self._connect(distributed)
            self._check_workers()
        except BaseException:
            self.close()
            raise
        return self

    def _start_local(self, distributed) -> None:
        import dask   # optional, as distributed above (installed with it)

        n = self.local_workers or available_cores()
        env = {name: str(self.blas_threads) for name in _ONE_THREAD_ENV} if self.blas_threads else {}
        try:
            with dask.config.set({"distributed.nanny.pre-spawn-environ": _pre_spawn_environ(dask)}):
                self._cluster = distributed.LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                    silence_logs=logging.CRITICAL, env=env)
        except Exception as exc:
            raise ClusterError(f"could not start a Dask LocalCluster with {n} workers on 127.0.0.1: {exc}") from exc
        self._client = distributed.Client(self._cluster, set_as_default=False)

    def _connect(self, distributed) -> None:
        try:
            self._client = distributed.Client(self.address, timeout=self.connect_timeout, set_as_default=False)
        except OSError:  # refused, unknown host or silent: Dask retries until the timeout, then says so
            raise ClusterError(
                f"cannot reach the Dask scheduler at {self.address} within {self.connect_timeout:g} s: is "
                "`dask scheduler` running there, and the port open? (--scheduler local starts a cluster on "
                "this machine)") from None

    def _check_workers(self) -> None:
        where = self.address or "the local cluster"
        try:
            self._client.wait_for_workers(1, timeout=self.connect_timeout)
        except TimeoutError:
            raise ClusterError(f"the Dask scheduler at {where} has no workers after {self.connect_timeout:g} s; "
                               "start some with `dask worker ADDRESS --nthreads 1`") from None
        try:
            found = self._client.run(worker_environment)
        except Exception as exc:
            raise ClusterError(f"the Dask workers of {where} cannot run glassformer ({type(exc).__name__}: {exc}); "
                               "install the same glassformer on every worker") from None
        mine = worker_environment()
        for worker, versions in found.items():
            if versions["glassformer"] != mine["glassformer"]:
                raise ClusterError(f"Dask worker {worker} runs glassformer {versions['glassformer']}, this process "
                                   f"{mine['glassformer']}: install the same version on every worker")
            if versions["numpy"] != mine["numpy"]:
                warnings.warn(f"Dask worker {worker} runs NumPy {versions['numpy']}, this process {mine['numpy']}: "
                              "results may differ from a serial run in the last digits", stacklevel=3)
        trimmed = sorted(w for w, versions in found.items() if versions.get("malloc_trim"))
        if trimmed:
            warnings.warn(f"Dask workers {', '.join(trimmed)} run with MALLOC_TRIM_THRESHOLD_ set (the Dask nanny's "
                          "default), which makes NumPy training several times slower; start them with "
                          "`dask worker ADDRESS --nthreads 1 --no-nanny`", stacklevel=3)
        self._warn_threads()

    def _warn_threads(self) -> None:
        threads = {w: info.get("nthreads", 1) for w, info in self._client.scheduler_info()["workers"].items()}
        shared = sorted(w for w, n in threads.items() if n > 1)
        if shared and self.blas_threads is not None:
            warnings.warn(f"Dask workers {', '.join(shared)} run several threads: tasks sharing a process share its "
                          "BLAS thread limit; start workers with --nthreads 1 for results identical to a serial run",
                          stacklevel=3)

    def close(self) -> None:
        """Disconnect; a local cluster is shut down, a remote one is left running."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()

    @property
    def n_workers(self) -> int:
        if self._client is None:
            return self.local_workers or 0
        return len(self._client.scheduler_info()["workers"])

    def describe(self) -> str:
        which = f"Dask cluster at {self.address}" if self.address else "Dask LocalCluster on 127.0.0.1"
        return f"{which}, {self.n_workers} workers, {self.blas_threads or 'default'} BLAS thread(s) per task"

    # ----- the backend
    def _submit(self, task: Callable, items: list) -> list:
        fn = task.args[0]                       # task is partial(call_task or call_guarded, fn, ...)
        name = getattr(getattr(fn, "func", fn), "__name__", "task")
        token = uuid.uuid4().hex[:12]
        keys = [f"{name}-{token}-{i}" for i in range(len(items))]  # readable on the dashboard
        return self._client.map(task, items, key=keys, pure=False)

    def _map(self, task: Callable, items: list) -> list:
        futures = self._submit(task, items)
        try:
            return self._client.gather(futures)
        finally:
            self._client.cancel(futures)

    def _completed(self, task: Callable, pairs: list) -> Iterator[TaskOutcome]:
        distributed = import_distributed()   # optional dependency, imported when the engine starts
        as_completed = distributed.as_completed

        futures = self._submit(task, pairs)
        index_of = {f.key: i for f, (i, _) in zip(futures, pairs)}
        arrived = as_completed(futures, with_results=True, raise_errors=False, loop=self._client.loop)
        try:
            for future, result in arrived:       # results are fetched by the client's event loop
                if future.status == "finished":
                    yield result
                else:  # the worker died or the scheduler lost the task: (type, exception, traceback)
                    exc = result[1].with_traceback(result[2]) if isinstance(result, tuple) else result
                    yield failed_outcome(index_of[future.key], exc)
        finally:
            self._client.cancel(futures)
