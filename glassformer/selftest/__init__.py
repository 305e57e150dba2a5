"""glassformer's numerical self-check (``glassformer check``), split by topic.

* :mod:`~glassformer.selftest.properties` -- the properties of a transformer layer (the
  dictionary entry "transformer" and its numerical companion), with the library's own layers;
* :mod:`~glassformer.selftest.gradients` -- central finite differences of every layer, mask kind,
  block, stack, positional encoding, input embedding and the LSTM
  (:mod:`~glassformer.selftest.harness` holds the shared test data and adapters);
* :mod:`~glassformer.selftest.values` -- cases from public bug reports and papers, recomputed;
  their numbers, and the chapter's printed values (Pyrcz 2024), are stored once in
  ``published.json`` and read through :mod:`~glassformer.selftest.published`;
* :mod:`~glassformer.selftest.runner` -- :class:`Check`, :func:`run_checks` and the
  ``[ok]``/``[FAIL]`` lines; :mod:`~glassformer.selftest.command` -- the click command.

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

from .command import check_command
from .gradients import gradient_checks
from .harness import GRAD_TOL
from .properties import property_checks
from .runner import Check, run_check, run_checks
from .values import value_checks

__all__ = ["CHECKS", "GRAD_TOL", "Check", "check_command", "run_check", "run_checks"]

#: Every check, in the order printed: properties, gradchecks, published values.
CHECKS: tuple = tuple(property_checks() + gradient_checks() + value_checks())
