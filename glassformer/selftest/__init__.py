"""glassformer's numerical self-check (``glassformer check``), split by topic.

* :mod:`~glassformer.selftest.properties` -- the properties of a transformer layer (the
  dictionary entry "transformer" and its numerical companion), with the library's own layers;
* :mod:`~glassformer.selftest.gradients` -- central finite differences of every layer, mask kind,
  block, stack, positional encoding, input embedding and the LSTM
  (:mod:`~glassformer.selftest.harness` holds the shared test data and adapters);
* :mod:`~glassformer.selftest.values` -- cases from public bug reports and papers, recomputed;
  their numbers, and the chapter's printed values (Pyrcz 2024), are stored once in
  ``published.json`` and read through :mod:`~glassformer.selftest.published`;
* :mod:`~glassformer.selftest.check` -- :class:`Check` and the ``(ok, detail)`` helpers;
  :mod:`~glassformer.selftest.catalogue` -- every check, in order;
  :mod:`~glassformer.selftest.runner` -- :func:`run_checks` and the ``[ok]``/``[FAIL]`` lines;
  :mod:`~glassformer.selftest.command` -- the click command.

A check is a function returning ``(ok, detail)``; one that raises counts as a failure whose detail
is the exception's message, so a run always reaches its ``N/N checks passed`` line.

Example
-------
>>> from glassformer.selftest import run_checks
>>> passed, total = run_checks(verbose=False, quick=True)
>>> passed == total
True
"""

from __future__ import annotations

from .catalogue import CHECKS
from .check import Check
from .command import check_command
from .harness import GRAD_TOL
from .runner import run_check, run_checks

__all__ = ["CHECKS", "GRAD_TOL", "Check", "check_command", "run_check", "run_checks"]
