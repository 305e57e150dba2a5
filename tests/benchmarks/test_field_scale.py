"""The field-scale benchmark still runs: ``python benchmarks/field_scale.py --quick`` exits 0.

No time is asserted (benchmarks are not timed tests).  What is asserted: a row per job and engine,
positive rates, and every engine's outputs (prediction LAS files, ensemble models) byte-identical to
the serial engine's (the script asserts it and exits non-zero otherwise).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("distributed", reason="the benchmark includes the Dask engine (distributed extra)")


def test_quick_run_reports_every_engine_with_identical_results(tmp_path):
    out = tmp_path / "field.json"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, str(REPO / "benchmarks" / "field_scale.py"), "--quick", "--json", str(out)],
                         capture_output=True, text=True, cwd=str(REPO), timeout=600, env=env)
    assert res.returncode == 0, f"{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert [(r["job"], r["engine"]) for r in result["rows"]] == [
        (job, engine) for job in ("predict", "ensemble")
        for engine in ("serial", "joblib, 2 jobs", "Dask LocalCluster, 2 workers")]
    for r in result["rows"]:
        assert r["identical"] and r["tasks_per_s"] > 0 and r["task_s"] > 0
        assert r["tasks"] == (8 if r["job"] == "predict" else 2)
    predict = result["rows"][0]
    assert predict["samples_per_s"] == pytest.approx(8 * 400 / predict["wall_s"])
    assert res.stdout.count("| yes |") == 6
