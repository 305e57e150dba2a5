"""Demonstration 2's per-step overhead: Python calls per step, CPU time per step, the fixed cost of a fit.

The chapter's demonstration 2 (Pyrcz 2024: ``SequenceRegressor.chapter_model``, 800 sequences of
7, batch 32, float64, SGD lr 0.3; 25 steps per epoch) spends its time on calls, not arithmetic.
Three measurements, each robust on a shared machine:

* ``calls``: Python-level function calls per training step (cProfile's ``total_calls`` of one fit
  over its steps) -- independent of the load;
* ``time``: CPU time (``time.process_time``, BLAS on one thread) per step of a fit, and the fixed
  cost of a fit of 0 epochs (building the network, checking the data, the trainer);
* ``--before PATH``: the same measurements of another checkout (e.g. a ``git worktree`` of
  ``main``), run in alternating subprocesses with this one, medians over the repetitions.

Usage (from the repository root)::

    python benchmarks/demo2_overhead.py                       # this checkout: calls, time, fixed cost
    python benchmarks/demo2_overhead.py --before ../main      # alternate with another checkout
    python benchmarks/demo2_overhead.py --profile 30          # the top of a cProfile of a fit
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS_PER_EPOCH = 25                  # 800 sequences in batches of 32


def _setup(root: Path):
    """Import the glassformer of ``root`` and the benchmark cases; returns ``fit(epochs) -> (CPU seconds,
    model)`` and the BLAS thread limit (one thread while it is kept)."""
    sys.path[:0] = [str(root), str(HERE)]
    from threadpoolctl import threadpool_limits

    limit = threadpool_limits(limits=1, user_api="blas")
    from cases import DEMO2_POSITIONS, _demo2_data
    from glassformer.models import SequenceRegressor

    X, y = _demo2_data()

    def fit(epochs: int):
        model = SequenceRegressor.chapter_model(epochs=epochs, batch_size=32, lr=0.3, dtype="float64")
        t0 = time.process_time()
        model.fit(X, y, DEMO2_POSITIONS)
        return time.process_time() - t0, model
    return fit, limit


def measure(root: Path, epochs: int, repeats: int) -> dict:
    """One process's measurements of the checkout at ``root`` (printed as JSON by ``--worker``)."""
    fit, _limit = _setup(root)
    fit(1)                                                         # warm: imports, caches
    prof = cProfile.Profile()
    prof.enable()
    _, model = fit(epochs)
    prof.disable()
    calls = pstats.Stats(prof).total_calls / (epochs * STEPS_PER_EPOCH)
    steps = [fit(epochs)[0] / (epochs * STEPS_PER_EPOCH) * 1e6 for _ in range(repeats)]
    fixed = [fit(0)[0] * 1e3 for _ in range(max(5, repeats))]
    return {"root": str(root), "calls_per_step": calls, "us_per_step": steps, "fixed_ms": fixed,
            "last_loss": model.history_.train_loss[-1]}


def profile(root: Path, epochs: int, top: int) -> str:
    fit, _limit = _setup(root)
    fit(1)
    prof = cProfile.Profile()
    prof.enable()
    fit(epochs)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def _worker(root: Path, epochs: int, repeats: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(root), "--epochs", str(epochs),
           "--repeats", str(repeats)]
    return json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", type=Path, help="another checkout, measured in alternating subprocesses")
    p.add_argument("--epochs", type=int, default=20, help="epochs per timed fit (default 20)")
    p.add_argument("--repeats", type=int, default=3, help="timed fits per subprocess (default 3)")
    p.add_argument("--rounds", type=int, default=4, help="alternating rounds of subprocesses (default 4)")
    p.add_argument("--profile", type=int, metavar="TOP", help="print the TOP functions of a cProfile of a fit")
    p.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(args.worker, args.epochs, args.repeats)))
        return 0
    if args.profile:
        print(profile(HERE.parent, args.epochs, args.profile))
        return 0
    roots = [HERE.parent] + ([args.before.resolve()] if args.before else [])
    results = {r: [] for r in roots}
    for i in range(args.rounds):
        for r in (roots if i % 2 == 0 else roots[::-1]):           # the order flips every round
            results[r].append(_worker(r, args.epochs, args.repeats))
    print(f"demonstration 2, {args.epochs}-epoch fits, {args.rounds} alternating rounds x {args.repeats} fits, "
          f"CPU time, BLAS on one thread; load average {os.getloadavg()[0]:.1f}")
    print("| checkout | Python calls / step | CPU us / step, median [min-max] | fixed cost of a fit, ms, median |")
    print("|---|---|---|---|")
    for r, runs in results.items():
        steps = [v for run in runs for v in run["us_per_step"]]
        fixed = [v for run in runs for v in run["fixed_ms"]]
        print(f"| {r} | {runs[0]['calls_per_step']:.1f} | {statistics.median(steps):.0f} "
              f"[{min(steps):.0f}-{max(steps):.0f}] | {statistics.median(fixed):.2f} |")
    losses = {r: runs[0]["last_loss"] for r, runs in results.items()}
    print("last epoch's mean batch MSE: " + ", ".join(f"{v:.9f}" for v in losses.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
