"""From ``jobs``/``scheduler`` to an engine: which engine, and the errors for bad options."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from glassformer.errors import ClusterError, GlassformerError, InputError, MissingDependencyError
from glassformer.parallel import DaskEngine, JoblibEngine, SerialEngine, make_engine, parse_scheduler

REPO = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound by the system, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=str(REPO), timeout=120)


@pytest.mark.parametrize("jobs, kind", [(None, SerialEngine), (1, SerialEngine), (2, JoblibEngine), (3, JoblibEngine),
                                       (np.int64(2), JoblibEngine)])
def test_jobs_choose_the_serial_engine_or_a_pool(jobs, kind):
    with make_engine(jobs=jobs) as engine:
        assert type(engine) is kind and engine.n_workers == (jobs or 1) and engine.blas_threads == 1


@pytest.mark.parametrize("jobs", [0, -1, -4, 2.0, "2", True])
def test_jobs_below_one_or_not_an_integer_are_refused(jobs):
    with pytest.raises(InputError, match=rf"jobs must be an integer >= 1 .*got {jobs!r}"):
        make_engine(jobs=jobs)
    with pytest.raises(InputError, match="n_workers must be an integer >= 1"):
        DaskEngine(None, n_workers=jobs)


@pytest.mark.parametrize("address", ["tcp://", "tcp://host", "tcp://:8786", "http://10.0.0.5:8786", "10.0.0.5:8786",
                                     "tcp://10.0.0.5:0", "tcp://10.0.0.5:65536", "tcp://a b:8786", "locale", ""])
def test_a_malformed_scheduler_address_is_named_in_the_error(address):
    with pytest.raises(InputError) as err:
        make_engine(scheduler=address)
    assert repr(address) in str(err.value) and "tcp://HOST:PORT" in str(err.value)


@pytest.mark.parametrize("address, parsed", [("local", "local"), (" LOCAL ", "local"), (None, None),
                                             ("tcp://127.0.0.1:8786", "tcp://127.0.0.1:8786"),
                                             ("tcp://node-07.cluster:8786 ", "tcp://node-07.cluster:8786"),
                                             ("tcp://[::1]:8786", "tcp://[::1]:8786")])
def test_well_formed_scheduler_options(address, parsed):
    assert parse_scheduler(address) == parsed


def test_jobs_cannot_size_a_running_cluster():
    with pytest.raises(InputError, match="jobs=4 cannot be combined with the Dask scheduler tcp://127.0.0.1:8786"):
        make_engine(jobs=4, scheduler="tcp://127.0.0.1:8786")


@pytest.mark.parametrize("options, message", [({"blas_threads": 0}, "blas_threads must be an integer >= 1"),
                                              ({"connect_timeout": 0}, "connect_timeout must be a positive"),
                                              ({"connect_timeout": "5"}, "connect_timeout must be a positive")])
def test_bad_engine_settings(options, message):
    with pytest.raises(InputError, match=message):
        make_engine(jobs=2, **options)


def test_an_unreachable_scheduler_is_one_line_within_the_connect_timeout():
    pytest.importorskip("distributed", reason="the Dask engine needs the distributed extra")
    address = f"tcp://127.0.0.1:{_closed_port()}"
    start = time.monotonic()
    with pytest.raises(ClusterError) as err:
        make_engine(scheduler=address, connect_timeout=2)
    waited = time.monotonic() - start
    message = str(err.value)
    assert isinstance(err.value, GlassformerError) and "\n" not in message
    assert message.startswith(f"cannot reach the Dask scheduler at {address} within 2 s")
    assert waited < 30, f"gave up after {waited:.1f} s, not about 2 s"   # generous: the machine is shared


def test_without_dask_the_error_says_what_to_install():
    res = _python("""
        import sys
        sys.modules["distributed"] = None          # how Python marks a module as not installed
        from glassformer.errors import MissingDependencyError
        from glassformer.parallel import make_engine
        for scheduler in ("local", "tcp://127.0.0.1:8786"):
            try:
                make_engine(scheduler=scheduler)
            except MissingDependencyError as exc:
                print(exc)
        with make_engine(jobs=2) as engine:       # the local pool does not need Dask
            print(engine.map(abs, [-1, -2]))
    """)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 3 and lines[2] == "[1, 2]"
    assert all('pip install -e ".[distributed]"' in line for line in lines[:2])
    assert issubclass(MissingDependencyError, ImportError)


def test_importing_glassformer_imports_neither_dask_nor_loky():
    res = _python("""
        import sys
        import glassformer, glassformer.parallel
        from glassformer.parallel import make_engine
        with make_engine() as engine:
            assert engine.map(abs, [-3]) == [3]
        print(sorted(m for m in ("dask", "distributed", "joblib", "joblib.externals.loky") if m in sys.modules))
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_a_scheduler_without_workers_is_refused_with_the_command_that_starts_some():
    distributed = pytest.importorskip("distributed", reason="the Dask engine needs the distributed extra")

    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None, silence_logs=logging.CRITICAL) as empty:
        with pytest.raises(ClusterError) as err:
            make_engine(scheduler=empty.scheduler_address, connect_timeout=1)
    assert str(err.value) == (f"the Dask scheduler at {empty.scheduler_address} has no workers after 1 s; "
                              "start some with `dask worker ADDRESS --nthreads 1`")
