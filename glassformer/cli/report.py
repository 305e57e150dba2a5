"""``glassformer report``: the self-contained report.html of a run folder."""

from __future__ import annotations

from pathlib import Path

import click

from ..models import run_config_defaults
from ..report import write_report


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, dir_okay=True, path_type=Path))
def report(run_dir: Path) -> None:
    """Write RUN_DIR/report.html: the result beside the baselines, the figures, the configuration, in one file."""
    path = write_report(run_dir, run_config_defaults())
    click.echo(f"Wrote {path}")
