"""How far each case is from this machine's limit: measured peaks and counted work (the roofline).

The roofline model (Williams, Waterman & Patterson, 2009) bounds the time of a piece of work from
below by ``max(FLOPs / peak GFLOP/s, bytes / peak GB/s)``.  This module

* measures the two peaks once per run, on one thread: the GEMM rate of NumPy's BLAS on square
  float32 and float64 matrices (n = 1024, best of 5) and the memory bandwidth of a large copy
  (64 MiB read + 64 MiB written, best of 5, counted as 128 MiB moved);
* counts, per case, the FLOPs of the matrix products (2 per multiply-add; a training step is
  counted as 3 forward passes: backward does two products for each forward one; element-wise work
  is not counted) and the bytes a fused implementation must move at the least: every activation a
  layer saves written once in forward and read once in backward, its gradient written and read
  once, the parameters read in forward and backward, their gradient written, and the optimizer's
  update (SGD: p, g read, p written; Adam: p, g, m, v read, p, m, v written).  No ``(L, S)`` array
  is counted: a flash-style kernel never stores one.

The achieved fraction of the roofline is then ``roofline time / measured time`` (1.0 = at the
limit).  Small models whose every array fits in the caches are far below the bandwidth bound: there
the fraction says how much of the time is call overhead, not arithmetic or memory.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

__all__ = ["Machine", "Work", "measure_machine", "case_work", "roofline_lines"]


@dataclass
class Machine:
    """One thread's measured peaks: GEMM GFLOP/s per dtype and copy bandwidth in GB/s (1e9 bytes)."""

    gflops: dict           # {"float32": ..., "float64": ...}
    gbps: float
    n: int = 1024          # the GEMM's size
    copy_mib: int = 64     # the copied array's size
    repeats: int = 5


@dataclass
class Work:
    """What one timed unit of a case does: FLOPs of its matrix products, bytes moved at the least, dtype."""

    flops: float
    bytes: float
    dtype: str

    def roofline_s(self, m: Machine) -> float:
        return max(self.flops / (m.gflops[self.dtype] * 1e9), self.bytes / (m.gbps * 1e9))

    def bound(self, m: Machine) -> str:
        """Which limit the roofline time comes from: 'compute' or 'memory'."""
        return "compute" if self.flops / (m.gflops[self.dtype] * 1e9) >= self.bytes / (m.gbps * 1e9) else "memory"


# --------------------------------------------------------------------------- the machine
def _best(fn, repeats: int, clock) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best


def measure_machine(n: int = 1024, copy_mib: int = 64, repeats: int = 5, quick: bool = False,
                    clock=time.perf_counter) -> Machine:
    """GEMM GFLOP/s (float32, float64) and copy GB/s, best of ``repeats`` on ``clock`` (the cases' clock:
    CPU time with one thread, which other programs on a shared machine disturb far less than the wall
    clock).  Call it with NumPy's BLAS already limited to the threads wanted.  ``quick``: n = 256,
    8 MiB, 2 repeats."""
    if quick:
        n, copy_mib, repeats = 256, 8, 2
    rng = np.random.default_rng(0)
    gflops = {}
    for dt in ("float32", "float64"):
        a = rng.standard_normal((n, n)).astype(dt)
        b = rng.standard_normal((n, n)).astype(dt)
        c = np.empty((n, n), dt)
        np.matmul(a, b, out=c)                                   # warm the BLAS
        gflops[dt] = 2.0 * n ** 3 / _best(lambda: np.matmul(a, b, out=c), repeats, clock) / 1e9
    src = np.ones(copy_mib * 2 ** 20 // 8)                       # float64, copy_mib MiB
    dst = np.empty_like(src)
    np.copyto(dst, src)                                          # touch the pages
    gbps = 2.0 * src.nbytes / _best(lambda: np.copyto(dst, src), repeats, clock) / 1e9
    return Machine(gflops, gbps, n, copy_mib, repeats)


# --------------------------------------------------------------------------- counted work
def _layer_fwd_flops(N, B, L, S, E, dff, out_proj=True, cross_tokens=None):
    """Matrix-product FLOPs of one encoder layer's forward (``cross_tokens``: a decoder's memory tokens)."""
    f = 2 * N * E * 3 * E + 4 * B * L * S * E + (2 * N * E * E if out_proj else 0) + 4 * N * E * dff
    if cross_tokens is not None:          # cross-attention: q from N, k and v from the memory
        f += 2 * N * E * E + 2 * cross_tokens * E * 2 * E + 4 * B * L * S * E + 2 * N * E * E
    return f


def _layer_activations(N, E, dff):
    """Numbers an encoder layer saves for backward, per layer: x, q/k/v, U, O, two LayerNorms, FF in/out."""
    return N * (8 * E + 2 * dff)


def _params(E, dff, out_proj=True):
    return 3 * E * E + 3 * E + (E * E + E if out_proj else 0) + 2 * E * dff + dff + E + 4 * E


def _training(fwd_flops, activations, params, itemsize, optimizer="adam", inputs=0):
    update = 7 if optimizer == "adam" else 3
    return 3.0 * fwd_flops, itemsize * (4 * activations + (3 + update) * params + inputs)


def _encoder_stack(B, T, E, H, dff, L):
    N = B * T
    return (L * _layer_fwd_flops(N, B, T, T, E, dff), L * _layer_activations(N, E, dff), L * _params(E, dff))


def _regressor_fwd(n, T, F, E, dff, targets, layers=1, out_proj=True):
    """The windowed regressor: input embedding F -> E, encoder layers, head E -> targets (every position)."""
    N = n * T
    f = 2 * N * F * E + layers * _layer_fwd_flops(N, n, T, T, E, dff, out_proj) + 2 * N * E * targets
    acts = N * (F + E + targets) + layers * _layer_activations(N, E, dff)
    params = F * E + E + layers * _params(E, dff, out_proj) + E * targets + targets
    return f, acts, params


def case_work(name: str, variant, runner, quick: bool) -> Work | None:
    """The counted work of one timed unit of case ``name`` (glassformer's runner gives the shapes)."""
    import cases
    import well_cases

    if name in ("demo2", "demo2short"):
        X = runner.X                                             # (800, 7, 1)
        n, T = X.shape[:2]
        f, a, p = _regressor_fwd(n, T, 1, 4, 16, 1, out_proj=False)   # the chapter's model, one epoch
        fl, by = _training(f, a, p * -(-n // 32), 8, "sgd")      # parameters touched once per batch
        return Work(runner.epochs * fl, runner.epochs * by, "float64")
    if name in ("midsize", "scaling"):
        B, T, E = runner.x.shape
        layer = runner.model.layers[0]
        H, L = layer.self_attn.num_heads, len(runner.model.layers)
        dff = dict(layer.named_parameters())["linear1.weight"].shape[0]
        f, a, p = _encoder_stack(B, T, E, H, dff, L)
        fl, by = _training(f, a, p, 4, "adam", inputs=2 * B * T * E)
        return Work(fl, by, "float32")
    if name == "inference":
        n, T, F = runner.X.shape
        f, a, p = _regressor_fwd(n, T, F, cases.WELL["d_model"], cases.WELL["d_ff"], 1)
        return Work(f, 4 * (n * T * F + a + p), "float32")     # forward only: every array written once
    if name in ("welltrain", "ensemble"):
        n, T, F = runner.X.shape
        w = well_cases.WELL_TRAIN
        f, a, p = _regressor_fwd(w["batch_size"], T, F, w["d_model"], w["d_ff"], 1)
        batches = -(-n // w["batch_size"])
        fl, by = _training(f, a, p, 4, "adam")
        k = len(well_cases.SEEDS) if name == "ensemble" else 1
        return Work(k * batches * fl, k * batches * by, "float32")
    if name == "translation":
        return _translation_work(runner)
    return None


def _translation_work(runner) -> Work:
    """Mean over the case's batches of the seq2seq step: 2+2 layers, embeddings, output projection to V."""
    c = runner.model.config
    E, dff, V = c["d_model"], c["dim_feedforward"], c["tgt_vocab"]
    fl = by = 0.0
    for src, tin, _ in runner.batches:
        B, Ls = src.shape
        Lt = tin.shape[1]
        Ns, Nt = B * Ls, B * Lt
        f = c["num_encoder_layers"] * _layer_fwd_flops(Ns, B, Ls, Ls, E, dff)
        f += c["num_decoder_layers"] * _layer_fwd_flops(Nt, B, Lt, Lt, E, dff, cross_tokens=Ns)
        f += 2 * Nt * E * V                                      # output projection
        acts = (c["num_encoder_layers"] * _layer_activations(Ns, E, dff)
                + c["num_decoder_layers"] * (_layer_activations(Nt, E, dff) + Nt * 4 * E) + 2 * Nt * V)
        params = ((c["num_encoder_layers"] + c["num_decoder_layers"]) * _params(E, dff)
                  + c["num_decoder_layers"] * (4 * E * E + 6 * E) + 2 * V * E + E * V + V)
        f_, b_ = _training(f, acts, params, 4, "adam")
        fl, by = fl + f_, by + b_
    k = len(runner.batches)
    return Work(fl / k, by / k, "float32")


# --------------------------------------------------------------------------- report
def machine_line(m: Machine) -> str:
    return (f"machine (one thread, measured now): GEMM {m.gflops['float32']:.1f} GFLOP/s float32, "
            f"{m.gflops['float64']:.1f} GFLOP/s float64 (n={m.n} square, best of {m.repeats}); "
            f"copy bandwidth {m.gbps:.1f} GB/s ({m.copy_mib} MiB, best of {m.repeats})")


def roofline_lines(results: list, m: Machine, gf: str, pt: str) -> list:
    """One table row per case: counted GFLOP and MB, the bound, roofline time and each framework's fraction."""
    import harness

    rows = []
    for r in results:
        w = r.get("work")
        if w is None:
            continue
        a, b = r["case"].ratio
        t_a, t_b = r["stats"][a].median, r["stats"][b].median
        rl = w.roofline_s(m)
        unit, k = ("ms", 1e3) if r["case"].per_step else ("s", 1.0)
        second = f"{rl / t_b:.3f}" if (a, b) == (gf, pt) else "-"     # the ensemble: its ratio is 5 / 1 member
        rows.append([r["label"], f"{w.flops / 1e9:.3g}", f"{w.bytes / 1e6:.3g}", f"{w.flops / w.bytes:.1f}",
                     w.bound(m), f"{rl * k:.3g} {unit}", f"{rl / t_a:.3f}", second])
    header = ["case", "GFLOP", "MB moved", "FLOP/byte", "bound", "roofline time",
              "achieved fraction glassformer", "achieved fraction PyTorch"]
    return [harness.format_table(header, rows)] if rows else []
