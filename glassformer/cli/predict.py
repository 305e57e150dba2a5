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
    (and log10 mD when the model was trained with --log-target).
    """
    import numpy as np
    import pandas as pd

    from .. import io
    from ..data import read_well
    from ..wells import WellModel

    out = Path(out)
    if out.resolve() == Path(data).resolve() or (out.exists() and out.samefile(data)):
        raise InputError(f"--out {out} would replace the input well --data {data}; choose another output file")
    if out.exists() and not overwrite:
        raise InputError(f"--out {out} already exists; pass --overwrite to replace it")
    if out.suffix.lower() not in (".csv", ".las"):
        raise InputError(f"--out {out}: use a .csv or .las file name")
    wm = WellModel.load(model_dir)
    log = read_well(data)
    if depth_range:
        log = log.interval(*parse_interval(depth_range, "--depth"))
    pred = wm.predict_log(log)
    name = f"{wm.target_name}_PRED"
    cols, units = {"DEPTH": log.depth}, {"DEPTH": log.depth_unit}
    if wm.log_target:
        cols[f"{name}_LOG10"], units[f"{name}_LOG10"] = pred, "log10 mD"
        cols[name] = np.power(10.0, pred)
    else:
        cols[name] = pred
    units[name] = "mD"
    if out.suffix.lower() == ".csv":
        io.atomic_write_text(out, pd.DataFrame(cols).to_csv(index=False, float_format="%.9g"))
    else:
        _write_las(out, log, cols, units, wm)
    click.echo(f"Wrote {out}: {int(np.isfinite(pred).sum())} of {len(pred)} depths predicted ({name}, mD)")


def _write_las(path: Path, log, cols: dict, units: dict, pipe) -> None:  # TEMPORARY until data.las.write_las lands
    """Write the prediction as LAS 2.0: the input's header and curves, then the prediction curves.

    A LAS input is read again (header only) so its ~Well items (WELL, COMP, FLD, LOC, ..., NULL),
    ~Params, ~Other and its index and input curve mnemonics, units and descriptions carry over; a
    CSV input gets WELL = the log's name, a DEPT index in the log's depth unit and NULL -999.25.
    NaN (missing input, no prediction) is written as that NULL.
    """
    import copy
    import io as _io
    import logging

    import lasio
    import numpy as np

    from .. import io

    las = lasio.LASFile()
    header = None
    if Path(log.source).suffix.lower() == ".las" and Path(log.source).is_file():
        quiet = logging.getLogger("lasio")
        level = quiet.level
        quiet.setLevel(logging.ERROR)          # read_well already reported what matters about this file
        try:
            header = lasio.read(log.source, ignore_data=True)
        except Exception:          # read_well read it a moment ago; if lasio now fails, keep the CSV layout
            header = None
        finally:
            quiet.setLevel(level)
    input_curves = {}
    if header is not None:
        for section in ("Well", "Parameter", "Other"):
            if section in header.sections:
                las.sections[section] = copy.deepcopy(header.sections[section])
        index = header.curves[0]
        index_item = (index.mnemonic, index.unit, index.descr)
        input_curves = {c.mnemonic.upper(): c for c in header.curves[1:]}
    else:
        las.well["WELL"].value = log.name
        index_item = ("DEPT", log.depth_unit.upper(), "Depth")
    null = float("nan")        # the input's NULL; -999.25 (not lasio's -9999.25) for CSV or none declared
    if header is not None and "NULL" in las.well:
        try:
            null = float(las.well["NULL"].value)
        except (TypeError, ValueError):
            pass
    if not np.isfinite(null):
        null = -999.25
    if "NULL" in las.well:
        las.well["NULL"].value = null
    else:
        las.well["NULL"] = lasio.HeaderItem("NULL", "", null, "Null value")
    las.append_curve(index_item[0], np.asarray(log.depth, dtype=float), unit=index_item[1], descr=index_item[2])
    for m in pipe.input_names:
        item = input_curves.get(m.upper())
        unit = item.unit if item is not None else log.units.get(m, "")
        descr = item.descr if item is not None else (log.descriptions.get(m) or "model input")
        las.append_curve(item.mnemonic if item is not None else m, np.asarray(log.curve(m), dtype=float),
                         unit=unit, descr=descr)
    source = getattr(pipe.model_, "source_", None)
    # LAS 2.0 ends a value at the line's last colon, so the description holds none.
    model_name = (str(source) if source else type(pipe.model_).__name__).replace(":", "")
    for k, v in cols.items():
        if k != "DEPTH":
            # LAS units end at the first space, so "log10 mD" is written as log10(mD).
            unit = units.get(k, "").replace("log10 mD", "log10(mD)")
            las.append_curve(k, np.asarray(v, dtype=float), unit=unit,
                             descr=f"glassformer prediction (model {model_name})")
    buf = _io.StringIO()
    las.write(buf, version=2.0, wrap=False, fmt="%.9g")
    io.atomic_write_text(path, buf.getvalue())
