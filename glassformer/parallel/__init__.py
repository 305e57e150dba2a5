"""One execution interface for independent tasks: serial, a local process pool, a Dask cluster.

Batch prediction over wells, cross-validation folds, ensemble members, seeds and hyper-parameter
settings are independent tasks ``fn(item)``.  :func:`make_engine` turns the user's two options into
an engine, and every engine offers the same two calls::

    from glassformer.parallel import make_engine

    with make_engine(jobs=2) as engine:                 # or scheduler="local" / "tcp://HOST:PORT"
        values = engine.map(fit_member, seeds)          # in input order; a failure raises
        outcomes = engine.run(predict_well, paths)      # one TaskOutcome per item, never raises for one

``fn`` is a top-level function of an importable module; items are plain data (paths, seeds,
arrays, dicts) and models travel as their saved ``.npz`` + JSON folders.  Each task runs with one
BLAS thread (threadpoolctl) and draws random numbers only from the seeds it is given, so every
engine returns what the serial engine returns, bit for bit, on the same machine type.

Engines start worker processes with ``spawn``, which imports the main module again: a script
that makes an engine keeps its top-level work under ``if __name__ == "__main__":``.

joblib's loky and Dask are imported when an engine that needs them is made, never by
``import glassformer``.  Dask is an optional extra: ``pip install -e ".[distributed]"``.
"""

from .cluster import DaskEngine
from .engine import Engine, SerialEngine, TaskOutcome, available_cores
from .factory import make_engine, parse_scheduler
from .options import engine_from_click, engine_options
from .pool import JoblibEngine

__all__ = ["DaskEngine", "Engine", "JoblibEngine", "SerialEngine", "TaskOutcome", "available_cores",
           "engine_from_click", "engine_options", "make_engine", "parse_scheduler"]
