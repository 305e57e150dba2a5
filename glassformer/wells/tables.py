"""Plain-text tables of a run's metrics, as the CLI prints them."""

from __future__ import annotations

import math

__all__ = ["IN_SAMPLE", "format_comparison_table", "format_per_well_table", "scored_on", "the_split", "verdict"]

#: What a comparison is called when it is scored on the training intervals themselves (no test well or
#: interval was given): in-sample scores, which say how well a model fits, not how well it predicts.
IN_SAMPLE = "training interval (in-sample)"


def scored_on(train_logs, test_logs) -> str:
    """``comparison.split`` of a run: :data:`IN_SAMPLE` when the test logs are the training logs, else ``"test"``."""
    train_logs, test_logs = list(train_logs), list(test_logs)
    same = len(train_logs) == len(test_logs) and all(a is b for a, b in zip(train_logs, test_logs))
    return IN_SAMPLE if same else "test"


def the_split(split) -> str:
    """The split as a phrase: ``"test"`` -> ``"the test split"``, :data:`IN_SAMPLE` -> ``"the training interval
    (in-sample)"``."""
    split = str(split or "test")
    return f"the {split} split" if " " not in split else f"the {split}"


def _num(v, width=12, digits=4, kind="g") -> str:
    """``v`` right-aligned in ``width`` characters, always led by a space so that columns stay apart.

    ``kind="g"`` (4 significant digits, exponent when needed) fits any magnitude -- a diverged
    run's 3.3e+24 as well as 0.1234; a value wider than the column widens it instead of touching
    its neighbour.  Missing or non-finite values print as ``-``.
    """
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return " " + (f"{v:>{width - 1}.{digits}{kind}}" if ok else f"{'-':>{width - 1}}")


def format_comparison_table(metrics: dict, unit: str, key: str = "table") -> str:
    """Plain-text comparison table: mean (± sd over seeds) of RMSE, MAE, R², parameters, fit time."""
    comp = metrics["comparison"]
    seeds = comp["seeds"]
    split = "training interval" if key == "train_table" else the_split(comp.get("split")).removeprefix("the ")
    folds = comp.get("spread") == "folds"
    spread = len(seeds) > 1 or folds
    width = 25 if spread else 12
    head = f"{metrics.get('title', '')} -- {split}, RMSE/MAE in {unit}"
    if folds:
        head += (f", mean ± sd across {comp.get('folds', '')} folds".replace("  ", " ")
                 + f", seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}")
    else:
        head += f", mean ± sd over seeds {seeds}" if spread else f", seed {seeds[0]}"
    if comp.get("members", 1) > 1:
        head += f"; the transformer is the mean of {comp['members']} members"
    lines = [head, f"  {'model':<32}{'RMSE':>{width}}{'MAE':>{width}}{'R2':>{width}}{'params':>9}{'train s':>10}"]
    for name, r in comp[key].items():
        def cell(k):
            return _num(r[k]) + (f" ± {_num(r[k + '_sd'], 10).strip():<10}" if spread else "")
        cells = "".join(f"{cell(k):>{width}}" for k in ("rmse", "mae", "r2"))
        lines.append(f"  {name:<32}{cells} {r['parameters']:>8}{_num(r['train_s'], 10, 2, 'f')}")
    return "\n".join(lines)


def format_per_well_table(per_well: dict, unit: str, metric: str = "rmse", title: str = "") -> str:
    """Plain-text table of one metric: one row per model, one column per well (``per_well[well][model]``)."""
    wells = list(per_well)
    models = list(dict.fromkeys(m for w in wells for m in per_well[w]))
    width = max(12, *(len(w) + 2 for w in wells))
    head = title or f"{metric.upper()} per well ({unit})"
    lines = [head, f"  {'model':<32}" + "".join(f"{w:>{width}}" for w in wells)]
    for m in models:
        cells = "".join(_num((per_well[w].get(m) or {}).get(metric), width) for w in wells)
        lines.append(f"  {m:<32}{cells}")
    return "\n".join(lines)


def verdict(table: dict, unit: str, where: str, metric: str = "rmse", model: str = "transformer") -> str:
    """One sentence: which baselines beat ``model`` on ``metric`` (lower is better), or that none does.

    ``table`` is ``{name: {metric: value, ...}}``; every row other than ``model`` counts as a baseline.
    """
    def value(name):
        v = (table.get(name) or {}).get(metric)
        return v if isinstance(v, (int, float)) and math.isfinite(v) else None

    mine = value(model)
    if mine is None:
        return f"The {model} has no {metric.upper()} on {where}."
    others = sorted((v, n) for n in table if n != model and (v := value(n)) is not None)
    better = [(v, n) for v, n in others if v < mine]
    if not better:
        kind = "other model" if "blend" in (others[0][1] if others else "") else "baseline"
        best = f"; the best {kind}, the {others[0][1]}, has {others[0][0]:.3f}" if others else ""
        return f"On {where} the {model} has the lowest {metric.upper()}, {mine:.3f} {unit}{best}."
    listing = ", ".join(f"{n} {v:.3f}" for v, n in better)
    # The blend contains the transformer, so a list that holds it counts models, not baselines.
    kind = "models" if any("blend" in n for _, n in better) else "baselines"
    who = f"the {better[0][1]} has" if len(better) == 1 else f"{len(better)} {kind} have"
    return (f"On {where} {who} a lower {metric.upper()} than the {model} ({mine:.3f} {unit}): {listing}. "
            + ("A baseline is better here." if kind == "baselines" else "Another model is better here."))
