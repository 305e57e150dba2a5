"""``glassformer sweep``: a grid of model settings chosen on validation data, then scored once on test."""

from __future__ import annotations

import click

from ..parallel import engine_options
from ..wells.sweep_request import SweepRequest, run_sweep_request
from .options import GreedyCommand, POSITIONAL_HELP, file_options, input_names, target_name


def _input_names(ctx, param, inputs) -> tuple:
    """``--inputs`` as curve names (a click callback; commas also separate)."""
    return tuple(input_names(inputs))


class SweepCommand(GreedyCommand):
    """``--inputs`` and every grid option take several space-separated values: ``--d-model 8 16 32``."""

    greedy = ("--inputs", "--d-model", "--heads", "--layers", "--window", "--lr")
    examples = {"--inputs": "curve mnemonic, e.g. --inputs PHIF VSH SW", "--d-model": "width, e.g. --d-model 8 16",
                "--heads": "head count, e.g. --heads 1 2", "--layers": "layer count, e.g. --layers 1 2",
                "--window": "window in samples, e.g. --window 16 32", "--lr": "learning rate, e.g. --lr 1e-3 3e-3"}


@click.command("sweep", cls=SweepCommand)
@click.option("--data", "data", multiple=True, required=True, type=click.Path(exists=True, dir_okay=False),
              help="Training well file (.las or .csv); repeat for several wells.")
@click.option("--inputs", required=True, multiple=True, callback=_input_names,
              help="Input curve mnemonics, e.g. --inputs PHIF VSH SW.")
@click.option("--target", callback=target_name, required=True,
              help="Target curve (its name, or its header as written, e.g. \"Perm (mD)\"), e.g. KLOGH.")
@click.option("--log-target/--no-log-target", default=False, show_default=True,
              help="Model log10(permeability in mD), floor 0.001 mD; metrics are then in log10 mD.")
@click.option("--train-depth", required=True, help="Training interval TOP:BASE (file depth unit, e.g. m).")
@click.option("--val-depth", default=None,
              help="Validation interval TOP:BASE: of the --data wells, or of --val-data. The choice uses it alone.")
@click.option("--val-data", "validation_data", multiple=True, type=click.Path(exists=True, dir_okay=False),
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
def sweep(**options):
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
    request = SweepRequest.from_options(options)
    run_sweep_request(request)
    click.echo(f"Wrote {request.out}")
