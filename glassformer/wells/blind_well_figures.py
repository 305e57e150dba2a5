"""The figures of one held-out well, from the rows of a run's ``predictions.csv``.

:func:`blind_well_figures` turns the rows of a ``glassformer cv`` or ``train`` run into figure
functions (name -> callable returning a Figure, as a run folder's figure writer takes them):
the whole well as input-log, per-model and residual tracks; the same tracks over the windows
where the observed target varies most; and a predicted-against-observed cross-plot per model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from ..plots.blind_well import plot_blind_well_tracks, plot_predicted_vs_observed, rmse, zoom_windows
from ..runs import file_slug
from .evaluation import COLUMN

__all__ = ["blind_well_figures", "model_columns"]

#: Longest default zoom window, per depth unit: 30 m (about 100 ft) shows single beds at a 0.1 m step.
ZOOM_LENGTH = {"m": 30.0, "ft": 100.0}


def model_columns(rows: pd.DataFrame, unit: str = "log10 mD") -> dict:
    """``{column: model name}`` for every model of the comparison with a column in ``rows``.

    Columns are named ``<model>_<unit>`` (``random_forest_log10_mD``); the order is the comparison
    table's (transformer, LSTM, the tree ensembles without and with depth context, the
    porosity-permeability transform, the training mean, the blend).
    """
    suffix = _suffix(unit)
    return {f"{stem}_{suffix}": name for name, stem in COLUMN.items() if f"{stem}_{suffix}" in rows.columns}


def _suffix(unit: str) -> str:
    return str(unit).replace(" ", "_")



def blind_well_figures(rows: pd.DataFrame, well: str, *, input_names, target_name: str, models: dict | None = None,
                       unit: str = "log10 mD", depth_unit: str = "m", input_units: dict | None = None,
                       bands: dict | None = None, residual_models=None, zoom_length: float | None = None,
                       n_zooms: int = 2) -> dict:
    """Figure functions of one well: its tracks, its zooms where the truth varies, its cross-plots.

    Parameters
    ----------
    rows : pandas.DataFrame
        Rows of a run's ``predictions.csv``: columns ``well``, ``depth``, the inputs,
        ``<target>_observed_<unit>`` and one ``<model>_<unit>`` column per model (units with
        ``_`` for spaces, e.g. ``KLOGH_observed_log10_mD``, ``gradient_boosting_log10_mD``).
        A depth present twice (a train run's splits) keeps its last row.
    well : str
        The well drawn (a value of the ``well`` column).
    input_names : sequence of str
        Input curves, one track each (e.g. ``["PHIF", "VSH", "SW"]``).
    target_name : str
        The target curve (e.g. ``"KLOGH"``).
    models : dict of str -> str, optional
        Column -> label of the models drawn, in order; default every model of the comparison
        present in ``rows`` (:func:`model_columns`), the trees with and without depth context.
    unit : str
        The target's unit as written in the column names, e.g. ``"log10 mD"`` or ``"mD"``.
    depth_unit : str
        Unit of ``depth`` for the axis labels and the zoom length.
    input_units : dict of str -> str, optional
        Unit of each input for its track (e.g. ``{"PHIF": "v/v"}``).
    bands : dict of str -> (str, str), optional
        Model column -> (P10 column, P90 column): the band shaded on that model's track.
    residual_models : sequence of str, optional
        Model columns on the residual track; default the two with the lowest RMSE on this well
        and the transformer beside them.
    zoom_length : float, optional
        Length of each zoom window in ``depth_unit``; default a fifth of the well, at most 30 m
        (100 ft).
    n_zooms : int
        Zoom windows at most (each its own figure).

    Returns
    -------
    dict of str -> callable
        ``blind_well_<well>_tracks``, ``blind_well_<well>_zoom_<k>`` (k = 1, 2, ...) and
        ``blind_well_<well>_crossplot``, each a function of no argument returning a
        :class:`matplotlib.figure.Figure`.

    Raises
    ------
    InputError
        ``well`` not in ``rows``, or a column that ``rows`` lacks.
    """
    part = _well_rows(rows, well)
    models = dict(models) if models is not None else model_columns(rows, unit)
    target_col = f"{target_name}_observed_{_suffix(unit)}"
    band_cols = [c for pair in (bands or {}).values() for c in pair]
    _require(part, ["depth", *input_names, target_col, *models, *band_cols, *(residual_models or [])], well)
    depth = part["depth"].to_numpy(dtype=float)
    observed = part[target_col].to_numpy(dtype=float)
    inputs = {name: part[name].to_numpy(dtype=float) for name in input_names}
    preds = {label: part[col].to_numpy(dtype=float) for col, label in models.items()}
    band_arrays = {models[col]: (part[p10].to_numpy(dtype=float), part[p90].to_numpy(dtype=float))
                   for col, (p10, p90) in (bands or {}).items() if col in models}
    chosen = [models[c] for c in residual_models] if residual_models is not None else _default_residuals(observed,
                                                                                                            preds)
    span = float(depth[-1] - depth[0])
    length = zoom_length or min(span / 5.0, ZOOM_LENGTH.get(depth_unit, 30.0))
    zooms = zoom_windows(depth, observed, length=length, n_windows=n_zooms) if span > 0 else []
    role = _role(part)
    track_kw = dict(input_units=input_units, quantity=target_name, unit=unit, residual_models=chosen,
                    bands=band_arrays, depth_unit=depth_unit)
    slug = file_slug(well)
    figures = {f"blind_well_{slug}_tracks": lambda: plot_blind_well_tracks(
        depth, inputs, observed, preds, zooms=zooms, **track_kw,
        title=f"{well}{role}: input logs, observed {target_name} (black) against each model (RMSE in {unit} "
              f"over the whole well), residuals; shaded: the zooms")}
    for k, (top, base) in enumerate(zooms, start=1):
        figures[f"blind_well_{slug}_zoom_{k}"] = _zoom(depth, inputs, observed, preds, track_kw, top, base,
                                                       f"{well}{role}, zoom {k}: {top:.1f}-{base:.1f} {depth_unit}, "
                                                       f"where observed {target_name} varies most (RMSE in {unit} "
                                                       "over this window)")
    figures[f"blind_well_{slug}_crossplot"] = lambda: plot_predicted_vs_observed(
        observed, preds, quantity=target_name, unit=unit, depth=depth, depth_unit=depth_unit,
        title=f"{well}{role}: predicted against observed {target_name}, one panel per model (dashed: 1:1)")
    return figures


def _zoom(depth, inputs, observed, preds, track_kw, top, base, title):
    return lambda: plot_blind_well_tracks(depth, inputs, observed, preds, top=top, base=base, title=title,
                                          **track_kw)


def _well_rows(rows: pd.DataFrame, well: str) -> pd.DataFrame:
    if "well" not in rows.columns:
        raise InputError(f"blind_well_figures: the rows have no 'well' column; columns: {list(rows.columns)}")
    part = rows[rows["well"].astype(str) == str(well)]
    if part.empty:
        raise InputError(f"blind_well_figures: well {well!r} not in the rows; wells: "
                         f"{sorted(rows['well'].astype(str).unique())}")
    return part.drop_duplicates("depth", keep="last").sort_values("depth")


def _require(part: pd.DataFrame, columns, well) -> None:
    missing = [c for c in columns if c not in part.columns]
    if missing:
        raise InputError(f"blind_well_figures: well {well!r}: no column {missing} in the rows; columns: "
                         f"{list(part.columns)}")


def _role(part: pd.DataFrame) -> str:
    """`` (held out)`` when every row of the well is a test row (a cv run), else its splits."""
    if "split" not in part.columns:
        return ""
    splits = list(dict.fromkeys(part["split"].astype(str)))
    return " (held out)" if splits == ["test"] else f" ({', '.join(splits)})"


def _default_residuals(observed, preds) -> list:
    """The two models with the lowest RMSE, and the transformer beside them (the model under study)."""
    ranked = sorted((s, label) for label, p in preds.items() if np.isfinite(s := rmse(observed, p)))
    chosen = [label for _, label in ranked[:2]]
    if "transformer" in preds and "transformer" not in chosen:
        chosen.append("transformer")
    return chosen
