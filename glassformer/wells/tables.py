"""Plain-text tables of a run's metrics, as the CLI prints them."""

from __future__ import annotations

import math

__all__ = ["format_comparison_table", "format_metrics_table"]


def format_metrics_table(metrics: dict, unit: str) -> str:
    """Plain-text table of the test metrics (model first, then baselines)."""
    lines = [f"{metrics.get('title', '')} -- test split (RMSE, MAE in {unit})",
             f"  {'model':<34}{'RMSE':>12}{'MAE':>12}{'R2':>12}{'n':>8}"]
    for name, m in metrics["test"].items():
        lines.append(f"  {name:<34}{_num(m['rmse'])}{_num(m['mae'])}{_num(m['r2'])}{m['n']:>8}")
    return "\n".join(lines)


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
    split = "training interval" if key == "train_table" else str(comp.get("split", "test"))
    split = split if " " in split else f"{split} split"
    spread = len(seeds) > 1
    width = 25 if spread else 12
    head = f"{metrics.get('title', '')} -- {split}, RMSE/MAE in {unit}"
    head += f", mean ± sd over seeds {seeds}" if spread else f", seed {seeds[0]}"
    lines = [head, f"  {'model':<32}{'RMSE':>{width}}{'MAE':>{width}}{'R2':>{width}}{'params':>9}{'train s':>10}"]
    for name, r in comp[key].items():
        def cell(k):
            return _num(r[k]) + (f" ± {_num(r[k + '_sd'], 10).strip():<10}" if spread else "")
        cells = "".join(f"{cell(k):>{width}}" for k in ("rmse", "mae", "r2"))
        lines.append(f"  {name:<32}{cells} {r['parameters']:>8}{_num(r['train_s'], 10, 2, 'f')}")
    return "\n".join(lines)
