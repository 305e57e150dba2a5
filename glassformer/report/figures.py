"""The figures of a run, in the order of its story, each with a caption that says what to look for.

Figures are grouped (:data:`FIGURE_GROUPS`): what the model predicts first, then the data, then
the look inside the model in the chapter's order (Pyrcz 2024, "Transformers": P, E, Z, Q/K/V,
attention, U, the residual and normalisation stages), then training.  Each PNG is embedded as a
``data:`` URI.  A figure whose data were saved beside it (``figures/attention.json``: the matrix
and its depths) is drawn as an inline SVG heat map whose cells show query depth, key depth and
weight on hover; the static PNG follows, collapsed.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .run import PNG_MAGIC, RunFolder
from .svg import heatmap_svg
from .tables import esc, fmt

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
    "blind_well": "A well that no model saw in training, observed log and each model's prediction against depth: "
                  "look for where the models part from the log, and whether the tree ensembles and the networks "
                  "fail in the same beds.",
    "blind_well_tracks": "One held-out well from top to base: its input logs, then the observed log (black) against "
                         "one model per track (its RMSE over the well in the title), and the residuals (predicted "
                         "minus observed) of the best models; shaded: the zooms. A model earns its place where it "
                         "follows the beds, not only the trend.",
    "blind_well_zoom": "A zoom where the observed log varies most (stretches on a constant floor are never chosen): "
                       "do the models follow single beds, or only the average?",
    "blind_well_crossplot": "Predicted against observed, one panel per model on the same axes (line: 1 to 1, colour: "
                            "depth): a cloud flatter than the line pulls towards the mean; a cluster off the line is "
                            "a set of beds the model misreads.",
    "per_well": "Each group of bars is one well the models never saw in training (the last group: the mean over "
                "folds, bar = sd across folds): a model earns its place where it is short on every well, not on "
                "average only.",
    "ablation": "Test error with the learned attention, uniform attention and no mixing (identity): if the "
                "bars are similar, the model does not rely on looking at other depths.",
    "wavelength_selection": "Validation error of each candidate set of positional wavelengths (mean over seeds, "
                            "bar = sd): the chosen set is the lowest; sets within one bar of it did as well.",
    "interval_vs_depth": "P50 (line) inside the P10-P90 band against depth, with the observed values: held-out "
                         "values outside the band are the misses that the coverage counts; a band that is wide "
                         "everywhere says little, one that widens where the data are unlike the training data is "
                         "doing its job.",
    "coverage": "Share of held-out values inside each central interval against its nominal coverage: on the "
                "diagonal the intervals mean what they say; below it they are too narrow (overconfident), above it "
                "too wide. The conformal scale is fitted on the validation data only.",
    "depth_match": "Correlation of core porosity with the log porosity against the depth shift tried, one line per "
                   "core: the dot is the shift kept, the bar the shifts as good within one standard error, a cross "
                   "a published shift.",
    "core_on_log": "Core porosity (dots) over the log porosity (line), as measured and after the depth shifts: "
                   "after matching, the plugs should follow the log's beds.",
}

GENERIC_GUIDE = "A figure written by this run; axes are labelled with their units."

#: The story of a run's figures: (group title, stems in order).  Unknown stems follow, by name.
FIGURE_GROUPS = (
    ("What the model predicts", ("per_well", "blind_well", "prediction_vs_depth", "interval_vs_depth", "prediction", "comparison",
                                 "prediction_panels", "ablation", "wavelength_selection")),
    ("How sure it is", ("coverage",)),
    ("Core depths matched to the log", ("depth_match", "core_on_log")),
    ("The data", ("tracks", "crossplot", "crossplot_normalised")),
    ("Inside the model, step by step as in the chapter", (
        "positional_encoding", "embeddings", "combined_embeddings", "qkv", "attention", "attention_heads",
        "cross_attention", "value_vs_output", "stages")),
    ("Training", ("loss",)),
)
OTHER_GROUP = "Other figures"

#: Every known stem in page order.
FIGURE_ORDER = tuple(stem for _, stems in FIGURE_GROUPS for stem in stems)


def _base(stem: str, keys) -> str | None:
    """The longest key that ``stem`` is, or starts with followed by ``_`` or ``-``."""
    matches = [k for k in keys if stem == k or stem.startswith(k + "_") or stem.startswith(k + "-")]
    return max(matches, key=len) if matches else None


#: The parts of a held-out well's figures (``blind_well_<well>_<part>``), whose guide the well's name must not hide.
BLIND_WELL_PARTS = ((r"_tracks$", "blind_well_tracks"), (r"_crossplot$", "blind_well_crossplot"),
                    (r"_zoom_\d+$", "blind_well_zoom"))


def figure_guide(stem: str) -> str:
    """The reading guide for a figure file stem (exact key, else the longest key it starts with; a held-out
    well's tracks, zooms and cross-plot by their part)."""
    if stem.startswith("blind_well_"):
        for part, key in BLIND_WELL_PARTS:
            if re.search(part, stem):
                return FIGURE_GUIDES[key]
    base = _base(stem, FIGURE_GUIDES)
    return FIGURE_GUIDES[base] if base else GENERIC_GUIDE


def _attention_fact(metrics: Mapping) -> str:
    a = metrics.get("attention")
    if isinstance(a, Mapping) and "superdiagonal_mean" in a and "elsewhere_mean" in a:
        return (f"In this run the weight on the next depth averages {fmt(a['superdiagonal_mean'])}, against "
                f"{fmt(a['elsewhere_mean'])} elsewhere.")
    return ""


def _ablation_fact(metrics: Mapping) -> str:
    a = metrics.get("ablation_mse")
    if isinstance(a, Mapping) and a:
        return "In this run (MSE): " + ", ".join(f"{k} {fmt(v)}" for k, v in a.items()) + "."
    return ""


#: One sentence of this run's numbers added to a caption, by figure stem (from metrics.json).
FIGURE_FACTS = {"attention": _attention_fact, "ablation": _ablation_fact}


def _sort_key(path: Path, root: Path):
    base = _base(path.stem, FIGURE_ORDER)
    return (FIGURE_ORDER.index(base) if base else len(FIGURE_ORDER), str(path.relative_to(root)))


def _group_of(stem: str) -> str:
    base = _base(stem, FIGURE_ORDER)
    return next((title for title, stems in FIGURE_GROUPS if base in stems), OTHER_GROUP)


def _caption(run: RunFolder, path: Path, number: int) -> str:
    name = str(path.relative_to(run.path / "figures"))
    base = _base(path.stem, FIGURE_FACTS)
    fact = FIGURE_FACTS[base](run.metrics or {}) if base and path.stem == base else ""
    text = figure_guide(path.stem) + (f" {fact}" if fact else "")
    return f"<figcaption><b>Figure {number}. {esc(name)}</b> — {esc(text)}</figcaption>"


def _img(data: bytes, alt: str) -> str:
    uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return f"<img src=\"{uri}\" alt=\"{esc(alt)}\">"


def _interactive(run: RunFolder, stem: str, svg_id: str) -> str:
    """The inline SVG of ``figures/<stem>.json`` (``{"matrix", "query_positions", ...}``), or ""."""
    data = run.figure_data(stem)
    if not data or "matrix" not in data:
        return ""
    try:
        svg = heatmap_svg(data["matrix"], query_labels=data.get("query_positions"),
                          key_labels=data.get("key_positions"), unit=data.get("position_unit"),
                          cell=max(6.0, min(40.0, 480.0 / max(1, len(data["matrix"])))),
                          vmin=data.get("vmin"), vmax=data.get("vmax"), title=data.get("title", stem), svg_id=svg_id)
    except (ValueError, TypeError) as exc:
        return f"<p class=\"note\">figures/{esc(stem)}.json could not be drawn: {esc(exc)}</p>"
    title = f"<p class=\"svg-title\">{esc(data['title'])}</p>" if data.get("title") else ""
    return (f"{title}<div class=\"svg-wrap\">{svg}</div><p class=\"hint\">Rest the pointer on a cell to read its "
            f"query position, key position and weight. {esc(_scale_note(data))}</p>")


def _scale_note(data: Mapping) -> str:
    """Say so when the colours span only the weights' own narrow range (near-uniform attention)."""
    W = np.asarray(data["matrix"], dtype=float)
    lo, hi = float(np.nanmin(W)), float(np.nanmax(W))
    if data.get("vmin") is None and data.get("vmax") is None and hi - lo < 0.25:
        return (f"The colours span only the weights' own range, {lo:.3g} to {hi:.3g}: these weights are close to "
                "uniform, and the contrast is stretched to show what little structure there is.")
    return ""


def figure_block(run: RunFolder, path: Path, number: int, prefix: str = "") -> str:
    """One ``<figure>``: the interactive SVG when its data exist (PNG collapsed below), else the PNG."""
    data = path.read_bytes()
    name = str(path.relative_to(run.path / "figures"))
    if not data.startswith(PNG_MAGIC):
        return f"<p class=\"note\">{esc(path.name)} is not a PNG file; skipped.</p>"
    ident = f"fig-{prefix}{path.stem}"
    svg = _interactive(run, path.stem, f"{ident}-svg") if path.parent == run.path / "figures" else ""
    body = (svg + f"<details><summary>Static image ({esc(name)})</summary>{_img(data, name)}</details>") if svg \
        else _img(data, name)
    return f"<figure id=\"{esc(ident)}\">{body}{_caption(run, path, number)}</figure>"


def figures_section(run: RunFolder, prefix: str = "", level: int = 3) -> tuple:
    """``(html, number of figures)``: the run's figures under their group headings."""
    if not (run.path / "figures").is_dir():
        return "<p>No figures folder in this run.</p>", 0
    root = run.path / "figures"
    paths = sorted(run.figure_paths(), key=lambda p: _sort_key(p, root))
    if not paths:
        return "<p>No PNG figures in figures/.</p>", 0
    parts, group = [], None
    for number, path in enumerate(paths, 1):
        g = _group_of(path.stem)
        if g != group:
            parts.append(f"<h{level}>{esc(g)}</h{level}>")
            group = g
        parts.append(figure_block(run, path, number, prefix))
    return "".join(parts), len(paths)
