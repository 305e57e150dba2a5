"""``glassformer cv``: blind-well cross-validation of the transformer beside every baseline."""

from __future__ import annotations

import click

from ..parallel import engine_options
from ..wells.cv_experiment import CvRequest, run_cv
from ..wells.member_mean import DEFAULT_MEMBERS
from .options import DEPTH_SPEC_HELP, GreedyCommand, file_options, input_names, target_name


def _input_names(ctx, param, inputs) -> tuple:
    """``--inputs`` as curve names (a click callback; commas also separate)."""
    return tuple(input_names(inputs))


@click.command("cv", cls=GreedyCommand)
@click.option("--data", "data", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Well file (.las, .csv or .xlsx: every sheet a well); repeat for every well (at least two).")
@click.option("--manifest", default=None, type=click.Path(exists=True, dir_okay=False),
              help="CSV of wells (columns file, well, top, base; role is ignored: every well is held out once), "
                   "instead of or besides --data.")
@click.option("--depth", "train_depth", multiple=True,
              help=f"Interval of the wells: {DEPTH_SPEC_HELP}. Default: each well's whole valid log.")
@click.option("--inputs", required=True, multiple=True, callback=_input_names,
              help="Input curve mnemonics, e.g. --inputs PHIF VSH SW (first = porosity).")
@click.option("--target", callback=target_name, required=True,
              help="Target curve (its name, or its header as written, e.g. \"Perm (mD)\"), e.g. KLOGH.")
@click.option("--log-target/--no-log-target", default=False, show_default=True,
              help="Model log10(permeability in mD), floor 0.001 mD; metrics are then in log10 mD.")
@click.option("--alias", "aliases", multiple=True, metavar="NAME=CURVE",
              help="Use CURVE where a well lacks NAME, e.g. --alias PHIF=PHIE; repeatable.")
@file_options
@click.option("--folds", "n_folds", default=None, type=click.IntRange(2),
              help="Grouped K-fold over whole wells (scikit-learn GroupKFold) [default: leave one well out].")
@click.option("--window", default=32, show_default=True, type=click.IntRange(2), help="Samples per window T.")
@click.option("--stride", default=None, type=click.IntRange(1), help="Step between training windows [default T/2].")
@click.option("--epochs", default=30, show_default=True, type=click.IntRange(1),
              help="Maximum epochs of both networks (early stopping on the deepest 10 % of each training well).")
@click.option("--d-model", default=16, show_default=True, type=click.IntRange(1), help="Transformer width d_model.")
@click.option("--heads", default=2, show_default=True, type=click.IntRange(1), help="Attention heads.")
@click.option("--layers", default=1, show_default=True, type=click.IntRange(1), help="Encoder layers.")
@click.option("--lr", default=3e-3, show_default=True, type=click.FloatRange(0, min_open=True),
              help="Adam learning rate of both networks.")
@click.option("--hidden-size", default=16, show_default=True, type=click.IntRange(1),
              help="LSTM hidden size per direction (bidirectional).")
@click.option("--lstm/--no-lstm", default=True, show_default=True, help="Train the bidirectional LSTM too.")
@click.option("--validation-split", type=click.Choice(["deepest", "none"]), default="deepest", show_default=True,
              help="Early stopping on the deepest 10 % of each training well, or none (the training loss).")
@click.option("--seeds", "n_seeds", default=1, show_default=True, type=click.IntRange(1),
              help="Seeds per fold (42, 0, 1, ...); records average over them.")
@click.option("--members", default=DEFAULT_MEMBERS, show_default=True, type=click.IntRange(1),
              help="The transformer is the mean of this many members trained side by side from their own seeds "
                   "(42, 0, 1, ... for the first seed); 1: a single fit. Chosen by nested blind-well cross-validation "
                   "on the Volve wells.")
@click.option("--recommend/--no-recommend", default=False, show_default=True,
              help="Also recommend a model chosen on inner folds of each fold's training wells (every model "
                   "refitted there) and report the held-out score of that choice. Costs W x W fold fits instead of "
                   "W for W wells (9 instead of 3); needs 3 wells or more.")
@engine_options
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run folder to write.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an existing, non-empty --out folder.")
@click.option("--progress/--no-progress", default=False, show_default=True, help="Progress bars on stderr.")
def cv(**options):
    """Cross-validate on blind wells: every well is predicted by models trained on the others.

    Leave-one-well-out by default (--folds K for grouped K-fold).  In every fold the transformer,
    the bidirectional LSTM, random forest and gradient boosting (with and without depth context),
    the porosity-permeability transform and the training mean are fitted on the training wells
    only and scored on each held-out well.  Writes metrics.json (mean ± sd across folds, one record
    per fold, well and model, per-well and pooled metrics), predictions.csv, figures/per_well.png
    and report.html into --out.
    """
    request = CvRequest.from_options(options)
    run_cv(request)
    click.echo(f"Wrote {request.out}")
