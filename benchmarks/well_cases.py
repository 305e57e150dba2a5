"""Benchmark cases of the well model's training: one epoch against PyTorch, and a deep ensemble.

* ``welltrain``: one training epoch of the well model (15/9-F-11 B, d_model 16, 2 heads, d_ff 32,
  windows of 32 samples at stride 16, batch 64, float32, Adam, gradient clipping at 1.0) in
  glassformer's ``SequenceRegressor.fit`` and in eager PyTorch from the same weights, batches and
  optimizer.  Timed per epoch (a fit of ``EPOCHS`` epochs, divided).
* ``ensemble``: the same model trained as a 5-member deep ensemble (seeds 42, 0, 1, 2, 3) by
  :func:`glassformer.models.members.fit_members` (one batched model), against one member trained
  alone; the ratio is ensemble / member (target <= 2).  Glassformer only.

torch is imported inside the PyTorch builders only.
"""

from __future__ import annotations

import numpy as np

import cases
from cases import GF, PT, WELL_FEATURES, WINDOW, _torch, _well_data


def _clock() -> float:
    return cases._clock()

MEMBER, ENSEMBLE = "one member", "5 members"
EPOCHS, EPOCHS_QUICK = 4, 1
WELL_TRAIN = dict(d_model=16, num_heads=2, d_ff=32, num_layers=1, positional="sinusoidal", attn_out_proj=True,
                  init="torch", optimizer="adam", lr=3e-3, batch_size=64, grad_clip=1.0,
                  early_stopping_patience=None, validation_fraction=None, dtype="float32")
SEEDS = (42, 0, 1, 2, 3)


def _train_windows(quick: bool):
    """Training windows of 15/9-F-11 B at the well model's stride (half a window): X (n, 32, 3), y (n, 32, 1)."""
    from glassformer.data import make_windows

    X, y, note = _well_data(quick)
    w = make_windows(X, y, None, window=WINDOW, stride=WINDOW // 2)
    return w.x.astype(np.float32), w.y.astype(np.float32), np.arange(1, WINDOW + 1, dtype=np.float64), note


def _regressor(epochs: int, seed: int = 42):
    from glassformer.models import SequenceRegressor

    return SequenceRegressor(**WELL_TRAIN, epochs=epochs, random_state=seed)


class WellTrainGlassformer:
    """``SequenceRegressor.fit`` for ``epochs`` epochs; ``time_once`` returns seconds per epoch."""

    def __init__(self, quick: bool):
        self.X, self.y, self.pos, self.note = _train_windows(quick)
        self.epochs = EPOCHS_QUICK if quick else EPOCHS
        self.history = None

    def _fit(self, epochs: int):
        model = _regressor(epochs)
        t0 = _clock()
        model.fit(self.X, self.y, self.pos)
        return _clock() - t0, model.history_.train_loss

    def warmup(self):
        self._fit(1)

    def time_once(self) -> float:
        dt, self.history = self._fit(self.epochs)
        return dt / self.epochs

    def memory_run(self):
        self._fit(1)


class WellTrainTorch:
    """The same epochs in eager PyTorch: WellRegressor twin, Adam, ``clip_grad_norm_(1.0)``, same batches."""

    def __init__(self, quick: bool):
        torch = _torch()
        from torch_models import WellRegressor

        X, y, pos, self.note = _train_windows(quick)
        self.X, self.y = torch.from_numpy(X), torch.from_numpy(y)
        gf = _regressor(1)
        net = gf.build_network(WELL_FEATURES, 1)
        self.state, pe = net.state_dict(), net.positional(pos)
        self.model_args = (pe, WELL_FEATURES, WELL_TRAIN["d_model"], WELL_TRAIN["num_heads"], WELL_TRAIN["d_ff"],
                           WELL_TRAIN["num_layers"])
        self.WellRegressor = WellRegressor
        self.epochs = EPOCHS_QUICK if quick else EPOCHS
        self.history = None

    def _fit(self, epochs: int):
        torch = _torch()
        from torch_models import state_from_numpy

        model = self.WellRegressor(*self.model_args, dtype=torch.float32)
        model.load_state_dict(state_from_numpy(self.state))
        opt = torch.optim.Adam(model.parameters(), lr=WELL_TRAIN["lr"])
        mse, clip = torch.nn.functional.mse_loss, torch.nn.utils.clip_grad_norm_
        rng, n, bs = np.random.default_rng(42), len(self.X), WELL_TRAIN["batch_size"]
        history = []
        t0 = _clock()
        for _ in range(epochs):
            order = torch.from_numpy(rng.permutation(n))
            losses = []
            for s in range(0, n, bs):
                idx = order[s:s + bs]
                opt.zero_grad()
                loss = mse(model(self.X[idx]), self.y[idx])
                loss.backward()
                clip(model.parameters(), WELL_TRAIN["grad_clip"])
                opt.step()
                losses.append(loss.item())
            history.append(float(np.mean(losses)))
        return _clock() - t0, history

    warmup = WellTrainGlassformer.warmup
    time_once = WellTrainGlassformer.time_once
    memory_run = WellTrainGlassformer.memory_run


def welltrain_make(framework, variant, quick):
    return (WellTrainGlassformer if framework == GF else WellTrainTorch)(quick)


def welltrain_check(runners, variant, quick):
    a, b = runners[GF].history, runners[PT].history
    rel = max(abs(x - y) / abs(y) for x, y in zip(a, b))
    return [(rel < 1e-3, f"well training: mean batch MSE per epoch glassformer {a[0]:.6f}..{a[-1]:.6f} vs PyTorch "
                         f"{b[0]:.6f}..{b[-1]:.6f} over {len(a)} epoch(s) (largest relative difference {rel:.1e}, "
                         f"float32); {runners[GF].note}, {len(runners[GF].X)} windows")]


# =========================================================================== the deep ensemble
class EnsembleMembers:
    """Train ``seeds`` as one batched model (``fit_members``) or the first seed alone; seconds per run."""

    def __init__(self, seeds: tuple, quick: bool):
        self.X, self.y, self.pos, self.note = _train_windows(quick)
        self.seeds = seeds
        self.epochs = EPOCHS_QUICK if quick else EPOCHS
        self.models = None

    def _fit(self, epochs: int):
        from glassformer.models.members import fit_members

        models = [_regressor(epochs, seed) for seed in self.seeds]
        t0 = _clock()
        if len(models) == 1:
            models[0].fit(self.X, self.y, self.pos)
        else:
            fit_members(models, self.X, self.y, self.pos)
        return _clock() - t0, models

    def warmup(self):
        self._fit(1)

    def time_once(self) -> float:
        dt, self.models = self._fit(self.epochs)
        return dt

    def memory_run(self):
        self._fit(1)


def ensemble_make(framework, variant, quick):
    return EnsembleMembers(SEEDS if framework == ENSEMBLE else SEEDS[:1], quick)


def ensemble_check(runners, variant, quick):
    """The first member of the ensemble equals the model trained alone, bit for bit."""
    alone, first = runners[MEMBER].models[0], runners[ENSEMBLE].models[0]
    same = all(np.array_equal(a, b) for a, b in zip(alone.network_.state_dict().values(),
                                                    first.network_.state_dict().values()))
    same = same and alone.history_.train_loss == first.history_.train_loss
    return [(same, f"ensemble: member 0 of {len(SEEDS)} trained together equals the model trained alone "
                   f"(parameters and losses bit for bit: {same}) over {runners[MEMBER].epochs} epoch(s)")]
