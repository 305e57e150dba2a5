"""What a run on core plugs (or a deep ensemble) says: coverage before and after calibration, the verdict
in words, the summary tables, its figures.

Small functions of the run's arrays and metrics, used by :func:`~glassformer.wells.run_plugs_experiment`
and :func:`~glassformer.wells.run_ensemble_experiment`: :func:`coverage_summary` (the P10-P90
interval's coverage per role, before and after the conformal scale, and the coverage curve on the
test plugs), :func:`verdict_lines` (which model wins on the test plugs, and whether pretraining
helped, said in words), :func:`summary_lines` (the tables the run shows) and :func:`plugs_figures`.
"""

from __future__ import annotations

import numpy as np

from .. import plots
from ..errors import InputError
from ..plots._common import _new_figure
from .intervals import NOMINAL, ConformalScale, coverage_curve, interval_coverage
from .tables import _num
from .uncertainty import interval_summary

__all__ = ["coverage_summary", "interval_lines", "plugs_figures", "summary_lines", "verdict_lines"]

LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def coverage_summary(y, q: dict, masks: dict, ens) -> dict:
    """Coverage of P10-P90 on the validation and test plugs, before and after calibration.

    ``q``: ``{"calibrated": quantiles, "uncalibrated": quantiles}`` of one ensemble over the log;
    ``masks``: role -> bool (n_samples,).  Returns ``{"nominal", "scale", "calibration",
    "validation": {"before", "after"}, "test": {"before", "after"}, "curve_test"}``.
    """
    out = {"nominal": NOMINAL, "scale": ens.scale,
           "calibration": None if ens.calibration is None else ens.calibration.to_dict()}
    for role in ("validation", "test"):
        yy = np.where(masks[role], y, np.nan)
        out[role] = {when: interval_summary(yy, q[key]["P10"], q[key]["P90"])      # coverage, width, score
                     for when, key in (("before", "uncalibrated"), ("after", "calibrated"))}
    yy = np.where(masks["test"], y, np.nan)
    mean, sd = q["calibrated"]["mean"], q["calibrated"]["sd"]
    before = coverage_curve(yy, mean, sd, LEVELS)
    out["curve_test"] = {"nominal": list(LEVELS), "before": before["empirical"],
                         "after": _calibrated_curve(yy, y, mean, sd, masks["validation"], ens.calibration),
                         "n": before["n"]}
    return out


def _calibrated_curve(y_test, y, mean, sd, validation, calibration) -> list:
    """Test coverage of the interval calibrated on the validation plugs at each nominal level (same score)."""
    if calibration is None:
        return [float("nan")] * len(LEVELS)
    val = validation & np.isfinite(y) & np.isfinite(mean)
    out = []
    for level in LEVELS:
        try:
            cal = ConformalScale(level, calibration.score, calibration.floor).fit(y[val], mean[val], sd[val])
        except InputError:                                   # too few validation values for this level
            out.append(float("nan"))
            continue
        out.append(interval_coverage(y_test, *cal.interval(mean, sd))["coverage"])
    return out


def _best(table: dict, names) -> tuple:
    rows = [(r["rmse"], n) for n, r in table.items() if n in names and r.get("rmse") is not None]
    return min(rows) if rows else (None, None)


def verdict_lines(metrics: dict) -> list:
    """Sentences on the test plugs: each transformer against the best baseline, and pretraining against none."""
    comp = metrics["comparison"]
    table, models, unit = comp["table"], comp["models"], metrics["units"]["rmse"]
    base_rmse, base = _best(table, [n for n in table if n not in models])
    lines = []
    for name in models:
        rmse = table[name]["rmse"]
        if rmse is None or base is None:
            continue
        if base_rmse < rmse:
            lines.append(f"On the {comp['split']}, the {name}'s RMSE is {rmse:.3f} {unit} and the {base}'s is "
                         f"{base_rmse:.3f}: a baseline is better than the {name}.")
        else:
            lines.append(f"On the {comp['split']}, the {name} has the lowest RMSE, {rmse:.3f} {unit}, against "
                         f"{base_rmse:.3f} for the best baseline, the {base}.")
    if len(models) > 1 and all(table[n]["rmse"] is not None for n in models[:2]):
        alone, pre = (table[n]["rmse"] for n in models[:2])
        lines.append(f"Pretraining then fine-tuning on the core: RMSE {pre:.3f} {unit} against {alone:.3f} for "
                     f"training on the core alone; pretraining {'helped' if pre < alone else 'did not help'} on the "
                     "test plugs.")
    return lines


def plugs_figures(cw, split, wm, quantiles, coverage, ens, selected, log_perm, log_perm_label, reference,
                  title) -> tuple:
    """The figures of a run on core plugs: ``(figures, extra)`` for :class:`~glassformer.runs.RunResult`.

    ``figures``: the loss of the selected ensemble's first member; ``extra``: depth_match, core_on_log,
    interval_vs_depth, coverage and the plugs' porosity-permeability crossplot.
    """
    extra = {"interval_vs_depth": lambda: _interval_figure(cw, split, wm, quantiles, log_perm, log_perm_label, title),
             "coverage": lambda: _coverage_figure(coverage, title)}
    if cw.match is not None:
        extra["depth_match"] = lambda: plots.plot_depth_match(cw.match, reference=reference)
        curve = cw.match.curve
        shifted = cw.table.shifted(cw.match)
        extra["core_on_log"] = lambda: plots.plot_plugs_on_log(
            cw.log.depth, cw.log.curve(curve), cw.table.depth, cw.table.porosity, shifted_depth=shifted.depth,
            run=cw.table.run_labels, curve=curve, depth_unit=cw.log.depth_unit)
    if cw.porosity is not None:
        k = np.asarray(cw.log.curve(cw.target), dtype=float)
        plug = np.isfinite(k)
        extra["crossplot"] = lambda: plots.plot_crossplot(
            np.asarray(cw.log.curve(cw.porosity))[plug], np.where(k > 0, k, np.nan)[plug],
            depth_unit=cw.log.depth_unit, title=f"core plugs on the log, {cw.target} against {cw.porosity}, "
                                                "porosity-permeability")
    figures = {"history": ens.first.model_.history_, "depth_unit": cw.log.depth_unit,
               "title": f"{title}, {selected} (member 1)"}
    return figures, extra


def _interval_figure(cw, split, wm, quantiles, log_perm, log_perm_label, title):
    names = list(quantiles)
    fig = _new_figure((4.6 * len(names) + 0.6, 8.5))
    axes = fig.subplots(1, len(names), sharey=True, squeeze=False)[0]
    roles = np.full(len(cw.log), "", dtype=object)
    for role in ("train", "validation", "test"):
        roles[split.masks[role]] = role
    observed = np.where(roles != "", wm.target_values(cw.log), np.nan)
    for ax, name in zip(axes, names):
        q = quantiles[name]["calibrated"]
        plots.plot_interval_vs_depth(cw.log.depth, q["P10"], q["P50"], q["P90"], observed=observed, roles=roles,
                                     curves={log_perm_label: log_perm} if log_perm is not None else None,
                                     quantity=f"{cw.target}", unit="log10 mD" if wm.log_target else "mD",
                                     depth_unit=cw.log.depth_unit, ax=ax, title=f"{name}\ncalibrated P10-P90")
    fig.suptitle(f"{title}: core permeability against depth")
    return fig


def _coverage_figure(coverage, title, where="test plugs"):
    fig = _new_figure((5.2 * len(coverage) + 0.4, 5.0))
    axes = fig.subplots(1, len(coverage), squeeze=False)[0]
    for ax, (name, c) in zip(axes, coverage.items()):
        curve = c["curve_test"]
        calibrated = f"calibrated ({c['calibration']['score']} score, each level)"
        plots.plot_coverage(curve["nominal"], {"before calibration": curve["before"], calibrated: curve["after"]},
                            n=curve["n"], ax=ax, title=f"{name}\n{where}")
    fig.suptitle(f"{title}: coverage of the ensemble's intervals")
    return fig


def summary_lines(metrics: dict) -> list:
    """The plain-text summary the CLI prints: the test table, the verdict and the coverage."""
    unit = metrics["units"]["rmse"]
    comp = metrics["comparison"]
    lines = [f"{metrics['title']} -- {comp['split']}, RMSE/MAE in {unit}",
             f"  {'model':<38}{'RMSE':>12}{'MAE':>12}{'R2':>12}{'n':>6}{'train s':>10}"]
    for name, r in comp["table"].items():
        lines.append(f"  {name:<38}{_num(r['rmse'])}{_num(r['mae'])}{_num(r['r2'])}{r['n']:>6}"
                     f"{_num(r.get('train_s'), 10, 2, 'f')}")
    lines += metrics["verdict"]
    for name, c in metrics["coverage"].items():
        t = c["test"]
        lines.append(f"P10-P90 coverage of the {name} on the {comp['split']}: {t['before']['coverage']:.0%} before "
                     f"and {t['after']['coverage']:.0%} after calibration (nominal 80 %; {c['calibration']['score']} "
                     f"score chosen on validation, fitted on {c['calibration']['n']} validation values)")
    return lines + interval_lines(metrics)


def interval_lines(metrics: dict) -> list:
    """The P10-P90 intervals on the test plugs: coverage, mean width and interval score, chosen rows and baseline."""
    table = metrics.get("interval_scores", {}).get("test")
    if not table:
        return []
    width = "decades" if metrics["units"]["rmse"] == "log10 mD" else metrics["units"]["rmse"]
    lines = [f"  {'P10-P90 interval, test plugs':<60}{'coverage':>9}{'width (' + width + ')':>17}"
             f"{'interval score':>16}"]
    for row, r in table.items():
        if row.endswith("(chosen)") or row.startswith("quantile"):
            lines.append(f"  {row:<60}{r['coverage']:>9.0%}{r['mean_width']:>17.2f}{r['interval_score']:>16.2f}")
    return lines
