"""One well predicted with a saved model: the prediction curves, and the file that holds them.

:func:`predict_well` is the whole job for one well -- read the well, check it against the model,
predict, write the output atomically -- with a model loaded once (:class:`~glassformer.wells.predictor.
Predictor`), and returns the well's manifest row with what the checks found.  ``glassformer predict``
calls it for its single-file form, and batch prediction maps :func:`predict_file` (the row alone)
over the wells on any engine (:mod:`glassformer.wells.batch`); a worker process re-reads the model
from its ``.npz`` + JSON folder, never a pickled model.

Output columns (target ``KLOGH`` as an example): ``KLOGH_PRED`` in mD, and ``KLOGH_PRED_LOG10`` in
log10 mD when the model was trained with a log10 target; for a deep ensemble (``glassformer train
--ensemble`` or ``--core``) the prediction is the P50 and ``KLOGH_P10``, ``KLOGH_P50``, ``KLOGH_P90``
follow (with ``_LOG10`` beside them for a log target); ``KLOGH_OOR`` (1 = at least one input
outside the training range, 0 = inside) for every model that records its training ranges.

Before anything is predicted the well is checked against the model
(:func:`glassformer.wells.checks.check_inputs`): curve aliases are resolved, an input in a unit of
another kind or a depth unit a depth-position model cannot use is refused, a different sample step
is warned about, and samples outside the training range are flagged.  A CSV holds ``DEPTH`` (``DEPTH_FT`` for a well in feet) and
those columns; a LAS file holds the model's input curves and those curves, with the input well's
header when it is a LAS file (:func:`glassformer.data.write_las`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .. import io
from ..data import describe_use, read_well, state_units, with_requested_names, write_las
from ..errors import InputError, ShapeError
from .baselines import BLEND, blend
from .checks import STEP_TOLERANCE, check_inputs, short_run_warnings, target_unit
from .evaluation import COLUMN
from .predictor import Predictor
from .resample import interpolate_onto, resample_log

__all__ = ["OUTPUT_FORMATS", "WellPrediction", "add_flags", "manifest_row", "model_predictions", "predict_file",
           "predict_well", "prediction_curves", "quantile_columns", "write_prediction"]

#: Output file formats, by suffix.
OUTPUT_FORMATS = ("las", "csv")


def model_predictions(wm, log, names=None, ensemble=None) -> dict:
    """name -> prediction per sample of ``log`` in model units, for ``names`` (default: every model of the run).

    For a deep ensemble the transformer is the ensemble's P50 and the blend mixes that P50, as in
    the run's own tables.

    Raises
    ------
    InputError
        A name the run has no model for (the message lists those it has).
    """
    names = wm.model_names() if names is None else list(names)
    if ensemble is None:
        return wm.predict_all(log, names)
    own = [n for n in names if n not in ("transformer", BLEND)]
    if BLEND in names and "gradient boosting" not in own:
        own.append("gradient boosting")
    out = wm.predict_all(log, own)
    if "transformer" in names or BLEND in names:
        out["transformer"] = ensemble.predict_quantiles(log)["P50"]
    if BLEND in names:
        out[BLEND] = blend(out)
    return {name: out[name] for name in names}


def prediction_curves(wm, log, flags: np.ndarray | None = None, ensemble=None, *, use: str | None = None,
                      every: bool = False) -> tuple[dict, dict, dict]:
    """The columns an output file holds for ``log``: ``({name: (n_samples,) array}, {name: unit}, {name: text})``.

    Parameters
    ----------
    wm : WellModel
        Fitted (e.g. :meth:`WellModel.load`).
    log : WellLog
        Holds the model's input curves.
    flags : bool array (n_samples,), optional
        Samples whose inputs lie outside the training range; written as ``<TARGET>_OOR`` (1/0).
    ensemble : DeepEnsemble, optional
        Predict its P50 and add its P10/P50/P90 (:attr:`Predictor.ensemble`).
    use : str, optional
        The model whose prediction ``<TARGET>_PRED`` holds, by its name in the run's tables
        (e.g. ``"gradient boosting"``); default the transformer (an ensemble's P50).  The curve
        descriptions name it; an ensemble's quantiles are written only for the transformer.
    every : bool, default False
        Add one ``<TARGET>_PRED_<MODEL>`` curve per model of the run (``_LOG10`` beside each for a
        log target), e.g. ``KLOGH_PRED_GRADIENT_BOOSTING``.

    Returns
    -------
    (columns, units, descriptions)
        ``DEPTH`` (the log's depth unit), ``<TARGET>_PRED_LOG10`` (log10 mD, log-target models
        only), ``<TARGET>_PRED`` (mD), the quantiles of an ensemble and ``<TARGET>_OOR`` (with
        ``flags``); NaN where an input is missing.  ``descriptions`` holds the curves that need
        more than the default text.

    Raises
    ------
    CurveNotFoundError
        An input curve is not in the log (the message names the file and lists its curves).
    ShapeError
        ``flags`` is not of shape ``(n_samples,)``.
    """
    default = use is None or (use == "transformer" and ensemble is not None)
    quantiles = ensemble.predict_quantiles(log) if ensemble is not None and default else None
    if default:
        pred = quantiles["P50"] if quantiles is not None else wm.predict_log(log)      # (n_samples,), model units
    else:
        pred = model_predictions(wm, log, [use], ensemble)[use]
    name = f"{wm.target_name}_PRED"
    cols, units, about = {"DEPTH": log.depth}, {"DEPTH": log.depth_unit}, {}
    _add_prediction(cols, units, name, pred, wm)
    if use is not None:
        about = {k: f"glassformer prediction, model {use}" for k in cols if k != "DEPTH"}
    if quantiles is not None:
        cols, units, about = quantile_columns(cols, units, wm, quantiles, ensemble)
        if use is not None:
            about.update({k: f"glassformer prediction, model {use} (the P50 of an ensemble of {len(ensemble)})"
                          for k in (name, f"{name}_LOG10") if k in cols})
    if every:
        for model, values in model_predictions(wm, log, None, ensemble).items():
            column = f"{name}_{COLUMN.get(model, model).upper()}"
            added = _add_prediction(cols, units, column, values, wm)
            about.update({k: f"glassformer prediction, model {model}" for k in added})
    if flags is not None:
        add_flags(cols, units, about, wm, log, flags)
    return cols, units, about


def _add_prediction(cols: dict, units: dict, name: str, pred: np.ndarray, wm) -> list:
    """Put ``pred`` (model units) into ``cols`` as ``name`` in the target file's unit (mD for permeability), and
    as ``name_LOG10`` for a log target; returns the names added."""
    record = getattr(wm, "training_data_", None)
    if wm.log_target:
        cols[f"{name}_LOG10"], units[f"{name}_LOG10"] = pred, target_unit(record, log10=True)
        cols[name], units[name] = np.power(10.0, pred), target_unit(record)
        return [f"{name}_LOG10", name]
    cols[name], units[name] = pred, target_unit(record)
    return [name]


def add_flags(cols: dict, units: dict, about: dict, wm, log, flags) -> None:
    """Add ``<TARGET>_OOR`` (1/0, NaN where nothing is predicted) to the columns of :func:`prediction_curves`.

    Raises
    ------
    ShapeError
        ``flags`` is not of shape ``(n_samples,)``.
    """
    flags = np.asarray(flags, dtype=bool)
    if flags.shape != log.depth.shape:
        raise ShapeError(f"{log.source or log.name}: the out-of-range flags have shape {flags.shape}, "
                         f"expected {log.depth.shape}")
    pred = cols[f"{wm.target_name}_PRED"]
    flag = np.where(np.isfinite(pred), flags.astype(np.float64), np.nan)   # no flag where nothing is predicted
    cols[f"{wm.target_name}_OOR"], units[f"{wm.target_name}_OOR"] = flag, ""
    about[f"{wm.target_name}_OOR"] = "1 = an input outside the training range of the model; empty where not predicted"


def quantile_columns(cols: dict, units: dict, wm, quantiles: dict, ens) -> tuple:
    """``cols`` with ``<TARGET>_P10``, ``_P50``, ``_P90`` (mD; ``_LOG10`` beside them for a log target).

    Returns ``(cols, units, descriptions)``, new dicts.
    """
    cols, units = dict(cols), dict(units)
    about = {k: f"glassformer prediction, the P50 of an ensemble of {len(ens)}" for k in cols if k != "DEPTH"}
    state = f"calibrated, scale {ens.scale:.3g}" if ens.calibration is not None else "uncalibrated"
    record = getattr(wm, "training_data_", None)
    for key in ("P10", "P50", "P90"):
        name = f"{wm.target_name}_{key}"
        values = quantiles[key]
        if wm.log_target:
            cols[f"{name}_LOG10"], units[f"{name}_LOG10"] = values, target_unit(record, log10=True)
            about[f"{name}_LOG10"] = f"glassformer {key}, ensemble of {len(ens)} ({state})"
            values = np.power(10.0, values)
        cols[name], units[name] = values, target_unit(record)
        about[name] = f"glassformer {key}, ensemble of {len(ens)} ({state})"
    return cols, units, about


def write_prediction(out, wm, log, cols: dict, units: dict, model_label: str, about: dict | None = None, *,
                     notes=(), counts: str | None = None, keep: str = "all") -> Path:
    """Write the columns of :func:`prediction_curves` to ``out`` (``.csv`` or ``.las``), atomically.

    A LAS output carries the input well's header (when it came from a LAS file), every curve of the
    well (``keep="all"``) or only the model's inputs (``keep="inputs"``), and the new curves
    described as ``glassformer prediction (model <model_label>)``, or as ``about`` says.  ``notes``
    (the warnings and notes of the checks) and ``counts`` (the out-of-range counts) go into the
    file's header: the LAS ~Other section, or ``#`` lines above a CSV table
    (:func:`glassformer.data.read_csv` skips them; pandas with ``comment="#"``).  A CSV gets them
    only when there are ``notes``: a well predicted without a warning stays a plain table.

    Raises
    ------
    InputError
        ``out`` ends neither in ``.csv`` nor in ``.las``.
    """
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix == ".csv":
        table = pd.DataFrame(cols)
        if units.get("DEPTH") == "ft":          # a CSV says feet in its header (read_csv reads DEPTH_FT as feet)
            table = table.rename(columns={"DEPTH": "DEPTH_FT"})
        lines = [*notes, *([counts] if counts and notes else [])]
        head = "".join(f"# {' '.join(str(line).split())}\n" for line in lines)
        io.atomic_write_text(out, head + table.to_csv(index=False, float_format="%.9g"))
    elif suffix == ".las":
        if keep not in ("all", "inputs"):
            raise InputError(f"keep must be 'all' or 'inputs', got {keep!r}")
        new = {k: v for k, v in cols.items() if k != "DEPTH"}
        about = {**{m: "model input" for m in wm.input_names},
                 **{k: f"glassformer prediction (model {model_label})" for k in new}, **(about or {})}
        include = None if keep == "all" else wm.input_names
        write_las(out, log, new, units=units, descriptions=about, include=include,
                  notes=[*notes, *([counts] if counts else [])])
    else:
        raise InputError(f"{out}: use a .csv or .las file name for the prediction")
    return out


def manifest_row(path, out, *, well: str = "", samples=None, predicted=None, flagged=None, seconds: float = 0.0,
                 status: str = "ok", error: str = "") -> dict:
    """One row of a batch manifest (see :data:`glassformer.wells.batch.MANIFEST_COLUMNS`)."""
    return {"well": well or Path(path).stem, "file": str(path), "output": str(out) if status == "ok" else "",
            "samples": samples, "samples_predicted": predicted, "samples_flagged": flagged,
            "seconds": round(float(seconds), 4), "status": status, "error": error}


@dataclass
class WellPrediction:
    """What :func:`predict_well` did for one well.

    Attributes
    ----------
    row : dict
        The well's manifest row (:func:`manifest_row`).
    notes : list of str
        What was done to the well (curve aliases, a depth conversion, resampling): to say to the user.
    warnings : list of str
        What the user must know before trusting the prediction (sample step, units assumed, ranges).
    summary : str
        One sentence: how many predicted depths have inputs outside the training range ("" unchecked).
    """

    row: dict
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    summary: str = ""


def predict_file(model, path, out_path, **options) -> dict:
    """Predict the target log of one well file and write it to ``out_path``; returns the well's manifest row.

    The task of a batch (:mod:`glassformer.wells.batch`); the arguments are :func:`predict_well`'s.
    """
    return predict_well(model, path, out_path, **options).row


def predict_well(model, path, out_path, *, depth_range: tuple | None = None, overwrite: bool = False,
                 flag_samples: Callable | None = None, check: bool = True, aliases=(),
                 depth_unit: str | None = None, reading: dict | None = None, resample: bool = False,
                 keep: str = "all") -> WellPrediction:
    """Predict the target log of one well file with a saved model and write it to ``out_path``.

    Parameters
    ----------
    model : Predictor, or str or Path
        The model, loaded once (:meth:`Predictor.load`: which of the run's models predicts, and
        whether every model's curve is written, are the predictor's); or its folder, read here: a
        run folder written by ``glassformer train`` (or its ``model/`` sub-folder), or a deep
        ensemble (its run folder or ensemble folder): then the prediction is the P50 and the
        P10/P50/P90 curves are written too.
    path : str or Path
        The well (``.las``, ``.csv`` or ``.xlsx``) holding the model's input curves.
    out_path : str or Path
        The output file, ``.las`` or ``.csv`` (written atomically: complete or absent).
    depth_range : (top, base), optional
        Predict only this interval (the file's depth unit).
    overwrite : bool, default False
        Replace an existing ``out_path``.
    flag_samples : callable, optional
        ``flag_samples(wm, log) -> bool array (n_samples,)`` marking samples whose inputs lie
        outside the model's training range (the ``<TARGET>_OOR`` curve and ``samples_flagged``);
        a top-level function, so that worker processes can import it.  Without it (and without
        ``check``) nothing is flagged (``samples_flagged`` is 0 and no flag curve is written).
    check : bool, default True
        Check the well against the model first
        (:func:`~glassformer.wells.checks.check_inputs`): refuse inputs in a unit of another kind
        and a depth unit a depth-position model cannot use, warn on a different sample step, and
        flag the samples outside the training ranges (unless ``flag_samples`` is given).  The
        warnings and notes are returned and written into the output file's header (the units
        taken from the model for inputs the well states none for: into a LAS file's only).
    aliases : ``["PHIF=PHIE", ...]``, optional
        With ``check``: curves to use where the well lacks an input (common mnemonics are tried too).
    depth_unit : {"m", "ft"}, optional
        With ``check``: convert the well's depths to this unit first (the output keeps the file's).
    reading : dict, optional
        How the file is read: ``units`` (``{curve: unit}`` stated by the user, replacing the
        file's), ``depth_column`` and ``sheet`` (:func:`glassformer.data.read_well`).
    resample : bool, default False
        Predict on the model's sample step (:func:`glassformer.wells.resample.resample_log`) when
        the well's step differs from it by more than 5 %, and interpolate the predictions back
        onto the file's depths (a note says so).
    keep : {"all", "inputs"}, default "all"
        The curves of the well a LAS output keeps beside the predictions.

    Returns
    -------
    WellPrediction
        Its ``row`` is the well's manifest row: ``well`` (the file's well name), ``file``,
        ``output``, ``samples``, ``samples_predicted`` (finite predictions), ``samples_flagged``,
        ``seconds``, ``status`` ("ok") and ``error`` ("").

    Raises
    ------
    InputError
        ``out_path`` is the input file, exists without ``overwrite``, or is neither .csv nor .las.
    ModelFileError
        No readable model in ``model``.
    DataFileError, CurveNotFoundError, DepthError
        The well cannot be read, lacks an input curve, holds an input in a unit of another kind
        than the model's, has a depth unit a depth-position model cannot use, or ``depth_range``
        lies outside it (each message names the file).
    InputError
        No depth (of ``depth_range``) has every input present: nothing could be predicted.
    """
    start = time.perf_counter()
    out = Path(out_path)
    if out.exists() and Path(path).exists() and out.samefile(path) or out.resolve() == Path(path).resolve():
        raise InputError(f"{out}: would replace the input well {path}; choose another output file")
    if out.exists() and not overwrite:
        raise InputError(f"{out}: already exists; pass overwrite=True (--overwrite) to replace it")
    if out.suffix.lower().lstrip(".") not in OUTPUT_FORMATS:
        raise InputError(f"{out}: use a .csv or .las file name for the prediction")
    predictor = model if isinstance(model, Predictor) else Predictor.load(model)
    wm = predictor.wm
    reading = dict(reading or {})
    units = reading.pop("units", None)
    log = state_units(read_well(path, **reading), units)
    if depth_range is not None:
        log = log.interval(*depth_range)
    found, used, notes = None, log, []
    if check:
        log, found, notes = _checked(wm, log, aliases, depth_unit, check_step=not resample)
        used = found.log
    grid, note = _onto_model_step(wm, used) if resample else (None, None)
    notes += [note] if note else []
    if resample and found is not None:            # the runs the model sees are those of the well it predicts
        found.warnings += short_run_warnings(used if grid is None else grid, wm.input_names, wm.window)
    header = [*([note] if note else []), *(found.warnings if found is not None else [])]   # into the output too
    if found is not None and out.suffix.lower() == ".las":      # a CSV stays a plain table when only units were assumed
        header += found.assumed
    flags = (np.asarray(flag_samples(wm, used), dtype=bool) if flag_samples is not None else
             found.out_of_range == 1 if found is not None and found.checked else None)
    curves = {"ensemble": predictor.ensemble, "use": predictor.use, "every": predictor.every}
    if grid is None:
        cols, units, about = prediction_curves(wm, used, flags, **curves)
    else:                                 # predicted on the model's step, put back onto the file's depths
        cols, units, about = prediction_curves(wm, grid, None, **curves)
        cols = {k: (used.depth if k == "DEPTH" else interpolate_onto(grid.depth, v, used.depth)) for k, v in cols.items()}
        if flags is not None:
            add_flags(cols, units, about, wm, used, flags)
    predicted = np.isfinite(cols[predictor.curve])
    if not predicted.any():
        _nothing_to_predict(wm, used, path, depth_range)
    cols["DEPTH"], units["DEPTH"] = log.depth, log.depth_unit          # the file's own depths, never converted
    summary = found.summary(wm.target_name) if found is not None else ""
    write_prediction(out, wm, log, cols, units, predictor.label, about,
                     notes=[f"glassformer predict: {line}" for line in header], keep=keep,
                     counts=f"glassformer predict: {summary}" if found is not None else None)
    row = manifest_row(path, out, well=log.name, samples=len(log), predicted=int(predicted.sum()),
                       flagged=0 if flags is None else int((flags & predicted).sum()),   # as the flag curve
                       seconds=time.perf_counter() - start)
    return WellPrediction(row, notes, [*found.assumed, *found.warnings] if found is not None else [], summary)


def _onto_model_step(wm, log) -> tuple:
    """``(log on the model's step, note)``; ``(None, None)`` when the steps agree within 5 % or are unknown."""
    record = getattr(wm, "training_data_", None) or {}
    step, trained = log.step, record.get("step")
    if not (trained and np.isfinite(trained) and np.isfinite(step)) or abs(step - trained) <= STEP_TOLERANCE * trained:
        return None, None
    if log.depth_unit != (record.get("depth_unit") or "m"):
        raise InputError(f"{log.source or log.name}: --resample puts the well on the model's step of {trained:g} "
                         f"{record.get('depth_unit') or 'm'}, but its depth is in {log.depth_unit}; pass --depth-unit "
                         f"{record.get('depth_unit') or 'm'} too")
    grid = resample_log(log, trained)
    return grid, (f"{log.source or log.name}: resampled from a step of {step:.4g} to the model's {trained:.4g} "
                  f"{log.depth_unit} ({len(log)} -> {len(grid)} samples, linear, gaps not bridged) for the prediction, "
                  "which is interpolated back onto the file's depths")


def _nothing_to_predict(wm, log, path, depth_range) -> None:
    """Raise the InputError of a well (or interval) where no depth has every input present."""
    X = log.matrix(wm.input_names).astype(np.float64)
    where = f"{depth_range[0]:g}-{depth_range[1]:g} {log.depth_unit}" if depth_range is not None else "the well"
    absent = [name for j, name in enumerate(wm.input_names) if not np.isfinite(X[:, j]).any()]
    raise InputError(f"{path}: no depth of {where} has every input ({', '.join(wm.input_names)}) present; nothing to "
                     f"predict" + (f" ({', '.join(absent)} missing throughout)" if absent else ""))


def _checked(wm, log, aliases, depth_unit, check_step=True) -> tuple:
    """``(log renamed to the model's inputs, InputCheck, notes)``: aliases resolved, units and ranges checked.

    ``check_step`` False: no warning about the sample step (the well is resampled onto the model's).
    """
    log, used = with_requested_names(log, wm.input_names, list(aliases or ()))
    check = check_inputs(getattr(wm, "training_data_", None), log, positions=wm.positions, depth_unit=depth_unit,
                         window=wm.window, check_step=check_step)
    notes = [*check.notes, *(f"{log.source or log.name}: input {describe_use(asked, curve, aliases)}"
                             for asked, curve in used.items() if asked != curve)]
    return log, check, notes
