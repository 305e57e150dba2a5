"""``glassformer train --core`` and ``--ensemble K`` as requests: their rules, their reading, their run.

The command line fills a :class:`~glassformer.wells.requests.TrainRequest`; the functions here
hold what the plugs group of that request means -- which options go together
(:func:`check_plugs_request`), how the cored well and its plug table are read, how the
held-out cores and depth shifts are parsed -- and run the experiment
(:func:`run_plugs_request`, :func:`run_ensemble_request`).  A script builds the same request
without click.  Every refusal is one :class:`~glassformer.errors.InputError` line naming the
option at fault, raised before any file is written.
"""

from __future__ import annotations

from ..data import common_depth_unit, parse_units, read_plugs, read_wells
from ..data.volve import ATTRIBUTION, is_volve
from ..errors import InputError
from ..reporting import say, warn
from .checks import check_wells
from .dataset import parse_depth_specs
from .ensemble_experiment import run_ensemble_experiment
from .model import WellModel
from .plugs_experiment import run_plugs_experiment
from .plugs_match import read_shifts
from .requests import PlugsRequest, ReadingRequest, TrainRequest
from .splits import deepest_blocks

__all__ = ["check_plugs_request", "read_request_wells", "run_ensemble_request", "run_plugs_request"]

#: Fields of the plugs group that mean something only with ``--core``, and those that need ``--core`` or
#: ``--ensemble`` (``--validation-data`` also stops a single run's training early).
_PLUGS_ONLY = ("core_target", "test_cores", "validation_cores", "pretrain_data", "depth_shift", "no_depth_match",
               "shifts_file")
_ENSEMBLE_OR_PLUGS = ("validation_depth",)


def _option(name: str) -> str:
    return "--" + {"shifts_file": "shifts"}.get(name, name).replace("_", "-")


def check_plugs_request(request: TrainRequest) -> None:
    """Refuse plug options without ``--core``, and options that need an ensemble or exclude one.

    Raises
    ------
    InputError
        Naming the option and what it needs: a plug option without ``--core``; ``--validation-depth``
        without ``--core`` or ``--ensemble``; ``--jobs``/``--scheduler`` without an ensemble;
        ``--resume`` or ``--members`` with ``--core`` or ``--ensemble``.
    """
    plugs, default = request.plugs, PlugsRequest()
    if request.members is not None and (plugs.core is not None or plugs.ensemble):
        given = "--core" if plugs.core is not None else "--ensemble K"
        raise InputError(f"--members averages the transformers of one run; with {given} the ensemble's own members "
                         "give the P50 (their mean): set their number with --ensemble K")
    if plugs.core is None:
        for name in _PLUGS_ONLY:
            if getattr(plugs, name) != getattr(default, name):
                raise InputError(f"{_option(name)} is used only with --core CORE_TABLE.csv")
        if not plugs.ensemble:
            for name in _ENSEMBLE_OR_PLUGS:
                if getattr(plugs, name) != getattr(default, name):
                    raise InputError(f"{_option(name)} is used only with --core or --ensemble K")
    if request.resume and (plugs.core is not None or plugs.ensemble):
        raise InputError("--resume continues one interrupted transformer; it is not available with "
                         f"{'--core' if plugs.core is not None else '--ensemble'}")
    if (request.engine.jobs is not None or request.engine.scheduler is not None) and not (
            plugs.core is not None or plugs.ensemble):
        raise InputError("--jobs and --scheduler run the members of an ensemble: use them with --core or --ensemble K")


def read_request_wells(reading: ReadingRequest, paths) -> list:
    """The wells of ``paths`` read as ``reading`` says (stated units, depth column, sheet)."""
    units = parse_units(reading.units)
    return [g for p in paths for g in read_wells(p, sheet=reading.sheet, stated_units=units,
                                                 depth_column=reading.depth_column)]


def _labels(values) -> list:
    """Core run labels of a repeatable option: ``("1,2", "3")`` -> ``["1", "2", "3"]``."""
    return [v for item in values for v in str(item).replace(",", " ").split()]


def _shifts(plugs: PlugsRequest):
    """``"estimate"``, None (no matching), the shifts of ``--shifts FILE`` or those of ``--depth-shift RUN=SHIFT``."""
    if sum(map(bool, (plugs.no_depth_match, plugs.depth_shift, plugs.shifts_file))) > 1:
        raise InputError("--no-depth-match, --depth-shift and --shifts contradict each other; give one of them")
    if plugs.no_depth_match:
        return None
    if plugs.shifts_file:
        return read_shifts(plugs.shifts_file)
    if not plugs.depth_shift:
        return "estimate"
    out = {}
    for item in plugs.depth_shift:
        run, sep, value = str(item).partition("=")
        try:
            out[run.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not run.strip():
            raise InputError(f"--depth-shift must be RUN=SHIFT (e.g. 1=1.6), got {item!r}")
    return out


def _one_interval(values, option: str):
    """The single ``TOP:BASE`` of an interval option (None when not given); per-well ones are refused."""
    values = [values] if isinstance(values, str) else list(values or ())
    if not values:
        return None
    specs = parse_depth_specs(values, option)
    if len(specs) > 1 or specs[0][0] is not None:
        raise InputError(f"{option}: give one TOP:BASE here (per-well WELL=TOP:BASE intervals are for log targets)")
    return specs[0][1]


def run_plugs_request(request: TrainRequest, *, names, model, engine=None) -> dict:
    """``train --core``: read the cored well and its plug table, then :func:`run_plugs_experiment` into ``request.out``.

    ``names``: the input curves (``request.inputs`` as curve names); ``model``: the unfitted transformer
    (the request's transformer settings).  Returns the metrics.

    Raises
    ------
    InputError
        Not exactly one ``--data`` file or sheet; ``--test-data``, ``--train-depth`` or ``--target`` with
        ``--core``; bad shifts or intervals; and every error of reading, matching and splitting.
    """
    plugs, wells = request.plugs, request.wells
    if len(wells.data) != 1:
        raise InputError(f"--core: give the cored well as one --data file (got {len(wells.data)}); other wells go "
                         "to --pretrain-data")
    for option, value in (("--test-data", wells.test_data), ("--train-depth", wells.train_depth),
                          ("--target", request.target)):
        if value:
            raise InputError(f"{option} is not used with --core (the target is --core-target, the held-out plugs "
                             "are --test-cores or --test-depth)")
    shifts = _shifts(plugs)
    test_depth = _one_interval(wells.test_depth, "--test-depth")
    validation_depth = _one_interval(plugs.validation_depth, "--validation-depth")
    cored = read_request_wells(request.reading, wells.data)
    if len(cored) != 1:
        raise InputError(f"--core: {wells.data[0]} holds {len(cored)} sheets; name the cored well's with --sheet")
    log, pre = cored[0], read_request_wells(request.reading, plugs.pretrain_data)
    common_depth_unit([log, *pre])
    names = list(names)
    for line in check_wells([log], pre, names, window=request.transformer.window):     # as predict checks a well
        warn(line)
    porosity = None if str(plugs.core_porosity).lower() == "none" else plugs.core_porosity
    table = read_plugs(plugs.core, depth=plugs.core_depth, porosity=porosity, permeability=plugs.core_target,
                       run=plugs.core_run, porosity_unit=plugs.core_porosity_unit)
    t = request.transformer
    wm = WellModel(names, plugs.core_target, log_target=request.log_target, window=t.window, stride=t.stride,
                   positions=t.positions, model=model)
    config = {"command": "train --core", "data": [str(p) for p in wells.data], "core": str(plugs.core),
              "pretrain_data": [str(p) for p in plugs.pretrain_data]}
    return run_plugs_experiment(request.out, log, table, wm, match_curve=plugs.match_depth, shifts=shifts,
                                shift_window=plugs.shift_window, test_cores=_labels(plugs.test_cores) or None,
                                validation_cores=_labels(plugs.validation_cores) or None, test_depth=test_depth,
                                validation_depth=validation_depth, n_members=plugs.ensemble or 5, pretrain_logs=pre,
                                log_perm_curve=plugs.log_perm_curve, pretrain_epochs=plugs.pretrain_epochs,
                                config=config, overwrite=True, engine=engine,
                                attribution=ATTRIBUTION if any(map(is_volve, [log, *pre])) else None)


def run_ensemble_request(request: TrainRequest, *, train_logs, test_logs, logs, wm: WellModel, engine=None) -> dict:
    """``train --ensemble K`` without ``--core``: K transformers on the log target, calibrated on validation data.

    ``train_logs``, ``test_logs``: the wells cut to their intervals; ``logs``: the training wells whole;
    ``wm``: the unfitted well model.  Without validation data the deepest 10 % of each training interval
    validates.  Returns the metrics.

    Raises
    ------
    InputError
        No held-out data (``--test-data`` or ``--test-depth``), a bad ``--validation-depth``, or no training
        interval long enough to hold out its deepest 10 %.
    """
    wells, plugs = request.wells, request.plugs
    if not (wells.test_data or wells.test_depth):
        raise InputError("--ensemble measures the coverage of its P10-P90 interval on held-out data: give "
                         "--test-data WELL or --test-depth TOP:BASE")
    val_depth = _one_interval(plugs.validation_depth, "--validation-depth")
    val_wells = read_request_wells(request.reading, wells.validation_data)
    for line in check_wells(train_logs, val_wells, [*wm.input_names, wm.target_name], window=wm.window):
        warn(line)
    validation = "the validation data given"
    if not val_wells and val_depth is None:          # as train: the deepest 10 % of each training interval
        train_logs, val_wells, blocks = deepest_blocks(train_logs, 0.1, wm.window)
        if not val_wells:
            raise InputError("--ensemble: no training interval is long enough to hold out its deepest 10 % for "
                             "validation; give --validation-data WELL or --validation-depth TOP:BASE")
        validation = ("the deepest 10 % of each training interval: " + "; ".join(
            f"{b['well']} {b['top']:g}-{b['base']:g} {b['depth_unit']}" for b in blocks))
        say(f"validation (early stopping and calibration): {validation}")
    config = {"command": "train --ensemble", "data": [str(p) for p in wells.data],
              "test_data": [str(p) for p in wells.test_data],
              "validation_data": [str(p) for p in val_wells and wells.validation_data],
              "train_depth": wells.train_depth, "test_depth": wells.test_depth,
              "validation_depth": plugs.validation_depth, "validation": validation}
    return run_ensemble_experiment(request.out, train_logs, test_logs, wm, n_members=plugs.ensemble,
                                   validation_wells=val_wells, validation_depth=val_depth, whole_logs=logs,
                                   config=config, engine=engine,
                                   attribution=ATTRIBUTION if any(map(is_volve, logs)) else None)
