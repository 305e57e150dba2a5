"""The runner: selection, the [ok]/[FAIL] lines, the summary, and the (ok, detail) helpers."""

from __future__ import annotations

import numpy as np

from glassformer.selftest.check import Check, all_ok, close, max_diff
from glassformer.selftest.runner import run_check, run_checks, select_checks

CHECKS = [
    Check("alpha passes", "properties", lambda: (True, "1 = 1")),
    Check("beta gradcheck fails", "gradcheck", lambda: (False, "error 2e-3")),
    Check("Gamma raises", "values", lambda: {}["missing"]),
    Check("delta passes quietly", "values", lambda: (np.True_, "")),
]


def test_one_line_per_check_then_the_summary():
    lines = []
    assert run_checks(checks=CHECKS, echo=lines.append) == (2, 4)
    assert lines == ["[ok] alpha passes", "[FAIL] beta gradcheck fails — error 2e-3",
                     "[FAIL] Gamma raises — KeyError: 'missing'", "[ok] delta passes quietly", "2/4 checks passed"]


def test_details_quick_only_and_silent():
    lines = []
    run_checks(checks=CHECKS, details=True, quick=True, echo=lines.append)
    assert lines == ["[ok] alpha passes — 1 = 1", "[FAIL] Gamma raises — KeyError: 'missing'",
                     "[ok] delta passes quietly", "2/3 checks passed"]
    assert [c.name for c in select_checks(CHECKS, only="GAMMA")] == ["Gamma raises"]
    assert [c.name for c in select_checks(CHECKS, quick=True, only="beta")] == []
    lines.clear()
    assert run_checks(False, checks=CHECKS, only="passes", echo=lines.append) == (2, 2) and lines == []


def test_a_raising_check_reports_its_exception_on_one_line():
    def multiline():
        raise ValueError("first line\n   second   line")

    assert run_check(Check("x", "values", multiline)) == (False, "ValueError: first line second line")
    assert run_check(Check("x", "values", lambda: (_ for _ in ()).throw(RuntimeError()))) == \
        (False, "RuntimeError: (no message)")
    assert run_check(Check("x", "values", lambda: (1, 2.5))) == (True, "2.5")


def test_close_compares_shape_and_largest_difference():
    assert close("a", [1.0, 2.0], [1.0, 2.0 + 1e-9], 1e-8) == (True, "a: max |got - expected| = 1.00e-09 (tolerance 1e-08)")
    assert close("a", [1.0, 2.0], [1.0, 2.1], 1e-8)[0] is False
    assert close("a", np.zeros((2, 1)), np.zeros(2), 1.0)[0] is False          # broadcastable is not enough
    assert close("a", [np.nan], [0.0], 1.0)[0] is False
    assert max_diff(np.zeros(0), np.zeros(0)) == 0.0


def test_all_ok_lists_the_failures_first():
    assert all_ok([(True, "a"), (True, "b")]) == (True, "a; b")
    assert all_ok([(True, "a"), (False, "b"), (False, "c")]) == (False, "b; c")
    assert all_ok([]) == (True, "")
