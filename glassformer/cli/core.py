"""``glassformer train --core``: learn permeability from core plugs, with P10/P50/P90 and their coverage.

The options of :func:`core_options` extend ``glassformer train``; with ``--core`` the command
runs :func:`glassformer.wells.run_core_experiment` instead of the log-to-log experiment::

    glassformer train --data 15_9-19_A_CPI.las --core 15_9-19A-CORE.csv --core-depth OrigDepth \\
        --core-target CKHL --core-porosity-unit % --match-depth PHIF --inputs PHIF VSH SW --log-target \\
        --ensemble 5 --out runs/core

Without ``--core``, ``--ensemble K`` trains K transformers on the log target and calibrates their
P10-P90 interval on ``--validation-data`` wells or a ``--validation-depth`` interval
(:func:`glassformer.wells.run_ensemble_experiment`).
"""

from __future__ import annotations

import click
import pandas as pd

from ..data import common_depth_unit, read_core
from ..data.volve import ATTRIBUTION, CORE_PERMEABILITY, CORE_POROSITY, is_volve
from ..errors import InputError
from ..wells import WellModel, run_core_experiment, run_ensemble_experiment
from ..wells.checks import check_wells
from ..wells.core_match import read_shifts
from ..wells.splits import deepest_blocks
from .options import parse_interval, read_user_wells

__all__ = ["core_options", "run_core_command", "run_ensemble_command"]

#: Run-number columns looked for when ``--core-run`` is left at "auto" (compared without case).
RUN_COLUMNS = ("CORE_NO", "CORE", "CORE_NUMBER", "CORE_ID", "COREID", "RUN", "RUN_NO")

_OPTIONS = [
    click.option("--core", "core", default=None, type=click.Path(exists=True, dir_okay=False),
                 help="Core table (CSV, one row per plug): learn the core permeability instead of --target."),
    click.option("--core-depth", default="DEPTH", show_default=True,
                 help="Depth column of --core (e.g. OrigDepth, the driller's depth)."),
    click.option("--core-target", default=CORE_PERMEABILITY, show_default=True,
                 help="Core permeability column (mD) of --core."),
    click.option("--core-porosity", default=CORE_POROSITY, show_default=True,
                 help="Core porosity column of --core (depth matching, the core transform); 'none' for none."),
    click.option("--core-porosity-unit", type=click.Choice(["%", "v/v"]), default=None,
                 help="Unit of --core-porosity; needed when the table has no units row."),
    click.option("--core-run", default="auto", show_default=True,
                 help=f"Core (run) number column; 'auto' looks for {', '.join(RUN_COLUMNS[:3])}, ...; 'none': one bulk "
                      "depth shift."),
    click.option("--match-depth", default="PHIF", show_default=True,
                 help="Log curve correlated with core porosity to estimate each core's depth shift."),
    click.option("--no-depth-match", is_flag=True, default=False, help="Use the core depths as measured (no shifts)."),
    click.option("--depth-shift", multiple=True, metavar="RUN=SHIFT",
                 help="Set a core's depth shift (depth unit, + = deeper) instead of the estimate; repeat per core."),
    click.option("--shifts", "shifts_file", default=None, type=click.Path(exists=True),
                 help="shifts.json written by glassformer core-match (or its folder): use these per-run shifts."),
    click.option("--shift-window", default=2.0, show_default=True, type=click.FloatRange(min=0),
                 help="Largest depth shift tried either way (depth unit)."),
    click.option("--test-cores", multiple=True, metavar="RUN ...",
                 help="Held-out test cores (run numbers; commas or repeats). Default: cores in depth order cycle "
                      "through train, test, train, validation."),
    click.option("--validation-cores", multiple=True, metavar="RUN ...",
                 help="Cores that stop training early and calibrate the P10-P90 interval."),
    click.option("--validation-depth", default=None,
                 help="Validation interval TOP:BASE (file depth unit), instead of or beside --validation-cores."),
    click.option("--validation-data", multiple=True, type=click.Path(exists=True, dir_okay=False),
                 help="Without --core: whole wells that stop training early and calibrate the interval."),
    click.option("--ensemble", "ensemble", default=None, type=click.IntRange(2), metavar="K",
                 help="Deep ensemble of K transformers (different seeds): P10/P50/P90 with their coverage. "
                      "[default: 5 with --core, none without]"),
    click.option("--pretrain-data", multiple=True, type=click.Path(exists=True, dir_okay=False),
                 help="With --core: wells holding --log-perm-curve; pretrain on it over them (and --data outside "
                      "the held-out cores), then fine-tune on the core."),
    click.option("--log-perm-curve", default="KLOGH", show_default=True,
                 help="The log-derived permeability curve: a baseline at the core depths and the pretraining target."),
    click.option("--pretrain-epochs", default=10, show_default=True, type=click.IntRange(1),
                 help="Most epochs of pretraining."),
]


def core_options(command):
    """Click decorator adding the core and ensemble options (parameters named as the options)."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def _labels(values) -> list:
    return [v for item in values for v in str(item).replace(",", " ").split()]


def _shifts(items, no_match: bool, shifts_file=None):
    if sum(map(bool, (no_match, items, shifts_file))) > 1:
        raise InputError("--no-depth-match, --depth-shift and --shifts contradict each other; give one of them")
    if no_match:
        return None
    if shifts_file:
        return read_shifts(shifts_file)
    if not items:
        return "estimate"
    out = {}
    for item in items:
        run, sep, value = str(item).partition("=")
        try:
            out[run.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not run.strip():
            raise InputError(f"--depth-shift must be RUN=SHIFT (e.g. 1=1.6), got {item!r}")
    return out


def _run_column(path, option: str):
    """The run-number column: the one given, one of :data:`RUN_COLUMNS` for 'auto', None for 'none'."""
    if str(option).lower() == "none":
        return None
    if str(option).lower() != "auto":
        return option
    try:
        header = [str(c).strip().upper() for c in pd.read_csv(path, nrows=0).columns]
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError):
        return None                                  # read_core names the problem
    return next((c for c in RUN_COLUMNS if c in header), None)


def run_core_command(opts: dict, *, names, log_target, model, window, stride, positions, engine=None,
                     echo=click.echo) -> None:
    """``train --core``: read the well and the core table, then :func:`run_core_experiment` into ``opts['out']``."""
    if len(opts["data"]) != 1:
        raise InputError(f"--core: give the cored well as one --data file (got {len(opts['data'])}); other wells go "
                         "to --pretrain-data")
    for name in ("test_data", "train_depth", "target"):
        if opts.get(name):
            raise InputError(f"--{name.replace('_', '-')} is not used with --core (the target is --core-target, "
                             "the held-out plugs are --test-cores or --test-depth)")
    cored = read_user_wells(opts, opts["data"][:1])
    if len(cored) != 1:
        raise InputError(f"--core: {opts['data'][0]} holds {len(cored)} sheets; name the cored well's with --sheet")
    log, pre = cored[0], read_user_wells(opts, opts["pretrain_data"])
    common_depth_unit([log, *pre])
    for line in check_wells([log], pre, names, window=window):        # as predict checks a well
        echo(f"warning: {line}")
    porosity = None if str(opts["core_porosity"]).lower() == "none" else opts["core_porosity"]
    core = read_core(opts["core"], depth=opts["core_depth"], porosity=porosity, permeability=opts["core_target"],
                     run=_run_column(opts["core"], opts["core_run"]), porosity_unit=opts["core_porosity_unit"])
    wm = WellModel(names, opts["core_target"], log_target=log_target, window=window, stride=stride,
                   positions=positions, model=model)
    test_depth = _one_interval(opts.get("test_depth"), "--test-depth")
    val_depth = parse_interval(opts["validation_depth"], "--validation-depth") if opts["validation_depth"] else None
    cfg = {"command": "train --core", "data": [str(p) for p in opts["data"]], "core": str(opts["core"]),
           "pretrain_data": [str(p) for p in opts["pretrain_data"]]}
    run_core_experiment(opts["out"], log, core, wm, match_curve=opts["match_depth"],
                        shifts=_shifts(opts["depth_shift"], opts["no_depth_match"], opts.get("shifts_file")), shift_window=opts["shift_window"],
                        test_cores=_labels(opts["test_cores"]) or None,
                        validation_cores=_labels(opts["validation_cores"]) or None, test_depth=test_depth,
                        validation_depth=val_depth, n_members=opts["ensemble"] or 5, pretrain_logs=pre,
                        log_perm_curve=opts["log_perm_curve"], pretrain_epochs=opts["pretrain_epochs"],
                        echo=echo, config=cfg, overwrite=True,
                        attribution=ATTRIBUTION if any(map(is_volve, [log, *pre])) else None, engine=engine)
    echo(f"Wrote {opts['out']}")


def _one_interval(values, option: str):
    """The single ``TOP:BASE`` of a repeatable interval option (None when not given); per-well ones are refused."""
    values = [values] if isinstance(values, str) else list(values or ())
    if not values:
        return None
    if len(values) > 1 or "=" in values[0]:
        raise InputError(f"{option}: give one TOP:BASE here (per-well WELL=TOP:BASE intervals are for log targets)")
    return parse_interval(values[0], option)


def run_ensemble_command(opts: dict, *, train_logs, test_logs, logs, wm, boundary, engine=None,
                         echo=click.echo) -> None:
    """``train --ensemble K`` without ``--core``: K transformers on the log target, calibrated on validation data."""
    if not (opts["test_data"] or opts["test_depth"]):
        raise InputError("--ensemble measures the coverage of its P10-P90 interval on held-out data: give "
                         "--test-data WELL or --test-depth TOP:BASE")
    val_wells = read_user_wells(opts, opts["validation_data"])
    for line in check_wells(train_logs, val_wells, [*wm.input_names, wm.target_name], window=wm.window):
        echo(f"warning: {line}")
    val_depth = parse_interval(opts["validation_depth"], "--validation-depth") if opts["validation_depth"] else None
    validation = "the validation data given"
    if not val_wells and val_depth is None:          # as train: the deepest 10 % of each training interval
        train_logs, val_wells, blocks = deepest_blocks(train_logs, 0.1, wm.window)
        if not val_wells:
            raise InputError("--ensemble: no training interval is long enough to hold out its deepest 10 % for "
                             "validation; give --validation-data WELL or --validation-depth TOP:BASE")
        validation = ("the deepest 10 % of each training interval: " + "; ".join(
            f"{b['well']} {b['top']:g}-{b['base']:g} {b['depth_unit']}" for b in blocks))
        echo(f"validation (early stopping and calibration): {validation}")
    cfg = {"command": "train --ensemble", "data": [str(p) for p in opts["data"]],
           "test_data": [str(p) for p in opts["test_data"]], "validation_data": [str(p) for p in val_wells and
                                                                                opts["validation_data"]],
           "train_depth": opts["train_depth"], "test_depth": opts["test_depth"],
           "validation_depth": opts["validation_depth"], "validation": validation}
    run_ensemble_experiment(opts["out"], train_logs, test_logs, wm, n_members=opts["ensemble"],
                            validation_wells=val_wells, validation_depth=val_depth, whole_logs=logs,
                            boundary=boundary, echo=echo, config=cfg, engine=engine,
                            attribution=ATTRIBUTION if any(map(is_volve, logs)) else None)
    echo(f"Wrote {opts['out']}")
