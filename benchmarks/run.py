"""glassformer against PyTorch, side by side in one run: time, peak memory and correctness lines.

Usage (from the repository root)::

    python benchmarks/run.py                 # every case, full sizes (minutes on 2 cores)
    python benchmarks/run.py --quick         # tiny sizes, one repetition (what CI runs; seconds)
    python benchmarks/run.py --case midsize --case translation --repeats 7
    python benchmarks/run.py --threads 1     # numpy's BLAS and PyTorch both on one thread
    python benchmarks/run.py --case scaling --variant 1024   # one variant of a case
    python benchmarks/run.py --no-memory     # skip the memory subprocesses

Time: for every case the glassformer and PyTorch runners (and, for demonstration 2, the chapter's
per-sequence loop) are built in this process, warmed up once, then timed in alternating
repetitions (the order flips each repetition).  The table gives the median and min-max of the
repetitions and the ratio of the medians glassformer / PyTorch (for the ensemble case: five
members side by side / one member alone).  PyTorch gets as many threads as numpy's BLAS
(``torch.set_num_threads``).  With ``--threads 1`` the clock is the process's CPU time
(``time.process_time``), which other programs on a shared machine disturb far less than the wall
clock; otherwise (several threads) it is the wall clock.

Memory: each framework runs each case in a fresh subprocess (``--memory-worker``): the figure is
the peak resident set size during the case's run minus the resident size right after the imports
("above the imported baseline"; Linux VmHWM, reset after building so that reading files does not
count).  ``--quick`` uses one subprocess per framework for all cases (approximate, but fast).

Roofline: once per run, before the cases, the machine's GEMM GFLOP/s (float32, float64) and copy
bandwidth are measured on the BLAS threads in use; each case's matrix-product FLOPs and least bytes
moved per timed unit are counted (``roofline.py``), and a second table gives the roofline time
``max(FLOPs / GFLOP/s, bytes / bandwidth)`` and the fraction of it each framework achieves.

Exit status 1 if a correctness line fails (e.g. PyTorch and glassformer trajectories differ).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

# PyTorch's OpenMP threads spin while they wait (libgomp's ACTIVE policy); when the two cores are
# shared with anything else that turns microsecond ops into scheduler time slices (measured: 20x
# slower for demonstration 2 at load 4).  Passive waiting is set unless the caller chose a policy.
_OMP_POLICY_DEFAULTED = "OMP_WAIT_POLICY" not in os.environ
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
# Always the glassformer of this checkout, even when another one is pip-installed (editable): the
# benchmark measures the code beside it.
sys.path.insert(1, str(HERE.parent))

import numpy as np  # noqa: E402

import time  # noqa: E402

import cases  # noqa: E402
import harness  # noqa: E402
import roofline  # noqa: E402
from cases import CASES, GF, LOOP, PT  # noqa: E402

_LIMITS = []   # keeps threadpoolctl's limit alive for the whole process


def set_threads(n: int | None, torch_too: bool = True) -> int:
    """Limit numpy's BLAS to ``n`` threads (None: leave it); give PyTorch the same number; return it."""
    if n is not None:
        from threadpoolctl import threadpool_limits

        _LIMITS.append(threadpool_limits(limits=n, user_api="blas"))
    n = harness.blas_threads()
    if torch_too:
        import torch

        torch.set_num_threads(n)
    return n


# --------------------------------------------------------------------------- memory subprocess
def memory_worker(framework: str, items: list, quick: bool, threads: int | None) -> list:
    """Run inside the subprocess: imports, baseline, then per ``case:variant`` build, reset peak, run.

    ``above_kb`` = peak during the run minus the RSS right after the imports: it counts the model,
    optimizer state and data that stay resident plus everything the run allocates, and leaves out
    the transient memory of building (reading a LAS file, say).  ``run_kb`` = peak minus the RSS
    after building (what the steps themselves add).
    """
    import gc

    import lasio  # noqa: F401  (imports belong to the baseline, for both frameworks alike)
    import pandas  # noqa: F401

    import glassformer.data  # noqa: F401
    import glassformer.models  # noqa: F401
    import glassformer.models.seq2seq  # noqa: F401
    set_threads(threads, torch_too=framework == PT)
    gc.collect()
    baseline = harness.rss_kb()
    out = []
    for item in items:
        case, variant = item.split(":")
        runner = CASES[case].make(framework, None if variant == "None" else variant, quick)
        gc.collect()
        built = harness.rss_kb()
        reset_ok = harness.reset_peak()
        runner.memory_run()
        peak = harness.peak_kb()
        out.append({"item": item, "baseline_kb": baseline, "built_kb": built, "peak_kb": peak,
                    "above_kb": peak - baseline, "run_kb": peak - built, "reset": reset_ok})
        del runner
        gc.collect()
    return out


def measure_memory(framework: str, items: list, quick: bool, threads: int | None) -> dict:
    """``{item: result}`` from one worker subprocess running ``items`` in turn (empty on failure)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--memory-worker", framework, *items]
    if quick:
        cmd.append("--quick")
    if threads is not None:
        cmd += ["--threads", str(threads)]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=str(HERE.parent))
    if res.returncode != 0:
        print(f"  memory subprocess failed for {framework} {items}:\n{res.stderr[-2000:]}", file=sys.stderr)
        return {}
    return {r["item"]: r for r in json.loads(res.stdout.strip().splitlines()[-1])}


# --------------------------------------------------------------------------- formatting
def _fmt_time(stats: harness.Stats, per_step: bool) -> str:
    k, unit = (1000.0, "ms") if per_step else (1.0, "s")
    med = stats.median * k
    digits = 1 if med >= 10 else 2 if med >= 1 else 3
    return f"{med:.{digits}f} [{stats.lo * k:.{digits}f}-{stats.hi * k:.{digits}f}] {unit}"


def _fmt_mem(m: dict | None) -> str:
    return "-" if not m else f"{m['above_kb'] / 1024:.1f}"


def _verdict(value: float | None, target: float | None) -> str:
    if value is None or target is None:
        return ""
    return f" (<= {target:g}: {'met' if value <= target else 'MISSED'})"


def _row_label(case, variant) -> str:
    if case.name == "inference":
        return f"inference stride {variant}"
    if case.name == "scaling":
        return f"scaling T={variant}"
    if case.name == "ensemble":
        return "ensemble: 5 members / 1"
    if case.name == "demo2short":
        return f"demo2, {variant} epochs"
    return case.name


# --------------------------------------------------------------------------- main
def _time_cases(args) -> tuple[list, list]:
    """Build and time every requested case; returns (results, correctness checks)."""
    results, checks = [], []
    for name in args.case or list(CASES):
        case = CASES[name]
        repeats = args.repeats or case.repeats[1 if args.quick else 0]
        for variant in case.variant_list(args.quick):
            if args.variant and str(variant) not in args.variant:
                continue
            label = _row_label(case, variant)
            print(f"[{label}] {case.title}: building, then {repeats} alternating repetition(s) ...", flush=True)
            runners = {fw: case.make(fw, variant, args.quick) for fw in case.frameworks}
            stats = harness.alternate(runners, repeats)
            if case.check is not None:
                checks.extend(case.check(runners, variant, args.quick))
            results.append({"case": case, "variant": variant, "label": label, "stats": stats,
                            "item": f"{name}:{variant}",
                            "work": roofline.case_work(name, variant, runners[case.ratio[0]], args.quick)})
    return results, checks


def _measure_all(results: list, args) -> dict:
    """``{framework: {item: memory result}}``: one subprocess per framework and case (one per framework with --quick)."""
    if args.no_memory:
        return {GF: {}, PT: {}}
    print("memory: " + ("one subprocess per framework" if args.quick else "one subprocess per framework and case")
          + " ...", flush=True)
    items = [r["item"] for r in results if r["case"].memory]
    mem = {}
    for fw in (GF, PT):
        mem[fw] = {}
        for group in ([items] if args.quick else [[i] for i in items]):
            mem[fw].update(measure_memory(fw, group, args.quick, args.threads))
    return mem


def _table(results: list, mem: dict) -> str:
    rows = []
    for r in results:
        case, stats = r["case"], r["stats"]
        mg, mp = mem[GF].get(r["item"]), mem[PT].get(r["item"])
        a, b = case.ratio
        t_ratio = stats[a].median / stats[b].median
        m_ratio = mg["above_kb"] / mp["above_kb"] if mg and mp and mp["above_kb"] > 0 else None
        rows.append([r["label"], _fmt_time(stats[a], case.per_step), _fmt_time(stats[b], case.per_step),
                     f"{t_ratio:.2f}{_verdict(t_ratio, case.time_target)}", _fmt_mem(mg), _fmt_mem(mp),
                     "-" if m_ratio is None else f"{m_ratio:.2f}{_verdict(m_ratio, case.mem_target)}"])
        if LOOP in stats:
            rows.append([f"{r['label']}: the chapter's per-sequence loop", _fmt_time(stats[LOOP], case.per_step),
                         _fmt_time(stats[PT], case.per_step), f"{stats[LOOP].median / stats[PT].median:.2f}",
                         "-", "-", "-"])
    header = ["case", "glassformer median [min-max]", "PyTorch median [min-max]", "time gf/pt",
              "peak MiB gf", "peak MiB pt", "memory gf/pt"]
    return harness.format_table(header, rows)


def _scaling_lines(results: list, mem: dict) -> list:
    sc = [r for r in results if r["case"].name == "scaling"]
    if len(sc) < 2:
        return []
    T = [int(r["variant"]) for r in sc]
    lines = [f"scaling, log-log slope over T={T[0]}..{T[-1]} at fixed tokens per batch: time exponent "
             f"glassformer {harness.fit_exponent(T, [r['stats'][GF].median for r in sc]):.2f}, "
             f"PyTorch {harness.fit_exponent(T, [r['stats'][PT].median for r in sc]):.2f}"]
    for fw, key in ((GF, "glassformer"), (PT, "PyTorch")):
        m = [mem[fw].get(r["item"]) for r in sc]
        if all(m):
            lines.append(f"  memory exponent {key}: {harness.fit_exponent(T, [x['above_kb'] for x in m]):.2f} "
                         f"(peak MiB above imports: {', '.join(str(round(x['above_kb'] / 1024)) for x in m)})")
    return lines


def _memory_details(results: list, mem: dict) -> list:
    lines = []
    for r in results:
        for fw in (GF, PT):
            m = mem[fw].get(r["item"])
            if m:
                lines.append(f"  {r['label']:<22} {fw:<11} imports {m['baseline_kb'] / 1024:7.1f} MiB, "
                             f"after build +{(m['built_kb'] - m['baseline_kb']) / 1024:6.1f}, "
                             f"run adds {m['run_kb'] / 1024:7.1f}, peak above imports {m['above_kb'] / 1024:7.1f}")
    return lines


def run(args) -> int:
    import glassformer.models  # noqa: F401  (loads scipy's BLAS too, so the thread limit reaches it)
    import glassformer.models.seq2seq  # noqa: F401

    threads = set_threads(args.threads)
    if args.threads == 1:
        cases.CLOCK["clock"] = time.process_time        # one thread: CPU time, robust to a shared machine
    import torch

    load0 = os.getloadavg()
    print(f"python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}; "
          f"{os.cpu_count()} CPUs; numpy BLAS threads {threads}, torch threads {torch.get_num_threads()}")
    for d in harness.blas_info():
        print("  threadpool: " + ", ".join(f"{k}={v}" for k, v in d.items()))
    print(f"  OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}"
          + (" (set by this script; export OMP_WAIT_POLICY to choose)" if _OMP_POLICY_DEFAULTED else ""))
    if os.environ.get("OPENBLAS_CORETYPE"):
        print(f"  note: OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} is set (slows current OpenBLAS)")
    print(f"  load average at start (1, 5, 15 min): {load0[0]:.2f}, {load0[1]:.2f}, {load0[2]:.2f}")
    print(f"  clock: {'CPU time of this process (process_time)' if args.threads == 1 else 'wall clock (perf_counter)'}")
    print(f"mode: {'quick' if args.quick else 'full'}", flush=True)
    machine = roofline.measure_machine(quick=args.quick, clock=cases.CLOCK["clock"])
    print(roofline.machine_line(machine) + "\n", flush=True)

    results, checks = _time_cases(args)
    mem = _measure_all(results, args)
    print("\n" + _table(results, mem))
    for line in _scaling_lines(results, mem):
        print(line)
    print("\nroofline (benchmarks/roofline.py: matrix-product FLOPs and the least bytes moved per timed unit; "
          "fraction = roofline time / median time):\n" + roofline.machine_line(machine))
    for line in roofline.roofline_lines(results, machine, GF, PT):
        print(line)
    details = _memory_details(results, mem)
    if details:
        print("\nmemory (MiB):\n" + "\n".join(details))
    if checks:
        print("\ncorrectness:")
        for ok, msg in checks:
            print(f"  [{'ok' if ok else 'FAIL'}] {msg}")
    load1 = os.getloadavg()
    print(f"\nload average at end (1, 5, 15 min): {load1[0]:.2f}, {load1[1]:.2f}, {load1[2]:.2f}")
    failed = sum(1 for ok, _ in checks if not ok)
    print(f"{len(checks) - failed}/{len(checks)} correctness checks passed")
    return 1 if failed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, one repetition (seconds)")
    p.add_argument("--case", action="append", choices=list(CASES), help="run only this case (repeatable)")
    p.add_argument("--variant", action="append", help="run only this variant of the cases (e.g. 1024 for "
                   "scaling T=1024, 16 for inference stride 16; repeatable)")
    p.add_argument("--repeats", type=int, default=None, help="timed repetitions per case (default per case)")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for numpy's BLAS and PyTorch alike (default: numpy's BLAS default)")
    p.add_argument("--no-memory", action="store_true", help="skip the memory subprocesses")
    p.add_argument("--memory-worker", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        p.error("--repeats must be >= 1")
    if args.threads is not None and args.threads < 1:
        p.error("--threads must be >= 1")
    if args.memory_worker:
        fw, *items = args.memory_worker
        print(json.dumps(memory_worker(fw, items, args.quick, args.threads)))
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
