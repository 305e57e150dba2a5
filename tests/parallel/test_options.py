"""The shared ``--jobs``/``--scheduler`` click options: usage errors for bad values, the right engine otherwise."""

from __future__ import annotations

import socket

import click
import pytest
from click.testing import CliRunner

from glassformer.errors import ClusterError
from glassformer.parallel import engine_from_click, engine_options


@click.command()
@engine_options
@click.option("--connect-timeout", type=float, default=5.0)
def demo_command(jobs, scheduler, connect_timeout):
    with engine_from_click(jobs, scheduler, connect_timeout=connect_timeout) as engine:
        click.echo(f"{engine.kind} {engine.n_workers} {engine.map(abs, [-1, -2, -3])}")


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _invoke(*args):
    return CliRunner().invoke(demo_command, list(args))


@pytest.mark.parametrize("args, line", [((), "serial 1 [1, 2, 3]"), (("--jobs", "1"), "serial 1 [1, 2, 3]"),
                                        (("--jobs", "2"), "joblib 2 [1, 2, 3]")])
def test_jobs_option_picks_the_engine(args, line):
    res = _invoke(*args)
    assert res.exit_code == 0, res.output
    assert res.output.strip() == line


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_jobs_zero_negative_or_not_a_number_is_a_usage_error(value):
    res = _invoke("--jobs", value)
    assert res.exit_code == 2
    assert "Invalid value for '--jobs'" in res.output and value in res.output


@pytest.mark.parametrize("value", ["tcp://host", "remote", "http://10.0.0.5:8786"])
def test_a_malformed_scheduler_is_a_usage_error_naming_it(value):
    res = _invoke("--scheduler", value)
    assert res.exit_code == 2
    assert "Invalid value for '--scheduler'" in res.output and repr(value) in res.output


def test_the_options_are_documented_in_help():
    res = _invoke("--help")
    assert "--jobs N" in res.output and "--scheduler local|tcp://HOST:PORT" in res.output
    assert res.output.index("--jobs") < res.output.index("--scheduler")


def test_an_unreachable_scheduler_raises_the_glassformer_error_the_cli_reports():
    pytest.importorskip("distributed", reason="the Dask engine needs the distributed extra")
    address = f"tcp://127.0.0.1:{_closed_port()}"
    res = _invoke("--scheduler", address, "--connect-timeout", "1")
    assert isinstance(res.exception, ClusterError)
    assert str(res.exception).startswith(f"cannot reach the Dask scheduler at {address} within 1 s")


def test_scheduler_local_with_jobs_starts_a_local_cluster_of_that_size():
    pytest.importorskip("distributed", reason="the Dask engine needs the distributed extra")
    res = _invoke("--scheduler", "local", "--jobs", "2")
    assert res.exit_code == 0, res.output
    assert res.output.strip() == "dask 2 [1, 2, 3]"
