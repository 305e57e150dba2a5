"""``glassformer predict``: a permeability log for a well, or for every well of a field, from a model
``glassformer train`` wrote.  Both forms call :func:`glassformer.wells.prediction.predict_file`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from tqdm.auto import tqdm

from ..errors import InputError
from ..parallel import engine_from_click, engine_options
from ..wells.batch import EXIT_FAILED, EXIT_OK, execute_batch, expand_inputs, plan_batch
from ..wells.checks import target_unit
from ..wells.prediction import load_predictor, predict_file
from .options import GreedyCommand, file_options, parse_interval, reading_options


class PredictCommand(GreedyCommand):
    """``--data`` takes several files or patterns: ``--data wells/*.las more.las`` (the shell's expansion too)."""

    greedy = ("--data",)
    examples = {"--data": "well file or pattern, e.g. --data 'wells/*.las'"}


@click.command("predict", cls=PredictCommand)
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="A run folder written by `glassformer train` (or its model/ sub-folder).")
@click.option("--data", "data", required=True, multiple=True, metavar="FILE|PATTERN ...",
              help="Well file(s) (.las or .csv) holding the model's input curves; glob patterns such as "
                   "'wells/*.las' are expanded by glassformer (quoted or not). Repeatable.")
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="Output file of a single well: .csv (depth + prediction columns) or .las (input curves + "
                   "prediction).")
@click.option("--out-dir", default=None, type=click.Path(file_okay=False),
              help="Batch: one output per well (<file stem>.las or .csv) plus manifest.csv and manifest.json.")
@click.option("--format", "fmt", type=click.Choice(["las", "csv"]), default=None,
              help="Output format of a batch (--out-dir).  [default: las]")
@click.option("--depth", "depth_range", default=None, help="Only predict TOP:BASE (file depth unit).")
@click.option("--alias", "aliases", multiple=True, metavar="NAME=CURVE",
              help="Use CURVE where a well lacks the model's input NAME, e.g. --alias PHIF=PHIE; repeatable "
                   "(common mnemonics such as PHIE for PHIF are tried too).")
@click.option("--depth-unit", type=click.Choice(["m", "ft"]), default=None,
              help="Convert the wells' depths to this unit before predicting (ft x 0.3048 = m); needed when the "
                   "model uses depth positions in another unit. The output keeps the file's depths.")
@click.option("--use", "use", default=None, metavar="NAME",
              help="Write this model's prediction instead of the transformer's, by its name in the run's tables, "
                   "e.g. --use 'gradient boosting' (the run's summary says which it recommends).")
@click.option("--all", "every", is_flag=True,
              help="Also write one <TARGET>_PRED_<MODEL> curve per model of the run (each described by its name).")
@file_options
@click.option("--resample", is_flag=True,
              help="Predict a well sampled at another step on the model's step (linear, gaps not bridged) and put "
                   "the prediction back onto the file's depths.")
@click.option("--keep", type=click.Choice(["all", "inputs"]), default="all", show_default=True,
              help="The curves of the well a LAS output keeps beside the prediction: every curve, or the inputs.")
@click.option("--overwrite", is_flag=True, help="Replace existing outputs (never replaced otherwise).")
@click.option("--resume", is_flag=True,
              help="Batch: finish an interrupted batch in --out-dir, skipping the wells already written.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Batch: progress bar on stderr.")
@engine_options
def predict(model_dir, data, out, out_dir, fmt, depth_range, aliases, depth_unit, use, every, units, depth_column, sheet,
            resample, keep, overwrite, resume, progress, jobs, scheduler):
    """Predict the target log of a well, or of many wells, with a trained model.

    Writes one prediction per depth sample (NaN where an input is missing), in the unit of the
    training wells' target (mD for permeability; log10 of it too when the model was trained with
    --log-target).  A run trained with
    --ensemble or --core adds P10, P50 and P90 (calibrated), and the prediction is the P50.
    Each well is checked first: an input in a unit of another kind than the model's (porosity
    in % for a v/v model) and a v/v curve outside [0, 1] are refused, a different sample step is
    warned about (--resample predicts on the model's step instead), and every depth
    whose inputs lie outside the training range (0.5-99.5 percentiles) is flagged in a curve
    <TARGET>_OOR (1 outside, 0 inside) and counted.  The warnings and counts are written into
    the output's header too; a LAS output keeps every curve of the well (--keep inputs: only the
    model's inputs).

    \b
    One well:    glassformer predict --model RUN --data W.las --out W_pred.las
    Many wells:  glassformer predict --model RUN --data 'wells/*.las' --out-dir OUT [--jobs 2]

    A batch writes each well's output atomically and a manifest (well, file, output, samples,
    samples predicted, samples flagged out of range, seconds, status, error).  A bad file never
    stops it: its row says why and the other wells are written.  --resume finishes an interrupted
    batch; --jobs N or --scheduler local|tcp://HOST:PORT runs the wells in parallel, with outputs
    identical to a serial run.

    \b
    Exit status:
      0  every well was predicted
      2  usage error (bad option, a pattern matching no file, an unreadable model,
         an unreachable scheduler); nothing was predicted
      3  the batch ran but some wells failed (their manifest rows say why)
      1  the system failed (e.g. disk full); files written so far are complete
      130  interrupted (Ctrl-C); finish the batch with --resume
    """
    depth = parse_interval(depth_range, "--depth") if depth_range else None
    if (out is None) == (out_dir is None):
        raise click.UsageError("give --out FILE (one well) or --out-dir DIR (a batch of wells), not "
                               + ("both" if out else "neither"))
    files = expand_inputs(data)
    checks = {"check": True, "aliases": list(aliases), "depth_unit": depth_unit, "resample": resample, "keep": keep,
              "reading": reading_options(dict(units=units, depth_column=depth_column, sheet=sheet)), "use": use,
              "every": every}
    if out is not None:
        _predict_one(model_dir, files, out, depth, overwrite, {"--format": fmt, "--resume": resume, "--jobs": jobs,
                                                                "--scheduler": scheduler}, checks)
        return 0
    return _predict_batch(model_dir, files, out_dir, fmt or "las", depth, overwrite, resume, progress, jobs,
                          scheduler, checks)


def _predict_one(model_dir, files, out, depth, overwrite, batch_only, checks) -> None:
    given = [name for name, value in batch_only.items() if value]
    if given:
        raise click.UsageError(f"{', '.join(given)} apply to a batch (--out-dir DIR), not to --out FILE")
    if len(files) > 1:
        raise InputError(f"--out {out} writes one well, but --data names {len(files)} files; use --out-dir DIR "
                         "for a batch")
    data, out = files[0], Path(out)
    if out.resolve() == Path(data).resolve() or (out.exists() and out.samefile(data)):
        raise InputError(f"--out {out} would replace the input well --data {data}; choose another output file")
    if out.exists() and not overwrite:
        raise InputError(f"--out {out} already exists; pass --overwrite to replace it")
    if out.suffix.lower() not in (".csv", ".las"):
        raise InputError(f"--out {out}: use a .csv or .las file name")
    name, unit = _prediction_name(model_dir)     # a bad model is reported before the well is read
    label = f"{name}, model {checks['use']}" if checks.get("use") else name
    found = []

    def report(check, notes):
        for line in notes:
            click.echo(f"note: {line}")
        for line in check.warnings:
            click.echo(f"warning: {line}", err=True)
        found.append(check)

    row = predict_file(model_dir, data, out, depth_range=depth, overwrite=True, on_check=report, **checks)
    click.echo(f"Wrote {out} (well {row['well']}): {row['samples_predicted']} of {row['samples']} depths predicted "
               f"({label}, {unit or 'no unit'}); {found[0].summary(name.removesuffix('_PRED'))}")


def _prediction_name(model_dir) -> tuple:
    """``("KLOGH_PRED", "mD")``: the prediction curve of the model in ``model_dir`` and its unit."""
    wm = load_predictor(model_dir)[0]
    return f"{wm.target_name}_PRED", target_unit(getattr(wm, "training_data_", None))


def _predict_batch(model_dir, files, out_dir, fmt, depth, overwrite, resume, progress, jobs, scheduler,
                   checks) -> int:
    plan = plan_batch(model_dir, files, out_dir, fmt=fmt, depth_range=depth, resume=resume, overwrite=overwrite,
                      **checks)
    kept = len(files) - len(plan["jobs"])
    with engine_from_click(jobs, scheduler) as engine:
        click.echo(f"Predicting {len(plan['jobs'])} well(s) into {out_dir} on {engine.describe()}"
                   + (f"; {kept} already done (--resume)" if kept else ""))
        with tqdm(total=len(plan["jobs"]), unit="well", disable=not progress, file=sys.stderr,
                  leave=False) as bar:
            try:
                rows = execute_batch(plan, engine, on_row=lambda row: bar.update(1))
            except KeyboardInterrupt:
                click.echo(f"glassformer: interrupted; the wells finished so far are in {out_dir}/manifest.csv; "
                           "finish with the same command and --resume", err=True)
                raise
    failed = [r for r in rows if r["status"] != "ok"]
    click.echo(f"Wrote {len(rows) - len(failed)} of {len(rows)} well(s) to {out_dir} (manifest.csv, manifest.json)")
    flagged = sum(r.get("samples_flagged") or 0 for r in rows if r["status"] == "ok")
    if flagged:
        click.echo(f"{flagged} depth(s) have inputs outside the training range: samples_flagged in the manifest, "
                   "the _OOR curve in each output")
    for r in failed[:10]:
        click.echo(f"  failed: {r['error']}", err=True)
    if len(failed) > 10:
        click.echo(f"  ... and {len(failed) - 10} more failed wells (see {out_dir}/manifest.csv)", err=True)
    return EXIT_FAILED if failed else EXIT_OK
