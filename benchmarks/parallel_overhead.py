"""Per-task scheduling overhead of each glassformer engine: serial, joblib pool, Dask LocalCluster.

Usage (from the repository root)::

    python benchmarks/parallel_overhead.py              # 2 workers, 3 repetitions (about a minute)
    python benchmarks/parallel_overhead.py --quick      # few tasks, one repetition (seconds; what the test runs)
    python benchmarks/parallel_overhead.py --workers 4 --repeats 5 --json overhead.json

Two tasks: an empty one (returns at once: the engine's own cost) and a NumPy one calibrated to
take about 10 ms on one BLAS thread (matrix products).  Each engine runs ``n`` tasks through
:meth:`Engine.run` (the fault-tolerant call the batch commands use), after one untimed warm-up
call that starts the workers.  Per engine and task the table gives the median over repetitions of

* ``tasks/s``: tasks divided by wall time;
* ``task ms``: mean time inside one task, measured in the worker;
* ``overhead ms/task``: worker time not spent inside tasks, ``(wall * workers - sum(task time)) / n``
  (scheduling, transport, result collection, idle workers), median and [best] repetition;
* ``parent CPU ms/task``: CPU time of this process per task -- the client, joblib's dispatch and,
  for the local cluster, the Dask scheduler, which runs here.  Unlike wall time it does not grow
  when other programs take the cores; one process does this work for all workers, so it caps the
  rate of any number of workers at ``1000 / parent CPU ms`` tasks per second;
* ``speed-up``: serial wall time / this engine's wall time, for the same tasks.

With a per-task overhead ``o`` and task time ``t``, ``w`` workers reach a parallel efficiency of
about ``t / (t + o)`` as long as the scheduler can hand out ``w / (t + o)`` tasks per second (the
empty-task row measures how many it can, on this machine, with client, scheduler and workers
sharing its cores).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:   # run from a checkout: this copy of glassformer
    sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402

from glassformer.io import atomic_write_json  # noqa: E402
from glassformer.parallel import SerialEngine, make_engine  # noqa: E402


# --------------------------------------------------------------------------- the tasks
def empty_task(i: int) -> int:
    return i


def numpy_task(products: int, seed: int) -> float:
    """``products`` 128 x 128 matrix products on seeded data; returns a checksum."""
    a = np.random.default_rng(seed).standard_normal((128, 128)) / 12.0   # (128, 128), spectral norm ~ 2
    b = a.copy()
    for _ in range(products):
        b = np.tanh(a @ b)                                               # (128, 128)
    return float(b.sum())


def calibrate(target_s: float = 0.010) -> int:
    """Matrix products that take about ``target_s`` on one BLAS thread in this process."""
    engine = SerialEngine()
    probe = 20
    best = min(engine.run(functools.partial(numpy_task, probe), [0])[0].seconds for _ in range(5))
    return max(1, round(probe * target_s / best))


# --------------------------------------------------------------------------- measuring
def measure(engine, fn, n: int, repeats: int) -> dict:
    """Median wall time, tasks/s and overhead per task of ``engine.run(fn, range(n))``."""
    engine.run(fn, range(2 * engine.n_workers))               # warm-up: workers started, imports done
    walls, task_s, cpu, values = [], [], [], None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        outcomes = engine.run(fn, range(n))
        walls.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        assert all(o.ok for o in outcomes), [o.error for o in outcomes if not o.ok][:3]
        task_s.append(sum(o.seconds for o in outcomes))
        values = [o.value for o in outcomes]
    wall, busy = statistics.median(walls), statistics.median(task_s)
    overheads = [1e3 * (w * engine.n_workers - b) / n for w, b in zip(walls, task_s)]
    return {"engine": engine.kind, "workers": engine.n_workers, "tasks": n, "wall_s": wall,
            "tasks_per_s": n / wall, "task_ms": 1e3 * busy / n, "overhead_ms": statistics.median(overheads),
            "overhead_best_ms": min(overheads), "parent_cpu_ms": 1e3 * statistics.median(cpu) / n, "values": values}


def run_all(workers: int, n_empty: int, n_numpy: int, repeats: int) -> tuple[list[dict], dict]:
    products = calibrate()
    tasks = {"empty": (empty_task, n_empty), "numpy 10 ms": (functools.partial(numpy_task, products), n_numpy)}
    rows, info = [], {"products": products, "start_s": {}}
    for label, options in (("serial", {}), (f"joblib, {workers} jobs", {"jobs": workers}),
                           (f"Dask LocalCluster, {workers} workers", {"scheduler": "local", "jobs": workers})):
        start = time.perf_counter()
        with make_engine(**options) as engine:
            info["start_s"][label] = time.perf_counter() - start
            for task, (fn, n) in tasks.items():
                rows.append({"label": label, "task": task, **measure(engine, fn, n, repeats)})
    serial = {r["task"]: r for r in rows if r["engine"] == "serial"}
    for r in rows:
        r["speedup"] = serial[r["task"]]["wall_s"] / r["wall_s"]
        r["identical"] = r["values"] == serial[r["task"]]["values"]    # floats compared exactly
    for r in rows:
        del r["values"]
    return rows, info


def parent_cpu(row: dict) -> str:
    """The parent's CPU per task; a serial run's is the task itself, so it is left out."""
    return "-" if row["engine"] == "serial" else f"{row['parent_cpu_ms']:.2f}"


def table(rows: list[dict], info: dict) -> str:
    lines = ["| engine | task | tasks | wall s | tasks/s | task ms | overhead ms/task [best] | parent CPU ms/task "
             "| speed-up | identical |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['label']} | {r['task']} | {r['tasks']} | {r['wall_s']:.2f} | {r['tasks_per_s']:,.0f} | "
                     f"{r['task_ms']:.2f} | {r['overhead_ms']:.2f} [{r['overhead_best_ms']:.2f}] | {parent_cpu(r)} | "
                     f"{r['speedup']:.2f}x | "
                     f"{'yes' if r['identical'] else 'NO'} |")
    lines.append("")
    lines.append("start-up (engine made, before the warm-up call): " +
                 ", ".join(f"{k} {v:.2f} s" for k, v in info["start_s"].items()))
    lines.append(f"NumPy task: {info['products']} products of 128 x 128 matrices; load average "
                 f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20 empty and 10 NumPy tasks, one repetition")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    n_empty, n_numpy, repeats = (20, 10, 1) if args.quick else (400, 200, args.repeats)
    rows, info = run_all(args.workers, n_empty, n_numpy, repeats)
    print(table(rows, info))
    if args.json:
        atomic_write_json(args.json, {"rows": rows, **info})
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
