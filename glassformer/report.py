"""One self-contained ``report.html`` per run folder (``glassformer report RUN_DIR``).

The report needs no network: every PNG under ``RUN_DIR/figures/`` is embedded as a base64
``data:`` URI, the style sheet is inline, and there are no scripts, fonts or external links.
Its sections: title, data attribution (when real data were used), configuration
(``config.json``), data summary, metrics (``metrics.json``: the model beside its baselines),
and every figure with a one-sentence reading guide (:data:`FIGURE_GUIDES`).  All text is
HTML-escaped; the file is written atomically.

A run folder (see :mod:`glassformer.runs`)::

    config.json  metrics.json  predictions.csv  figures/*.png  [attribution.txt]

A parent folder of several runs (e.g. ``glassformer_runs/real-wells``) also lists the sub-folders
that hold their own ``report.html``, with relative links (``<a href="sub/report.html">``): local
files beside this one, never a network address.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import math
from collections.abc import Mapping
from pathlib import Path

import click

from .errors import DataFileError, InputError

__all__ = ["FIGURE_GUIDES", "FIGURE_ORDER", "figure_guide", "report_command", "write_report"]

#: What to look for in each figure, by file stem (``figures/<stem>.png``).  A stem that starts
#: with a known key followed by ``_`` or ``-`` (``attention_layer1``) gets that key's guide.
FIGURE_GUIDES = {
    "tracks": "Porosity and permeability against depth (deeper is lower); the shaded bands are the "
              "training and forecast intervals: check that the forecast interval looks like the training one.",
    "crossplot": "Each point is one depth sample: the tighter and more monotonic the cloud, the more a "
                 "porosity-only transform can explain, and the less a sequence model has to add.",
    "crossplot_normalised": "The same cross-plot after min-max scaling on the training interval: the model "
                            "sees these 0-1 values, and forecast points outside 0-1 are extrapolation.",
    "positional_encoding": "Each line is one component of P: fast components tell neighbouring depths apart, "
                           "slow ones give the coarse position; P keeps changing into the forecast interval.",
    "embeddings": "The learned input embedding E turns each porosity value into a d_model vector; components "
                  "that move together with porosity carry the input signal.",
    "combined_embeddings": "Z = E + P: where P is much larger than E, position dominates what attention sees.",
    "qkv": "Queries, keys and values are linear maps of Z; attention compares Q at one depth with K at all "
           "depths, so Q and K that vary with depth make attention depth-selective.",
    "attention": "Row = query depth, column = key depth, colour = weight (each row sums to 1): a bright "
                 "off-diagonal band means each depth reads a fixed neighbour; a flat map means near-uniform mixing.",
    "attention_heads": "One map per layer and head on the same colour scale: heads that differ have "
                       "specialised; identical flat maps suggest attention is not being used.",
    "cross_attention": "Row = target token, column = source token: a clear near-diagonal path is the model's "
                       "learned alignment between the two sentences.",
    "value_vs_output": "Dashed = value vectors V, solid = attention output U at the same depths: where U is "
                       "smoother or shifted relative to V, attention is mixing information across depth.",
    "stages": "Follow each column down: the residual sums (T1, T2) keep the input visible, LayerNorm (R, H) "
              "re-centres every depth to zero mean and unit spread, and F is what the feed-forward layer adds.",
    "loss": "Training loss per epoch (log scale): a steady fall that flattens is healthy; a validation curve "
            "that turns upward while training keeps falling is overfitting.",
    "prediction": "Observed (solid) and predicted (dashed) against depth: look for bias and for how far "
                  "the prediction follows thin beds, especially below the train/forecast line.",
    "prediction_vs_depth": "Observed log and every model's prediction against depth: compare the transformer "
                           "with the baselines below the train/forecast line, where the model has not seen data.",
    "prediction_panels": "Nine sequences, observed against predicted: consistent errors in one part of the "
                         "window (top or bottom) point to edge effects of the window.",
    "comparison": "All models against the observed log: a model earns its complexity only where it beats the "
                  "porosity-permeability transform and the training mean.",
    "ablation": "Test error with the learned attention, uniform attention and no mixing (identity): if the "
                "bars are similar, the model does not rely on looking at other depths.",
}

#: Order of figures in the report (the seed's narrative); unknown stems follow alphabetically.
FIGURE_ORDER = ("tracks", "crossplot", "crossplot_normalised", "positional_encoding", "embeddings",
                "combined_embeddings", "qkv", "attention", "attention_heads", "cross_attention",
                "value_vs_output", "stages", "loss", "prediction", "prediction_vs_depth", "prediction_panels",
                "comparison", "ablation")

GENERIC_GUIDE = "A figure written by this run; axes are labelled with their units."

#: Keys of config.json / metrics.json shown under "Data" rather than "Configuration".
DATA_KEYS = ("data", "data_summary", "dataset", "wells", "train_wells", "validation_wells", "test_wells",
             "intervals", "split", "positions")

_LOWER_IS_BETTER = ("rmse", "mae", "mse", "loss", "mape", "error")
_HIGHER_IS_BETTER = ("r2", "r²", "bleu", "accuracy")
_MAX_LIST_ROWS = 60

_CSS = """
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;border-bottom:2px solid #444;padding-bottom:.2em}
h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #bbb}
h3{font-size:1.05em;margin-top:1.2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f0f0f0}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.model td{background:#eef6ee}
td.best{font-weight:bold}
figure{margin:1.2em 0;padding:.6em;border:1px solid #ddd;background:#fafafa}
figure img{max-width:100%;height:auto;display:block;margin:0 auto;background:#fff}
figcaption{margin-top:.5em;font-size:.92em}
.note{background:#fff8e0;border-left:4px solid #e0b000;padding:.4em .8em}
.attribution{background:#eef3fb;border-left:4px solid #3a6fc0;padding:.4em .8em}
code{background:#f2f2f2;padding:0 .2em}
nav a{margin-right:1em}
"""


# ------------------------------------------------------------------ formatting
def _esc(x) -> str:
    return html.escape(str(x), quote=True)


def _is_scalar(v) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _fmt(v) -> str:
    """A cell's text: floats to 4 significant digits, None as an em dash."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10000 else str(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        text = ", ".join(_fmt(x) for x in v[:12]) + (f", … ({len(v)} values)" if len(v) > 12 else "")
        return f"[{text}]"
    if isinstance(v, Mapping):
        text = json.dumps(v, default=str)
        return text if len(text) <= 200 else text[:197] + "…"
    return str(v)


def _cell(v, cls=""):
    num = isinstance(v, (int, float)) and not isinstance(v, bool)
    classes = " ".join(c for c in (cls, "num" if num else "") if c)
    return f"<td class=\"{classes}\">{_esc(_fmt(v))}</td>" if classes else f"<td>{_esc(_fmt(v))}</td>"


def _kv_table(items) -> str:
    rows = "".join(f"<tr><th>{_esc(k)}</th>{_cell(v)}</tr>" for k, v in items)
    return f"<table>{rows}</table>" if rows else ""


def _flatten(d: Mapping, prefix="") -> list:
    """Nested dict -> [(dotted key, leaf)]; lists of scalars stay one leaf."""
    out = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            out.extend(_flatten(v, key + "."))
        else:
            out.append((key, v))
    return out


def _direction(column: str):
    c = column.lower()
    if any(c == k or c.startswith(k + "_") or c.endswith("_" + k) for k in _HIGHER_IS_BETTER):
        return "max"
    if any(k in c for k in _LOWER_IS_BETTER):
        return "min"
    return None


def _records_table(records: Mapping, *, units=None, highlight=None, first_header="name") -> str:
    """``{row: {column: scalar}}`` -> table, the best value per metric column in bold."""
    columns = []
    for rec in records.values():
        for c, v in rec.items():
            if c not in columns and _is_scalar(v):
                columns.append(c)
    best = {}
    for c in columns:
        how = _direction(str(c))
        vals = [r.get(c) for r in records.values()]
        nums = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]
        if how and len(nums) > 1:
            best[c] = min(nums) if how == "min" else max(nums)
    units = units or {}
    head = "".join(f"<th>{_esc(c)}" + (f" ({_esc(units[c])})" if c in units else "") + "</th>" for c in columns)
    body = []
    for name, rec in records.items():
        cls = ' class="model"' if highlight is not None and name == highlight else ""
        cells = "".join(_cell(rec.get(c), "best" if c in best and rec.get(c) == best[c] else "") for c in columns)
        body.append(f"<tr{cls}><th>{_esc(name)}</th>{cells}</tr>")
    return f"<table><tr><th>{_esc(first_header)}</th>{head}</tr>{''.join(body)}</table>"


def _is_records(v) -> bool:
    return (isinstance(v, Mapping) and len(v) > 0
            and all(isinstance(r, Mapping) and r and all(_is_scalar(x) for x in r.values()) for r in v.values()))


def _is_columns(v) -> bool:
    """``{column: list}`` with lists of one length (e.g. forecasts per depth)."""
    if not isinstance(v, Mapping) or not v:
        return False
    lens = {len(x) for x in v.values() if isinstance(x, (list, tuple))}
    return len(lens) == 1 and all(isinstance(x, (list, tuple)) and all(_is_scalar(y) for y in x) for x in v.values())


def _list_of_records(v) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(r, Mapping) for r in v)


def _columns_table(cols: Mapping) -> str:
    names = list(cols)
    n = len(next(iter(cols.values())))
    head = "".join(f"<th>{_esc(c)}</th>" for c in names)
    rows = "".join("<tr>" + "".join(_cell(cols[c][i]) for c in names) + "</tr>" for i in range(min(n, _MAX_LIST_ROWS)))
    more = f"<p>… {n - _MAX_LIST_ROWS} more rows not shown.</p>" if n > _MAX_LIST_ROWS else ""
    return f"<table><tr>{head}</tr>{rows}</table>{more}"


def _rows_table(rows) -> str:
    cols = []
    for r in rows:
        cols.extend(c for c in r if c not in cols)
    head = "".join(f"<th>{_esc(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(_cell(r.get(c) if _is_scalar(r.get(c)) else _fmt(r.get(c))) for c in cols)
                   + "</tr>" for r in rows[:_MAX_LIST_ROWS])
    return f"<table><tr>{head}</tr>{body}</table>"


def _render(name, value, level=3, units=None) -> str:
    """A titled block for one metrics/data entry, choosing the table shape from the value's shape."""
    title = f"<h{level}>{_esc(name)}</h{level}>"
    if _is_records(value):
        return title + _records_table(value, units=units)
    if _is_columns(value):
        return title + _columns_table(value)
    if _list_of_records(value):
        return title + _rows_table(value)
    if isinstance(value, Mapping):
        scalars = [(k, v) for k, v in value.items() if _is_scalar(v) or _is_short_list(v)]
        nested = [(k, v) for k, v in value.items() if not (_is_scalar(v) or _is_short_list(v))]
        inner = _kv_table(scalars) + "".join(_render(k, v, min(level + 1, 6), units) for k, v in nested)
        return title + inner
    if isinstance(value, str) and len(value) > 80:
        return title + f"<p>{_esc(value)}</p>"
    return title + _kv_table([(name, value)])


def _is_short_list(v) -> bool:
    return isinstance(v, (list, tuple)) and all(_is_scalar(x) for x in v)


# ------------------------------------------------------------------ sections
def _read_json(path: Path, notes: list):
    """The JSON object in ``path`` (None if absent or unreadable); problems go to ``notes``."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        notes.append(f"{path.name} could not be read: {exc}")
        return None
    if not isinstance(data, Mapping):
        notes.append(f"{path.name} holds a {type(data).__name__}, not an object; shown as text.")
        return {"value": data}
    return data


def _missing_note(run_dir: Path, name: str, what: str) -> str:
    """The "No <name>" paragraph, or "" when the file exists (then a note already says why it is not shown)."""
    return "" if (run_dir / name).exists() else f"<p>No {what} in this run.</p>"


def _sub_runs(run_dir: Path) -> list:
    """``[(folder name, title)]`` of the immediate sub-folders that hold their own report.html, by name."""
    found = []
    for sub in sorted((p for p in run_dir.iterdir() if p.is_dir()), key=lambda p: p.name):
        if not (sub / "report.html").is_file():
            continue
        title = None
        for name in ("metrics.json", "config.json"):
            data = _read_json(sub / name, [])
            if isinstance(data, Mapping) and isinstance(data.get("title"), str) and data["title"]:
                title = data["title"]
                break
        found.append((sub.name, title or sub.name))
    return found


def _sub_runs_section(subs: list) -> str:
    from urllib.parse import quote

    items = "".join(f"<li><a href=\"{_esc(quote(name))}/report.html\">{_esc(title)}</a> "
                    f"(<code>{_esc(name)}/report.html</code>)</li>" for name, title in subs)
    return (f"<h2 id=\"sub-runs\">Sub-runs ({len(subs)})</h2><p>Each sub-folder holds its own run and report "
            f"(relative links: keep the folders together).</p><ul>{items}</ul>")


def _metrics_section(metrics: Mapping) -> str:
    units = metrics.get("units") if isinstance(metrics.get("units"), Mapping) else None
    parts = []
    model, baselines = metrics.get("model"), metrics.get("baselines")
    used = set()
    if isinstance(model, Mapping) and all(_is_scalar(v) for v in model.values()):
        table = {"model": dict(model)}
        if _is_records(baselines):
            table.update({str(k): dict(v) for k, v in baselines.items()})
            used.add("baselines")
        used.add("model")
        parts.append("<h3>Model beside baselines</h3>"
                     + _records_table(table, units=units, highlight="model", first_header="model")
                     + "<p>Best value per metric in bold.</p>")
    elif _is_records(baselines):
        parts.append(_render("baselines", baselines, units=units))
        used.add("baselines")
    skip = used | {"attribution", "title", "units"}
    scalars = [(k, v) for k, v in metrics.items()
               if k not in skip and _is_scalar(v) and not (isinstance(v, str) and len(v) > 80)]
    if scalars:
        parts.append(_kv_table(scalars))
    for k, v in metrics.items():
        if k in used or k in ("attribution", "title") or k in DATA_KEYS:
            continue
        if isinstance(v, str) and len(v) > 80:
            parts.append(f"<p class=\"note\"><b>{_esc(k)}:</b> {_esc(v)}</p>")
        elif not _is_scalar(v):
            parts.append(_render(k, v, units=units if k != "units" else None))
    return "".join(parts)


def _predictions_summary(path: Path) -> list:
    """A few facts about predictions.csv: rows, columns, depth range, wells, intervals."""
    if not path.is_file():
        return []
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            rows = list(reader)
            columns = reader.fieldnames or []
    except (OSError, csv.Error, UnicodeDecodeError) as exc:
        return [("predictions.csv", f"could not be read: {exc}")]
    facts = [("predictions.csv rows", len(rows)), ("predictions.csv columns", ", ".join(columns))]
    depth_col = next((c for c in columns if c.lower().startswith("depth")), None)
    if depth_col and rows:
        vals = []
        for r in rows:
            try:
                vals.append(float(r[depth_col]))
            except (TypeError, ValueError):
                pass
        if vals:
            facts.append((f"depth range ({depth_col})", f"{min(vals):g} – {max(vals):g}"))
    for col in ("well", "interval", "split"):
        if col in columns:
            counts = {}
            for r in rows:
                counts[r[col]] = counts.get(r[col], 0) + 1
            facts.append((f"rows per {col}", ", ".join(f"{k}: {v}" for k, v in counts.items())))
    return facts


def _attributions(run_dir: Path, config, metrics) -> list:
    found = []
    for src in (config, metrics, (config or {}).get("data") if isinstance(config, Mapping) else None):
        if isinstance(src, Mapping) and isinstance(src.get("attribution"), str):
            found.append(src["attribution"].strip())
    txt = run_dir / "attribution.txt"
    if txt.is_file():
        try:
            found.append(txt.read_text(encoding="utf-8").strip())
        except (OSError, UnicodeDecodeError):
            pass
    unique = []
    for a in found:
        if a and a not in unique:
            unique.append(a)
    return unique


def figure_guide(stem: str) -> str:
    """The reading guide for a figure file stem (exact key, else the longest key it starts with)."""
    if stem in FIGURE_GUIDES:
        return FIGURE_GUIDES[stem]
    matches = [k for k in FIGURE_GUIDES if stem.startswith(k + "_") or stem.startswith(k + "-")]
    return FIGURE_GUIDES[max(matches, key=len)] if matches else GENERIC_GUIDE


def _figure_sort_key(path: Path, root: Path):
    stem = path.stem
    base = next((k for k in sorted(FIGURE_ORDER, key=len, reverse=True)
                 if stem == k or stem.startswith(k + "_") or stem.startswith(k + "-")), None)
    rank = FIGURE_ORDER.index(base) if base is not None else len(FIGURE_ORDER)
    return (rank, str(path.relative_to(root)))


def _figures_section(run_dir: Path) -> tuple[str, int]:
    figdir = run_dir / "figures"
    if not figdir.is_dir():
        return "<p>No figures folder in this run.</p>", 0
    paths = sorted((p for p in figdir.rglob("*") if p.is_file() and p.suffix.lower() == ".png"),
                   key=lambda p: _figure_sort_key(p, figdir))
    blocks = []
    for p in paths:
        data = p.read_bytes()
        if not data.startswith(b"\x89PNG\r\n\x1a\n"):
            blocks.append(f"<p class=\"note\">{_esc(p.name)} is not a PNG file; skipped.</p>")
            continue
        uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
        name = str(p.relative_to(figdir))
        blocks.append(f"<figure id=\"fig-{_esc(p.stem)}\"><img src=\"{uri}\" alt=\"{_esc(name)}\">"
                      f"<figcaption><b>{_esc(name)}</b> — {_esc(figure_guide(p.stem))}</figcaption></figure>")
    if not blocks:
        return "<p>No PNG figures in figures/.</p>", 0
    return "".join(blocks), len(paths)


# ------------------------------------------------------------------ public
def build_report_html(run_dir) -> str:
    """The report's HTML text for ``run_dir`` (see :func:`write_report`)."""
    from . import __version__

    run_dir = Path(run_dir)
    notes: list = []
    config = _read_json(run_dir / "config.json", notes)
    metrics = _read_json(run_dir / "metrics.json", notes)
    subs = _sub_runs(run_dir)
    parent = bool(subs)         # a folder of runs: say nothing about what only a single run has
    title = next((src.get("title") for src in (metrics, config)
                  if isinstance(src, Mapping) and isinstance(src.get("title"), str) and src.get("title")), None)
    title = title or f"Run {run_dir.resolve().name}"

    links = [("sub-runs", "Sub-runs")] if parent else []
    links += [("configuration", "Configuration"), ("data", "Data"), ("metrics", "Metrics"), ("figures", "Figures")]
    embedded = ("Figures are embedded in this file; the sub-run reports are linked relatively." if parent
                else "Everything is embedded in this file; no network is needed.")
    body = [f"<h1>{_esc(title)}</h1>",
            f"<p>Run folder <code>{_esc(run_dir.resolve().name)}</code>, report by glassformer "
            f"{_esc(__version__)}. {embedded}</p>",
            "<nav>" + "".join(f"<a href=\"#{a}\">{t}</a>" for a, t in links) + "</nav>"]
    body += [f"<p class=\"note\">{_esc(n)}</p>" for n in notes]
    if parent:
        body.append(_sub_runs_section(subs))

    attributions = _attributions(run_dir, config, metrics)
    if attributions:
        body.append("<h2 id=\"attribution\">Data attribution</h2>"
                    + "".join(f"<p class=\"attribution\">{_esc(a)}</p>" for a in attributions))

    body.append("<h2 id=\"configuration\">Configuration</h2>")
    if config:
        shown = {k: v for k, v in config.items() if k not in DATA_KEYS and k not in ("attribution", "title")}
        body.append(_kv_table(_flatten(shown)) or "<p>(empty)</p>")
    elif not parent:
        body.append(_missing_note(run_dir, "config.json", "config.json"))

    body.append("<h2 id=\"data\">Data summary</h2>")
    data_parts, facts = [], []
    for src in (config, metrics):
        if isinstance(src, Mapping):
            for k in DATA_KEYS:
                if k not in src:
                    continue
                if _is_scalar(src[k]) or _is_short_list(src[k]):
                    facts.append((k, src[k]))
                else:
                    data_parts.append(_render(k, src[k]))
    facts += _predictions_summary(run_dir / "predictions.csv")
    if facts:
        data_parts.insert(0, _kv_table(facts))
    body.append("".join(data_parts) or "<p>No data summary recorded in this run.</p>")

    body.append("<h2 id=\"metrics\">Metrics</h2>")
    if metrics:
        body.append(_metrics_section(metrics))
    elif not parent:
        body.append(_missing_note(run_dir, "metrics.json", "metrics.json"))

    figures, n_fig = _figures_section(run_dir)
    if parent and not (run_dir / "figures").is_dir():
        figures = "<p>This folder has no figures of its own; see the sub-run reports.</p>"
    body.append(f"<h2 id=\"figures\">Figures ({n_fig})</h2>" + figures)

    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def write_report(run_dir) -> Path:
    """Write ``run_dir/report.html``: a self-contained page describing one run.

    Parameters
    ----------
    run_dir : str or Path
        A run folder: ``config.json``, ``metrics.json``, ``predictions.csv``, ``figures/*.png``,
        optionally ``attribution.txt`` (at least one of config.json, metrics.json and figures/;
        missing ones are said to be missing, and an unreadable JSON file is reported in the page
        instead of failing), or a parent folder whose sub-folders hold their own ``report.html``
        (listed with relative links).

    Returns
    -------
    pathlib.Path
        The report file.

    Raises
    ------
    InputError
        If ``run_dir`` is not an existing folder.
    DataFileError
        If ``run_dir`` has none of config.json, metrics.json, figures/ and no sub-run report: it is
        not a run folder.
    """
    from .io import atomic_write_text

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InputError(f"report: run folder {run_dir} does not exist or is not a folder")
    if not any((run_dir / n).exists() for n in ("config.json", "metrics.json", "figures")) and not _sub_runs(run_dir):
        raise DataFileError(f"report: {run_dir} is not a run folder (no config.json, metrics.json or figures/, "
                            "and no sub-folder with a report.html)")
    path = run_dir / "report.html"
    atomic_write_text(path, build_report_html(run_dir))
    return path


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, dir_okay=True, path_type=Path))
def report_command(run_dir: Path) -> None:
    """Write RUN_DIR/report.html: configuration, metrics beside baselines, and every figure, in one file."""
    path = write_report(run_dir)
    click.echo(f"Wrote {path}")
