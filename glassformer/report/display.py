"""What Jupyter shows for a trace and a model: small HTML, no network, no JavaScript.

:func:`trace_html` lists every array of a :class:`~glassformer.trace.Trace` in forward order
(name, meaning, shape, dtype, units, range), then, for a backward trace, the loss and every
gradient in backward order, and draws the attention weights (and their gradients) of each layer and
head as a small inline SVG heat map, whose cells show query position, key position and weight on
hover (:func:`glassformer.report.svg.heatmap_svg`).  :func:`estimator_html` summarises a window
regressor: the hyperparameters that differ from its defaults, its parameter count, and whether
and how it was fitted.  ``Trace._repr_html_`` and the regressors' ``_repr_html_`` call these;
plain ``repr`` stays short text.
"""

from __future__ import annotations

import numpy as np

from ..symbols import SYMBOLS
from .svg import MAX_CELLS, heatmap_svg
from .tables import esc, fmt

__all__ = ["differs_from_default", "estimator_html", "trace_html"]

_STYLE = ("<style>.gf-view table{border-collapse:collapse;font-size:12px}.gf-view th,.gf-view td{border:1px solid "
          "#ccc;padding:2px 6px;text-align:left}.gf-view td.num{text-align:right}.gf-view .maps{display:flex;"
          "flex-wrap:wrap;gap:12px}.gf-view figure{margin:4px}.gf-view figcaption{font-size:11px}</style>")


def _symbol(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def _range(arr: np.ndarray) -> str:
    finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
    if finite.size == 0:
        return "—"
    return f"{fmt(float(finite.min()) + 0.0)} to {fmt(float(finite.max()) + 0.0)}"       # + 0.0: no "-0"


def _positions(trace, sample: int):
    pos = trace.positions
    if pos is None:
        return None
    return pos[sample] if pos.ndim == 2 else pos


def _arrays_table(trace) -> str:
    rows = []
    for i, (key, arr) in enumerate(trace.items(), 1):
        sym = _symbol(key)
        if key == "y":                                 # the backward pass's arrays follow
            rows.append("<tr><th colspan=\"7\">Backward pass: the target, the loss and dL/d of each array, in the "
                        "order backward computes them</th></tr>")
        unit = trace.units.get(key) or trace.units.get(sym) or "—"
        rows.append(f"<tr><td class=\"num\">{i}</td><th>{esc(key)}</th><td>{esc(SYMBOLS.get(sym, ''))}</td>"
                    f"<td>{esc(tuple(arr.shape))}</td><td>{esc(arr.dtype)}</td><td>{esc(unit)}</td>"
                    f"<td>{esc(_range(arr))}</td></tr>")
    head = "<tr><th>#</th><th>name</th><th>what it is</th><th>shape</th><th>dtype</th><th>units</th><th>range</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _attention_maps(trace, sample: int, symbol: str = "A") -> str:
    """One small heat map per layer and head of every 4-D array whose key ends in ``symbol``
    (the weights ``A``; the gradients ``dA``, ``dS`` on a diverging scale centred on 0)."""
    blocks = []
    pos = _positions(trace, sample)
    unit = trace.units.get("positions")
    signed = symbol.startswith("d")
    for key, arr in trace.items():
        if _symbol(key) != symbol or arr.ndim != 4:
            continue
        b, heads, L, S = arr.shape                                            # (batch, num_heads, L, S)
        labels = pos if pos is not None and len(pos) == L == S else None
        cell = max(4.0, min(18.0, 144.0 / max(L, S)))
        finite = arr[sample][np.isfinite(arr[sample])]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)  # one scale, all heads
        if signed:
            hi = max(abs(lo), abs(hi)) or 1.0
            lo = -hi
        value = f"dL/d{symbol[1:]}" if signed else "weight"
        maps = [heatmap_svg(arr[sample, h], query_labels=labels, unit=unit, cell=cell, vmin=lo, vmax=hi, axes=False,
                            title=f"{key}, head {h}", value_name=value, cmap="RdBu_r" if signed else "viridis")
                for h in range(heads)]
        figs = "".join(f"<figure>{m}<figcaption>{esc(key)}, head {h}</figcaption></figure>" for h, m in enumerate(maps))
        cut = f" (first {MAX_CELLS} of {max(L, S)} positions)" if max(L, S) > MAX_CELLS else ""
        scale = (f"colour from {lo:.3g} (blue) through 0 (white) to {hi:.3g} (red)" if signed
                 else f"colour from {lo:.3g} (dark) to {hi:.3g} (bright)")
        blocks.append(f"<div class=\"maps\">{figs}</div><p style=\"font-size:11px\">{esc(key)}: rows are queries, "
                      f"columns keys, sequence {sample} of {b}{cut}; {scale}, the same for every head; rest the "
                      f"pointer on a cell for its {esc(value)}.</p>")
    return "".join(blocks)


def trace_html(trace, *, sample: int = 0) -> str:
    """HTML view of a :class:`~glassformer.trace.Trace`: arrays in forward order, attention maps per head.

    A backward trace (``grads=True``) also lists the target, the loss and every gradient in the
    order backward computes them, and draws dL/dA and dL/dS per layer and head (blue negative,
    red positive).

    Parameters
    ----------
    trace : Trace
    sample : int, default 0
        The batch element whose attention weights are drawn.

    Returns
    -------
    str
        A ``<div>`` with an inline style sheet, one table and one ``<svg>`` per layer and head (and
        per gradient map); no script, no external resource.
    """
    first = next(iter(trace.values()), None)
    batch = first.shape[0] if first is not None and first.ndim >= 1 else 0
    if batch and not -batch <= sample < batch:
        raise IndexError(f"trace_html: sample {sample} out of range for a batch of {batch}")
    pos = _positions(trace, sample)
    where = ""
    if pos is not None and pos.size:
        unit = trace.units.get("positions", "")
        where = f"; positions {fmt(float(pos[0]))} to {fmt(float(pos[-1]))}{' ' + unit if unit else ''}"
    if "L" in trace:
        summary = (f"Trace of one forward and backward pass: {len(trace)} arrays, the forward ones in the order they "
                   f"are computed, then the loss L = {float(trace['L']):.6g} and its gradients{where}.")
        maps = "".join(_attention_maps(trace, sample, s) for s in ("A", "dA", "dS"))
    else:
        summary = f"Trace of one forward pass: {len(trace)} arrays in the order they are computed{where}."
        maps = _attention_maps(trace, sample)
    return f"<div class=\"gf-view\">{_STYLE}<p><b>{esc(summary)}</b></p>{_arrays_table(trace)}{maps}</div>"


def differs_from_default(value, default) -> bool:
    """True when a setting's value is not its default (no options, None or {}, count as equal)."""
    if value in (None, {}) and default in (None, {}):     # no options given, either way
        return False
    return value != default and not (isinstance(value, str) and value == str(default))


def estimator_html(model, defaults: dict) -> str:
    """HTML summary of a window regressor: non-default hyperparameters, parameter count, fitted or not.

    Parameters
    ----------
    model : SequenceRegressor or LSTMRegressor
        Anything with ``get_params``; its parameters are its own ``named_parameters`` or those of
        its ``network_`` (an estimator that builds its network when fitted).
    defaults : dict
        The constructor's defaults, ``{parameter: default}``
        (:func:`glassformer.models.constructor_defaults`).

    Returns
    -------
    str
        A ``<div>`` with the summary line, a table of the hyperparameters that differ from the
        constructor's defaults, and every parameter tensor's shape (collapsed).
    """
    name = type(model).__name__
    params = model.get_params()
    changed = [(k, v, defaults[k]) for k, v in params.items() if k in defaults and differs_from_default(v, defaults[k])]
    net = model if hasattr(model, "named_parameters") else getattr(model, "network_", None)
    fitted = "fitted" if getattr(model, "is_fitted_", False) else "not fitted"
    hist = getattr(model, "history_", None)
    if hist is not None and len(hist):
        fitted += (f": {len(hist)} epoch{'s' if len(hist) != 1 else ''} ({hist.stop_reason}), final training loss "
                   f"{fmt(hist.train_loss[-1])}"
                   + (f", best epoch {hist.best_epoch}" if hist.best_epoch is not None else ""))
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(fmt(v))}</td><td>{esc(fmt(d))}</td></tr>" for k, v, d in changed)
    table = (f"<table><tr><th>hyperparameter</th><th>value</th><th>default</th></tr>{rows}</table>" if changed
             else "<p>Every hyperparameter has its default value.</p>")
    if net is None:
        size, shapes = "no network built yet", ""
    else:
        named = list(net.named_parameters())
        size = f"{sum(int(np.prod(p.shape)) for _, p in named):,} parameters"
        rows = "".join(f"<tr><th>{esc(n)}</th><td>{esc(tuple(p.shape))}</td></tr>" for n, p in named)
        shapes = f"<details><summary>Parameter tensors</summary><table>{rows}</table></details>"
    return f"<div class=\"gf-view\">{_STYLE}<p><b>{esc(name)}</b>: {size}, {esc(fitted)}.</p>{table}{shapes}</div>"
