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
``display``    what Jupyter shows for a trace and an estimator (small HTML)
``tables``     escaping, number formatting, tables chosen by the shape of a value
``run``        reading a run folder (config.json, metrics.json, figures, sub-runs)
=============  ===================================================================================
"""

from __future__ import annotations

from .display import estimator_html, trace_html
from .figures import FIGURE_GROUPS, FIGURE_GUIDES, FIGURE_ORDER, GENERIC_GUIDE, figure_guide
from .page import build_report_html, write_report

__all__ = ["FIGURE_GROUPS", "FIGURE_GUIDES", "FIGURE_ORDER", "GENERIC_GUIDE", "build_report_html", "estimator_html",
           "figure_guide", "trace_html", "write_report"]
