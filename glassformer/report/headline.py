"""The headline: the model's result beside the baselines, in one sentence and one table.

A :class:`Headline` is read from metrics.json by the first of :data:`EXTRACTORS` that recognises
its shape (a comparison table over seeds, ``model`` + ``baselines``, a BLEU or validation-loss
summary, ...); a new kind of run adds one small extractor.  The sentence says "a baseline is
better" exactly when a baseline's value of the headline metric beats the model's (lower RMSE,
higher BLEU): results are reported beside simple baselines, and when one wins the page says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from .tables import cell, column_name, direction, esc, fmt, is_number, is_records

#: Columns of the headline table, in this order, when present; ``<key>_sd`` is shown as ``± sd``.
COLUMNS = ("rmse", "mae", "r2", "bleu", "loss", "parameters", "train_s", "n")


@dataclass
class Headline:
    """The rows of the headline table and what to say about them.

    Attributes
    ----------
    rows : dict
        ``{name: {metric: value}}``, the model's rows first.
    models : list of str
        The rows that are the run's own model(s); every other row is a baseline.
    metric : str
        The headline metric (a key of the rows), e.g. ``"rmse"``.
    where : str
        The data it is measured on, as a phrase ("the test split").
    units : dict
        ``{metric: unit}``.
    seeds : list
        Seeds averaged over (one or none: no spread), or folds when ``spread`` is ``"folds"``.
    spread : {"seeds", "folds"}
        What the mean and its ± sd are taken over (folds: a cross-validation).
    training : bool
        The values are fits to the training data (no held-out data exist): they show how closely
        each model fits, not which one predicts better, so no winner is named.
    """

    rows: dict
    models: list
    metric: str = "rmse"
    where: str = "the test split"
    units: dict = field(default_factory=dict)
    seeds: list = field(default_factory=list)
    spread: str = "seeds"
    training: bool = False

    @property
    def lower_is_better(self) -> bool:
        return direction(self.metric) != "max"

    def _best(self, names):
        vals = [(self.rows[n].get(self.metric), n) for n in names]
        vals = [(v, n) for v, n in vals if is_number(v) and math.isfinite(v)]
        if not vals:
            return None, None
        return (min if self.lower_is_better else max)(vals, key=lambda t: t[0])

    def verdict(self) -> tuple:
        """``(baseline_is_better, (model value, model name), (baseline value, baseline name))``."""
        mv, mn = self._best(self.models)
        bv, bn = self._best([n for n in self.rows if n not in self.models])
        better = mv is not None and bv is not None and (bv < mv if self.lower_is_better else bv > mv)
        return better, (mv, mn), (bv, bn)


def _where(split) -> str:
    split = str(split or "test")
    return f"the {split} split" if " " not in split else f"the {split}"


def _from_comparison(m: Mapping):
    comp = m.get("comparison")
    if not (isinstance(comp, Mapping) and is_records(comp.get("table"))):
        return None
    table = dict(comp["table"])
    named = [m for m in comp.get("models") or () if m in table]          # several model rows (e.g. two transformers)
    models = named or (["transformer"] if "transformer" in table else list(table)[:1])
    seeds = list(comp.get("seeds") or [])
    if comp.get("spread") == "folds" and isinstance(comp.get("folds"), int):     # a cross-validation: ± across folds
        return Headline(table, models, "rmse", _where(comp.get("split")), _units(m),
                        list(range(1, comp["folds"] + 1)), "folds")
    on_training = str(comp.get("split") or "").lower().startswith("train")
    return Headline(table, models, "rmse", _where(comp.get("split")), _units(m), seeds, training=on_training)


def _from_model_and_baselines(m: Mapping):
    model, baselines = m.get("model"), m.get("baselines")
    if not (is_records({"model": model}) and (baselines is None or is_records(baselines))):
        return None
    rows = {"transformer": dict(model), **{str(k): dict(v) for k, v in (baselines or {}).items()}}
    return Headline(rows, ["transformer"], _metric(rows), "the test split", _units(m))


def _from_test_records(m: Mapping):
    test = m.get("test") if is_records(m.get("test")) else m.get("test_after_selection")
    if not is_records(test):
        return None
    selected = m.get("selected")
    models = [selected] if selected in test else (["transformer"] if "transformer" in test else list(test)[:1])
    where = "the test interval, scored once after selection" if "test_after_selection" in m else "the test split"
    return Headline(dict(test), models, _metric(test), where, _units(m))


def _from_bleu(m: Mapping):
    if "bleu_greedy" not in m:
        return None
    beam = f"transformer (beam search, width {m.get('beam_width', '?')})"
    rows = {"transformer (greedy)": {"bleu": m["bleu_greedy"]}, beam: {"bleu": m.get("bleu_beam")},
            "copy of the source sentence": {"bleu": m.get("bleu_copy_source")},
            "untrained model (greedy)": {"bleu": m.get("bleu_untrained_greedy")}}
    n = m.get("n_test_pairs")
    return Headline(rows, list(rows)[:2], "bleu", f"the {n} test sentence pairs" if n else "the test pairs")


def _from_validation_loss(m: Mapping):
    if "val_loss_nats" not in m:
        return None
    rows = {"transformer": {"loss": m["val_loss_nats"]},
            "unigram character frequencies": {"loss": m.get("unigram_baseline_nats")},
            "untrained model": {"loss": m.get("initial_val_loss_nats")}}
    return Headline(rows, ["transformer"], "loss", "the validation text", {"loss": "nats per character"})


#: Tried in order; the first that recognises metrics.json gives the headline.
EXTRACTORS = [_from_comparison, _from_model_and_baselines, _from_test_records, _from_bleu, _from_validation_loss]


def _units(m: Mapping) -> dict:
    units = m.get("units")
    if isinstance(units, Mapping):
        return dict(units)
    return {"rmse": units, "mae": units} if isinstance(units, str) else {}


def _metric(rows: Mapping) -> str:
    first = next(iter(rows.values()))
    return "rmse" if "rmse" in first else next((k for k in first if direction(k)), "rmse")


def headline_of(metrics) -> Headline | None:
    """The headline of a run's metrics.json, or None when no extractor recognises it."""
    if not isinstance(metrics, Mapping):
        return None
    for extract in EXTRACTORS:
        found = extract(metrics)
        if found is not None:
            return found
    return None


def _value(h: Headline, v) -> str:
    unit = h.units.get(h.metric)
    return fmt(v) + (f" {unit}" if unit and unit != "dimensionless" else "")


def sentence(h: Headline, subject: str = "") -> str:
    """One plain sentence: the model's value of the headline metric, the best baseline's, and which wins."""
    better, (mv, mn), (bv, bn) = h.verdict()
    metric = column_name(h.metric)
    seeds = f", mean over {len(h.seeds)} {h.spread}" if len(h.seeds) > 1 else ""
    lead = f"{subject}: on" if subject else "On"
    if mv is None:
        return f"{lead} {h.where}, the model has no {metric} to report."
    if bv is None:
        return f"{lead} {h.where}{seeds}, the {mn}'s {metric} is {_value(h, mv)}; no baseline was run."
    if h.training:
        return (f"{lead} {h.where}{seeds}, the {mn}'s {metric} is {_value(h, mv)} and the {bn}'s is {_value(h, bv)}: "
                "fits to the training data, which show memorisation, not which model predicts better.")
    holds_model = "blend" in bn              # a blend holds the model itself: another model, not a baseline
    if better:
        return (f"{lead} {h.where}{seeds}, the {mn}'s {metric} is {_value(h, mv)} and the {bn}'s is "
                f"{_value(h, bv)}: {'another model' if holds_model else 'a baseline'} is better.")
    best = "lowest" if h.lower_is_better else "highest"
    return (f"{lead} {h.where}{seeds}, the {mn} has the {best} {metric}, {_value(h, mv)}, against "
            f"{_value(h, bv)} for the best {'other model' if holds_model else 'baseline'}, the {bn}.")


def table(h: Headline, table_id: str = "headline") -> str:
    """The headline table: one row per model, the model's rows first and shaded, the best value in bold."""
    first = next(iter(h.rows.values()))
    cols = [c for c in COLUMNS if any(c in r for r in h.rows.values())]
    cols += [c for c in first if c not in cols and not c.endswith("_sd") and direction(c)]
    spread = len(h.seeds) > 1
    best = {}
    for c in cols:
        vals = [r.get(c) for r in h.rows.values() if is_number(r.get(c)) and math.isfinite(r.get(c))]
        if direction(c) and len(vals) > 1:
            best[c] = min(vals) if direction(c) == "min" else max(vals)
    head = "<tr><th>model</th>" + "".join(f"<th>{esc(column_name(c, h.units))}</th>" for c in cols) + "</tr>"
    body = []
    for name, row in h.rows.items():
        cells = []
        for c in cols:
            v, sd = row.get(c), row.get(f"{c}_sd")
            text = f"{fmt(v)} ± {fmt(sd)}" if spread and is_number(sd) else None
            cells.append(cell(v, "best" if c in best and v == best[c] else "", text))
        cls = " class=\"model\"" if name in h.models else ""
        body.append(f"<tr{cls}><th>{esc(name)}</th>{''.join(cells)}</tr>")
    return f"<table id=\"{esc(table_id)}\" class=\"headline\">{head}{''.join(body)}</table>"
