"""The benchmark suite still runs: ``python benchmarks/run.py --quick`` exits 0 and prints its table.

No time is asserted (benchmarks are not timed tests); what is asserted is that every case ran in
both frameworks, that the memory subprocesses reported a figure, and that the correctness lines
(PyTorch and glassformer agree on the same weights and batches) all passed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "benchmarks" / "run.py"

pytest.importorskip("torch", reason="the benchmarks compare with PyTorch (test extra)")


@pytest.fixture(scope="module")
def quick_output() -> str:
    res = subprocess.run([sys.executable, str(RUN), "--quick"], capture_output=True, text=True, cwd=str(REPO),
                         timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert res.returncode == 0, f"run.py --quick failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res.stdout


def _table_rows(text: str, table: int = 0) -> dict:
    """Rows of the ``table``-th table (0: times and memory, 1: the roofline), by their first cell."""
    rows, seen = {}, -1
    for line in text.splitlines():
        if line.startswith("| case "):
            seen += 1
        elif line.startswith("| ") and seen == table:
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


def test_quick_prints_a_row_per_case_with_both_frameworks(quick_output):
    rows = _table_rows(quick_output)
    for label in ("demo2", "demo2: the chapter's per-sequence loop", "midsize", "inference stride 16", "translation",
                  "scaling T=16", "scaling T=32"):
        assert label in rows, f"row {label!r} missing from:\n{quick_output}"
    time_cell = re.compile(r"^\d+(\.\d+)? \[\d+(\.\d+)?-\d+(\.\d+)?\] (ms|s)$")
    for label, cells in rows.items():
        assert time_cell.match(cells[1]) and time_cell.match(cells[2]), cells
        assert float(cells[3].split()[0]) > 0, cells


def test_quick_reports_memory_above_the_import_baseline(quick_output):
    rows = _table_rows(quick_output)
    for label in ("midsize", "translation", "scaling T=32"):
        gf, pt = rows[label][4], rows[label][5]
        assert gf != "-" and pt != "-", rows[label]
        assert float(gf) >= 0 and float(pt) > 0


def test_quick_correctness_lines_pass(quick_output):
    m = re.search(r"^(\d+)/(\d+) correctness checks passed$", quick_output, re.M)
    assert m, quick_output[-2000:]
    passed, total = int(m.group(1)), int(m.group(2))
    assert total >= 6 and passed == total
    assert "[FAIL]" not in quick_output
    assert "demo 2 PyTorch trajectory equals glassformer's" in quick_output
    assert re.search(r"numpy BLAS threads \d+, torch threads \d+", quick_output)


def test_quick_reports_the_roofline_of_every_case(quick_output):
    m = re.search(r"GEMM ([\d.]+) GFLOP/s float32, ([\d.]+) GFLOP/s float64 .*copy bandwidth ([\d.]+) GB/s", quick_output)
    assert m, quick_output[-3000:]
    assert all(float(g) > 0 for g in m.groups())
    rows = _table_rows(quick_output, table=1)
    for label in ("demo2", "midsize", "inference stride 16", "welltrain", "translation", "scaling T=32"):
        cells = rows[label]
        assert float(cells[1]) > 0 and float(cells[2]) > 0, cells       # GFLOP, MB counted
        assert cells[4] in ("compute", "memory"), cells
        assert 0 < float(cells[6]) and 0 < float(cells[7]), cells      # achieved fractions
