"""``glassformer compare``: the transformer, a bidirectional LSTM, the tree ensembles, the porosity-permeability
transform and the training mean on identical splits of the user's wells (or a demonstration's data)."""

from __future__ import annotations

import click

from ..parallel import engine_options
from ..wells.compare_job import CompareRequest, plan_compare, run_compare
from .options import GreedyCommand, positional_names, target_name, well_options
from .plugins import demos as demo_catalogue


@click.command("compare", cls=GreedyCommand)
@click.option("--demo", "demo_name", type=click.Choice(["porosity", "synthetic-wells", "real-wells"]), default=None,
              help="Compare on a demonstration's data instead of --data: porosity (7 + 7 depths), "
                   "synthetic-wells (100 wells) or real-wells (both Volve splits).")
@well_options
@click.option("--validation-data", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Whole wells on which the networks' early stopping is measured (default: the deepest 10 % of "
                   "each training interval).")
@click.option("--inputs", multiple=True, help="Input curve mnemonics, e.g. --inputs PHIF VSH SW (first = porosity).")
@click.option("--target", callback=target_name, default=None,
              help="Target curve (its name, or its header as written, e.g. \"Perm (mD)\"), e.g. KLOGH.")
@click.option("--log-target/--no-log-target", default=False, show_default=True,
              help="Model log10(permeability in mD), floor 0.001 mD; metrics are then in log10 mD.")
@click.option("--window", default=32, show_default=True, type=click.IntRange(2), help="Samples per window T.")
@click.option("--stride", default=None, type=click.IntRange(1), help="Step between training windows [default T/2].")
@click.option("--epochs", default=None, type=click.IntRange(1),
              help="Maximum epochs of both networks [30 on --data; the demo's own with --demo].")
@click.option("--hidden-size", default=16, show_default=True, type=click.IntRange(1),
              help="LSTM hidden size per direction (bidirectional).")
@click.option("--positional", default="sinusoidal", show_default=True, type=click.Choice(positional_names()),
              help=f"Transformer positional encoding (--data only; positions are sample indices 1..T): "
                   f"{', '.join(positional_names())}. 'wavelengths' needs --wavelengths.")
@click.option("--wavelengths", multiple=True, type=float, metavar="W1 W2 ...",
              help="Wavelengths W1 W2 ... for --positional wavelengths, in samples (compare's positions are sample "
                   "indices): one sine/cosine pair each; the transformer's d_model becomes 2 x their count.")
@click.option("--seeds", "n_seeds", default=None, type=click.IntRange(1),
              help="Number of seeds (42, 0, 1, ...); every network is retrained per seed and the table "
                   "reports mean ± sd [1 on --data and real-wells; 3 for porosity and synthetic-wells].")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run folder to write.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an existing, non-empty --out folder.")
@click.option("--progress/--no-progress", default=False, show_default=True, help="Progress bars on stderr.")
@engine_options
def compare(**_options):
    """Compare the transformer, a bidirectional LSTM, the porosity-permeability transform and the mean.

    Random forest and gradient boosting (with and without depth context) are scored beside them.
    All see the same split and wells; the networks see the same scaling and windows, the same
    training loop and the same seeds.  Writes a run folder whose metrics.json and report.html hold
    the table (RMSE, MAE, R², parameters, fit time in s; mean ± sd over --seeds; per test well)
    and whose figures/prediction_vs_depth*.png show the models against depth, one per test well.

    With --data, each seed is one task: --jobs N or --scheduler local|tcp://HOST:PORT fits the
    seeds in parallel, with results identical to a serial run; every seed's model is kept (the
    first in OUT/model, the others in OUT/seeds/seed_<seed>).
    """
    request = CompareRequest.from_options(click.get_current_context().params)
    plan = plan_compare(request)                 # every rule checked and the wells read before --out exists
    if plan.kind == "demo":
        demo_catalogue().compare_demo(request.demo_name, request.out, seeds=plan.seeds, epochs=request.epochs)
        click.echo(f"Comparison written to {request.out} (metrics.json, report.html)")
        return
    run_compare(plan)
    click.echo(f"Wrote {request.out}")
