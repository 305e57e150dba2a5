"""A local process pool through joblib's loky backend (``--jobs N``).

loky starts ``N`` Python processes (spawned, not forked, so no thread or BLAS state is inherited)
and keeps them for the next call.  joblib sets ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and
``MKL_NUM_THREADS`` in those processes to ``blas_threads`` (``inner_max_num_threads``), and every
task also runs under threadpoolctl's limit, so each worker computes with exactly that many threads.
Large arrays are sent as they are (joblib's read-only memory-mapping is switched off), so a task
sees the same writable arrays as in a serial run.
"""

from __future__ import annotations

from typing import Callable, Iterator

from .engine import Engine, TaskOutcome, check_jobs, lost_outcomes

__all__ = ["JoblibEngine"]


class JoblibEngine(Engine):
    """Tasks on ``jobs`` local worker processes (joblib, loky backend).

    Parameters
    ----------
    jobs : int
        Worker processes (>= 1).
    blas_threads : int or None, default 1
        BLAS/OpenMP threads per task (see :class:`~glassformer.parallel.Engine`).

    Raises
    ------
    InputError
        ``jobs`` is not an integer >= 1.
    """

    kind = "joblib"

    def __init__(self, jobs: int, blas_threads: int | None = 1):
        super().__init__(blas_threads=blas_threads)
        self.jobs = check_jobs(jobs)

    @property
    def n_workers(self) -> int:
        return self.jobs

    def describe(self) -> str:
        return f"joblib (loky) process pool, {self.jobs} workers, {self.blas_threads or 'default'} BLAS thread(s) each"

    def close(self) -> None:
        """Nothing to release: loky keeps its workers for reuse and stops them when they idle."""

    def _parallel(self, return_as: str):
        return _joblib().Parallel(n_jobs=self.jobs, backend="loky", max_nbytes=None, return_as=return_as)

    def _config(self):
        return _joblib().parallel_config(backend="loky", inner_max_num_threads=self.blas_threads)

    def _map(self, task: Callable, items: list) -> list:
        delayed = _joblib().delayed
        with self._config():
            return self._parallel("list")(delayed(task)(item) for item in items)

    def _completed(self, task: Callable, pairs: list) -> Iterator[TaskOutcome]:
        delayed = _joblib().delayed
        seen: set[int] = set()
        with self._config():
            results = self._parallel("generator_unordered")(delayed(task)(pair) for pair in pairs)
            try:
                for outcome in results:
                    seen.add(outcome.index)
                    yield outcome
            except Exception as exc:  # a worker died (killed, out of memory): the pool lost its tasks
                yield from lost_outcomes(pairs, seen, exc)


def _joblib():
    """joblib, imported when a pool is first used: it brings in loky's process machinery, which
    ``import glassformer`` must not start (the tests check that it does not)."""
    import joblib   # loky comes with it: imported when a pool is used, never by ``import glassformer``

    return joblib
