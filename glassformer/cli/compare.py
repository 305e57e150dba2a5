"""``glassformer compare``: the transformer, a bidirectional LSTM, the tree ensembles, the porosity-permeability
transform and the training mean on identical splits of the user's wells (or a demonstration's data)."""

from __future__ import annotations

import click
from sklearn.base import clone

from ..data.volve import ATTRIBUTION, is_volve
from ..errors import InputError
from ..models import SequenceRegressor
from ..parallel import engine_from_click, engine_options
from ..runs import check_out_folder
from ..wells import compare_wells, seed_list
from .options import (GreedyCommand, dataset_from_options, implied_d_model, input_names, positional_names,
                      positional_options, reading_options, target_name, well_options)
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
def compare(demo_name, data, manifest, train_depth, test_depth, test_data, aliases, units, depth_column, sheet,
            validation_split, validation_data, inputs, target, log_target, window, stride, epochs, hidden_size,
            positional, wavelengths, n_seeds, out,
            overwrite, progress, jobs, scheduler):
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
    check_out_folder(out, overwrite=overwrite)   # created once the inputs are valid
    if demo_name:
        if data or manifest:
            raise InputError("give either --demo or --data / --manifest, not both")
        if jobs or scheduler:
            raise click.UsageError("--jobs / --scheduler apply to --data runs; a --demo runs its seeds in this process")
        if positional != "sinusoidal" or wavelengths:
            raise InputError("--positional / --wavelengths apply to --data runs; a --demo uses its own model")
        demo_catalogue().compare_demo(demo_name, out, seeds=seed_list(n_seeds) if n_seeds else None, epochs=epochs,
                                echo=click.echo)
        click.echo(f"Comparison written to {out} (metrics.json, report.html)")
        return
    missing = [name for name, v in (("--data", data or manifest), ("--inputs", inputs), ("--target", target)) if not v]
    if missing:
        raise InputError(f"compare needs {', '.join(missing)} (or --demo NAME)")
    wells = dict(data=data, manifest=manifest, train_depth=train_depth, test_depth=test_depth, test_data=test_data,
                 val_data=validation_data, aliases=aliases)
    reading = reading_options(dict(units=units, depth_column=depth_column, sheet=sheet))
    _compare_wells(wells, input_names(inputs), target, log_target, validation_split, window, stride, epochs or 30,
                   hidden_size, positional, wavelengths, seed_list(n_seeds or 1), out, progress, (jobs, scheduler),
                   reading)
    click.echo(f"Wrote {out}")


def _compare_wells(wells, names, target, log_target, validation, window, stride, epochs, hidden_size, positional,
                   wavelengths, seeds, out, progress, engine_choice=(None, None), reading=None) -> None:
    opts = positional_options(positional, wavelengths, "index", window, None)
    model = SequenceRegressor(positional=positional, positional_options=opts)
    if implied_d_model(positional, opts) is not None:       # e.g. 2 x the number of wavelengths
        model.set_params(d_model=implied_d_model(positional, opts))
    clone(model).build_network(len(names))        # bad model options fail before --out exists
    ds = dataset_from_options(**wells, inputs=names, target=target, window=window, reading=reading)
    test_logs = ds.test
    if not test_logs:
        test_logs = ds.train
        click.echo("note: no --test-depth / --test-data given: the 'test' metrics are on the training interval")
    everything = [*ds.train, *ds.val, *ds.test]
    config = {k: (list(map(str, v)) if isinstance(v, tuple) else v) for k, v in wells.items()}
    with engine_from_click(*engine_choice) as engine:
        compare_wells(out, ds.train, test_logs, inputs=names, target=target, log_target=log_target, window=window,
                      stride=stride, epochs=epochs, seeds=seeds, hidden_size=hidden_size, boundary=ds.boundary,
                      attribution=ATTRIBUTION if any(map(is_volve, everything)) else None, model=model,
                      progress=progress, echo=click.echo, val_logs=ds.val, validation=validation, engine=engine,
                      config={**config, "curves_used": ds.curves_used})
