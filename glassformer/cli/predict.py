"""``glassformer predict``: a permeability log for a well, from a model ``glassformer train`` wrote."""

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
@click.option("--overwrite", is_flag=True, help="Replace --out if it exists (never replaced otherwise).")
def predict(model_dir, data, out, depth_range, overwrite):
    """Predict the target log of a well with a trained model.

    Writes one prediction per depth sample (NaN where an input is missing), in mD
    (and log10 mD when the model was trained with --log-target).  A run trained with
    --ensemble or --core adds P10, P50 and P90 (calibrated), and the prediction is the P50.
    """
    import numpy as np
    import pandas as pd

    from .. import io
    from ..data import read_well, write_las
    from ..wells import WellModel
    from .core import load_ensemble, quantile_columns

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
    quantiles = ens.predict_quantiles(log) if ens is not None else None
    pred = quantiles["P50"] if ens is not None else wm.predict_log(log)
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
    if out.suffix.lower() == ".csv":
        io.atomic_write_text(out, pd.DataFrame(cols).to_csv(index=False, float_format="%.9g"))
    else:
        model = getattr(wm.model_, "source_", None) or type(wm.model_).__name__
        new = {k: v for k, v in cols.items() if k != "DEPTH"}
        about = {**{m: "model input" for m in wm.input_names},
                 **{k: f"glassformer prediction (model {model})" for k in new}, **about}
        write_las(out, log, new, units=units, descriptions=about, include=wm.input_names)
    click.echo(f"Wrote {out}: {int(np.isfinite(pred).sum())} of {len(pred)} depths predicted ({name}, mD)")
