"""The overhead benchmark still runs: ``python benchmarks/parallel_overhead.py --quick`` exits 0.

No time is asserted (benchmarks are not timed tests).  What is asserted: a row for each engine and
task, positive rates, task times measured in the workers, and every engine's results equal to the
serial engine's (the script exits 1 otherwise).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("distributed", reason="the benchmark includes the Dask engine (distributed extra)")


def test_quick_run_reports_every_engine_with_identical_results(tmp_path):
    out = tmp_path / "overhead.json"
    res = subprocess.run([sys.executable, str(REPO / "benchmarks" / "parallel_overhead.py"), "--quick", "--json",
                          str(out)], capture_output=True, text=True, cwd=str(REPO), timeout=300)
    assert res.returncode == 0, f"{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    rows = json.loads(out.read_text())["rows"]
    assert [(r["engine"], r["task"]) for r in rows] == [
        (engine, task) for engine in ("serial", "joblib", "dask") for task in ("empty", "numpy 10 ms")]
    for r in rows:
        assert r["identical"] and r["tasks_per_s"] > 0 and r["task_ms"] > 0
        assert r["workers"] == (1 if r["engine"] == "serial" else 2)
    assert res.stdout.count("| yes |") == 6
