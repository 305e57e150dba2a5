"""What a running job tells its user: one logger, shown by the command line, silent in a library.

Every job of the package reports through the standard :mod:`logging` module under the logger
named ``"glassformer"`` -- tables, verdicts, progress lines with :func:`say`, problems the user
should know about with :func:`warn` -- instead of a print function handed down through every call.
A library stays quiet unless its user asks: the command line shows the messages of each command
on standard output, and a script or notebook does the same with::

    import glassformer.reporting
    with glassformer.reporting.shown():          # or logging.basicConfig(level=logging.INFO)
        glassformer.wells.cross_validate(...)

Warnings are printed with a ``warning:`` prefix, so that they read the same in a terminal, a log
file and the run's summary.  Nothing here holds state of its own: the handler lives for one
``with`` block.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import Callable, Iterator

__all__ = ["LOGGER_NAME", "say", "shown", "warn"]

#: The logger every module of the package reports through.
LOGGER_NAME = "glassformer"

_logger = logging.getLogger(LOGGER_NAME)
_logger.addHandler(logging.NullHandler())       # a library prints nothing unless its user installs a handler


def say(message: str) -> None:
    """Report one message (a table, a progress line, a verdict) at ``INFO`` level."""
    _logger.info(message)


def warn(message: str) -> None:
    """Report one problem the user should act on at ``WARNING`` level (shown as ``warning: message``)."""
    _logger.warning(message)


class _Plain(logging.Formatter):
    """The message as written; warnings prefixed ``warning:`` (the form users of the command line know)."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        return f"warning: {text}" if record.levelno >= logging.WARNING else text


class _WriteHandler(logging.Handler):
    """Hands each formatted message to ``write`` (``print``, ``click.echo``), looked up at each call so that
    a test runner's captured output receives it."""

    def __init__(self, write: Callable[[str], None]):
        super().__init__(logging.INFO)
        self.write = write

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.write(self.format(record))
        except Exception:                       # a closed stream must not stop the job it reports on
            self.handleError(record)


@contextlib.contextmanager
def shown(write: Callable[[str], None] | None = None, *, level: int = logging.INFO) -> Iterator[None]:
    """Show the package's messages inside the ``with`` block.

    Parameters
    ----------
    write : callable, optional
        Receives each message as one string (default: print to the current ``sys.stdout``).
    level : int, default ``logging.INFO``
        The least important level shown (``logging.WARNING`` shows warnings alone).
    """
    handler = _WriteHandler(write or (lambda text: print(text, file=sys.stdout)))
    handler.setFormatter(_Plain())
    handler.setLevel(level)
    previous_level, previous_propagate = _logger.level, _logger.propagate
    _logger.addHandler(handler)
    _logger.setLevel(min(level, previous_level) if previous_level else level)
    _logger.propagate = False                   # a root handler the user installed would print each line twice
    try:
        yield
    finally:
        _logger.removeHandler(handler)
        _logger.setLevel(previous_level)
        _logger.propagate = previous_propagate
