"""``glassformer sweep``: a grid of model settings chosen on validation data, then scored once on test."""

from __future__ import annotations

import math

import click

from ..data import common_depth_unit, read_wells
from ..data.volve import ATTRIBUTION, is_volve
from ..errors import InputError
from ..models import SequenceRegressor
from ..parallel import engine_from_click, engine_options
from ..runs import check_out_folder
from ..wells import WellModel, check_training_logs, forecast_logs
from ..wells.checks import check_wells
from ..wells.sweep import finish_sweep, format_sweep_table, run_sweep
from .options import (GreedyCommand, POSITIONAL_HELP, file_options, input_names, parse_interval, positional_options,
                      reading_options, target_name)


class SweepCommand(GreedyCommand):
    """``--inputs`` and every grid option take several space-separated values: ``--d-model 8 16 32``."""

    greedy = ("--inputs", "--d-model", "--heads", "--layers", "--window", "--lr")
    examples = {"--inputs": "curve mnemonic, e.g. --inputs PHIF VSH SW", "--d-model": "width, e.g. --d-model 8 16",
                "--heads": "head count, e.g. --heads 1 2", "--layers": "layer count, e.g. --layers 1 2",
                "--window": "window in samples, e.g. --window 16 32", "--lr": "learning rate, e.g. --lr 1e-3 3e-3"}


@click.command("sweep", cls=SweepCommand)
@click.option("--data", "data", multiple=True, required=True, type=click.Path(exists=True, dir_okay=False),
              help="Training well file (.las or .csv); repeat for several wells.")
@click.option("--inputs", required=True, multiple=True, help="Input curve mnemonics, e.g. --inputs PHIF VSH SW.")
@click.option("--target", callback=target_name, required=True,
              help="Target curve (its name, or its header as written, e.g. \"Perm (mD)\"), e.g. KLOGH.")
@click.option("--log-target/--no-log-target", default=False, show_default=True,
              help="Model log10(permeability in mD), floor 0.001 mD; metrics are then in log10 mD.")
@click.option("--train-depth", required=True, help="Training interval TOP:BASE (file depth unit, e.g. m).")
@click.option("--val-depth", default=None,
              help="Validation interval TOP:BASE: of the --data wells, or of --val-data. The choice uses it alone.")
@click.option("--val-data", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Validation well file(s), held out of training (whole logs, or --val-depth of them).")
@click.option("--test-depth", default=None, help="Test interval TOP:BASE (of the --data wells, or of --test-data).")
@click.option("--test-data", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Test well file(s), read only after the choice is made.")
@file_options
@click.option("--d-model", "d_model", multiple=True, type=click.IntRange(1), default=(16,), show_default=True,
              help="Model widths d_model to try.")
@click.option("--heads", multiple=True, type=click.IntRange(1), default=(2,), show_default=True,
              help="Attention head counts to try (d_model must be divisible by it; other pairs are skipped).")
@click.option("--layers", multiple=True, type=click.IntRange(1), default=(1,), show_default=True,
              help="Encoder layer counts to try.")
@click.option("--window", multiple=True, type=click.IntRange(2), default=(32,), show_default=True,
              help="Window lengths T to try, in samples.")
@click.option("--lr", multiple=True, type=float, default=(3e-3,), show_default=True,
              help="Adam learning rates to try.")
@click.option("--stride", default=None, type=click.IntRange(1), help="Step between training windows [default T/2].")
@click.option("--epochs", default=30, show_default=True, type=click.IntRange(1), help="Training epochs (max).")
@click.option("--positions", type=click.Choice(["index", "depth"]), default="index", show_default=True,
              help="Positions: sample index inside the window (1..T) or depth (file unit).")
@click.option("--positional", default="sinusoidal", show_default=True, help=POSITIONAL_HELP)
@click.option("--seed", default=42, show_default=True, type=click.IntRange(0), help="Random seed of every fit.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder to write.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an existing, non-empty --out folder.")
@click.option("--progress/--no-progress", default=False, show_default=True,
              help="Progress bars of each fit on stderr (serial runs only).")
@engine_options
def sweep(data, inputs, target, log_target, train_depth, val_depth, val_data, test_depth, test_data, units, depth_column,
          sheet, d_model, heads,
          layers, window, lr, stride, epochs, positions, positional, seed, out, overwrite, progress, jobs, scheduler):
    """Try every combination of d_model, heads, layers, window and lr; keep the best on validation data.

    Each setting is fitted on the training interval and scored on the validation interval or
    wells (--val-depth / --val-data); the lowest validation RMSE of the transformer wins.  Only
    then are the test data read, and the chosen setting is scored on them once, beside the
    porosity-permeability transform and the training mean.  Each setting is one task: --jobs N
    or --scheduler local|tcp://HOST:PORT runs them in parallel with results identical to a
    serial run.

    \b
    Writes OUT/sweep.csv (one row per setting), OUT/figures/sweep.png (validation RMSE against
    each setting, and every setting ranked), OUT/metrics.json, OUT/predictions.csv (test),
    OUT/model (the chosen model, for `glassformer predict --model OUT`) and
    OUT/settings/<setting>/model (every fitted setting).
    """
    check_out_folder(out, overwrite=overwrite)
    names = _check_options(inputs, target, val_depth, val_data, lr, positional)
    split = HeldOut(train_depth, val_depth, val_data, test_depth, test_data,
                    reading_options(dict(units=units, depth_column=depth_column, sheet=sheet)))
    logs, train_logs, val_logs = split.training_and_validation(data, names, target, max(window))
    parallel = bool(scheduler) or (jobs or 1) > 1
    model = SequenceRegressor(positional=positional, positional_options=positional_options(
        positional, (), positions, max(window), None), epochs=epochs, random_state=seed,
        progress=progress and not parallel)
    wm = WellModel(names, target, log_target=log_target, stride=stride, positions=positions, model=model)
    grid = {"d_model": d_model, "num_heads": heads, "num_layers": layers, "window": window, "lr": lr}
    with engine_from_click(jobs, scheduler) as engine:
        result = run_sweep(out, train_logs, val_logs, wm, grid, engine=engine, echo=click.echo)
    test_logs = split.test(logs) if (test_depth or test_data) else None     # read now, after the choice
    options = click.get_current_context().params
    metrics = finish_sweep(out, result, test_logs, attribution=ATTRIBUTION if any(map(is_volve, logs)) else None,
                           config={"command": "sweep", "inputs": names, **{
                               k: list(v) if isinstance(v, tuple) else v for k, v in options.items()
                               if k not in ("inputs", "out", "overwrite", "progress", "jobs", "scheduler")}})
    click.echo(format_sweep_table(metrics))
    click.echo(f"Wrote {out}")


def _check_options(inputs, target, val_depth, val_data, lr, positional) -> list:
    """The input mnemonics, once the options that cannot work together are refused."""
    if not (val_depth or val_data):
        raise click.UsageError("sweep chooses on validation data: give --val-depth TOP:BASE and/or --val-data FILE "
                               "(the test data are never used to choose)")
    names = input_names(inputs)
    if str(target).strip().upper() in {m.upper() for m in names}:
        raise InputError(f"--target {target} is also one of --inputs {' '.join(names)}; the model would see the answer")
    bad_lr = [v for v in lr if not (math.isfinite(v) and v > 0)]
    if bad_lr:
        raise InputError(f"--lr: learning rates must be finite numbers > 0, got {bad_lr[0]:g}")
    if positional == "wavelengths":
        raise InputError("--positional wavelengths fixes d_model to 2 x the number of wavelengths; sweep d_model with "
                         "another encoding, or use `glassformer train`")
    return names


class HeldOut:
    """The training, validation and test parts of the wells, from the interval and file options.

    Validation and test are intervals of the training wells (``--val-depth``/``--test-depth``) or
    wells of their own (``--val-data``/``--test-data``, whole or that interval).  Same-well parts
    may share one boundary depth, which stays in the earlier part (training, then validation);
    larger overlaps are refused before anything is fitted.
    """

    def __init__(self, train_depth, val_depth, val_data, test_depth, test_data, reading=None):
        self.train_depth, self.val_depth, self.val_data = train_depth, val_depth, val_data
        self.test_depth, self.test_data = test_depth, test_data
        self.train = parse_interval(train_depth, "--train-depth")
        self.reading = dict(reading or {})
        self.train_logs, self.names, self.window = [], [], None

    def _read(self, paths) -> list:
        """The wells of ``paths`` (every sheet of a workbook, unless --sheet), with the units --unit states."""
        reading = dict(self.reading)
        reading["stated_units"] = reading.pop("units", None)
        return [g for p in paths for g in read_wells(p, **reading)]

    def _check(self, logs) -> None:
        """Validation and test wells checked against the training wells as predict checks a well."""
        for line in check_wells(self.train_logs, logs, self.names, window=self.window):
            click.echo(f"warning: {line}", err=True)

    def _labels(self, first: str, second: str) -> tuple:
        texts = {"train": f"--train-depth {self.train_depth}", "val": f"--val-depth {self.val_depth}",
                 "test": f"--test-depth {self.test_depth}"}
        return texts[first], texts[second]

    def training_and_validation(self, data, names, target, window):
        """``(whole logs, training logs, validation logs)``; the test depths are checked, not read."""
        logs = self._read(data)
        common_depth_unit(logs)
        train_logs = [g.interval(*self.train) for g in logs]
        check_training_logs(logs, train_logs, names, target, window, self.train_depth)
        self.train_logs, self.names, self.window = train_logs, [*names, target], window
        val_logs = self._part(logs, self.val_depth, self.val_data, "--val-depth", "val")
        self._check(val_logs)
        if self.test_depth and not self.test_data:     # depths only: overlaps refused before any fit
            test = parse_interval(self.test_depth, "--test-depth")
            forecast_logs(logs, self.train, test, labels=self._labels("train", "test"))
            if self.val_depth and not self.val_data:
                forecast_logs(logs, parse_interval(self.val_depth, "--val-depth"), test,
                              labels=self._labels("val", "test"))
        return logs, train_logs, val_logs

    def test(self, logs):
        """The test logs (read only when called: after the choice)."""
        test_logs = self._part(logs, self.test_depth, self.test_data, "--test-depth", "test")
        self._check(test_logs)
        if self.val_depth and not self.val_data and not self.test_data:   # a depth shared with validation stays there
            val = parse_interval(self.val_depth, "--val-depth")
            test_logs = [forecast_logs([g], val, (g.depth[0], g.depth[-1]), labels=self._labels("val", "test"))[0][0]
                         for g in test_logs]
        return test_logs

    def _part(self, logs, depth_text, files, option, which):
        wells = self._read(files)
        common_depth_unit([*logs, *wells])
        interval = parse_interval(depth_text, option) if depth_text else None
        held, _ = forecast_logs(logs, self.train, interval, wells, labels=self._labels("train", which))
        return held
