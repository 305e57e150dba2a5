"""What a run folder holds, read once for the report: config.json, metrics.json, figures, sub-runs.

A run folder (see :mod:`glassformer.demos.common`)::

    config.json  metrics.json  predictions.csv  figures/*.png  [figures/attention.json]  [attribution.txt]

A folder of several runs (the real-wells demo: one sub-folder per experiment) holds its own
``metrics.json`` and one run folder per sub-folder; :func:`read_run` reads those too, so the
report can give each its section.  Nothing here fails on a missing or unreadable file: the
problem becomes a note shown in the page.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: The files that make a folder a run folder.
RUN_FILES = ("config.json", "metrics.json", "figures")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class RunFolder:
    """The contents of one run folder (and its sub-runs), as read from disk.

    Attributes
    ----------
    path : Path
    config, metrics : dict or None
        The parsed JSON objects (None when absent or unreadable).
    notes : list of str
        Problems met while reading, shown at the top of the page.
    children : list of RunFolder
        Sub-folders that are run folders themselves.
    """

    path: Path
    config: dict | None = None
    metrics: dict | None = None
    notes: list = field(default_factory=list)
    children: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.resolve().name

    def get(self, key: str, default=None):
        """``key`` from metrics.json, else from config.json."""
        for src in (self.metrics, self.config):
            if isinstance(src, Mapping) and key in src:
                return src[key]
        return default

    @property
    def demo(self) -> str | None:
        """The demonstration's name (``config["demo"]``), also read from the first sub-run."""
        name = self.get("demo")
        if name is None and self.children:
            return self.children[0].demo
        return name if isinstance(name, str) else None

    def figure_paths(self) -> list:
        """Every ``*.png`` under ``figures/`` (any depth), unordered."""
        figdir = self.path / "figures"
        return [p for p in figdir.rglob("*") if p.is_file() and p.suffix.lower() == ".png"] if figdir.is_dir() else []

    def figure_data(self, stem: str):
        """The JSON beside ``figures/<stem>.png`` (e.g. attention.json: the matrix and its depths), or None."""
        data = read_json(self.path / "figures" / f"{stem}.json", [])
        return data if isinstance(data, Mapping) else None


def read_json(path: Path, notes: list):
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


def is_run_folder(path: Path) -> bool:
    return any((path / n).exists() for n in RUN_FILES)


def read_run(path, *, depth: int = 1) -> RunFolder:
    """Read ``path`` and (``depth`` levels of) its sub-folders that are run folders, sorted by name."""
    path = Path(path)
    run = RunFolder(path)
    run.config = read_json(path / "config.json", run.notes)
    run.metrics = read_json(path / "metrics.json", run.notes)
    if depth > 0:
        subs = sorted((p for p in path.iterdir() if p.is_dir() and p.name != "figures" and is_run_folder(p)),
                      key=lambda p: p.name)
        run.children = [read_run(p, depth=depth - 1) for p in subs]
        _order_as_metrics(run)
    return run


def _order_as_metrics(run: RunFolder) -> None:
    """Sub-runs in the order the parent's metrics.json names them (the order they ran), others after."""
    keys = list(run.metrics or {})
    rank = {name: i for i, name in enumerate(keys)}
    run.children.sort(key=lambda c: (rank.get(c.path.name, len(keys)), c.path.name))


def attributions(run: RunFolder) -> list:
    """Data attributions from config.json, metrics.json and attribution.txt, each once."""
    found = []
    data = run.config.get("data") if isinstance(run.config, Mapping) else None
    for src in (run.config, run.metrics, data):
        if isinstance(src, Mapping) and isinstance(src.get("attribution"), str):
            found.append(src["attribution"].strip())
    txt = run.path / "attribution.txt"
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


def predictions_summary(path: Path) -> list:
    """``[(fact, value)]`` about predictions.csv: rows, columns, depth range, rows per well/interval/split."""
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
