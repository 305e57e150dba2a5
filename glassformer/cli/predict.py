"""``glassformer predict``: a permeability log for a well, from a model ``glassformer train`` wrote.

The well is checked against what the model was trained on before anything is predicted
(:func:`glassformer.wells.check_inputs`): an input in a unit of another kind (porosity in % for a
model trained on v/v) or a depth unit other than that of a depth-position model is refused; a
different sample step is warned about; samples whose inputs lie outside the training range are
flagged in a curve ``<TARGET>_OOR`` and counted.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InputError
from .options import parse_interval


@click.command("predict")
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="A run folder written by `glassformer train` (or its model/ sub-folder).")
@click.option("--data", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Well file (.las or .csv) holding the model's input curves.")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Output file: .csv (depth + prediction columns) or .las (input curves + prediction).")
@click.option("--depth", "depth_range", default=None, help="Only predict TOP:BASE (file depth unit).")
@click.option("--alias", "aliases", multiple=True, metavar="NAME=CURVE",
              help="Use CURVE where the well lacks the model's input NAME, e.g. --alias PHIF=PHIE; repeatable.")
@click.option("--depth-unit", type=click.Choice(["m", "ft"]), default=None,
              help="Convert the well's depths to this unit before predicting (ft x 0.3048 = m); needed when the "
                   "model uses depth positions in another unit. The output keeps the file's depths.")
@click.option("--overwrite", is_flag=True, help="Replace --out if it exists (never replaced otherwise).")
def predict(model_dir, data, out, depth_range, aliases, depth_unit, overwrite):
    """Predict the target log of a well with a trained model.

    Writes one prediction per depth sample (NaN where an input is missing), in mD (and log10 mD
    when the model was trained with --log-target), and a flag curve <TARGET>_OOR: 1 where an
    input lies outside its training range (0.5-99.5 percentiles), 0 inside.  A run trained with
    --ensemble or --core adds P10, P50 and P90 (calibrated), and the prediction is the P50.
    Exits with status 2 when an input's unit contradicts the model's (e.g. porosity in % for a
    v/v model).
    """
    import numpy as np

    from ..data import read_well, with_requested_names
    from ..wells import WellModel, check_inputs
    from .core import load_ensemble

    out = Path(out)
    if out.resolve() == Path(data).resolve() or (out.exists() and out.samefile(data)):
        raise InputError(f"--out {out} would replace the input well --data {data}; choose another output file")
    if out.exists() and not overwrite:
        raise InputError(f"--out {out} already exists; pass --overwrite to replace it")
    if out.suffix.lower() not in (".csv", ".las"):
        raise InputError(f"--out {out}: use a .csv or .las file name")
    ens = load_ensemble(model_dir)
    wm = ens.first if ens is not None else WellModel.load(model_dir)
    log = read_well(data)
    if depth_range:
        log = log.interval(*parse_interval(depth_range, "--depth"))
    log, used = with_requested_names(log, wm.input_names, list(aliases))
    check = check_inputs(getattr(wm, "training_data_", None), log, positions=wm.positions, depth_unit=depth_unit,
                         window=wm.window)
    for line in check.notes:
        click.echo(f"note: {line}")
    for line in check.warnings:
        click.echo(f"warning: {line}", err=True)
    for asked, curve in used.items():
        if asked != curve:
            click.echo(f"note: {data}: input {asked} read from curve {curve}")
    quantiles = ens.predict_quantiles(check.log) if ens is not None else None
    pred = quantiles["P50"] if ens is not None else wm.predict_log(check.log)
    _write(out, log, wm, pred, check.out_of_range, quantiles, ens)
    name = f"{wm.target_name}_PRED"
    click.echo(f"Wrote {out} (well {log.name}): {int(np.isfinite(pred).sum())} of {len(pred)} depths predicted "
               f"({name}, mD); "
               f"{check.summary(wm.target_name)}")


def _write(out: Path, log, wm, pred, flag, quantiles, ens) -> None:
    """The predictions (quantiles of an ensemble, the flag curve) beside the well's own depths, as CSV or LAS."""
    import numpy as np
    import pandas as pd

    from .. import io
    from ..data import write_las
    from .core import quantile_columns

    name = f"{wm.target_name}_PRED"
    cols, units = {"DEPTH": log.depth}, {"DEPTH": log.depth_unit}
    if wm.log_target:
        cols[f"{name}_LOG10"], units[f"{name}_LOG10"] = pred, "log10 mD"
        cols[name] = np.power(10.0, pred)
    else:
        cols[name] = pred
    units[name] = "mD"
    about = {}
    if quantiles is not None:
        cols, units, about = quantile_columns(cols, units, wm, quantiles, ens)
    oor = f"{wm.target_name}_OOR"
    cols[oor], units[oor] = flag, ""
    if out.suffix.lower() == ".csv":
        io.atomic_write_text(out, pd.DataFrame(cols).to_csv(index=False, float_format="%.9g"))
        return
    model = getattr(wm.model_, "source_", None) or type(wm.model_).__name__
    new = {k: v for k, v in cols.items() if k != "DEPTH"}
    about = {**{m: "model input" for m in wm.input_names},
             **{k: f"glassformer prediction (model {model})" for k in new}, **about,
             oor: "1 = an input outside its training range (0.5-99.5 percentiles), 0 = inside"}
    write_las(out, log, new, units=units, descriptions=about, include=wm.input_names)
