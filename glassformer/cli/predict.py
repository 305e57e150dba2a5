"""``glassformer predict``: a permeability log for a well, or for every well of a field, from a model
``glassformer train`` wrote.  click fills a :class:`~glassformer.wells.predict_request.PredictRequest`
and :func:`~glassformer.wells.predict_request.run_prediction` checks and runs it."""

from __future__ import annotations

import click

from ..parallel import engine_options
from ..wells.predict_request import PredictRequest, run_prediction
from .options import GreedyCommand, file_options, parse_interval


def _interval(text: str | None) -> tuple | None:
    """``--depth TOP:BASE`` as ``(top, base)``, checked where the option is defined."""
    return parse_interval(text, "--depth") if text else None


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
@click.option("--depth", "depth_range", default=None, callback=lambda _ctx, _param, text: _interval(text),
              help="Only predict TOP:BASE (file depth unit).")
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
def predict(**_options):
    """Predict the target log of a well, or of many wells, with a trained model.

    Writes one prediction per depth sample (NaN where an input is missing), in the unit of the
    training wells' target (mD for permeability; log10 of it too when the model was trained with
    --log-target).  A run trained with
    --ensemble or --core adds P10, P50 and P90 (calibrated), and the prediction is the P50.
    Each well is checked first: v/v and % stated in a header are converted to the model's unit;
    an input in a unit of another kind that cannot be converted, a v/v curve outside [0, 1] and a
    porosity without a unit whose values look like percent for a v/v model (--unit POR=% converts
    it) are refused, a gap-free run shorter than the model's window is warned about, a different sample step is
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
    request = PredictRequest.from_options(click.get_current_context().params)
    try:
        outcome = run_prediction(request)
    except KeyboardInterrupt:
        if request.out_dir is not None:
            click.echo(f"glassformer: interrupted; the wells finished so far are in {request.out_dir}/manifest.csv; "
                       "finish with the same command and --resume", err=True)
        raise
    for line in outcome.warnings:       # on stderr, as every refusal: stdout lists what was written
        click.echo(f"warning: {line}", err=True)
    for r in outcome.failed[:10]:
        click.echo(f"  failed: {r['error']}", err=True)
    if len(outcome.failed) > 10:
        click.echo(f"  ... and {len(outcome.failed) - 10} more failed wells (see {request.out_dir}/manifest.csv)",
                   err=True)
    return outcome.exit_status
