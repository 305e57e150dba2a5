"""Which depths train and which test: intervals of wells, and the checks made before fitting.

Intervals are ``(top, base)`` in the file's depth unit.  A test interval of the same well may
share only its boundary sample with the training interval (that sample stays in training); any
larger overlap would score the model on depths it was trained on, and is refused.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from typing import Sequence

import numpy as np

from ..data.windows import contiguous_runs
from ..errors import DataFileError, DepthError, InputError

__all__ = ["MIN_TRAINING_WINDOWS", "SPAN_THRESHOLD", "VALIDATION_SHARE_LIMIT", "check_training_logs",
           "choose_validation", "deepest_blocks", "default_stride", "forecast_logs",
           "small_data_warnings", "span_warnings", "validation_span"]

#: Fewer training windows than this and the transformer's fit is said to rest on little data; the
#: default stride is also shortened (down to 1 sample) to give a short well this many windows.
MIN_TRAINING_WINDOWS = 8
#: A validation block taking more than this share of a well's samples is said in words.
VALIDATION_SHARE_LIMIT = 0.25
#: A validation set spans a curve of the training data when at least this share of the training
#: samples lies inside the validation samples' range of that curve; below it, early stopping
#: watches data unlike a fifth or more of what the network trains on, and the run warns.
#: Measured on the three Volve F wells
#: (``glassformer cv``, PHIF, VSH, SW -> KLOGH, deepest 10 %), it flags every fold: holding out
#: 15/9-F-11 B, PHIF 0.73 and KLOGH 0.79 (VSH 0.82, SW 0.84); holding out F-1 A or F-1 B, SW 0.74.
SPAN_THRESHOLD = 0.8
#: Validation blocks named in the sentence that describes them (the rest are counted).
SHOWN_BLOCKS = 6


def forecast_logs(logs, train_depth: tuple, test_depth: tuple | None = None, test_wells: Sequence = (), *,
                  labels: tuple | None = None):
    """The test logs and figure boundary for ``logs`` trained on ``train_depth = (top, base)``.

    Parameters
    ----------
    logs : WellLog list holding the training interval.
    test_depth : (top, base), optional
        Forecast interval: of ``logs`` (a depth shared with ``train_depth``'s base stays in training),
        or of ``test_wells`` when given.
    test_wells : WellLog list of separate test wells (whole logs, or their ``test_depth``).
    labels : (train, test) texts naming the intervals in the error message, e.g.
        ``("--train-depth 3351.6:4300", "--test-depth 4200:4400")``; default ``"the training
        interval top:base"``, ``"test interval top:base"``.

    Returns
    -------
    (test_logs, boundary)
        ``test_logs`` is empty when there is no test interval and no test well; ``boundary`` is the
        train/forecast depth for the figures (None across wells).

    Raises
    ------
    DepthError
        If ``test_depth`` overlaps ``train_depth`` in a well by more than one shared boundary sample
        (which stays in training), or lies inside it.
    """
    top, base = train_depth
    test_logs, boundary = [], None
    if test_depth and not test_wells:
        ttop, tbase = test_depth
        train_text, test_text = labels or (f"the training interval {top:g}:{base:g}",
                                           f"test interval {ttop:g}:{tbase:g}")
        for g in logs:
            test_logs.append(_forecast_part(g, (top, base), (ttop, tbase), train_text, test_text))
        boundary = base if ttop >= top else top
    for g in test_wells:
        test_logs.append(g.interval(*test_depth) if test_depth else g)
    return test_logs, boundary


def _forecast_part(g, train_depth: tuple, test_depth: tuple, train_text: str, test_text: str):
    """The test interval of well ``g``: disjoint from the training interval but for one boundary sample.

    A single depth sample in both intervals (the issue's split 3351.6-4300 / 4300-4744.8 m shares
    4300 m) stays in training and is dropped from the test log.  Any larger overlap would score the
    model on samples it was trained on.

    Raises
    ------
    DepthError
        The intervals share more than one sample of ``g``, or the test interval holds nothing else.
    """
    (top, base), (ttop, tbase) = train_depth, test_depth
    d = g.depth
    tol = 1e-6 * max(1.0, float(np.max(np.abs(d))))       # as WellLog.interval: decimal round-off in typed bounds
    in_train = (d >= top - tol) & (d <= base + tol)
    in_test = (d >= ttop - tol) & (d <= tbase + tol)
    shared = d[in_train & in_test]
    u = g.depth_unit
    if in_test.any() and not (in_test & ~in_train).any():
        hint = _disjoint_hint(g, (top, base), (ttop, tbase))
        raise DepthError(f"{test_text} lies inside {train_text} in {g.name}; {hint}")
    if shared.size > 1 or (shared.size == 1 and ttop < top and tbase > base):
        raise DepthError(f"{test_text} overlaps {train_text} in {g.name}: {shared.size} depth samples "
                         f"({shared[0]:g} to {shared[-1]:g} {u}) would be both trained on and tested; the "
                         f"intervals may share at most their boundary depth (e.g. test "
                         f"{f'{base:g}:{tbase:g}' if tbase > base else f'{ttop:g}:{top:g}'} {u})")
    if shared.size == 1:                 # the shared boundary sample stays in training
        if ttop >= top:
            ttop = float(d[d > shared[0] + tol][0])
        else:
            tbase = float(d[d < shared[0] - tol][-1])
    return g.interval(ttop, tbase)


def _disjoint_hint(g, train_depth: tuple, test_depth: tuple) -> str:
    """How to train above (or below) a test interval of the same well: ``--train-depth`` with its name and depths."""
    (top, base), (ttop, tbase) = train_depth, test_depth
    train = f"{top:g}:{ttop:g}" if ttop > top else f"{tbase:g}:{base:g}"
    return (f"give --train-depth so that the intervals do not overlap, e.g. --train-depth "
            f"{shlex.quote(f'{g.name}={train}')} --test-depth {shlex.quote(f'{g.name}={ttop:g}:{tbase:g}')}")


def check_training_logs(logs, train_logs, input_names, target, window: int, interval: str) -> None:
    """Check the training interval of every well before anything is fitted.

    ``logs`` are the whole wells, ``train_logs`` their training intervals; ``interval`` names the
    interval in messages (e.g. ``"3351.6:4300"``).

    Raises
    ------
    CurveNotFoundError
        An input or the target is not in a file (the message lists the available curves).
    DataFileError
        A curve has no valid (non-null) sample in the training interval of a file, or no file has a
        gap-free run of inputs as long as ``--window``.
    """
    longest = []
    for full, g in zip(logs, train_logs):
        where = f"{full.source or full.name}"
        for role, m in [*(("input", m) for m in input_names), ("target", target)]:
            values = np.asarray(g.curve(m), dtype=np.float64)
            if not np.isfinite(values).any():
                raise DataFileError(f"{where}: {role} curve {m} has no valid (non-null) sample in the training "
                                    f"interval {interval} {g.depth_unit} ({len(values)} samples, all null)")
        ok = g.valid_mask(input_names)
        runs = [b - a for a, b in contiguous_runs(ok)]
        longest.append((max(runs, default=0), where))
    best = max(n for n, _ in longest)
    if best < window:
        listing = "; ".join(f"{w}: {n}" for n, w in longest)
        raise DataFileError(f"--window {window}: no gap-free run of inputs {', '.join(input_names)} is that long in "
                            f"the training interval {interval} (longest per file: {listing}); use --window {best} "
                            f"or less" if best >= 2 else
                            f"--window {window}: the training interval {interval} holds no gap-free run of at least "
                            f"2 samples of inputs {', '.join(input_names)} (longest per file: {listing})")


def deepest_blocks(logs, fraction: float = 0.1, window: int = 32) -> tuple:
    """Hold out the deepest ``fraction`` of each training log as a contiguous validation block.

    Early stopping on windows drawn at random from the training windows would validate on
    windows that overlap training windows (by half, at the default stride): an optimistic
    estimate that stops too late.  A block below the rest of the interval shares no sample
    with it.

    Parameters
    ----------
    logs : WellLog list (training intervals)
    fraction : float in (0, 1)
        Share of each log's samples held out, from its base up; at least ``2 * window`` samples,
        or ``window`` samples where two windows would take more than a quarter of the log.
    window : int
        The model's window; a log too short to keep ``window`` samples above its block keeps
        all of them for fitting (it gets no block).

    Returns
    -------
    (fit_logs, val_logs, blocks)
        ``blocks`` lists ``{"well", "top", "base", "depth_unit", "samples", "of_samples", "share"}``
        of every held-out block (its depths, its samples, the log's samples and their ratio).
    """
    if not 0.0 < float(fraction) < 1.0:
        raise InputError(f"validation fraction must be in (0, 1), got {fraction!r}")
    fit_logs, val_logs, blocks = [], [], []
    for g in logs:
        n = len(g)
        k = _block_size(n, fraction, int(window))
        if n - k < window:
            fit_logs.append(g)
            continue
        fit_logs.append(_rows(g, slice(0, n - k)))
        val = _rows(g, slice(n - k, n))
        val_logs.append(val)
        blocks.append({**_span(val), "samples": k, "of_samples": n, "share": round(k / n, 4)})
    return fit_logs, val_logs, blocks


def _block_size(n: int, fraction: float, window: int) -> int:
    """Samples held out of a log of ``n``: ``fraction`` of them, at least two windows -- or, where two
    windows would take more than a quarter of a short log, at least one window (so that its fit keeps
    the rest: a 104-sample log with windows of 32 holds out 32, not 64)."""
    k = int(round(fraction * n))
    two = max(k, 2 * window)
    return two if two <= VALIDATION_SHARE_LIMIT * n else max(k, window)


def default_stride(window: int, logs) -> int:
    """The stride between training windows when none is given: half a window, shortened (to 1 at least)
    when that gives the longest log fewer than :data:`MIN_TRAINING_WINDOWS` windows.

    A short well (about 100 samples, windows of 32) then still trains on several windows; they
    overlap more, which adds no new rock, and :func:`small_data_warnings` says so.
    """
    half = max(1, int(window) // 2)
    n = max((len(g) for g in logs), default=0)
    if n < window or (n - window) // half + 1 >= MIN_TRAINING_WINDOWS:
        return half
    return max(1, (n - window) // (MIN_TRAINING_WINDOWS - 1))


def small_data_warnings(logs, blocks, n_windows: int, window: int, stride: int, stride_given: bool) -> list:
    """Sentences that say, with the numbers, when a fit rests on little data (empty when it does not).

    Parameters
    ----------
    logs : the training logs (before validation blocks were taken out)
    blocks : :func:`deepest_blocks`' blocks (``samples``, ``of_samples`` of each)
    n_windows : the transformer's training windows
    window, stride : in samples; ``stride_given`` False when :func:`default_stride` chose it
    """
    out = []
    for b in blocks:
        if b.get("of_samples") and b["samples"] > VALIDATION_SHARE_LIMIT * b["of_samples"]:
            out.append(f"small data: the validation block of {b['well']} takes {b['samples']} of its {b['of_samples']} "
                       f"samples ({100 * b['share']:.0f} %, {b['top']:g}-{b['base']:g} {b['depth_unit']}), more than "
                       f"a quarter, so the networks fit on {b['of_samples'] - b['samples']}")
    if n_windows < MIN_TRAINING_WINDOWS:
        out.append(f"small data: the transformer trains on {n_windows} window(s) of {window} samples (stride "
                   f"{stride}), fewer than {MIN_TRAINING_WINDOWS}; its scores rest on very little data -- compare "
                   "them with the baselines, or use a smaller --window")
    if not stride_given and stride < max(1, window // 2):
        longest = max(len(g) for g in logs)
        out.append(f"short wells: the stride between training windows is {stride} samples instead of half a window "
                   f"({max(1, window // 2)}), so that the longest training interval ({longest} samples) gives "
                   f"about {MIN_TRAINING_WINDOWS} windows; they overlap more and add no new rock")
    return out


def _rows(g, rows: slice):
    """The samples ``rows`` of log ``g`` (by index: depth tolerances play no part)."""
    return replace(g, depth=g.depth[rows], curves={k: v[rows] for k, v in g.curves.items()})


def _span(g) -> dict:
    return {"well": g.name, "top": float(g.depth[0]), "base": float(g.depth[-1]), "depth_unit": g.depth_unit}


def choose_validation(train_logs, val_logs, validation: str = "deepest", fraction: float = 0.1, window: int = 32):
    """``(fit_logs, val_logs, description)``: what the networks train on and what early stopping watches.

    Validation logs given (a held-out well, a manifest's ``val`` rows) are used as they are;
    otherwise ``validation="deepest"`` holds out :func:`deepest_blocks`, and ``"none"`` nothing.
    ``description`` is ``{"method": text, "blocks": [{"well", "top", "base", "depth_unit"}]}``.
    """
    if val_logs:
        return list(train_logs), list(val_logs), {"method": "the validation wells given",
                                                  "blocks": [_span(g) for g in val_logs]}
    if validation == "none":
        return list(train_logs), [], {"method": "none (early stopping watches the training loss)", "blocks": []}
    fit_logs, held, blocks = deepest_blocks(train_logs, fraction, window)
    pct = f"{100 * fraction:g} %"
    used = "; ".join(f"{b['well']} {b['top']:g}-{b['base']:g} {b['depth_unit']}, {b['samples']} of {b['of_samples']} "
                     f"samples ({100 * b['share']:.0f} %)" for b in blocks[:SHOWN_BLOCKS])
    if len(blocks) > SHOWN_BLOCKS:      # a sentence, not a table: every block stays in the description's "blocks"
        used += f"; and {len(blocks) - SHOWN_BLOCKS} more wells' blocks alike"
    method = (f"the deepest {pct} of each training interval, at least one window (contiguous depth blocks that the "
              f"networks do not train on: {used})" if blocks else
              f"none: no training interval is long enough to hold out its deepest {pct}")
    return fit_logs, held, {"method": method, "blocks": blocks}


def validation_span(train_logs, val_logs, curves, *, validation: str = "deepest", fraction: float = 0.1,
                    window: int = 32) -> dict | None:
    """How well the validation data span the training data, per curve.

    The validation logs are ``val_logs`` when given, else the deepest blocks that
    :func:`choose_validation` holds out of ``train_logs`` (the same ``validation``, ``fraction``
    and ``window``); the training samples are the rest.  For each curve, ``share_inside`` is the
    share of training samples whose value lies inside ``[min, max]`` of the validation samples'
    values: 1 when the validation data reach every value trained on, 0 when they lie entirely
    outside the training range.

    Parameters
    ----------
    train_logs : WellLog list (training intervals); val_logs : WellLog list (may be empty)
    curves : the model's inputs and target.

    Returns
    -------
    dict or None
        ``{"threshold", "curves": {curve: {"share_inside", "validation_range", "training_range",
        "n_training", "n_validation"}}}``; None when nothing is held out (``validation="none"``).
    """
    if val_logs:
        fit, held = list(train_logs), list(val_logs)
    elif validation == "none":
        return None
    else:
        fit, held, _ = deepest_blocks(train_logs, fraction, window)
    if not held:
        return None
    out = {}
    for curve in curves:
        t = _values(fit, curve)
        v = _values(held, curve)
        if not (t.size and v.size):
            out[str(curve)] = {"share_inside": None, "n_training": int(t.size), "n_validation": int(v.size)}
            continue
        lo, hi = float(v.min()), float(v.max())
        out[str(curve)] = {"share_inside": float(np.mean((t >= lo) & (t <= hi))), "validation_range": [lo, hi],
                           "training_range": [float(t.min()), float(t.max())], "n_training": int(t.size),
                           "n_validation": int(v.size)}
    return {"threshold": SPAN_THRESHOLD, "curves": out}


def _values(logs, curve) -> np.ndarray:
    vals = [np.asarray(g.curve(curve), dtype=np.float64) for g in logs if str(curve).upper() in g.curves]
    v = np.concatenate(vals) if vals else np.empty(0)
    return v[np.isfinite(v)]


def span_warnings(span: dict | None) -> list:
    """One sentence per curve whose ``share_inside`` is below the span's threshold (none when it spans)."""
    if not span:
        return []
    out = []
    for curve, c in span["curves"].items():
        share = c.get("share_inside")
        if share is not None and share < span["threshold"]:
            lo, hi = c["validation_range"]
            digits = _digits_below(share, span["threshold"])
            out.append(f"the validation data do not span the training data in {curve}: only {share:.{digits}%} of "
                       f"the training samples lie inside the validation range {lo:.4g} to {hi:.4g} (threshold "
                       f"{span['threshold']:.0%}): early stopping never sees values like the other "
                       f"{1 - share:.{digits}%}")
    return out


def _digits_below(share: float, threshold: float) -> int:
    """Decimals of a percentage that keep ``share`` (below ``threshold``) from printing as the threshold itself:
    0 for 0.78 ("78%"), 1 for 0.799 ("79.9%"), 2 for 0.7996 ("79.96%"); at most 6."""
    digits = 0
    while digits < 6 and round(100 * share, digits) >= round(100 * threshold, digits):
        digits += 1
    return digits
