"""The transformer's defaults chosen by nested blind-well cross-validation (``benchmarks/DEFAULTS.md``).

For every outer fold (one well held out, or a group of wells), every candidate setting is fitted on
inner folds made of the outer fold's training wells only and scored on the inner held-out wells; the
setting of lowest mean inner RMSE is refitted on all the outer fold's training wells and scored on the
held-out well, which took no part in the choice (Varma and Simon 2006; Hastie, Tibshirani and
Friedman 2009, section 7.10.2; the same procedure as ``glassformer cv --recommend``, over settings of
one model instead of over models).

Candidates: d_model x maximum epochs (early stopping as the default does: patience 5 on the deepest
10 % of each training well) x {the seed-42 fit alone, the mean of a 5-member ensemble (seeds 42, 0, 1,
2, 3)}.  The members are trained side by side (:func:`glassformer.wells.fit_ensemble`, ``batched``),
and member 0 *is* the seed-42 fit (``fit_ensemble`` prepares the data as ``WellModel.fit`` does; its
tests assert equality), so the single-seed candidate reuses it.  A fit depends only on its training
wells, so a fit on a set of wells already fitted (an inner fold of one outer fold that is also the
inner fold of another) is reused, not repeated.

Every other setting is the library's default (``WellModel`` with ``SequenceRegressor(d_model=...,
epochs=...)``): 2 heads, windows of 32 samples, Adam 3e-3, batch 32.  The tree ensembles are not fitted
(``tree_baselines=False``): only the transformer is compared here.

    nice -n 5 python benchmarks/defaults_study.py --volve ../shared/data/real --out runs/defaults
    nice -n 5 python benchmarks/defaults_study.py --synthetic 16 --out runs/defaults-synthetic
    python benchmarks/defaults_study.py --quick --out runs/defaults-quick      # seconds: a smoke run
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from glassformer.data.synthetic import synthetic_wells
from glassformer.models import SequenceRegressor
from glassformer.wells import WellModel, build_dataset, fit_ensemble, regression_metrics
from glassformer.wells.cv import cv_folds

VOLVE_FILES = ("15_9-F11B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS", "15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS",
               "15_9-F-1B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS")
SEEDS = (42, 0, 1, 2, 3)


def candidates(d_models=(16, 32), epochs=(30, 60), members=(1, 5)) -> list:
    """The settings compared, in table order (a tie goes to the first): ``{"d_model", "epochs", "members"}``."""
    return [{"d_model": int(d), "epochs": int(e), "members": int(m)}
            for d, e, m in itertools.product(d_models, epochs, members)]


def label(setting: dict) -> str:
    """``d16 e30 x1``: d_model, maximum epochs, ensemble members (x1: the seed-42 fit alone)."""
    return f"d{setting['d_model']} e{setting['epochs']} x{setting['members']}"


def choose(inner_rmse: dict) -> str:
    """The setting of lowest mean inner RMSE: ``inner_rmse`` maps a setting's label to its RMSE per inner fold.

    Ties go to the first label in the mapping's order (the candidates' order); a setting with no
    finite inner score is never chosen.

    Raises
    ------
    ValueError
        No setting has a finite inner score.
    """
    means = {k: float(np.mean(v)) for k, v in inner_rmse.items() if len(v) and np.all(np.isfinite(v))}
    if not means:
        raise ValueError("no setting has a finite inner score")
    return min(means, key=means.get)


class Fits:
    """Fitted ensembles by (d_model, epochs, training wells), each fitted once, with its fit time."""

    def __init__(self, logs, inputs, target, seeds, folder: Path, window: int = 32):
        self.logs, self.inputs, self.target, self.seeds = logs, list(inputs), target, list(seeds)
        self.folder, self.window = folder, window
        self.cache, self.seconds = {}, {}

    def get(self, d_model: int, epochs: int, train: tuple):
        key = (d_model, epochs, tuple(sorted(train)))
        if key not in self.cache:
            wm = WellModel(self.inputs, self.target, window=self.window, tree_baselines=False,
                           model=SequenceRegressor(d_model=d_model, epochs=epochs))
            where = self.folder / f"d{d_model}_e{epochs}_{'_'.join(map(str, key[2]))}"
            t0 = time.perf_counter()
            self.cache[key] = fit_ensemble(wm, [self.logs[i] for i in key[2]], folder=where, seeds=self.seeds,
                                           calibrate=False, batched=True)
            self.seconds[key] = time.perf_counter() - t0
            print(f"  fitted d_model {d_model}, {epochs} epochs on wells {list(key[2])}: {self.seconds[key]:.1f} s",
                  flush=True)
        return self.cache[key]

    def rmse(self, setting: dict, train, test) -> float:
        """RMSE (model units, log10 mD) over every depth of the ``test`` wells of the setting fitted on ``train``."""
        ens = self.get(setting["d_model"], setting["epochs"], tuple(train))
        y, p = [], []
        for i in test:
            preds = ens.predict_members(self.logs[i])                     # (members, n_samples)
            p.append(preds[0] if setting["members"] == 1 else preds[: setting["members"]].mean(axis=0))
            y.append(ens.first.target_values(self.logs[i]))
        return regression_metrics(np.concatenate(y), np.concatenate(p))["rmse"]


def nested(logs, settings, fits: Fits, n_outer: int | None = None, n_inner: int | None = None) -> list:
    """One record per outer fold: the held-out wells, every setting's inner RMSE per inner fold, the chosen
    setting, its held-out RMSE, and every setting's held-out RMSE (for information only)."""
    names = [g.name for g in logs]
    out = []
    for k, (train, test) in enumerate(cv_folds(logs, n_outer)):
        sub = [logs[i] for i in train]
        inner_k = None if n_inner is None else min(int(n_inner), len(sub))
        inner = [([train[i] for i in tr], [train[i] for i in te]) for tr, te in cv_folds(sub, inner_k)]
        inner_rmse = {label(s): [fits.rmse(s, tr, te) for tr, te in inner] for s in settings}
        chosen = choose(inner_rmse)
        held = {label(s): fits.rmse(s, train, test) for s in settings}
        out.append({"fold": k + 1, "test_wells": [names[i] for i in test], "train_wells": [names[i] for i in train],
                    "inner_folds": [{"train": [names[i] for i in tr], "test": [names[i] for i in te]}
                                    for tr, te in inner],
                    "inner_rmse": inner_rmse, "inner_mean": {s: float(np.mean(v)) for s, v in inner_rmse.items()},
                    "chosen": chosen, "held_out_rmse": held[chosen], "held_out_all": held})
        print(f"fold {k + 1} held out {', '.join(out[-1]['test_wells'])}: chose {chosen} (inner "
              f"{out[-1]['inner_mean'][chosen]:.3f}), held-out RMSE {held[chosen]:.3f}", flush=True)
    return out


def markdown(folds: list, settings) -> str:
    """The nested table, then every setting's held-out RMSE per fold (information, not choice)."""
    labels = [label(s) for s in settings]
    lines = ["| outer fold (held out) | chosen setting | its inner mean RMSE | its held-out RMSE |", "|---|---|---|---|"]
    for f in folds:
        lines.append(f"| {f['fold']} ({', '.join(f['test_wells'])}) | {f['chosen']} | {f['inner_mean'][f['chosen']]:.3f} "
                     f"| {f['held_out_rmse']:.3f} |")
    held = [f["held_out_rmse"] for f in folds]
    sd = f" ± {np.std(held, ddof=1):.3f}" if len(held) > 1 else ""
    lines.append(f"| **nested score** (mean{' ± sd' if sd else ''} over folds) | | | **{np.mean(held):.3f}{sd}** |")
    lines += ["", "| setting | " + " | ".join(f"inner mean, fold {f['fold']}" for f in folds)
              + " | " + " | ".join(f"held-out, fold {f['fold']}" for f in folds) + " | held-out mean | times chosen |",
              "|---|" + "---|" * (2 * len(folds) + 2)]
    for lab in labels:
        inner = " | ".join(f"{f['inner_mean'][lab]:.3f}" for f in folds)
        outer = " | ".join(f"{f['held_out_all'][lab]:.3f}" for f in folds)
        mean = np.mean([f["held_out_all"][lab] for f in folds])
        lines.append(f"| {lab} | {inner} | {outer} | {mean:.3f} | {sum(f['chosen'] == lab for f in folds)} |")
    return "\n".join(lines) + "\n"


def fit_times(fits: Fits) -> str:
    """Mean seconds per 5-member side-by-side fit (and per member) by (d_model, epochs)."""
    lines = ["| d_model | max epochs | fits | s per ensemble fit (mean) | s per member |", "|---|---|---|---|---|"]
    for d, e in sorted({k[:2] for k in fits.seconds}):
        s = [v for k, v in fits.seconds.items() if k[:2] == (d, e)]
        lines.append(f"| {d} | {e} | {len(s)} | {np.mean(s):.1f} | {np.mean(s) / len(fits.seeds):.1f} |")
    return "\n".join(lines) + "\n"


def volve_logs(folder) -> list:
    """The three Volve F wells' whole valid logs, PHIF, VSH, SW and KLOGH, read as ``glassformer cv`` reads them."""
    return build_dataset([str(Path(folder) / f) for f in VOLVE_FILES], inputs=["PHIF", "VSH", "SW"],
                         target="KLOGH", window=32).train


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--volve", help="folder of the Volve LAS files: leave one well out over the three F wells")
    ap.add_argument("--synthetic", type=int, help="this many synthetic wells (seed 13), 4 outer / 3 inner folds")
    ap.add_argument("--epochs", type=int, nargs="+", default=[30, 60])
    ap.add_argument("--d-model", type=int, nargs="+", default=[16, 32])
    ap.add_argument("--quick", action="store_true", help="6 tiny synthetic wells, 2 epochs, 2 members: a smoke run")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds, n_outer, n_inner = SEEDS, None, None
    if args.quick:
        logs, inputs, target, seeds = synthetic_wells(n_wells=6, n_samples=120, seed=13), ["PHI", "VSH"], "PERM", (42, 0)
        settings, n_outer, n_inner = candidates((4, 8), (2,), (1, 2)), 3, 2
    elif args.volve:
        logs, inputs, target = volve_logs(args.volve), ["PHIF", "VSH", "SW"], "KLOGH"
        settings = candidates(args.d_model, args.epochs, (1, len(seeds)))
    elif args.synthetic:
        logs, inputs, target = synthetic_wells(n_wells=args.synthetic, seed=13), ["PHI", "VSH"], "PERM"
        settings, n_outer, n_inner = candidates(args.d_model, args.epochs, (1, len(seeds))), 4, 3
    else:
        ap.error("give --volve FOLDER, --synthetic N or --quick")
    started, t0 = time.strftime("%H:%M:%S", time.gmtime()), time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        fits = Fits(logs, inputs, target, seeds, Path(tmp))
        folds = nested(logs, settings, fits, n_outer, n_inner)
    seconds = time.perf_counter() - t0
    header = (f"{len(logs)} wells ({', '.join(g.name for g in logs)}); {len(fits.seconds)} ensemble fits of "
              f"{len(seeds)} members; {seconds:.0f} s from {started} UTC (load {os.getloadavg()[0]:.1f} at the end); "
              f"command: python {' '.join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])])}\n\n")
    text = header + markdown(folds, settings) + "\n" + fit_times(fits)
    (out / "nested.md").write_text(text, encoding="utf-8")
    (out / "nested.json").write_text(json.dumps({"folds": folds, "seconds": seconds, "seeds": list(seeds),
                                                 "fit_seconds": [[*k[:2], list(k[2]), v] for k, v in fits.seconds.items()]},
                                                indent=1), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
