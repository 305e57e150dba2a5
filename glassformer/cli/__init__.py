"""The ``glassformer`` command line: one small click module per command, each calling the library.

==========  ========================================================================
command     module
==========  ========================================================================
demo        :mod:`.demo` (the demonstrations, found through an entry point)
train       :mod:`.train`
core-match  :mod:`.plugs_match` (per-run depth shifts of a core table, on their own)
predict     :mod:`.predict`
compare     :mod:`.compare`
cv          :mod:`.cv` (blind-well cross-validation)
sweep       :mod:`.sweep`
report      :mod:`.report`
check       :func:`glassformer.selftest.check_command`
==========  ========================================================================

What a command's library calls report (:mod:`glassformer.reporting`) is shown on standard output.
User errors (any :class:`~glassformer.errors.GlassformerError`, a missing file) exit with status 2
and one line on stderr; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import sys

import click

from .._version import __version__
from ..errors import GlassformerError
from ..reporting import shown
from ..selftest import check_command
from .compare import compare as compare_command
from .plugs_match import core_match as core_match_command
from .cv import cv as cv_command
from .demo import demo as demo_command
from .predict import predict as predict_command
from .report import report as report_command
from .sweep import sweep as sweep_command
from .train import train as train_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="glassformer")
@click.option("--debug", is_flag=True, help="Show full tracebacks for errors (for bug reports).")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """glassformer: a transformer you can read.

    Hand-written NumPy forward/backward passes, every intermediate inspectable,
    applied to well logs (porosity -> permeability along depth in metres, mD).
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.with_resource(shown(click.echo))        # the library's messages on standard output, for this command only


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 user error, 1 unexpected failure)."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    if debug:                      # a group option, accepted anywhere: `glassformer train ... --debug` too
        args = ["--debug", *(a for a in args if a != "--debug")]
    try:
        status = cli.main(args=args, prog_name="glassformer", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("glassformer: aborted", err=True)
        return 130
    except click.exceptions.ClickException as exc:  # usage errors: one line, status 2
        if debug:
            raise
        click.echo(f"glassformer: error: {exc.format_message()}", err=True)
        return 2
    except (GlassformerError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        if debug:
            raise
        message = " ".join(str(exc).split())
        click.echo(f"glassformer: error: {message}", err=True)
        return 2
    except OSError as exc:  # disk full, I/O error...: the environment failed, not glassformer (status 1)
        if debug:
            raise
        message = " ".join(str(exc).split())
        click.echo(f"glassformer: error: {message} (files written so far were replaced atomically or not at all)",
                   err=True)
        return 1
    # a command may return its exit status (e.g. ``check`` returns 1 when a check fails)
    return status if isinstance(status, int) else 0


# the commands are bound under other names so that ``glassformer.cli.train`` stays the module
for _command in (demo_command, train_command, core_match_command, predict_command, compare_command, cv_command,
                 sweep_command, report_command, check_command):
    cli.add_command(_command)
