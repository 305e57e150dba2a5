"""The ``--jobs`` and ``--scheduler`` options every parallel command shares.

::

    @click.command()
    @engine_options
    def predict(..., jobs, scheduler):
        with engine_from_click(jobs, scheduler) as engine:
            outcomes = engine.run(predict_one_well, paths)

``--jobs 0`` or a negative number and a malformed ``--scheduler`` are usage errors (click exits
with status 2 before the command runs); an unreachable scheduler raises
:class:`~glassformer.errors.ClusterError` from :func:`engine_from_click`, which the CLI shows as
one line with status 2.
"""

from __future__ import annotations

from typing import Callable

import click

from ..errors import InputError
from .engine import Engine
from .factory import make_engine, parse_scheduler

__all__ = ["engine_from_click", "engine_options"]


def _scheduler_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    try:
        return parse_scheduler(value)
    except InputError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def engine_options(command: Callable) -> Callable:
    """Click decorator adding ``--jobs N`` and ``--scheduler local|tcp://HOST:PORT`` (parameters ``jobs``,
    ``scheduler``)."""
    command = click.option(
        "--scheduler", default=None, metavar="local|tcp://HOST:PORT", callback=_scheduler_option,
        help="Run the tasks on Dask: 'local' starts a LocalCluster on this machine (--jobs workers, default "
             "one per core); tcp://HOST:PORT uses a running cluster (needs pip install -e \".[distributed]\").",
    )(command)
    command = click.option(
        "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
        help="Run the tasks on N local worker processes (joblib), one BLAS thread each; results equal a "
             "serial run.  [default: one after another in this process]",
    )(command)
    return command


def engine_from_click(jobs: int | None, scheduler: str | None, **options) -> Engine:
    """The started engine for the parsed ``--jobs``/``--scheduler`` (see :func:`~glassformer.parallel.make_engine`)."""
    return make_engine(jobs=jobs, scheduler=scheduler, **options)
