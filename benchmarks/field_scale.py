"""Field scale: batch prediction over 200 synthetic wells and a 5-member seed ensemble, serial and parallel.

Usage (from the repository root)::

    python benchmarks/field_scale.py                    # 200 wells x 3,000 samples, 3 repetitions (~20 min)
    python benchmarks/field_scale.py --quick            # 8 small wells, 2 members, 1 repetition (what the test runs)
    python benchmarks/field_scale.py --repeats 5 --json field_scale.json

What it does:

1. writes 200 wells of :func:`glassformer.data.synthetic_wells` (3,000 samples at 0.25 m each) as
   LAS files into a temporary folder, and trains a small well model (d_model 16, 2 heads, one
   layer, windows of 32 samples, 2 epochs on 4 wells) -- its skill is irrelevant here;
2. predicts every well with :func:`glassformer.wells.batch.run_batch` (one output LAS per well and
   the manifest, exactly what ``glassformer predict --out-dir`` does) on the serial engine, a
   joblib pool of 2 processes and a Dask ``LocalCluster`` of 2 workers;
3. fits a 5-member seed ensemble of the well model (5 x :func:`glassformer.wells.seeds.fit_seed`,
   20 epochs on 6 wells each) on the same three engines.

Engines are started once (their start-up is reported apart) and warmed up with a small call; the
repetitions alternate the engines (serial, joblib, Dask, then the next repetition) so that a noisy
neighbour hits all of them alike, and each row reports the median.  Every parallel run's output
files (prediction LAS files, ensemble ``model.npz``) must be byte-identical to the serial run's: the
script asserts it.

Columns: ``wall s`` (median), ``wells/s`` or ``fits/s``, ``samples/s`` (input samples predicted
per second), ``speed-up`` (serial wall / this wall), ``efficiency`` (speed-up / workers), ``task s``
(median time inside one task, measured where it ran -- it grows when the tasks share the cores
with something else), ``overhead ms/task`` ((wall x workers - sum of task times) / tasks) and
``parent CPU ms/task`` (this process: dispatch, manifest, and the Dask scheduler), ``CPU s/task``
(CPU time of this process and the workers, per task, read from ``/proc``) and ``cores busy`` (that
CPU time divided by the wall time: how many cores the run actually got).  On a shared machine the
last two separate what the engine costs from what the neighbours take.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:   # run from a checkout: this copy of glassformer
    sys.path.insert(0, str(HERE.parent))

from glassformer.io import atomic_write_json  # noqa: E402
from glassformer.parallel import make_engine  # noqa: E402

ENGINES = (("serial", {}), ("joblib, 2 jobs", {"jobs": 2}), ("Dask LocalCluster, 2 workers",
                                                             {"scheduler": "local", "jobs": 2}))


# --------------------------------------------------------------------------- the field and the model
def write_field(folder: Path, n_wells: int, n_samples: int) -> list[Path]:
    """``n_wells`` synthetic wells as LAS files in ``folder`` (PHI, VSH v/v; PERM mD; depth m)."""
    from glassformer.data import synthetic_wells, write_las

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for log in synthetic_wells(n_wells=n_wells, n_samples=n_samples, step_m=0.25, seed=7):
        paths.append(write_las(folder / f"{log.name}.las", log))
    return paths


def train_model(paths: list[Path], folder: Path, epochs: int) -> Path:
    """The well model every prediction uses, saved as .npz + JSON."""
    from glassformer.data import read_well
    from glassformer.models import SequenceRegressor
    from glassformer.wells import WellModel

    wm = WellModel(["PHI", "VSH"], "PERM", window=32,
                   model=SequenceRegressor(d_model=16, num_heads=2, epochs=epochs, random_state=1))
    wm.fit([read_well(p) for p in paths[:4]])
    wm.save(folder, overwrite=True)
    return folder


def ensemble_tasks(paths: list[Path], root: Path, members: int, epochs: int, label: str) -> list[dict]:
    """``members`` :func:`fit_seed` tasks: seeds 0..members-1 on the first 6 wells, scored on the next 2."""
    from glassformer.data import read_well
    from glassformer.models import SequenceRegressor
    from glassformer.wells import WellModel
    from glassformer.wells.seeds import seed_tasks

    wm = WellModel(["PHI", "VSH"], "PERM", window=32, model=SequenceRegressor(
        d_model=16, num_heads=2, epochs=epochs, early_stopping_patience=None, random_state=0))
    train = [read_well(p) for p in paths[:6]]
    test = [read_well(p) for p in paths[6:8]]
    tasks = seed_tasks(wm, train, test, list(range(members)), root / label, quiet=True)
    for t in tasks:
        t["rows"], t["keep_last_good"] = False, None
    return tasks


def digest(files, base: Path) -> dict:
    """SHA-256 of each file, by its path relative to ``base`` (what must be equal across engines)."""
    return {str(Path(f).relative_to(base)): hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in files}


# --------------------------------------------------------------------------- CPU time of the workers
def worker_pid(_) -> int:
    time.sleep(0.05)              # long enough that every worker gets some of these tasks
    return os.getpid()


def worker_pids(engine) -> list[int]:
    """The process ids of the engine's workers (none for the serial engine: it runs in this process)."""
    if engine.kind == "serial":
        return []
    return sorted(set(engine.map(worker_pid, range(8 * engine.n_workers))))


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the processes ``pids`` so far (Linux ``/proc``; 0 elsewhere)."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick          # utime, stime
    return total


def timed(engine, call) -> tuple:
    """``(value, wall s, CPU s of this process, CPU s of the workers)`` of ``call()``.

    The workers' CPU time is None when a worker was replaced during the call (its time is lost).
    """
    pids = worker_pids(engine)
    start, cpu, workers = time.perf_counter(), time.process_time(), cpu_seconds(pids)
    value = call()
    wall, cpu, workers = time.perf_counter() - start, time.process_time() - cpu, cpu_seconds(pids) - workers
    return value, wall, cpu, workers if worker_pids(engine) == pids else None


# --------------------------------------------------------------------------- one timed run
def predict_run(engine, model: Path, paths: list[Path], out: Path) -> dict:
    from glassformer.wells.batch import run_batch

    rows, wall, cpu, workers = timed(engine, lambda: run_batch(model, paths, out, engine=engine, overwrite=True))
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows if r["status"] != "ok"][:3]
    return {"wall": wall, "cpu": cpu, "worker_cpu": workers, "task_s": [r["seconds"] for r in rows],
            "samples": sum(r["samples"] for r in rows), "tasks": len(rows),
            "digest": digest(sorted(out.glob("*.las")), out)}


def ensemble_run(engine, tasks: list[dict]) -> dict:
    from glassformer.wells.seeds import fit_seed

    outcomes, wall, cpu, workers = timed(engine, lambda: engine.run(fit_seed, tasks))
    assert all(o.ok for o in outcomes), [o.error for o in outcomes if not o.ok]
    return {"wall": wall, "cpu": cpu, "worker_cpu": workers, "task_s": [o.seconds for o in outcomes], "samples": 0,
            "tasks": len(outcomes), "digest": digest(sorted(Path(t["model_dir"]) / "model.npz" for t in tasks),
                                                       Path(tasks[0]["model_dir"]).parent)}


# --------------------------------------------------------------------------- the comparison
def summarise(label: str, job: str, workers: int, runs: list[dict], serial_wall: float | None) -> dict:
    wall = statistics.median(r["wall"] for r in runs)
    tasks = runs[0]["tasks"]
    overheads = [1e3 * (r["wall"] * workers - sum(r["task_s"])) / tasks for r in runs]
    speedup = (serial_wall or wall) / wall
    return {"engine": label, "job": job, "workers": workers, "tasks": tasks, "repeats": len(runs), "wall_s": wall,
            "walls": [r["wall"] for r in runs], "tasks_per_s": tasks / wall, "samples_per_s": runs[0]["samples"] / wall,
            "speedup": speedup, "efficiency": speedup / workers,
            "task_s": statistics.median(s for r in runs for s in r["task_s"]),
            "overhead_ms": statistics.median(overheads), "parent_cpu_ms": 1e3 * statistics.median(
                r["cpu"] for r in runs) / tasks,
            **_cpu(runs, tasks)}


def _cpu(runs: list[dict], tasks: int) -> dict:
    """Median CPU s per task and cores busy over the runs whose workers' CPU time is complete."""
    whole = [r for r in runs if r["worker_cpu"] is not None]
    if not whole:
        return {"cpu_per_task_s": None, "cores_busy": None, "cpu_runs": 0}
    return {"cpu_per_task_s": statistics.median(r["cpu"] + r["worker_cpu"] for r in whole) / tasks,
            "cores_busy": statistics.median((r["cpu"] + r["worker_cpu"]) / r["wall"] for r in whole),
            "cpu_runs": len(whole)}


def benchmark(root: Path, n_wells: int, n_samples: int, members: int, fit_epochs: int, repeats: int) -> dict:
    paths = write_field(root / "wells", n_wells, n_samples)
    model = train_model(paths, root / "model", epochs=2)
    engines, info = {}, {"start_s": {}}
    for label, options in ENGINES:
        start = time.perf_counter()
        engines[label] = make_engine(**options)
        info["start_s"][label] = time.perf_counter() - start
    try:
        runs = {(label, job): [] for label, _ in ENGINES for job in ("predict", "ensemble")}
        for label, engine in engines.items():                     # warm-up: workers started, imports done
            predict_run(engine, model, paths[:2 * engine.n_workers], root / "warm" / label)
            ensemble_run(engine, ensemble_tasks(paths, root / "warm", engine.n_workers, 1, label.split(",")[0]))
        for rep in range(repeats):
            for label, engine in engines.items():
                runs[label, "predict"].append(predict_run(engine, model, paths, root / "out" / label))
            for label, engine in engines.items():
                tasks = ensemble_tasks(paths, root / "ensemble", members, fit_epochs, label.split(",")[0])
                runs[label, "ensemble"].append(ensemble_run(engine, tasks))
            print(f"repetition {rep + 1}/{repeats} done, load average {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        for engine in engines.values():
            engine.close()
    rows = []
    for job in ("predict", "ensemble"):
        reference = runs["serial", job]
        for label, engine_options in ENGINES:
            mine = runs[label, job]
            row = summarise(label, job, 1 if label == "serial" else 2, mine,
                            statistics.median(r["wall"] for r in reference))
            row["identical"] = all(r["digest"] == reference[0]["digest"] for r in mine)
            rows.append(row)
    info.update(wells=n_wells, samples_per_well=n_samples, members=members, fit_epochs=fit_epochs, repeats=repeats,
                load_average_end=os.getloadavg(), cores=os.cpu_count())
    return {"rows": rows, **info}


def table(result: dict) -> str:
    lines = ["| job | engine | tasks | wall s (median) | tasks/s | samples/s | speed-up | efficiency | task s | "
             "overhead ms/task | parent CPU ms/task | CPU s/task | cores busy | identical |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in result["rows"]:
        what = "predict (wells)" if r["job"] == "predict" else "ensemble (fits)"
        samples = f"{r['samples_per_s']:,.0f}" if r["job"] == "predict" else "-"
        lines.append(f"| {what} | {r['engine']} | {r['tasks']} | {r['wall_s']:.1f} | {r['tasks_per_s']:.2f} | "
                     f"{samples} | {r['speedup']:.2f}x | {100 * r['efficiency']:.0f}% | {r['task_s']:.2f} | "
                     f"{r['overhead_ms']:.0f} | {r['parent_cpu_ms']:.1f} | {_fmt(r['cpu_per_task_s'], 3)} | "
                     f"{_fmt(r['cores_busy'], 2)} | {'yes' if r['identical'] else 'NO'} |")
    lines.append("")
    lines.append("wall times of each repetition: " + "; ".join(
        f"{r['job']} {r['engine']}: {', '.join(f'{w:.1f}' for w in r['walls'])}" for r in result["rows"]))
    lines.append("engine start-up: " + ", ".join(f"{k} {v:.1f} s" for k, v in result["start_s"].items()))
    lines.append(f"{result['wells']} wells x {result['samples_per_well']:,} samples; {result['members']} members x "
                 f"{result['fit_epochs']} epochs; {result['repeats']} repetition(s); load average at the end "
                 f"{', '.join(f'{x:.1f}' for x in result['load_average_end'])} on {result['cores']} cores")
    return "\n".join(lines)


def _fmt(value, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="8 wells of 400 samples, 2 members of 1 epoch, 1 repetition")
    parser.add_argument("--json", type=Path, help="also write the result to this JSON file")
    args = parser.parse_args(argv)
    sizes = (8, 400, 2, 1, 1) if args.quick else (200, 3000, 5, 20, args.repeats)
    with tempfile.TemporaryDirectory(prefix="glassformer-field-") as tmp:
        result = benchmark(Path(tmp), *sizes)
    print(table(result))
    if args.json:
        atomic_write_json(args.json, result)
    different = [f"{r['job']} on {r['engine']}" for r in result["rows"] if not r["identical"]]
    assert not different, f"results differ from the serial run's: {', '.join(different)}"
    return 0


if __name__ == "__main__":
    sys.exit(main())
