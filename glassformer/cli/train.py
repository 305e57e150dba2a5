"""``glassformer train``: fit the well transformer on the user's LAS/CSV wells, beside the baselines.

The command fills a :class:`~glassformer.wells.requests.TrainRequest` from its options;
:func:`glassformer.wells.train_job.plan_train` checks it and reads the wells, and
:func:`~glassformer.wells.train_job.run_train` runs the plan: one transformer beside the baselines,
a deep ensemble, or a run on core plugs.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..parallel import engine_options
from ..train import TrainingInterrupted
from ..wells.member_mean import DEFAULT_MEMBERS
from ..wells.requests import TrainRequest
from ..wells.train_job import plan_train, run_train
from .options import GreedyCommand, POSITIONAL_HELP, WAVELENGTHS_HELP, positional_names, target_name, well_options
from .plugs import plugs_options
from .resume import resume_hint


@click.command("train", cls=GreedyCommand)
@well_options
@click.option("--inputs", required=True, multiple=True,
              help="Input curve mnemonics, e.g. --inputs PHIF VSH SW (the first is taken as porosity for the "
                   "porosity-permeability baseline).")
@click.option("--target", callback=target_name, default=None,
              help="Target curve mnemonic (permeability, mD), e.g. KLOGH (required "
                                              "without --core).")
@click.option("--log-target/--no-log-target", default=False, show_default=True,
              help="Model log10(permeability in mD), floor 0.001 mD; metrics are then in log10 mD.")
@click.option("--window", default=32, show_default=True, type=click.IntRange(2),
              help="Samples per window T (0.1 m spacing: 32 samples = 3.2 m).")
@click.option("--stride", default=None, type=click.IntRange(1), help="Step between training windows [default T/2].")
@click.option("--epochs", default=30, show_default=True, type=click.IntRange(1), help="Training epochs (max).")
@click.option("--positions", type=click.Choice(["index", "depth"]), default="index", show_default=True,
              help="Positions: sample index inside the window (1..T) or depth (file unit).")
@click.option("--positional", default="sinusoidal", show_default=True, type=click.Choice(positional_names()),
              help=POSITIONAL_HELP)
@click.option("--wavelengths", multiple=True, type=float, metavar="W1 W2 ...",
              help=WAVELENGTHS_HELP + "; --d-model must be 2 x their count.")
@click.option("--d-model", default=16, show_default=True, type=click.IntRange(1), help="Model width d_model.")
@click.option("--heads", default=2, show_default=True, type=click.IntRange(1), help="Attention heads.")
@click.option("--layers", default=1, show_default=True, type=click.IntRange(1), help="Encoder layers.")
@click.option("--lr", default=3e-3, show_default=True, type=float, help="Adam learning rate.")
@click.option("--seed", default=42, show_default=True, type=click.IntRange(0),
              help="Random seed (init, shuffling, split); an integer >= 0.")
@click.option("--members", default=None, type=click.IntRange(1), metavar="N",
              help=f"The transformer's prediction is the mean of N transformers trained on the same windows from "
                   f"seeds --seed, then 0, 1, ... skipping it (chosen by nested blind-well cross-validation; 1: one "
                   f"transformer) "
                   f"[default: {DEFAULT_MEMBERS}; with --ensemble or --core the ensemble's members give it].")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run folder to write.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an existing, non-empty --out folder.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
@click.option("--checkpoint-every", default=1, show_default=True, type=click.IntRange(1), metavar="N",
              help="Save a resumable checkpoint into OUT/checkpoint every N epochs.")
@click.option("--resume", default=None, type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="Continue an interrupted run from its checkpoint folder (OUT/checkpoint, or the run folder); "
                   "give the same options as the interrupted run.")
@plugs_options
@engine_options
def train(**_options):
    """Train a transformer on well logs and report it beside the baselines.

    The transformer is the mean of --members (default 5) transformers trained from their own seeds
    on the same windows: one seed's blind-well error is a lottery, the mean is not.

    Each well keeps its own interval (--train-depth WELL=TOP:BASE, or a --manifest); by default a
    well's whole valid log.  Scaling is fitted on the training intervals only; NaN targets (gaps,
    LAS nulls) are masked out of the loss; windows never cross gaps or wells; early stopping
    watches the deepest 10 % of each training interval (or --validation-data wells).  Metrics
    (RMSE, MAE in the target's units, R²; pooled and per test well) are for the transformer,
    random forest and gradient boosting (with and without depth context), the porosity-permeability
    transform (linear regression of log10 k on porosity) and the training mean, on the same split.

    \b
    Core: with --core CORE.csv the target is the core permeability (--core-target), matched to the
    log per core run and scored at held-out cores only; a deep ensemble (--ensemble, default 5)
    gives P10/P50/P90, calibrated on the validation cores. --ensemble K without --core does the
    same on the log target, calibrated on --validation-data or --validation-depth.

    \b
    Members: the --members of one run are trained side by side in this process; with --ensemble
    or --core, --jobs N trains the ensemble's members on N worker processes, --scheduler on Dask;
    each member equals the one a serial run trains.

    \b
    Faults: a checkpoint is written to OUT/checkpoint every --checkpoint-every epochs. Ctrl-C
    (SIGINT) or SIGTERM saves a checkpoint, prints one line with the command that resumes, and
    exits with status 130 (SIGINT) or 143 (SIGTERM) (Ctrl-C after the first transformer finished
    prints the same line: its last checkpoint resumes); --resume continues to the same parameters as
    an uninterrupted run. A diverging run exits with status 2 and keeps its last good model in
    OUT/model.
    """
    ctx = click.get_current_context()
    request = TrainRequest.from_options(ctx.params)
    plan = plan_train(request)                   # every rule checked and the wells read before --out exists
    try:
        run_train(plan)
    except TrainingInterrupted as exc:
        click.echo(f"glassformer: interrupted by {exc.signal_name} {exc.where}; checkpoint saved to "
                   f"{exc.checkpoint}; resume with: {resume_hint(ctx, exc.checkpoint)}", err=True)
        ctx.exit(exc.exit_status)
    except KeyboardInterrupt:                    # after the first transformer: its finished checkpoint resumes
        checkpoint = Path(request.out) / "checkpoint"
        if plan.kind != "single" or not (checkpoint / "checkpoint.json").is_file():
            raise
        click.echo(f"glassformer: interrupted after the first transformer finished (training the other members, "
                   f"the baselines or the report); its checkpoint is in {checkpoint}; resume with: "
                   f"{resume_hint(ctx, checkpoint)}", err=True)
        ctx.exit(130)
    click.echo(f"Wrote {request.out}")
