"""glassformer against PyTorch, side by side in one run: time, peak memory and correctness lines.

Usage (from the repository root)::

    python benchmarks/run.py                 # every case, full sizes (about 5-8 minutes on 2 cores)
    python benchmarks/run.py --quick         # tiny sizes, one repetition (what CI runs)
    python benchmarks/run.py --case midsize --case translation --repeats 7
    python benchmarks/run.py --no-memory     # skip the memory subprocesses

Time: for every case the glassformer and PyTorch runners (and, for demonstration 2, the seed's
per-sequence loop) are built in this process, warmed up once, then timed in alternating
repetitions (the order flips each repetition).  The table gives the median and min-max of the
repetitions and the ratio of the medians glassformer / PyTorch.  PyTorch gets as many threads as
numpy's BLAS (``torch.set_num_threads``).

Memory: each framework runs each case in a fresh subprocess (``--memory-worker``); the figure is
the peak resident set size during the case minus the resident size right after the imports
("above the imported baseline"; Linux VmHWM, reset after the imports).

Exit status 1 if a correctness line fails (e.g. demonstration 2 no longer reproduces the seed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
if str(HERE.parent) not in sys.path:          # run from a clone without installing glassformer
    sys.path.insert(1, str(HERE.parent))

import numpy as np  # noqa: E402

import harness  # noqa: E402
from cases import CASES, GF, LOOP, PT  # noqa: E402


def _set_torch_threads(n: int) -> None:
    import torch

    torch.set_num_threads(n)


# --------------------------------------------------------------------------- memory subprocess
def memory_worker(case: str, variant: str, framework: str, quick: bool) -> dict:
    """Run inside the subprocess: imports, baseline, reset peak, build + run the case, report."""
    import glassformer.models  # noqa: F401  (imports belong to the baseline)
    import glassformer.models.seq2seq  # noqa: F401
    if framework == PT:
        import torch  # noqa: F401

        _set_torch_threads(harness.blas_threads())
    c = CASES[case]
    v = None if variant == "None" else variant
    baseline = harness.rss_kb()
    reset_ok = harness.reset_peak()
    runner = c.make(framework, v, quick)
    runner.memory_run()
    peak = harness.peak_kb()
    return {"baseline_kb": baseline, "peak_kb": peak, "above_kb": peak - baseline, "reset": reset_ok}


def measure_memory(case: str, variant, framework: str, quick: bool) -> dict | None:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--memory-worker", case, str(variant), framework]
    if quick:
        cmd.append("--quick")
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=str(HERE.parent))
    if res.returncode != 0:
        print(f"  memory subprocess failed for {case}/{variant}/{framework}:\n{res.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- formatting
def _fmt_time(stats: harness.Stats, per_step: bool) -> str:
    k, unit = (1000.0, "ms") if per_step else (1.0, "s")
    digits = 1 if (stats.median * k) >= 10 else 2 if (stats.median * k) >= 1 else 3
    return f"{stats.median * k:.{digits}f} [{stats.lo * k:.{digits}f}-{stats.hi * k:.{digits}f}] {unit}"


def _fmt_mem(m: dict | None) -> str:
    return "-" if not m else f"{m['above_kb'] / 1024:.1f}"


def _ratio(a: float, b: float) -> str:
    return "-" if not (a and b) else f"{a / b:.2f}"


def _mark(value: float | None, target: float | None) -> str:
    if value is None or target is None:
        return ""
    return f" (<= {target:g}: {'met' if value <= target else 'MISSED'})"


def _row_label(case, variant) -> str:
    if case.name == "inference":
        return f"inference stride {variant}"
    if case.name == "scaling":
        return f"scaling T={variant}"
    return case.name


# --------------------------------------------------------------------------- main
def run(args) -> int:
    threads = harness.blas_threads()
    _set_torch_threads(threads)
    import torch

    print(f"python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}; "
          f"{os.cpu_count()} CPUs; numpy BLAS threads {threads}, torch threads {torch.get_num_threads()}")
    for d in harness.blas_info():
        print("  threadpool: " + ", ".join(f"{k}={v}" for k, v in d.items()))
    core = os.environ.get("OPENBLAS_CORETYPE")
    if core:
        print(f"  note: OPENBLAS_CORETYPE={core} is set (slows current OpenBLAS kernels)")
    mode = "quick" if args.quick else "full"
    print(f"mode: {mode}; memory: {'off' if args.no_memory else 'one subprocess per framework and case'}\n")

    rows, checks, scaling = [], [], {GF: [], PT: [], "T": [], "mem_gf": [], "mem_pt": []}
    names = args.case or list(CASES)
    for name in names:
        case = CASES[name]
        repeats = args.repeats or case.repeats[1 if args.quick else 0]
        for variant in case.variant_list(args.quick):
            label = _row_label(case, variant)
            print(f"[{label}] {case.title}: building ...", flush=True)
            runners = {fw: case.make(fw, variant, args.quick) for fw in case.frameworks}
            print(f"[{label}] timing {repeats} alternating repetition(s) ...", flush=True)
            stats = harness.alternate(runners, repeats)
            if case.check is not None:
                checks.extend(case.check(runners, variant, args.quick))
            del runners
            mem = {}
            if not args.no_memory:
                for fw in (GF, PT):
                    mem[fw] = measure_memory(name, variant, fw, args.quick)
            t_ratio = stats[GF].median / stats[PT].median
            m_ratio = (mem[GF]["above_kb"] / mem[PT]["above_kb"]) if mem.get(GF) and mem.get(PT) \
                and mem[PT]["above_kb"] > 0 else None
            rows.append([label, _fmt_time(stats[GF], case.per_step), _fmt_time(stats[PT], case.per_step),
                         f"{t_ratio:.2f}{_mark(t_ratio, case.time_target)}", _fmt_mem(mem.get(GF)),
                         _fmt_mem(mem.get(PT)),
                         "-" if m_ratio is None else f"{m_ratio:.2f}{_mark(m_ratio, case.mem_target)}"])
            if LOOP in stats:
                rows.append([f"{label}: seed per-sequence loop", _fmt_time(stats[LOOP], case.per_step),
                             _fmt_time(stats[PT], case.per_step),
                             f"{stats[LOOP].median / stats[PT].median:.2f}", "-", "-", "-"])
                rows.append([f"{label}: glassformer / seed loop", "", "",
                             f"{stats[GF].median / stats[LOOP].median:.3f}", "", "", ""])
            if name == "scaling":
                scaling["T"].append(int(variant))
                scaling[GF].append(stats[GF].median)
                scaling[PT].append(stats[PT].median)
                scaling["mem_gf"].append(mem[GF]["above_kb"] if mem.get(GF) else None)
                scaling["mem_pt"].append(mem[PT]["above_kb"] if mem.get(PT) else None)

    header = ["case", "glassformer median [min-max]", "PyTorch median [min-max]", "time ratio gf/pt",
              "peak MiB gf", "peak MiB pt", "memory ratio gf/pt"]
    print("\n" + harness.format_table(header, rows))
    if len(scaling["T"]) >= 2:
        T = scaling["T"]
        parts = [f"time exponent (log-log slope over T={T[0]}..{T[-1]} at fixed tokens/batch): "
                 f"glassformer {harness.fit_exponent(T, scaling[GF]):.2f}, "
                 f"PyTorch {harness.fit_exponent(T, scaling[PT]):.2f}"]
        if all(scaling["mem_gf"]) and all(scaling["mem_pt"]):
            parts.append(f"memory exponent: glassformer {harness.fit_exponent(T, scaling['mem_gf']):.2f}, "
                         f"PyTorch {harness.fit_exponent(T, scaling['mem_pt']):.2f}")
        print("\n" + "\n".join(parts))
    if checks:
        print("\ncorrectness:")
        for ok, msg in checks:
            print(f"  [{'ok' if ok else 'FAIL'}] {msg}")
    failed = sum(1 for ok, _ in checks if not ok)
    print(f"\n{len(checks) - failed}/{len(checks)} correctness checks passed")
    return 1 if failed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, one repetition (seconds)")
    p.add_argument("--case", action="append", choices=list(CASES), help="run only this case (repeatable)")
    p.add_argument("--repeats", type=int, default=None, help="timed repetitions per case (default per case)")
    p.add_argument("--no-memory", action="store_true", help="skip the memory subprocesses")
    p.add_argument("--memory-worker", nargs=3, metavar=("CASE", "VARIANT", "FRAMEWORK"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.memory_worker:
        case, variant, fw = args.memory_worker
        print(json.dumps(memory_worker(case, variant, fw, args.quick)))
        return 0
    if args.repeats is not None and args.repeats < 1:
        p.error("--repeats must be >= 1")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
