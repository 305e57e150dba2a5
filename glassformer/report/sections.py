"""The sections of a report after its introduction, each a small function of the run folder.

:func:`headline_section` (the sentence and table), :func:`results_section` (every other entry of
metrics.json, its table shape chosen from its value), :func:`data_section` (what the run read
and wrote) and :func:`configuration_section` (collapsed: what differs from the library's
defaults first, then the run's own settings, then everything).  A new kind of run adds entries
to metrics.json or config.json; they appear without new code here.
"""

from __future__ import annotations

from collections.abc import Mapping

from .display import differs_from_default
from .headline import headline_of, sentence, table as headline_table
from .run import RunFolder, attributions, predictions_summary
from .tables import esc, flatten, fmt, is_scalar, is_short_list, kv_table, render

#: Keys of config.json / metrics.json shown under "Data" rather than "Configuration" or "Results".
DATA_KEYS = ("data", "data_summary", "dataset", "wells", "train_wells", "validation_wells", "test_wells",
             "intervals", "split", "positions")
#: Keys the page shows elsewhere (title, introduction, headline) and never again as results.
SHOWN_ELSEWHERE = ("title", "description", "attribution", "units", "model", "baselines", "seeds")

#: config.json keys holding an estimator's hyperparameters -> the estimator (its defaults are its signature's).
def notes_html(run: RunFolder) -> str:
    """Problems met reading the folder, as notes."""
    return "".join(f"<p class=\"note\">{esc(n)}</p>" for n in run.notes)


def attribution_html(run: RunFolder) -> str:
    return "".join(f"<p class=\"attribution\">{esc(a)}</p>" for a in attributions(run))


def _long_notes(metrics: Mapping) -> list:
    """The run's own remarks on its numbers (``note`` entries, the recommended model, the validation
    span's warnings), shown right under the headline."""
    found = []
    for src in (metrics, metrics.get("comparison")):
        if isinstance(src, Mapping) and isinstance(src.get("note"), str):
            found.append(src["note"])
    chosen = metrics.get("recommendation")
    if isinstance(chosen, Mapping) and isinstance(chosen.get("text"), str):     # the model to use, in words
        found.append(chosen["text"])
    span = metrics.get("validation_span")
    if isinstance(span, Mapping):                    # one run's span, or one per cross-validation fold
        spans = {"": span} if "warnings" in span else span
        for fold, s in spans.items():
            if isinstance(s, Mapping):
                found += [f"Warning{' (' + fold + ')' if fold else ''}: {w}." for w in s.get("warnings") or []]
    return found


def headline_section(run: RunFolder, table_id: str = "headline") -> str:
    """The headline sentence and table (id ``table_id``), and the run's notes on them; "" if none."""
    h = headline_of(run.metrics)
    if h is None:
        return ""
    notes = "".join(f"<p class=\"note\">{esc(n)}</p>" for n in _long_notes(run.metrics))
    return (headline_table(h, table_id)
            + "<p class=\"small\">The run's own model is shaded; the best value of each column is in bold.</p>"
            + f"<p class=\"verdict\">{esc(sentence(h))}</p>" + notes)


#: Headings of well-known metrics.json entries (any other entry is headed by its key).
RESULT_TITLES = {
    "printed_mse": "Training MSE at the epochs the chapter prints",
    "printed_mean_batch_mse": "Mean batch MSE at the epochs the chapter prints",
    "forecast_mD": "Forecasts at depths 8-14 m (mD; no permeability was measured there)",
    "forecast_across_seeds_mD": "Forecasts across seeds (mD)",
    "attention": "Learned attention (mean over the held-out sequences)",
    "ablation_mse": "Attention ablation: held-out MSE with the learned, uniform and identity weights",
    "comparison": "More of the comparison",
    "train_table": "The same comparison on the training split",
    "per_seed": "Per seed",
    "training": "Training of the transformer",
    "training_lstm": "Training of the LSTM",
    "test": "Test split",
    "train": "Training split",
    "per_well": "Every metric per well",
    "per_well_rmse": "RMSE per held-out well",
    "pooled": "Pooled over every held-out depth",
    "records": "One record per fold, held-out well and model",
    "folds": "Folds",
    "verdict": "In words",
    "validation_table": "The same comparison on the validation plugs",
    "coverage": "Coverage of the P10-P90 interval (nominal 80 %) before and after calibration",
    "members": "Ensemble members: seeds and each member's own test RMSE",
    "selected": "The ensemble saved for glassformer predict",
    "depth_shifts": "Depth shift per core run (core porosity against the log)",
    "merge": "Core plugs merged onto the log's depth grid",
    "seconds": "Fit times (s)",
    "validation_span": "How well the validation data span the training data (share of training samples inside "
                       "the validation range, per curve)",
    "interval_scores": "P10-P90 intervals: coverage, mean width and interval score (Gneiting and Raftery, 2007), each "
                 "calibration and the quantile baseline",
    "coverage_by_core": "P10-P90 coverage per core run (validation and test plugs)",
    "coverage_by_zone": "P10-P90 coverage per depth zone (validation and test plugs)",
    "calibration_choice": "Calibration of each ensemble, chosen on the validation plugs",
}

#: Entries of ``metrics["comparison"]`` that the headline shows.
COMPARISON_SHOWN = ("table", "split", "seeds", "note")


def _used_by_headline(metrics: Mapping) -> set:
    used = set(SHOWN_ELSEWHERE)
    comp = metrics.get("comparison")
    if isinstance(comp, Mapping) and set(comp) <= set(COMPARISON_SHOWN):
        used.add("comparison")
    if "bleu_greedy" in metrics:
        used.update({"bleu_greedy", "bleu_beam", "bleu_copy_source", "bleu_untrained_greedy"})
    if "val_loss_nats" in metrics:
        used.update({"val_loss_nats", "unigram_baseline_nats", "initial_val_loss_nats"})
    return used


def results_section(run: RunFolder, skip=()) -> str:
    """Every metrics.json entry not shown elsewhere: scalars in one table, each structure in its own."""
    m = run.metrics
    if not isinstance(m, Mapping):
        return ""
    skip = _used_by_headline(m) | set(skip) | set(DATA_KEYS)
    units = m.get("units") if isinstance(m.get("units"), Mapping) else None
    scalars = [(k, v) for k, v in m.items()
               if k not in skip and k != "note" and is_scalar(v) and not (isinstance(v, str) and len(v) > 80)]
    parts = [kv_table(scalars)] if scalars else []
    titles = RESULT_TITLES
    split = str((m.get("comparison") or {}).get("split") or "") if isinstance(m.get("comparison"), Mapping) else ""
    if split.lower().startswith("training interval"):     # no test data: the "test" scores are in-sample
        titles = {**RESULT_TITLES, "test": f"{split[0].upper()}{split[1:]}: the training wells scored again"}
    for k, v in m.items():
        if k in skip or k == "note":
            continue
        if isinstance(v, Mapping) and k == "comparison":
            v = _comparison_rest(v)
        if isinstance(v, str) and len(v) > 80:
            parts.append(f"<p class=\"note\"><b>{esc(k)}:</b> {esc(v)}</p>")
        elif not is_scalar(v):
            parts.append(render(titles.get(k, k), v, units=units, titles=titles))
    return "".join(parts)


def _comparison_rest(comp: Mapping) -> dict:
    """What the headline does not show of a comparison; per-seed lists only when there are several seeds."""
    rest = {k: v for k, v in comp.items() if k not in COMPARISON_SHOWN}
    if len(comp.get("seeds") or []) <= 1:
        rest.pop("per_seed", None)
    return rest


def data_section(run: RunFolder) -> str:
    """What the run read (wells, intervals, data settings) and wrote (predictions.csv)."""
    facts, parts = [], []
    for src in (run.config, run.metrics):
        if not isinstance(src, Mapping):
            continue
        for k in DATA_KEYS:
            if k not in src:
                continue
            if is_scalar(src[k]) or is_short_list(src[k]):
                facts.append((k, src[k]))
            else:
                parts.append(render(k, src[k]))
    facts += predictions_summary(run.path / "predictions.csv")
    if facts:
        parts.insert(0, kv_table(facts))
    return "".join(parts)


def split_config(config: Mapping, defaults: Mapping | None = None) -> tuple:
    """``(differ, own, all)``: ``[(key, value, default)]`` of hyperparameters that differ from the
    estimators' defaults; ``[(key, value)]`` of settings that have no library default; every setting.

    ``defaults``: ``{config key: {parameter: default}}`` of the estimators whose parameters the
    config holds (:func:`glassformer.models.run_config_defaults`); None knows no default.
    """
    defaults = defaults or {}
    differ, own, everything = [], [], []
    for key, value in config.items():
        if key in DATA_KEYS or key in ("title", "description", "attribution"):
            continue
        known = defaults.get(key) if isinstance(value, Mapping) else None
        for sub, v in (flatten({key: value}) if isinstance(value, Mapping) else [(key, value)]):
            everything.append((sub, v))
            name = sub.split(".", 1)[1] if "." in sub else sub
            if known is not None and name in known:
                if differs_from_default(v, known[name]):
                    differ.append((sub, v, known[name]))
            else:
                own.append((sub, v))
    return differ, own, everything


def configuration_section(run: RunFolder, table_prefix: str = "config", defaults: Mapping | None = None) -> str:
    """The configuration, collapsed: hyperparameters that differ from ``defaults`` (see
    :func:`split_config`) first, then the rest."""
    if not isinstance(run.config, Mapping) or not run.config:
        return ""
    differ, own, everything = split_config(run.config, defaults)
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(fmt(v))}</td><td>{esc(fmt(d))}</td></tr>"
                   for k, v, d in differ)
    first = (f"<h4>Different from the defaults ({len(differ)})</h4><table id=\"{table_prefix}-differs\">"
             f"<tr><th>setting</th><th>this run</th><th>default</th></tr>{rows}</table>") if differ else \
        "<p>Every model hyperparameter has its default value.</p>"
    second = (f"<h4>Settings of this run ({len(own)})</h4>" + kv_table(own, f"{table_prefix}-run")) if own else ""
    summary = (f"Configuration: {len(differ)} setting{'s' if len(differ) != 1 else ''} differ"
               f"{'s' if len(differ) == 1 else ''} from the defaults ({len(everything)} in all)")
    return (f"<details class=\"config\"><summary>{esc(summary)}</summary>{first}{second}"
            f"<details><summary>All {len(everything)} settings</summary>"
            f"{kv_table(everything, f'{table_prefix}-all')}</details></details>")
