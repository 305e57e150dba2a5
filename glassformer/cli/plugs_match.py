"""``glassformer core-match``: the depth shift of every core run, on its own, before any training.

::

    glassformer core-match --data 15_9-19_A_CPI.las --core 15_9-19A-CORE.csv --core-depth OrigDepth \\
        --core-porosity-unit % --match-depth PHIF --out runs/match19a
    glassformer train --core 15_9-19A-CORE.csv ... --shifts runs/match19a/shifts.json

Writes ``shifts.json``, ``correlations.csv`` and ``figures/`` (see
:func:`glassformer.wells.plugs_match.run_plugs_match`).
"""

from __future__ import annotations

import click

from ..data.volve import CORE_POROSITY
from ..wells.plugs_match import PlugsMatchRequest

__all__ = ["core_match"]


@click.command("core-match")
@click.option("--data", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The cored well (.las or .csv) holding --match-depth.")
@click.option("--core", "core", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Core table (CSV, one row per plug) with core porosity.")
@click.option("--core-depth", default="DEPTH", show_default=True,
              help="Depth column of --core (e.g. OrigDepth, the driller's depth).")
@click.option("--core-porosity", default=CORE_POROSITY, show_default=True, help="Core porosity column of --core.")
@click.option("--core-porosity-unit", type=click.Choice(["%", "v/v"]), default=None,
              help="Unit of --core-porosity; needed when the table has no units row.")
@click.option("--core-run", default="auto", show_default=True,
              help="Core (run) number column; 'auto' looks for CORE_NO, CORE, CORE_NUMBER, ...; 'none': one bulk "
                   "depth shift.")
@click.option("--match-depth", default="PHIF", show_default=True,
              help="Log curve correlated with core porosity.")
@click.option("--shift-window", default=2.0, show_default=True, type=click.FloatRange(min=0),
              help="Largest depth shift tried either way (depth unit).")
@click.option("--min-plugs", default=10, show_default=True, type=click.IntRange(3),
              help="Fewest plugs for a run to get an estimated shift (others keep 0).")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder to write.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an existing, non-empty --out folder.")
def core_match(**options):
    """Estimate each core run's depth shift (core porosity against a log porosity curve) and write it.

    The shift of a run is the one, within +-SHIFT_WINDOW, whose log values best correlate with the
    core porosity of its plugs (Pearson).  Writes shifts.json (read by ``train --core --shifts``),
    correlations.csv (correlation per candidate shift and run) and figures/depth_match.png,
    figures/core_on_log.png into --out.
    """
    request = PlugsMatchRequest.from_options(options)
    request.run()
    click.echo(f"Wrote {request.out}")
