"""The engine contract, the outcome of one task, and the serial engine that every other one must match.

A *task* is a call ``fn(item)``: ``fn`` a top-level function of an importable module (or a
``functools.partial`` of one), ``item`` plain data -- paths, seeds, arrays, dicts.  Models travel
between processes as the project's own ``.npz`` + JSON folders (their paths are the items); the
transport pickles the call's arguments and results, but no model is pickled and no pickle file is
written or read.

Every engine runs each task under a fixed number of BLAS/OpenMP threads (one by default, through
threadpoolctl), so that a matrix product is computed the same way in every process and the results
of a parallel run equal those of a serial one bit for bit.  Nothing here draws random numbers:
tasks that need them take their seed as part of ``item``.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import numbers
import os
import socket
import sys
import time
import traceback as _traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from threadpoolctl import ThreadpoolController

from ..errors import InputError

__all__ = ["Engine", "SerialEngine", "TaskOutcome", "available_cores", "check_jobs"]


# --------------------------------------------------------------------------- one task's outcome
@dataclass(frozen=True)
class TaskOutcome:
    """What became of one task of :meth:`Engine.run`.

    Attributes
    ----------
    index : int
        Position of the item in the input sequence.
    status : {"ok", "error"}
    value : object
        What the task returned (None when it failed).
    error : str
        One line, ``"ExceptionType: message"`` ("" when it succeeded).
    error_type : str
        The exception's class name ("" when it succeeded).
    seconds : float
        Time spent inside the task, measured where it ran (s); queueing and transport excluded.
    worker : str
        ``"host:pid"`` of the process that ran it ("" when the task never ran).
    traceback : str
        The full traceback of a failure (for ``--debug`` and bug reports).
    """

    index: int
    status: str
    value: Any = None
    error: str = ""
    error_type: str = ""
    seconds: float = 0.0
    worker: str = ""
    traceback: str = ""

    @property
    def ok(self) -> bool:
        """True when the task returned normally."""
        return self.status == "ok"


def one_line(exc: BaseException) -> str:
    """``"ExceptionType: message"`` with the message's whitespace (newlines too) collapsed."""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def failed_outcome(index: int, exc: BaseException, worker: str = "", seconds: float = 0.0) -> TaskOutcome:
    """The outcome row of a task that raised ``exc`` (or that the transport lost)."""
    tb = "".join(_traceback.format_exception(type(exc), exc, exc.__traceback__))
    return TaskOutcome(index=index, status="error", error=one_line(exc), error_type=type(exc).__name__,
                       seconds=seconds, worker=worker, traceback=tb)


# --------------------------------------------------------------------------- what runs in a worker
@functools.lru_cache(maxsize=4)
def _threadpools(_pid: int, _n_modules: int):
    """threadpoolctl's view of the BLAS/OpenMP libraries loaded in this process.

    Building it reads the process's memory map (milliseconds in a busy worker, more than a small
    task takes), so it is kept per process id and rebuilt when a new module has been imported
    (an import is how an extension brings in another BLAS or OpenMP library): the two arguments
    are the cache's key only.
    """
    return ThreadpoolController()


def _thread_limit(blas_threads: int | None):
    """Context manager: BLAS and OpenMP pools limited to ``blas_threads`` (None: unchanged)."""
    if blas_threads is None:
        return contextlib.nullcontext()
    return _threadpools(os.getpid(), len(sys.modules)).limit(limits=blas_threads)


def call_task(fn: Callable, blas_threads: int | None, item):
    """Run ``fn(item)`` under the thread limit; exceptions propagate (what :meth:`Engine.map` sends)."""
    with _thread_limit(blas_threads):
        return fn(item)


def call_guarded(fn: Callable, blas_threads: int | None, indexed_item: tuple) -> TaskOutcome:
    """Run ``fn(item)`` and turn whatever happens into a :class:`TaskOutcome` (what :meth:`Engine.run` sends)."""
    index, item = indexed_item
    worker = f"{socket.gethostname()}:{os.getpid()}"
    start = time.perf_counter()
    try:
        with _thread_limit(blas_threads):
            value = fn(item)
    except Exception as exc:  # one bad item must never stop the batch: its row says why
        return failed_outcome(index, exc, worker, time.perf_counter() - start)
    return TaskOutcome(index=index, status="ok", value=value, seconds=time.perf_counter() - start, worker=worker)


# --------------------------------------------------------------------------- argument checks
def available_cores() -> int:
    """CPU cores this process may run on (the affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def check_jobs(jobs, name: str = "jobs") -> int | None:
    """``jobs`` as an int >= 1, or None; anything else raises :class:`InputError`."""
    if jobs is None:
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1:
        raise InputError(f"{name} must be an integer >= 1 (the number of worker processes), got {jobs!r}")
    return int(jobs)


def check_task_function(fn) -> Callable:
    """Refuse what a process on another machine could not import: lambdas, nested functions, methods."""
    target = fn.func if isinstance(fn, functools.partial) else fn
    qualname = getattr(target, "__qualname__", "")
    module = getattr(target, "__module__", None)
    if not callable(target) or not qualname or module is None:
        raise InputError(f"task function must be a top-level function of a module, got {fn!r}")
    bound_to = getattr(target, "__self__", None)  # a builtin function's is its module: fine
    if "<lambda>" in qualname or "<locals>" in qualname or not (bound_to is None or inspect.ismodule(bound_to)):
        raise InputError(
            f"task function {module}.{qualname} must be a top-level function of a module (not a lambda, "
            "nested function or method), so that worker processes can import it by name")
    return fn


# --------------------------------------------------------------------------- the contract
class Engine:
    """Runs independent tasks ``fn(item)``; every engine gives the serial engine's results.

    Use it as a context manager (``with make_engine(jobs=2) as engine: ...``) so that its worker
    processes or cluster are released.  Subclasses implement :meth:`_map` and
    :meth:`_completed` (and :meth:`start`/:meth:`close` when they hold resources).

    Parameters
    ----------
    blas_threads : int or None, default 1
        BLAS/OpenMP threads for each task (None: leave the process's setting).  One thread is what
        makes floating-point sums, and so the results, identical across engines.
    """

    kind = "serial"

    def __init__(self, blas_threads: int | None = 1):
        self.blas_threads = blas_threads

    # ----- lifecycle
    def start(self) -> "Engine":
        """Acquire workers (a no-op here); returns ``self``."""
        return self

    def close(self) -> None:
        """Release workers (a no-op here); the engine can be started again."""

    def __enter__(self) -> "Engine":
        return self.start()

    def __exit__(self, *_exc_info) -> None:
        self.close()

    @property
    def n_workers(self) -> int:
        """Tasks that run at the same time."""
        return 1

    def describe(self) -> str:
        """One line for logs and reports: the engine and its workers."""
        return "serial (one task after another in this process)"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"

    # ----- the two calls
    def map(self, fn: Callable, items: Iterable) -> list:
        """``[fn(item) for item in items]``, run on the engine's workers, in input order.

        Raises
        ------
        InputError
            ``fn`` is not a top-level function (or a ``functools.partial`` of one).
        Exception
            The first failure seen, re-raised (the remaining tasks are cancelled where the engine
            can).  Use :meth:`run` to keep going past bad items.
        """
        check_task_function(fn)
        items = list(items)
        if not items:
            return []
        self.start()
        return self._map(functools.partial(call_task, fn, self.blas_threads), items)

    def run(self, fn: Callable, items: Iterable, *,
            on_outcome: Callable[[TaskOutcome], None] | None = None) -> list[TaskOutcome]:
        """Run ``fn(item)`` for every item, never stopping at a failure; one :class:`TaskOutcome` per item.

        Parameters
        ----------
        fn : callable
            A top-level function of an importable module, or a ``functools.partial`` of one.
        items : iterable
            Plain data (paths, seeds, arrays, dicts).
        on_outcome : callable, optional
            Called in this process with each outcome as it arrives (in completion order): a
            progress bar, a manifest written as the batch goes.

        Returns
        -------
        list of TaskOutcome
            In input order.  A task that raised, or whose worker died, has ``status="error"`` and
            a one-line ``error``; the other tasks' values are complete.
        """
        check_task_function(fn)
        pairs = list(enumerate(items))
        outcomes: list[TaskOutcome | None] = [None] * len(pairs)
        if not pairs:
            return []
        self.start()
        for outcome in self._completed(functools.partial(call_guarded, fn, self.blas_threads), pairs):
            outcomes[outcome.index] = outcome
            if on_outcome is not None:
                on_outcome(outcome)
        return outcomes

    # ----- what a backend implements
    def _map(self, task: Callable, items: list) -> list:
        """``[task(item) for item in items]`` in input order; a failure propagates."""
        return [task(item) for item in items]

    def _completed(self, task: Callable, pairs: list) -> Iterator[TaskOutcome]:
        """Yield ``task((index, item))`` for every pair, as each finishes; never raise for one task."""
        for pair in pairs:
            yield task(pair)


class SerialEngine(Engine):
    """One task after another in this process: the reference every other engine must match."""


def lost_outcomes(pairs: list, seen: set, exc: BaseException) -> Iterator[TaskOutcome]:
    """Error rows for the tasks whose results the transport lost when it failed with ``exc``."""
    for index, _ in pairs:
        if index not in seen:
            yield failed_outcome(index, exc)
