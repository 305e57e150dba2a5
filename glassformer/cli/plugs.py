"""``glassformer train --core``: learn permeability from core plugs, with P10/P50/P90 and their coverage.

The options of :func:`plugs_options` extend ``glassformer train``; with ``--core`` the command
runs :func:`glassformer.wells.run_plugs_experiment` instead of the log-to-log experiment (through
:func:`glassformer.wells.train_job.run_train` and :mod:`glassformer.wells.plugs_request`)::

    glassformer train --data 15_9-19_A_CPI.las --core 15_9-19A-CORE.csv --core-depth OrigDepth \\
        --core-target CKHL --core-porosity-unit % --match-depth PHIF --inputs PHIF VSH SW --log-target \\
        --ensemble 5 --out runs/core

Without ``--core``, ``--ensemble K`` trains K transformers on the log target and calibrates their
P10-P90 interval on ``--validation-data`` wells or a ``--validation-depth`` interval
(:func:`glassformer.wells.run_ensemble_experiment`).
"""

from __future__ import annotations

import click

from ..data import RUN_COLUMNS
from ..data.volve import CORE_PERMEABILITY, CORE_POROSITY

__all__ = ["plugs_options"]

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


def plugs_options(command):
    """Click decorator adding the core and ensemble options (parameters named as the options)."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command
