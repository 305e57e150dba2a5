"""One self-contained ``report.html`` per run folder (``glassformer report RUN_DIR``), its story first.

=============  ===================================================================================
module         what it holds
=============  ===================================================================================
``page``       the page: skeleton, style sheet, :func:`write_report`, one page for a folder of runs
``intro``      title and introduction (the chapter's demonstrations by name, wells and intervals)
``headline``   the model beside its baselines: one sentence, one table
``figures``    figures in the order of the story, with what to look for in each
``sections``   other results, data, configuration (collapsed, non-defaults first)
``svg``        inline SVG heat maps whose cells show query, key and weight on hover
``tables``     escaping, number formatting, tables chosen by the shape of a value
``run``        reading a run folder (config.json, metrics.json, figures, sub-runs)
=============  ===================================================================================
"""

from __future__ import annotations

from pathlib import Path

import click

from .figures import FIGURE_GROUPS, FIGURE_GUIDES, FIGURE_ORDER, GENERIC_GUIDE, figure_guide
from .page import build_report_html, write_report

__all__ = ["FIGURE_GROUPS", "FIGURE_GUIDES", "FIGURE_ORDER", "GENERIC_GUIDE", "build_report_html", "figure_guide",
           "report_command", "write_report"]


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, dir_okay=True, path_type=Path))
def report_command(run_dir: Path) -> None:
    """Write RUN_DIR/report.html: the result beside the baselines, the figures, the configuration, in one file."""
    path = write_report(run_dir)
    click.echo(f"Wrote {path}")
