"""From the user's two options (``jobs``, ``scheduler``) to a started engine."""

from __future__ import annotations

import re

from ..errors import InputError
from .cluster import DaskEngine
from .engine import Engine, SerialEngine, check_jobs
from .pool import JoblibEngine

__all__ = ["make_engine", "parse_scheduler"]

# tcp://HOST:PORT with HOST a name, an IPv4 address or a bracketed IPv6 address.
_ADDRESS = re.compile(r"tcp://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(?P<port>\d{1,5})")


def parse_scheduler(scheduler: str | None) -> str | None:
    """Check a ``scheduler`` option: None, ``"local"`` or ``"tcp://HOST:PORT"``; returns it stripped.

    Raises
    ------
    InputError
        Anything else, naming the value and the accepted forms.
    """
    if scheduler is None:
        return None
    text = str(scheduler).strip()
    if text.lower() == "local":
        return "local"
    match = _ADDRESS.fullmatch(text)
    if match is None or not 1 <= int(match["port"]) <= 65535:
        raise InputError(f"scheduler {scheduler!r} is neither 'local' nor a Dask scheduler address "
                         "tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786)")
    return text


def make_engine(jobs: int | None = None, scheduler: str | None = None, *, blas_threads: int | None = 1,
                connect_timeout: float = 5.0) -> Engine:
    """The engine the options ask for, started (close it, or use it in a ``with`` block).

    ======================  ==================================  =====================================
    ``jobs``                ``scheduler``                       engine
    ======================  ==================================  =====================================
    None or 1               None                                serial, in this process
    N >= 2                  None                                joblib (loky) pool of N processes
    None or N               ``"local"``                         Dask ``LocalCluster``, N workers
                                                                (None: one per core), 1 thread each
    None                    ``"tcp://HOST:PORT"``               the running Dask cluster there
    ======================  ==================================  =====================================

    Parameters
    ----------
    jobs : int, optional
        Worker processes (>= 1).
    scheduler : {"local", "tcp://HOST:PORT"}, optional
    blas_threads : int or None, default 1
        BLAS/OpenMP threads per task (None leaves them as they are; results then may differ from
        a serial run in the last digits).
    connect_timeout : float, default 5.0
        Seconds to wait for a Dask scheduler, and then for its first worker.

    Raises
    ------
    InputError
        ``jobs`` not an integer >= 1; a malformed ``scheduler``; ``jobs`` with a ``tcp://``
        scheduler (that cluster's size is set where it was started); a bad ``blas_threads``
        or ``connect_timeout``.
    MissingDependencyError
        A Dask scheduler was asked for and Dask is not installed (``pip install -e ".[distributed]"``).
    ClusterError
        The scheduler cannot be reached within ``connect_timeout`` or cannot run glassformer.
    """
    jobs = check_jobs(jobs)
    scheduler = parse_scheduler(scheduler)
    blas_threads = check_jobs(blas_threads, "blas_threads")
    if not (isinstance(connect_timeout, (int, float)) and connect_timeout > 0):
        raise InputError(f"connect_timeout must be a positive number of seconds, got {connect_timeout!r}")
    if scheduler is None:
        if jobs is None or jobs == 1:
            return SerialEngine(blas_threads=blas_threads)
        return JoblibEngine(jobs, blas_threads=blas_threads)
    if scheduler == "local":
        return DaskEngine(None, n_workers=jobs, blas_threads=blas_threads, connect_timeout=connect_timeout).start()
    if jobs is not None:
        raise InputError(f"jobs={jobs} cannot be combined with the Dask scheduler {scheduler}: the cluster's "
                         "workers are set where it was started (jobs sizes a local pool or --scheduler local)")
    return DaskEngine(scheduler, blas_threads=blas_threads, connect_timeout=connect_timeout).start()
