"""``glassformer demo | train | predict``: the well-log commands (registered on the group in cli.py).

Units: depth in the file's depth unit (metres for the Volve files); porosity and other inputs as
the file gives them (PHIF, VSH, SW in v/v); permeability in mD, modelled as log10(mD) with
``--log-target`` (floor 0.001 mD).  Every run writes one folder: ``model/``, ``config.json``,
``metrics.json``, ``predictions.csv`` and ``figures/``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import click

from .errors import DepthError, InputError

DEMO_NAMES = ("porosity", "neighbor", "synthetic-wells", "real-wells")


def _interval(text: str, option: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in str(text).split(":"))
    except ValueError:
        raise InputError(f"{option} must be TOP:BASE in the file's depth unit (e.g. 3351.6:4300), got {text!r}") \
            from None
    if not (math.isfinite(a) and math.isfinite(b)) or a >= b:
        raise InputError(f"{option} must be TOP:BASE with TOP < BASE, got {text!r}")
    return a, b


@click.command("demo")
@click.argument("name", required=False, type=click.Choice(DEMO_NAMES))
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Output folder (default ./glassformer_runs/<name>; with no NAME, one sub-folder per demo).")
def demo(name, out):
    """Run seed 000's demonstrations and their scale-ups; no NAME runs them all.

    \b
    porosity         demonstration 1: 7 depths (m), porosity (%) -> permeability (mD),
                     forecast depths 8-14 m under two schemes (~15 s)
    neighbor         demonstration 2: target 2 x porosity at the next depth; attention
                     lag and ablation on 200 held-out sequences (~20 s)
    synthetic-wells  100 synthetic wells (80 train / 20 test), log10 mD metrics
    real-wells       Volve 15/9-F-11 B depth split and across wells (needs ../shared/data)
    """
    from .demos import run_demo

    names = [name] if name else list(DEMO_NAMES)
    for n in names:
        if n == "real-wells" and not name and not _volve_available():
            click.echo("== demo real-wells skipped: the Volve files are not under the data root "
                       "(set GLASSFORMER_DATA to the folder holding real/; `glassformer demo real-wells` to insist)")
            continue
        folder = Path(out) / n if (out and not name) else Path(out or Path("glassformer_runs") / n)
        t0 = time.perf_counter()
        click.echo(f"== demo {n} -> {folder}")
        run_demo(n, folder, echo=click.echo)
        click.echo(f"== demo {n} done in {time.perf_counter() - t0:.1f} s")


class _GreedyCommand(click.Command):
    """A command whose ``--inputs`` takes several space-separated values: ``--inputs PHIF VSH SW``.

    Click options take a fixed number of values, so the arguments are rewritten to
    ``--inputs PHIF --inputs VSH --inputs SW`` (a ``multiple=True`` option) before parsing.
    """

    greedy = ("--inputs",)

    def parse_args(self, ctx, args):
        out, current, first = [], None, False
        for a in args:
            if a in self.greedy:
                current, first = a, True
                out.append(a)
            elif current is not None and not a.startswith("-"):
                out.extend([a] if first else [current, a])
                first = False
            else:
                current = None
                out.append(a)
        return super().parse_args(ctx, out)


def _volve_available() -> bool:
    from .data.volve import volve_path
    from .errors import DataFileError

    try:
        for key in ("F-11B", "F-1B", "F-1A"):
            volve_path(key)
    except DataFileError:
        return False
    return True


@click.command("train", cls=_GreedyCommand)
@click.option("--data", "data", multiple=True, required=True, type=click.Path(exists=True, dir_okay=False),
              help="Well file (.las or .csv); repeat for several wells. All must share one depth unit.")
@click.option("--inputs", required=True, multiple=True,
              help="Input curve mnemonics, e.g. --inputs PHIF VSH SW (the first is taken as porosity for the "
                   "porosity-permeability baseline).")
@click.option("--target", required=True, help="Target curve mnemonic (permeability, mD), e.g. KLOGH.")
@click.option("--log-target/--no-log-target", default=False, show_default=True,
              help="Model log10(permeability in mD), floor 0.001 mD; metrics are then in log10 mD.")
@click.option("--train-depth", required=True, help="Training interval TOP:BASE (file depth unit, e.g. m).")
@click.option("--test-depth", default=None,
              help="Forecast/test interval TOP:BASE (file depth unit). Without it only training metrics exist.")
@click.option("--test-data", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Separate test well file(s) (whole logs, or --test-depth of them).")
@click.option("--window", default=32, show_default=True, type=click.IntRange(2),
              help="Samples per window T (0.1 m spacing: 32 samples = 3.2 m).")
@click.option("--stride", default=None, type=click.IntRange(1), help="Step between training windows [default T/2].")
@click.option("--epochs", default=30, show_default=True, type=click.IntRange(1), help="Training epochs (max).")
@click.option("--positions", type=click.Choice(["index", "depth"]), default="index", show_default=True,
              help="Positions: sample index inside the window (1..T) or depth (file unit).")
@click.option("--positional", default="sinusoidal", show_default=True,
              help="Positional encoding: sinusoidal, seed, learned, continuous, fourier, rotary, none.")
@click.option("--d-model", default=16, show_default=True, type=click.IntRange(1), help="Model width d_model.")
@click.option("--heads", default=2, show_default=True, type=click.IntRange(1), help="Attention heads.")
@click.option("--layers", default=1, show_default=True, type=click.IntRange(1), help="Encoder layers.")
@click.option("--lr", default=3e-3, show_default=True, type=float, help="Adam learning rate.")
@click.option("--seed", default=42, show_default=True, type=int, help="Random seed (init, shuffling, split).")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run folder to write.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an existing, non-empty --out folder.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
def train(data, inputs, target, log_target, train_depth, test_depth, test_data, window, stride, epochs, positions,
          positional, d_model, heads, layers, lr, seed, out, overwrite, progress):
    """Train a transformer on well logs and report it beside the baselines.

    Scaling is fitted on the training interval only; NaN targets (gaps, LAS nulls) are masked out
    of the loss; windows never cross gaps in the inputs.  Metrics (RMSE, MAE in the target's
    units, R²) are for the transformer, the porosity-permeability transform (linear regression of
    log10 k on porosity) and the training mean, on the same split.
    """
    from .data.volve import ATTRIBUTION
    from .data.wells import read_well
    from .demos.common import WellPipeline, prepare_run_dir, run_well_experiment

    prepare_run_dir(out, overwrite=overwrite)
    input_names = [m for item in inputs for m in str(item).replace(",", " ").split()]
    top, base = _interval(train_depth, "--train-depth")
    logs = [read_well(p) for p in data]
    train_logs = [g.interval(top, base) for g in logs]
    test_logs = []
    boundary = None
    if test_depth:
        ttop, tbase = _interval(test_depth, "--test-depth")
        if not test_data:
            for g in logs:
                later = g.depth[g.depth > base]
                if top <= ttop <= base:   # overlap: a shared boundary depth (e.g. 4300 m) stays in training
                    if not later.size or later[0] > tbase:
                        raise DepthError(f"--test-depth {test_depth} lies inside --train-depth {train_depth} "
                                         f"in {g.name}")
                    ttop = max(ttop, float(later[0]))
                test_logs.append(g.interval(ttop, tbase))
            boundary = base if ttop >= top else top
    for p in test_data:
        g = read_well(p)
        test_logs.append(g.interval(*_interval(test_depth, "--test-depth")) if test_depth else g)
    if not test_logs:
        test_logs = train_logs
        click.echo("note: no --test-depth / --test-data given: the 'test' metrics are on the training interval")
    pos_options = {}
    if positional == "learned":
        if positions == "depth":
            raise InputError("--positional learned needs --positions index (one learned vector per sample "
                             "index 1..T); depths in metres are not table indices")
        pos_options = {"max_len": window + 1}
    pipe = WellPipeline(input_names, target, log_target=log_target, window=window, stride=stride,
                        positions=positions,
                        model_params=dict(d_model=d_model, num_heads=heads, d_ff=2 * d_model, num_layers=layers,
                                          positional=positional, positional_options=pos_options,
                                          attn_out_proj=True, init="torch", optimizer="adam",
                                          lr=lr, batch_size=32, grad_clip=1.0, epochs=epochs,
                                          validation_fraction=0.1, early_stopping_patience=5, random_state=seed,
                                          progress=progress))
    volve = any("volve" in (g.source + g.name).lower() or "15/9" in g.name or "15_9" in g.source for g in logs)
    run_well_experiment(out, train_logs, test_logs, pipe, title="glassformer train", echo=click.echo,
                        boundary=boundary, attribution=ATTRIBUTION if volve else None, overwrite=True,
                        config={"command": "train", "data": [str(p) for p in data],
                                "test_data": [str(p) for p in test_data], "train_depth": [top, base],
                                "test_depth": test_depth})
    click.echo(f"Wrote {out}")


@click.command("predict")
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="A run folder written by `glassformer train` (or its model/ sub-folder).")
@click.option("--data", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Well file (.las or .csv) holding the model's input curves.")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Output file: .csv (depth + prediction columns) or .las (input curves + prediction).")
@click.option("--depth", "depth_range", default=None, help="Only predict TOP:BASE (file depth unit).")
def predict(model_dir, data, out, depth_range):
    """Predict the target log of a well with a trained model.

    Writes one prediction per depth sample (NaN where an input is missing), in mD
    (and log10 mD when the model was trained with --log-target).
    """
    import numpy as np
    import pandas as pd

    from . import io
    from .data.wells import read_well
    from .demos.common import WellPipeline

    pipe = WellPipeline.load(model_dir)
    log = read_well(data)
    if depth_range:
        log = log.interval(*_interval(depth_range, "--depth"))
    pred = pipe.predict_log(log)
    name = f"{pipe.target}_PRED"
    cols = {"DEPTH": log.depth}
    units = {"DEPTH": log.depth_unit}
    if pipe.log_target:
        cols[f"{name}_LOG10"] = pred
        units[f"{name}_LOG10"] = "log10 mD"
        cols[name] = np.power(10.0, pred)
    else:
        cols[name] = pred
    units[name] = "mD"
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix == ".csv":
        io.atomic_write_text(out, pd.DataFrame(cols).to_csv(index=False, float_format="%.9g"))
    elif suffix == ".las":
        _write_las(out, log, cols, units, pipe)
    else:
        raise InputError(f"--out {out}: use a .csv or .las file name")
    n_ok = int(np.isfinite(pred).sum())
    click.echo(f"Wrote {out}: {n_ok} of {len(pred)} depths predicted ({name}, mD)")


def _write_las(path: Path, log, cols: dict, units: dict, pipe) -> None:
    import io as _io

    import lasio
    import numpy as np

    from . import io

    las = lasio.LASFile()
    las.well["WELL"].value = log.name
    las.append_curve("DEPT", log.depth, unit=log.depth_unit.upper(), descr="Depth")
    for m in pipe.inputs:
        las.append_curve(m, np.asarray(log.curve(m), dtype=float), unit=log.units.get(m, ""), descr="input")
    for k, v in cols.items():
        if k != "DEPTH":
            las.append_curve(k, np.asarray(v, dtype=float), unit=units.get(k, ""), descr="glassformer prediction")
    buf = _io.StringIO()
    las.write(buf, version=2.0, fmt="%.9g")
    io.atomic_write_text(path, buf.getvalue())


def register(group) -> None:
    """Add ``demo``, ``train`` and ``predict`` to the click ``group``."""
    for cmd in (demo, train, predict):
        group.add_command(cmd)
