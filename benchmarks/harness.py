"""Timing, memory and reporting helpers shared by the benchmark cases.

Nothing here knows about transformers.  A *runner* is any object with

* ``time_once() -> float``: do one repetition of the measured work and return its duration in
  seconds per unit (per training run or per step, as the case says); untimed preparation such
  as resetting weights happens inside, outside the timed region;
* ``memory_run() -> None``: the work whose peak memory is measured (run in a fresh subprocess);
* ``check() -> list[str]``: correctness lines, computed from what the runner has seen.

:func:`alternate` interleaves the repetitions of the glassformer and PyTorch runners (the order
flips every repetition), so slow drifts of the machine hit both columns alike.
"""

from __future__ import annotations

import math
import os
import resource
import statistics
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Stats", "alternate", "blas_info", "blas_threads", "fit_exponent", "format_table",
           "peak_kb", "reset_peak", "rss_kb"]


# --------------------------------------------------------------------------- threads and BLAS
def blas_info() -> list[dict]:
    """threadpoolctl's description of the BLAS/OpenMP pools loaded in this process."""
    from threadpoolctl import threadpool_info

    keep = ("user_api", "internal_api", "num_threads", "version", "architecture", "threading_layer")
    return [{k: d.get(k) for k in keep} for d in threadpool_info()]


def blas_threads() -> int:
    """Threads of numpy's BLAS (what PyTorch is set to, so both use the same cores)."""
    for d in blas_info():
        if d["user_api"] == "blas":
            return int(d["num_threads"])
    return os.cpu_count() or 1


# --------------------------------------------------------------------------- timing
@dataclass
class Stats:
    """Repetition times (seconds per unit) of one framework on one case."""

    values: list = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else math.nan

    @property
    def lo(self) -> float:
        return min(self.values) if self.values else math.nan

    @property
    def hi(self) -> float:
        return max(self.values) if self.values else math.nan


def alternate(runners: dict, repeats: int, warmup: bool = True) -> dict:
    """Time ``runners`` (``{label: runner}``) in alternating repetitions; returns ``{label: Stats}``.

    Repetition ``r`` runs the labels in order when ``r`` is even and reversed when odd.  With
    ``warmup`` each runner's ``warmup()`` (if it has one) runs once first, untimed.
    """
    labels = list(runners)
    if warmup:
        for lab in labels:
            w = getattr(runners[lab], "warmup", None)
            if w is not None:
                w()
    out = {lab: Stats() for lab in labels}
    for r in range(repeats):
        for lab in (labels if r % 2 == 0 else labels[::-1]):
            out[lab].values.append(float(runners[lab].time_once()))
    return out


def fit_exponent(x, y) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (the power in ``y ~ x**p``)."""
    x, y = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(x, y, 1)[0])


# --------------------------------------------------------------------------- memory (Linux /proc)
def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_kb() -> int:
    """Current resident set size of this process, kB."""
    v = _status_kb("VmRSS")
    return v if v is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def reset_peak() -> bool:
    """Reset the kernel's peak-RSS counter (VmHWM) to the current RSS; False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_kb() -> int:
    """Peak resident set size since the last :func:`reset_peak` (or since start), kB."""
    v = _status_kb("VmHWM")
    return v if v is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# --------------------------------------------------------------------------- table
def format_table(header: list, rows: list) -> str:
    """Plain-text table with columns padded to their widest cell (also valid Markdown)."""
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def line(r):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), sep] + [line(r) for r in cells[1:]])
