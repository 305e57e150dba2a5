"""HTML text and tables for the report: escaping, number formatting, and one table per value shape.

Every value that reaches the page goes through :func:`esc`; numbers are shown with four
significant digits (:func:`fmt`).  :func:`render` picks a table shape from a value's shape, so a
new entry in ``metrics.json`` is shown without new code.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping

#: Column names, as a reader of the chapter writes them.
COLUMN_NAMES = {"rmse": "RMSE", "mae": "MAE", "mse": "MSE", "r2": "R²", "n": "n", "parameters": "parameters",
                "train_s": "fit time", "bleu": "BLEU"}
LOWER_IS_BETTER = ("rmse", "mae", "mse", "loss", "mape", "error", "nats")
HIGHER_IS_BETTER = ("r2", "r²", "bleu", "accuracy")
MAX_LIST_ROWS = 60


def esc(x) -> str:
    """``x`` as HTML text (quotes escaped too, so it is safe inside attributes)."""
    return html.escape(str(x), quote=True)


def is_scalar(v) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fmt(v) -> str:
    """A cell's text: floats to 4 significant digits, None as an em dash, long lists shortened, lists of
    names joined by commas, a mapping of plain values as ``key value, ...``."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10000 else str(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        if 1000 <= abs(v) < 1e6:               # depths (3351.6 m) keep their decimal, not just 4 digits
            return f"{v:.1f}".removesuffix(".0")
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        text = ", ".join(fmt(x) for x in v[:12]) + (f", … ({len(v)} values)" if len(v) > 12 else "")
        return f"[{text}]" if all(is_number(x) for x in v) else text     # numbers keep brackets: a range reads [lo, hi]
    if isinstance(v, Mapping):
        text = (", ".join(f"{k} {fmt(x)}" for k, x in v.items()) if all(is_scalar(x) for x in v.values())
                else json.dumps(v, default=str))                         # {"transformer": 10} reads "transformer 10"
        return text if len(text) <= 200 else text[:197] + "…"
    return str(v)


def cell(v, cls: str = "", text: str | None = None) -> str:
    """One ``<td>``; numbers are right-aligned (class ``num``)."""
    classes = " ".join(c for c in (cls, "num" if is_number(v) else "") if c)
    body = esc(fmt(v) if text is None else text)
    return f"<td class=\"{classes}\">{body}</td>" if classes else f"<td>{body}</td>"


def column_name(key: str, units: Mapping | None = None) -> str:
    """``rmse`` -> ``RMSE (mD)`` when ``units`` gives one."""
    name = COLUMN_NAMES.get(key, key)
    unit = (units or {}).get(key)
    if key == "train_s":
        unit = "s"
    return f"{name} ({unit})" if unit and unit != "dimensionless" else name


def raw_column_name(key: str, units: Mapping | None = None) -> str:
    """``rmse`` -> ``rmse (mD)``: the key as metrics.json spells it, with its unit."""
    unit = (units or {}).get(key)
    return f"{key} ({unit})" if unit else key


def direction(column: str):
    """"min" or "max" for a metric column, None for anything else."""
    c = column.lower()
    if any(c == k or c.startswith(k + "_") or c.endswith("_" + k) for k in HIGHER_IS_BETTER):
        return "max"
    if any(k in c for k in LOWER_IS_BETTER):
        return "min"
    return None


def kv_table(items, table_id: str = "") -> str:
    """``[(key, value)]`` as a two-column table ("" when empty)."""
    rows = "".join(f"<tr><th>{esc(k)}</th>{cell(v)}</tr>" for k, v in items)
    ident = f" id=\"{esc(table_id)}\"" if table_id else ""
    return f"<table{ident}>{rows}</table>" if rows else ""


def flatten(d: Mapping, prefix: str = "") -> list:
    """Nested dict -> ``[(dotted key, leaf)]``; lists stay one leaf, an empty dict is a leaf."""
    out = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            out.extend(flatten(v, key + "."))
        else:
            out.append((key, v))
    return out


def is_records(v) -> bool:
    """``{row: {column: scalar}}`` with at least one row."""
    return (isinstance(v, Mapping) and bool(v)
            and all(isinstance(r, Mapping) and r and all(is_scalar(x) for x in r.values()) for r in v.values()))


def is_columns(v) -> bool:
    """``{column: list}`` with lists of one length (e.g. forecasts per depth)."""
    if not isinstance(v, Mapping) or not v:
        return False
    lens = {len(x) for x in v.values() if isinstance(x, (list, tuple))}
    return len(lens) == 1 and all(isinstance(x, (list, tuple)) and all(is_scalar(y) for y in x) for x in v.values())


def is_rows(v) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(r, Mapping) for r in v)


def is_short_list(v) -> bool:
    return isinstance(v, (list, tuple)) and all(is_scalar(x) for x in v)


def records_table(records: Mapping, *, units=None, highlight=(), first_header="name", table_id="",
                  pretty: bool = False) -> str:
    """``{row: {column: scalar}}`` -> table; the best value of each metric column in bold.

    Headers are the keys with their units (``rmse (mD)``), or the field's names (``RMSE (mD)``)
    with ``pretty``.
    """
    columns = []
    for rec in records.values():
        columns.extend(c for c, v in rec.items() if c not in columns and is_scalar(v))
    best = {}
    for c in columns:
        vals = [r.get(c) for r in records.values()]
        vals = [v for v in vals if is_number(v) and math.isfinite(v)]
        way = direction(c)
        if way and len(vals) > 1:
            best[c] = min(vals) if way == "min" else max(vals)
    name_of = (lambda c: column_name(c, units)) if pretty else (lambda c: raw_column_name(c, units))
    head = f"<tr><th>{esc(first_header)}</th>" + "".join(f"<th>{esc(name_of(c))}</th>" for c in columns) + "</tr>"
    body = []
    for name, rec in records.items():
        cells = "".join(cell(rec.get(c), "best" if c in best and rec.get(c) == best[c] else "") for c in columns)
        cls = " class=\"model\"" if name in highlight else ""
        body.append(f"<tr{cls}><th>{esc(name)}</th>{cells}</tr>")
    ident = f" id=\"{esc(table_id)}\"" if table_id else ""
    return f"<table{ident}>{head}{''.join(body)}</table>"


def columns_table(cols: Mapping) -> str:
    names = list(cols)
    n = len(next(iter(cols.values())))
    head = "".join(f"<th>{esc(c)}</th>" for c in names)
    rows = "".join("<tr>" + "".join(cell(cols[c][i]) for c in names) + "</tr>" for i in range(min(n, MAX_LIST_ROWS)))
    more = f"<p>… {n - MAX_LIST_ROWS} more rows not shown.</p>" if n > MAX_LIST_ROWS else ""
    return f"<table><tr>{head}</tr>{rows}</table>{more}"


def rows_table(rows) -> str:
    cols = []
    for r in rows:
        cols.extend(c for c in r if c not in cols)
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(cell(r.get(c) if is_scalar(r.get(c)) else fmt(r.get(c))) for c in cols)
                   + "</tr>" for r in rows[:MAX_LIST_ROWS])
    more = f"<p>… {len(rows) - MAX_LIST_ROWS} more rows not shown.</p>" if len(rows) > MAX_LIST_ROWS else ""
    return f"<table><tr>{head}</tr>{body}</table>{more}"


def render(name, value, level: int = 3, units=None, titles=None) -> str:
    """A titled block for one metrics entry, the table shape chosen from the value's shape.

    ``titles`` maps the keys of nested entries to their headings (default: the key itself).
    """
    titles = titles or {}
    title = f"<h{level}>{esc(name)}</h{level}>"
    if is_records(value):
        return title + records_table(value, units=units)
    if is_columns(value):
        return title + columns_table(value)
    if is_rows(value):
        return title + rows_table(value)
    if isinstance(value, Mapping):
        flat = [(k, v) for k, v in value.items() if is_scalar(v) or is_short_list(v)]
        nested = [(k, v) for k, v in value.items() if not (is_scalar(v) or is_short_list(v))]
        return title + kv_table(flat) + "".join(render(titles.get(k, k), v, min(level + 1, 6), units, titles)
                                                for k, v in nested)
    if isinstance(value, str) and len(value) > 80:
        return title + f"<p>{esc(value)}</p>"
    return title + kv_table([(name, value)])
