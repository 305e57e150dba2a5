"""``glassformer train``: fit the well transformer on the user's LAS/CSV wells, beside the baselines."""

from __future__ import annotations

import math
from pathlib import Path

import click

from ..errors import InputError
from .core import check_core_use, core_options, run_core_command, run_ensemble_command, transformer_from_options
from .options import (GreedyCommand, POSITIONAL_HELP, WAVELENGTHS_HELP, input_names, parse_interval,
                      positional_names, positional_options)
from .resume import load_resume, resume_hint, run_signature


@click.command("train", cls=GreedyCommand)
@click.option("--data", "data", multiple=True, required=True, type=click.Path(exists=True, dir_okay=False),
              help="Well file (.las or .csv); repeat for several wells. All must share one depth unit.")
@click.option("--inputs", required=True, multiple=True,
              help="Input curve mnemonics, e.g. --inputs PHIF VSH SW (the first is taken as porosity for the "
                   "porosity-permeability baseline).")
@click.option("--target", default=None, help="Target curve mnemonic (permeability, mD), e.g. KLOGH (required "
                                              "without --core).")
@click.option("--log-target/--no-log-target", default=False, show_default=True,
              help="Model log10(permeability in mD), floor 0.001 mD; metrics are then in log10 mD.")
@click.option("--train-depth", default=None,
              help="Training interval TOP:BASE (file depth unit, e.g. m); required without --core.")
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
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run folder to write.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an existing, non-empty --out folder.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
@click.option("--checkpoint-every", default=1, show_default=True, type=click.IntRange(1), metavar="N",
              help="Save a resumable checkpoint into OUT/checkpoint every N epochs.")
@click.option("--resume", default=None, type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="Continue an interrupted run from its checkpoint folder (OUT/checkpoint, or the run folder); "
                   "give the same options as the interrupted run.")
@core_options
def train(data, inputs, target, log_target, train_depth, test_depth, test_data, window, stride, epochs, positions,
          positional, wavelengths, d_model, heads, layers, lr, seed, out, overwrite, progress, checkpoint_every,
          resume, **core):
    """Train a transformer on well logs and report it beside the baselines.

    Scaling is fitted on the training interval only; NaN targets (gaps, LAS nulls) are masked out
    of the loss; windows never cross gaps in the inputs.  Metrics (RMSE, MAE in the target's
    units, R²) are for the transformer, the porosity-permeability transform (linear regression of
    log10 k on porosity) and the training mean, on the same split.

    \b
    Core: with --core CORE.csv the target is the core permeability (--core-target), matched to the
    log per core run and scored at held-out cores only; a deep ensemble (--ensemble, default 5)
    gives P10/P50/P90, calibrated on the validation cores. --ensemble K without --core does the
    same on the log target, calibrated on --validation-data or --validation-depth.

    \b
    Faults: a checkpoint is written to OUT/checkpoint every --checkpoint-every epochs. Ctrl-C
    (SIGINT) or SIGTERM saves a checkpoint, prints one line with the command that resumes, and
    exits with status 130 (SIGINT) or 143 (SIGTERM); --resume continues to the same parameters as
    an uninterrupted run. A diverging run exits with status 2 and keeps its last good model in
    OUT/model.
    """
    from sklearn.base import clone

    from ..data import common_depth_unit, read_well
    from ..data.volve import ATTRIBUTION, is_volve
    from ..models import SequenceRegressor
    from ..runs import check_out_folder
    from ..train import ResumeFrom, SaveCheckpoint, TrainingInterrupted
    from ..wells import WellModel, check_training_logs, forecast_logs, run_well_experiment

    ctx = click.get_current_context()
    check_core_use(ctx.params)
    if core["core"] is not None:
        check_out_folder(out, overwrite=overwrite)
        return run_core_command(ctx.params, names=input_names(inputs), log_target=log_target,
                                model=transformer_from_options(ctx.params), window=window, stride=stride,
                                positions=positions)
    for value, option in ((target, "--target"), (train_depth, "--train-depth")):
        if value is None:
            raise click.UsageError(f"Missing option '{option}' (or give --core to learn from core plugs).")
    callbacks = [SaveCheckpoint(Path(out) / "checkpoint", every=checkpoint_every,
                                config={"command": "train", "options": run_signature(ctx.params)})]
    resuming_here = False
    if resume is not None:
        ck, ck_folder = load_resume(resume, ctx.params)
        callbacks.append(ResumeFrom(ck))
        resuming_here = Path(ck_folder).resolve().parent == Path(out).resolve()
    check_out_folder(out, overwrite=overwrite or resuming_here)   # created later, once the inputs are valid
    names = input_names(inputs)
    if str(target).strip().upper() in {m.upper() for m in names}:
        raise InputError(f"--target {target} is also one of --inputs {' '.join(names)}; the model would "
                         "see the answer (choose inputs without the target)")
    top, base = parse_interval(train_depth, "--train-depth")
    logs = [read_well(p) for p in data]
    common_depth_unit(logs)                       # DepthError naming each file's unit when they differ
    train_logs = [g.interval(top, base) for g in logs]
    check_training_logs(logs, train_logs, names, target, window, train_depth)
    test_wells = [read_well(p) for p in test_data]
    common_depth_unit([*logs, *test_wells])
    tdepth = parse_interval(test_depth, "--test-depth") if test_depth else None
    test_logs, boundary = forecast_logs(logs, (top, base), tdepth, test_wells,
                                        labels=(f"--train-depth {train_depth}", f"--test-depth {test_depth}"))
    if not test_logs:
        test_logs = train_logs
        click.echo("note: no --test-depth / --test-data given: the 'test' metrics are on the training interval")
    if not (math.isfinite(lr) and lr > 0):
        raise InputError(f"--lr: the learning rate must be a finite number > 0, got {lr}")
    model = SequenceRegressor(d_model=d_model, num_heads=heads, num_layers=layers, positional=positional,
                              positional_options=positional_options(positional, wavelengths, positions, window,
                                                                    d_model),
                              lr=lr, epochs=epochs, random_state=seed, progress=progress)
    clone(model).build_network(len(names))      # bad model options fail before --out exists
    wm = WellModel(names, target, log_target=log_target, window=window, stride=stride, positions=positions,
                   model=model)
    if core["ensemble"]:
        return run_ensemble_command(ctx.params, train_logs=train_logs, test_logs=test_logs, logs=logs, wm=wm,
                                    boundary=boundary)
    try:
        run_well_experiment(out, train_logs, test_logs, wm, title="glassformer train", echo=click.echo,
                            boundary=boundary, attribution=ATTRIBUTION if any(map(is_volve, logs)) else None,
                            overwrite=True, callbacks=callbacks,
                            config={"command": "train", "data": [str(p) for p in data],
                                    "test_data": [str(p) for p in test_data], "train_depth": [top, base],
                                    "test_depth": test_depth})
    except TrainingInterrupted as exc:
        click.echo(f"glassformer: interrupted by {exc.signal_name} {exc.where}; checkpoint saved to "
                   f"{exc.checkpoint}; resume with: {resume_hint(ctx, exc.checkpoint)}", err=True)
        ctx.exit(exc.exit_status)
    click.echo(f"Wrote {out}")
