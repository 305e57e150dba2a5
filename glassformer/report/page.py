"""The page: one self-contained ``report.html`` per run folder, its story first.

Order: title and introduction (what was run, in the chapter's words, the wells and intervals),
the headline (the model beside the baselines, one sentence and ``<table id="headline">``), the
figures with what to look for, the other results, the data, and the configuration last,
collapsed.  A folder of several runs (the real-wells demo) is one page with a section per run.

The page needs no network: figures are ``data:`` URIs, the attention map is inline SVG, the style
sheet is inline, and there are no scripts, fonts or external links.  All text is HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

from .._version import __version__
from ..errors import DataFileError, InputError
from ..io import atomic_write_text
from .figures import figures_section
from .headline import headline_of, sentence
from .intro import intro_paragraphs, multi_intro, title_of
from .run import RunFolder, is_run_folder, read_run
from .sections import attribution_html, configuration_section, data_section, headline_section, notes_html, \
    results_section
from .tables import column_name, esc, fmt

CSS = """
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;border-bottom:2px solid #444;padding-bottom:.2em}
h2{font-size:1.3em;margin-top:1.8em;border-bottom:1px solid #bbb}
h3{font-size:1.1em;margin-top:1.4em}
h4{font-size:1em;margin:1em 0 .3em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f0f0f0}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.model th,tr.model td{background:#e4f2e4}
tr.model th.run{background:#f0f0f0}
td.best{font-weight:bold}
table.headline{font-size:1em}
p.verdict{font-size:1.1em;margin:.8em 0}
p.small,p.hint{font-size:.85em;color:#555}
figure{margin:1.2em 0;padding:.6em;border:1px solid #ddd;background:#fafafa}
figure img{max-width:100%;height:auto;display:block;margin:0 auto;background:#fff}
figcaption{margin-top:.5em;font-size:.92em}
.svg-wrap{overflow-x:auto}
svg.heatmap rect:hover{stroke:#000;stroke-width:2}
p.svg-title{font-weight:bold;margin:.2em 0}
details{margin:.6em 0}
summary{cursor:pointer;font-weight:bold}
details.config{border:1px solid #ccc;padding:.4em .8em;background:#fcfcfc}
.note{background:#fff8e0;border-left:4px solid #e0b000;padding:.4em .8em}
.attribution{background:#eef3fb;border-left:4px solid #3a6fc0;padding:.4em .8em;font-size:.9em}
code{background:#f2f2f2;padding:0 .2em}
nav a{margin-right:1em}
section.run{border-top:3px solid #888;margin-top:2.5em}
"""


def _nav(links) -> str:
    return "<nav>" + "".join(f"<a href=\"#{a}\">{esc(t)}</a>" for a, t in links) + "</nav>"


def _byline(run: RunFolder) -> str:
    return (f"<p class=\"small\">Run folder <code>{esc(run.name)}</code>, report by glassformer "
            f"{esc(__version__)}. Everything is embedded in this file; no network is needed.</p>")


def _run_body(run: RunFolder, defaults: Mapping | None, prefix: str = "", level: int = 2) -> list:
    """Figures, other results, data and configuration of one run (headings at ``level``)."""
    h, body = f"h{level}", []
    figures, n = figures_section(run, prefix, level + 1)
    body.append(f"<{h} id=\"{prefix}figures\">Figures ({n})</{h}>{figures}")
    results = results_section(run)
    if results:
        body.append(f"<{h} id=\"{prefix}results\">More results</{h}>{results}")
    data = data_section(run)
    if data:
        body.append(f"<{h} id=\"{prefix}data\">Data</{h}>{data}")
    config = configuration_section(run, f"{prefix}config", defaults)
    body.append(f"<{h} id=\"{prefix}configuration\">Configuration</{h}>"
                + (config or "<p>No config.json in this run.</p>"))
    return body


def _single(run: RunFolder, defaults: Mapping | None) -> list:
    links = [("result", "Result"), ("figures", "Figures"), ("results", "More results"), ("data", "Data"),
             ("configuration", "Configuration")]
    body = [f"<h1>{esc(title_of(run))}</h1>", *intro_paragraphs(run), attribution_html(run), _byline(run),
            _nav(links), notes_html(run)]
    head = headline_section(run)
    body.append("<h2 id=\"result\">Result</h2>" + (head or _no_headline(run)))
    return body + _run_body(run, defaults)


def _no_headline(run: RunFolder) -> str:
    if run.metrics is None and not (run.path / "metrics.json").exists():
        return "<p>No metrics.json in this run.</p>"
    return "<p>This run's metrics.json has no model-beside-baselines result; its entries are listed below.</p>"


def _combined_headline(run: RunFolder) -> str:
    """One sentence per run and one table: every model of every run, by run."""
    found = [(child, headline_of(child.metrics)) for child in run.children]
    found = [(child, h) for child, h in found if h is not None]
    if not found:
        return "<p>No run in this folder has a model-beside-baselines result.</p>"
    cols = [c for c in ("rmse", "mae", "r2", "bleu", "loss", "n")
            if any(c in r for _, h in found for r in h.rows.values())]
    units, sentences, rows = found[0][1].units, [], []
    for child, h in found:
        sentences.append(sentence(h, title_of(child)))
        for i, (name, r) in enumerate(h.rows.items()):
            first = f"<th class=\"run\" rowspan=\"{len(h.rows)}\">{esc(title_of(child))}</th>" if i == 0 else ""
            cls = " class=\"model\"" if name in h.models else ""
            cells = "".join(f"<td class=\"num\">{esc(fmt(r.get(c)))}</td>" for c in cols)
            rows.append(f"<tr{cls}>{first}<th>{esc(name)}</th>{cells}</tr>")
    head = "<tr><th>run</th><th>model</th>" + "".join(f"<th>{esc(column_name(c, units))}</th>" for c in cols) + "</tr>"
    return (f"<table id=\"headline\" class=\"headline\">{head}{''.join(rows)}</table>"
            + "".join(f"<p class=\"verdict\">{esc(s)}</p>" for s in sentences))


def _multi(run: RunFolder, defaults: Mapping | None) -> list:
    links = [("result", "Result")] + [(f"run-{c.path.name}", title_of(c)) for c in run.children]
    body = [f"<h1>{esc(title_of(run))}</h1>", *multi_intro(run), attribution_html(run), _byline(run),
            _nav(links), notes_html(run), "<h2 id=\"result\">Result</h2>" + _combined_headline(run)]
    for child in run.children:
        prefix = f"{child.path.name}-"
        own = (f"<p class=\"small\">This run's folder <code>{esc(child.path.name)}/</code> also holds its own "
               f"page: <a href=\"{esc(quote(child.path.name))}/report.html\">{esc(child.path.name)}/report.html"
               f"</a>.</p>") if (child.path / "report.html").is_file() else ""
        section = [f"<h2>{esc(title_of(child))}</h2>", *intro_paragraphs(child, describe=False), own,
                   notes_html(child)]
        section.append(headline_section(child, f"headline-{child.path.name}"))
        section += _run_body(child, defaults, prefix, 3)
        body.append(f"<section class=\"run\" id=\"run-{esc(child.path.name)}\">{''.join(section)}</section>")
    own = results_section(run, skip=[c.path.name for c in run.children])
    if own:
        body.append(f"<h2 id=\"results\">More results of the whole folder</h2>{own}")
    return body


def build_report_html(run_dir, defaults: Mapping | None = None) -> str:
    """The report's HTML text for ``run_dir`` (see :func:`write_report`)."""
    run = read_run(run_dir)
    body = _multi(run, defaults) if run.children else _single(run, defaults)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title_of(run))}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(b for b in body if b) + "\n</body></html>\n")


def write_report(run_dir, defaults: Mapping | None = None) -> Path:
    """Write ``run_dir/report.html``: a self-contained page telling what one run (or folder of runs) found.

    Parameters
    ----------
    run_dir : str or Path
        A run folder: ``config.json``, ``metrics.json``, ``predictions.csv``, ``figures/*.png``
        (and ``figures/attention.json`` for the interactive attention map), optionally
        ``attribution.txt``; missing files are said to be missing and an unreadable JSON file is
        reported in the page instead of failing.  Or a folder whose sub-folders are run folders:
        one page, one section per run.
    defaults : dict, optional
        ``{config key: {parameter: default}}`` of the estimators whose parameters config.json holds,
        so the configuration lists first what differs from them
        (:func:`glassformer.models.run_config_defaults`); None lists every setting alike.

    Returns
    -------
    pathlib.Path
        The report file.

    Raises
    ------
    InputError
        If ``run_dir`` is not an existing folder.
    DataFileError
        If ``run_dir`` has none of config.json, metrics.json, figures/ and no sub-folder that is a
        run folder.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InputError(f"report: run folder {run_dir} does not exist or is not a folder")
    if not is_run_folder(run_dir) and not any(p.is_dir() and is_run_folder(p) for p in run_dir.iterdir()):
        raise DataFileError(f"report: {run_dir} is not a run folder (no config.json, metrics.json or figures/, "
                            "and no sub-folder that is a run folder)")
    path = run_dir / "report.html"
    atomic_write_text(path, build_report_html(run_dir, defaults))
    return path
