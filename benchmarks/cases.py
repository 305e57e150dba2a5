"""The benchmark cases: each builds a glassformer runner and a PyTorch twin.

Every case gives both frameworks the same sizes, dtype, initial weights (glassformer's, copied into
PyTorch by name), data and batch order, and the same optimizer.  A runner follows the protocol of
:mod:`harness` (``time_once``, ``memory_run``, optional ``warmup``); :data:`CASES` lists them.

torch is imported inside the PyTorch builders only, so a glassformer memory subprocess never
loads it.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from glassformer.selftest.published import demonstration_2

GF, PT, LOOP = "glassformer", "pytorch", "seed loop"

# The chapter's demonstration 2 (Pyrcz 2024): printed mean batch MSE at these 1-based epochs.
SEED_MSE = demonstration_2()["printed_mean_batch_mse"]
DEMO2_POSITIONS = np.arange(1, 8, dtype=np.float64)

# The windowed well model: the real-wells demo's architecture and optimizer (glassformer.demos.synthetic_wells).
WELL = dict(d_model=16, num_heads=2, d_ff=32, num_layers=1, positional="sinusoidal", attn_out_proj=True,
            init="torch", random_state=42, optimizer="adam", lr=3e-3, batch_size=32, epochs=2, grad_clip=None,
            early_stopping_patience=None, validation_fraction=None)
WELL_FEATURES = 3
WELL_INPUTS = ("PHIF", "VSH", "SW")


CLOCK = {"clock": time.perf_counter}     # run.py switches to time.process_time with --threads 1


def _clock() -> float:
    return CLOCK["clock"]()


def _torch():
    import torch

    return torch


# =========================================================================== demonstration 2
def _demo2_data():
    """The chapter's 800 training sequences (7 porosities each) and their targets."""
    from glassformer.data import neighbor_dataset, split_by_sequence

    X, y = neighbor_dataset(n_sequences=1000, seq_length=7, noise_std=0.01, seed=42)
    tr, _ = split_by_sequence(len(X), 0.8, seed=42)
    return X[tr], y[tr]


def _demo2_initial():
    """The chapter's initial weights (SequenceRegressor.chapter_model) and the fixed encoding of positions 1..7."""
    from glassformer.models import SequenceRegressor

    m = SequenceRegressor.chapter_model()
    net = m.build_network(1)
    return net.state_dict(), net.positional(DEMO2_POSITIONS)


class _Demo2Case:
    """Shared timing protocol of the demo-2 cases: ``_fit(epochs) -> (seconds, loss history)``."""

    def warmup(self):
        self._fit(1)

    def time_once(self) -> float:
        dt, self.history = self._fit(self.epochs)
        return dt

    def memory_run(self):
        self._fit(3)


class Demo2Glassformer(_Demo2Case):
    """The chapter's SequenceRegressor, fitted like ``glassformer.demos.neighbor``."""

    def __init__(self, epochs: int, quick: bool):
        self.epochs = epochs
        self.X, self.y = _demo2_data()
        self.history = None

    def _fit(self, epochs: int):
        from glassformer.models import SequenceRegressor

        model = SequenceRegressor.chapter_model(epochs=epochs, batch_size=32, lr=0.3, dtype="float64")
        t0 = _clock()
        model.fit(self.X, self.y, DEMO2_POSITIONS)
        return _clock() - t0, model.history_.train_loss


class Demo2Torch(_Demo2Case):
    """The same model in eager PyTorch (float64), same initial weights, batches and SGD."""

    def __init__(self, epochs: int, quick: bool):
        torch = _torch()
        self.epochs = epochs
        X, y = _demo2_data()
        self.X, self.y = torch.from_numpy(X), torch.from_numpy(y)
        self.state, self.pe = _demo2_initial()
        self.history = None

    def _fit(self, epochs: int):
        torch = _torch()
        from torch_models import SeedRegressor, state_from_numpy

        model = SeedRegressor(self.pe, dtype=torch.float64)
        model.load_state_dict(state_from_numpy(self.state))
        opt = torch.optim.SGD(model.parameters(), lr=0.3)
        mse = torch.nn.functional.mse_loss
        rng = np.random.default_rng(42)
        n = len(self.X)
        history = []
        t0 = _clock()
        for _ in range(epochs):
            order = torch.from_numpy(rng.permutation(n))
            losses = []
            for s in range(0, n, 32):
                idx = order[s:s + 32]
                opt.zero_grad()
                loss = mse(model(self.X[idx]), self.y[idx])
                loss.backward()
                opt.step()
                losses.append(loss.item())
            history.append(float(np.mean(losses)))
        return _clock() - t0, history


class Demo2SeedLoop:
    """The chapter's per-sequence loop (benchmarks/seed_loop.py) for ``loop_epochs``, extrapolated to ``epochs``."""

    def __init__(self, epochs: int, loop_epochs: int, quick: bool):
        self.epochs, self.loop_epochs = epochs, loop_epochs
        self.X, self.y = _demo2_data()
        self.state, self.pe = _demo2_initial()
        self.history = None

    def time_once(self) -> float:
        from seed_loop import params_from_state, train_per_sequence

        p = params_from_state(self.state)
        t0 = _clock()
        self.history = train_per_sequence(p, self.X, self.y, self.pe, epochs=self.loop_epochs)
        return (_clock() - t0) * self.epochs / self.loop_epochs

    def memory_run(self):  # pragma: no cover - not measured
        pass


def _demo2_make(framework: str, variant, quick: bool):
    epochs = 3 if quick else 1000
    if framework == GF:
        return Demo2Glassformer(epochs, quick)
    if framework == PT:
        return Demo2Torch(epochs, quick)
    return Demo2SeedLoop(epochs, 1 if quick else 20, quick)


def _demo2_short_make(framework: str, variant, quick: bool):
    """Demonstration 2 as a user's short run: ``variant`` epochs, each fit paying its fixed cost."""
    epochs = 3 if quick else int(variant)
    return Demo2Glassformer(epochs, quick) if framework == GF else Demo2Torch(epochs, quick)


def _demo2_check(runners: dict, variant, quick: bool) -> list:
    out = []
    h = runners[GF].history
    shown = {e: v for e, v in SEED_MSE.items() if e <= len(h)}
    if shown:   # --quick stops before epoch 20
        got = {e: round(h[e - 1], 6) for e in shown}
        ok = all(abs(got[e] - v) < 5e-7 for e, v in shown.items())
        out.append((ok, "demo 2 glassformer mean batch MSE " +
                    ", ".join(f"@{e}: {got[e]:.6f} (seed {v:.6f})" for e, v in shown.items())))
    ht = runners[PT].history
    diff = max(abs(a - b) for a, b in zip(h, ht))
    out.append((diff < 1e-9, f"demo 2 PyTorch trajectory equals glassformer's: max |diff| = {diff:.2e} "
                             f"over {len(h)} epochs"))
    if LOOP in runners and runners[LOOP].history:
        hl = runners[LOOP].history
        diff = max(abs(a - b) for a, b in zip(h, hl))
        out.append((diff < 1e-9, f"demo 2 per-sequence loop equals glassformer over its {len(hl)} epoch(s): "
                                 f"max |diff| = {diff:.2e}"))
    return out


# =========================================================================== encoder training step
def _encoder_model(B, T, d, H, dff, L, seed=0):
    from glassformer.nn import TransformerEncoder, TransformerEncoderLayer

    layer = TransformerEncoderLayer(d, H, dff, dropout=0.0, rng=seed, dtype=np.float32)
    model = TransformerEncoder(layer, L)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((B, T, d)).astype(np.float32)
    y = rng.standard_normal((B, T, d)).astype(np.float32)
    return model, x, y


#: The scaling case builds glassformer's encoder with defaults: attention picks its own query blocks
#: when a layer's weights would exceed its memory budget (``query_block="auto"``).
SCALING_QUERY_BLOCK = "auto"


class EncoderGlassformer:
    """Forward, MSE, backward and Adam on a TransformerEncoder (float32); times per step."""

    def __init__(self, shape: tuple, steps: int, query_block: int | str | None = "auto"):
        from glassformer.train.losses import MSELoss
        from glassformer.train.optim import Adam

        self.model, self.x, self.y = _encoder_model(*shape)
        for layer in self.model.layers:
            layer.self_attn.query_block = query_block
        self.opt = Adam(self.model.named_parameters(), lr=1e-3)
        self.loss = MSELoss()
        self.steps = steps
        self.losses = []

    def step(self) -> float:
        self.opt.zero_grad()
        value = self.loss.forward(self.model(self.x), self.y)
        self.model.backward(self.loss.backward())
        self.opt.step()
        self.losses.append(value)
        return value

    def warmup(self):
        self.step()

    def time_once(self) -> float:
        t0 = _clock()
        for _ in range(self.steps):
            self.step()
        return (_clock() - t0) / self.steps

    def memory_run(self):
        for _ in range(3):
            self.step()


class EncoderTorch:
    """The same step with ``torch.nn.TransformerEncoder`` and ``torch.optim.Adam``."""

    def __init__(self, shape: tuple, steps: int):
        torch = _torch()
        from torch_models import encoder_stack, state_from_numpy

        B, T, d, H, dff, L = shape
        gf_model, x, y = _encoder_model(*shape)
        self.model = encoder_stack(d, H, dff, L, torch.float32)
        self.model.load_state_dict(state_from_numpy(gf_model.state_dict()))
        del gf_model
        self.x, self.y = torch.from_numpy(x), torch.from_numpy(y)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.mse = torch.nn.functional.mse_loss
        self.steps = steps
        self.losses = []

    def step(self) -> float:
        self.opt.zero_grad()
        loss = self.mse(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()
        value = loss.item()
        self.losses.append(value)
        return value

    warmup = EncoderGlassformer.warmup
    time_once = EncoderGlassformer.time_once
    memory_run = EncoderGlassformer.memory_run


MIDSIZE = (32, 128, 128, 4, 512, 2)       # batch, seq, d_model, heads, d_ff, layers
MIDSIZE_QUICK = (4, 16, 32, 4, 64, 2)


def _midsize_make(framework, variant, quick):
    shape = MIDSIZE_QUICK if quick else MIDSIZE
    steps = 2 if quick else 5
    return (EncoderGlassformer if framework == GF else EncoderTorch)(shape, steps)


def _first_losses_check(label: str):
    def check(runners, variant, quick):
        a, b = runners[GF].losses[0], runners[PT].losses[0]
        rel = abs(a - b) / max(abs(b), 1e-30)
        return [(rel < 1e-4, f"{label}: first-step loss glassformer {a:.6f} vs PyTorch {b:.6f} "
                             f"(relative difference {rel:.1e}, float32)")]
    return check


TOKENS_PER_BATCH, TOKENS_QUICK = 8192, 256
SCALING_T, SCALING_T_QUICK = (64, 128, 256, 512, 1024), (16, 32)


def _scaling_shape(T: int, quick: bool) -> tuple:
    d, H, dff = (32, 4, 64) if quick else (128, 4, 512)
    return ((TOKENS_QUICK if quick else TOKENS_PER_BATCH) // T, T, d, H, dff, 2)


def _scaling_make(framework, variant, quick):
    shape = _scaling_shape(int(variant), quick)
    steps = 1 if quick else 3
    if framework == GF:
        return EncoderGlassformer(shape, steps, query_block=SCALING_QUERY_BLOCK if not quick else 8)
    return EncoderTorch(shape, steps)


# =========================================================================== inference on the real well
WINDOW = 32


@functools.lru_cache(maxsize=2)
def _well_data(quick: bool):
    """15/9-F-11 B over its 13,933 valid samples: min-max scaled PHIF, VSH, SW (float32), the
    standardised log10 KLOGH (the training target), and a note saying what was read.

    Without the shared data folder: the same number of synthetic samples (the cost is the same).
    """
    from glassformer.data import MinMaxScaler, contiguous_runs, read_volve

    try:
        log = read_volve("F-11B")
    except Exception as exc:
        rng = np.random.default_rng(0)
        n = 600 if quick else 13933
        X = rng.uniform(0, 1, (n, 3)).astype(np.float32)
        return X, rng.standard_normal(n).astype(np.float32), f"synthetic inputs ({type(exc).__name__}: no data)"
    X = log.matrix(list(WELL_INPUTS)).astype(np.float64)
    a, b = max(contiguous_runs(np.isfinite(X).all(axis=1)), key=lambda r: r[1] - r[0])
    X = MinMaxScaler().fit(X[a:b]).transform(X[a:b]).astype(np.float32)
    k = np.log10(np.maximum(np.asarray(log.curve("KLOGH"), dtype=np.float64)[a:b], 1e-3))
    y = ((k - np.nanmean(k)) / np.nanstd(k)).astype(np.float32)
    if quick:
        X, y = X[:600], y[:600]
    return X, y, f"15/9-F-11 B, {len(X)} samples {log.depth[a]:.1f}-{log.depth[a + len(X) - 1]:.1f} m"


def _well_windows(quick: bool, stride: int):
    from glassformer.data import make_windows

    X, _, note = _well_data(quick)
    w = make_windows(X, None, None, window=WINDOW, stride=stride, pad_last=True)
    return w.x.astype(np.float32, copy=False), np.arange(1, WINDOW + 1, dtype=np.float64), note, len(X)


def _well_model(quick: bool):
    """The windowed model, briefly trained (2 epochs, Adam) on the first 256 half-overlapping windows.

    Inference cost does not depend on how well the weights are trained; training is deterministic,
    so both frameworks' builders get the same weights.
    """
    from glassformer.data import make_windows
    from glassformer.models import SequenceRegressor

    X, y, _ = _well_data(quick)
    w = make_windows(X, y, None, window=WINDOW, stride=WINDOW // 2)
    model = SequenceRegressor(**WELL, dtype="float32")
    model.fit(w.x[:256], w.y[:256], np.arange(1, WINDOW + 1, dtype=np.float64))
    return model


class InferenceGlassformer:
    """``SequenceRegressor.predict`` (evaluation mode, no caches, chunks of 2,048 windows)."""

    def __init__(self, stride: int, quick: bool):
        self.X, self.pos, self.note, self.n_samples = _well_windows(quick, stride)
        self.model = _well_model(quick)
        self.pred = None

    def warmup(self):
        self.model.predict(self.X[:64], self.pos)

    def time_once(self) -> float:
        t0 = _clock()
        self.pred = self.model.predict(self.X, self.pos)
        return _clock() - t0

    def memory_run(self):
        self.model.predict(self.X, self.pos)


class InferenceTorch:
    """The same windows through the PyTorch twin under ``torch.inference_mode()``, same chunks."""

    def __init__(self, stride: int, quick: bool):
        torch = _torch()
        from torch_models import WellRegressor, state_from_numpy

        X, pos, self.note, self.n_samples = _well_windows(quick, stride)
        gf = _well_model(quick)
        pe = gf.network_.positional(pos)
        self.model = WellRegressor(pe, WELL_FEATURES, WELL["d_model"], WELL["num_heads"], WELL["d_ff"],
                                   WELL["num_layers"], dtype=torch.float32)
        self.model.load_state_dict(state_from_numpy(gf.network_.state_dict()))
        self.model.eval()
        del gf
        self.X = torch.from_numpy(X)
        self.pred = None

    def _predict(self, X, chunk: int = 2048):
        torch = _torch()
        with torch.inference_mode():
            return torch.cat([self.model(X[s:s + chunk]) for s in range(0, len(X), chunk)]).numpy()

    def warmup(self):
        self._predict(self.X[:64])

    def time_once(self) -> float:
        t0 = _clock()
        self.pred = self._predict(self.X)
        return _clock() - t0

    def memory_run(self):
        self._predict(self.X)


def _inference_make(framework, variant, quick):
    return (InferenceGlassformer if framework == GF else InferenceTorch)(int(variant), quick)


def _inference_check(runners, variant, quick):
    a, b = runners[GF].pred, runners[PT].pred
    diff = float(np.max(np.abs(a - b)))
    return [(a.dtype == np.float32, f"inference (stride {variant}): glassformer output dtype {a.dtype} "
                                    f"(float32 end to end)"),
            (diff < 1e-4, f"inference (stride {variant}): {a.shape[0]} windows of {a.shape[1]} over "
                          f"{runners[GF].note}; max |glassformer - PyTorch| = {diff:.1e}")]


# =========================================================================== translation step
VOCAB, D_MODEL_T, PAD, BOS, EOS = 5000, 128, 0, 1, 2


def _translation_batches(quick: bool, n_batches: int = 4, seed: int = 0):
    """Random token batches: lengths 8-12 (quick: 4-6), ids in [4, vocab); target in = BOS + y, out = y + EOS."""
    rng = np.random.default_rng(seed)
    B = 8 if quick else 64
    lo, hi = (4, 6) if quick else (8, 12)
    vocab = 300 if quick else VOCAB
    batches = []
    for _ in range(n_batches):
        ls, lt = rng.integers(lo, hi + 1, B), rng.integers(lo, hi + 1, B)
        src = np.full((B, ls.max()), PAD, np.int64)
        tin = np.full((B, lt.max() + 1), PAD, np.int64)
        tout = np.full((B, lt.max() + 1), PAD, np.int64)
        for i in range(B):   # building the padded data only; not timed
            src[i, :ls[i]] = rng.integers(4, vocab, ls[i])
            y = rng.integers(4, vocab, lt[i])
            tin[i, 0], tin[i, 1:lt[i] + 1] = BOS, y
            tout[i, :lt[i]], tout[i, lt[i]] = y, EOS
        batches.append((src, tin, tout))
    return batches, vocab


def _translation_model(quick: bool, vocab: int):
    from glassformer.models.seq2seq import Seq2SeqTransformer

    d = 32 if quick else D_MODEL_T
    return Seq2SeqTransformer(vocab, vocab, d, 4, 2, 2, 4 * d, dropout=0.0, pad_id=PAD, rng=0, dtype=np.float32)


class TranslationGlassformer:
    """Seq2SeqTransformer: forward, label-smoothed cross-entropy, backward, Adam (0.9, 0.98, 1e-9)."""

    def __init__(self, quick: bool):
        from glassformer.train.losses import CrossEntropyLoss
        from glassformer.train.optim import Adam

        self.batches, vocab = _translation_batches(quick)
        self.model = _translation_model(quick, vocab)
        self.opt = Adam(list(self.model.named_parameters()), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
        self.loss = CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
        self.steps = len(self.batches)
        self.losses = []
        self.i = 0

    def step(self) -> float:
        src, tin, tout = self.batches[self.i % len(self.batches)]
        self.i += 1
        self.opt.zero_grad()
        value = self.loss.forward(self.model.forward(src, tin), tout)
        self.model.backward(self.loss.backward())
        self.opt.step()
        self.losses.append(value)
        return value

    warmup = EncoderGlassformer.warmup
    time_once = EncoderGlassformer.time_once
    memory_run = EncoderGlassformer.memory_run


class TranslationTorch:
    """The PyTorch twin (nn.TransformerEncoder/Decoder, CrossEntropyLoss, Adam) on the same batches."""

    def __init__(self, quick: bool):
        torch = _torch()
        from torch_models import Translator, state_from_numpy

        batches, vocab = _translation_batches(quick)
        gf = _translation_model(quick, vocab)
        c = gf.config
        pe = gf.src_pos(np.arange(64))
        self.model = Translator(pe, vocab, c["d_model"], c["nhead"], c["dim_feedforward"],
                                c["num_encoder_layers"], PAD, dtype=torch.float32)
        self.model.load_state_dict(state_from_numpy(gf.state_dict()))
        del gf
        self.batches = [tuple(torch.from_numpy(a) for a in b) for b in batches]
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
        self.ce = torch.nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
        self.steps = len(self.batches)
        self.losses = []
        self.i = 0

    def step(self) -> float:
        src, tin, tout = self.batches[self.i % len(self.batches)]
        self.i += 1
        self.opt.zero_grad()
        logits = self.model(src, tin)
        loss = self.ce(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1))
        loss.backward()
        self.opt.step()
        value = loss.item()
        self.losses.append(value)
        return value

    warmup = EncoderGlassformer.warmup
    time_once = EncoderGlassformer.time_once
    memory_run = EncoderGlassformer.memory_run


def _translation_make(framework, variant, quick):
    return (TranslationGlassformer if framework == GF else TranslationTorch)(quick)


# =========================================================================== registry
@dataclass
class Case:
    """One benchmark: how to build its runners, its unit, repetitions and targets (ratio gf/PyTorch)."""

    name: str
    title: str
    make: Callable                    # (framework, variant, quick) -> runner
    per_step: bool                    # True: ms per step; False: s per run
    repeats: tuple                    # (full, quick)
    variants: tuple = (None,)
    variants_quick: tuple | None = None
    frameworks: tuple = (GF, PT)
    check: Callable | None = None     # (runners, variant, quick) -> [(ok, message)]
    time_target: float | None = None
    mem_target: float | None = None
    ratio: tuple = (GF, PT)           # the time ratio is ratio[0] / ratio[1]
    memory: bool = True               # measure peak memory (glassformer and PyTorch subprocesses)

    def variant_list(self, quick: bool) -> tuple:
        return self.variants_quick if quick and self.variants_quick is not None else self.variants


CASES = {
    "demo2": Case("demo2", "seed demo 2, float64, 1,000 epochs (quick: 3)", _demo2_make, False, (3, 1),
                  frameworks=(GF, PT, LOOP), check=_demo2_check, time_target=0.25),
    "demo2short": Case("demo2short", "seed demo 2, float64, short runs (quick: 3 epochs)", _demo2_short_make, False,
                       (5, 1), variants=(30, 100), variants_quick=(30,), check=_demo2_check, time_target=0.35,
                       memory=False),
    "midsize": Case("midsize", "encoder step B32 T128 d128 h4 ff512 L2, float32", _midsize_make, True, (5, 1),
                    check=_first_losses_check("mid-size encoder"), time_target=1.0, mem_target=1.5),
    "inference": Case("inference", "15/9-F-11 B windowed inference, float32", _inference_make, False, (5, 1),
                      variants=(1, 16), variants_quick=(16,), check=_inference_check, time_target=0.9),
    "welltrain": None,    # the well model's training epoch (well_cases.py), registered below
    "translation": Case("translation", "seq2seq step B64 len~10 d128 2+2 V5000, float32", _translation_make,
                        True, (5, 1), check=_first_losses_check("translation"), time_target=1.5),
    "scaling": Case("scaling", "encoder step at 8,192 tokens/batch, float32, built with defaults",
                    _scaling_make, True, (3, 1), variants=SCALING_T, variants_quick=SCALING_T_QUICK, check=None,
                    time_target=1.1, mem_target=1.2),
}

import well_cases  # noqa: E402  (it imports from this module: its functions are looked up when called)

CASES["welltrain"] = Case("welltrain", "well model epoch, 15/9-F-11 B, d16 h2 T32 B64, Adam, clip, float32",
                          lambda *a: well_cases.welltrain_make(*a), False, (5, 1),
                          check=lambda *a: well_cases.welltrain_check(*a), time_target=0.6)
CASES["ensemble"] = Case("ensemble", "5-member deep ensemble of the well model side by side vs one member alone",
                         lambda *a: well_cases.ensemble_make(*a), False, (3, 1),
                         frameworks=(well_cases.MEMBER, well_cases.ENSEMBLE),
                         check=lambda *a: well_cases.ensemble_check(*a), time_target=2.0,
                         ratio=(well_cases.ENSEMBLE, well_cases.MEMBER), memory=False)

BENCH_DIR = Path(__file__).resolve().parent
