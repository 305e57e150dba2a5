"""The chapter's figures (Pyrcz 2024), as library functions over plain arrays (and a trace).

Every function draws into the ``ax=`` / ``axes=`` it is given (or creates a figure
when that is None), returns the Axes, an array of Axes, or the Figure, and never
calls ``show`` or saves; :func:`save_figure` writes a PNG atomically.

Conventions (reference/aesthetics.md, section 2.7):

* depth is on the y-axis, increasing downward, on every track and heat map;
* labels carry units: depth (m), porosity (fraction, v/v, or %), permeability (mD)
  or log10 permeability (log10 mD);
* attention heat maps put query depths on the rows and key depths on the columns,
  the image array is exactly the weights, and the colour bar states the scale;
* no global ``rcParams`` are changed.

Figures are created through ``matplotlib.pyplot`` only when the caller has already
imported it (so Jupyter shows them inline); otherwise they are standalone
:class:`matplotlib.figure.Figure` objects that need no display (CLI, demos, tests).

The plain functions take arrays; the ``plot_trace_*`` wrappers take a model's trace
(a mapping of the chapter's symbols E, P, Z, Q, K, V, S, A, U, T1, R, G, F, T2, H,
y_hat), pick one layer and one sample, and call the plain functions.
"""

from ._common import MAX_LINE_COMPONENTS, MAX_MARKERS, save_figure  # noqa: F401
from .logs import plot_comparison, plot_comparison_zoomed, plot_crossplot, plot_log_tracks, plot_prediction
from .attention import plot_attention, plot_attention_heads, plot_cross_attention
from .plugs import plot_plugs_on_log, plot_depth_match, plot_shift_correlation
from .uncertainty import plot_coverage, plot_interval_vs_depth
from .representations import (  # noqa: F401
    DEFAULT_STAGES, plot_embeddings, plot_positional_encoding, plot_qkv, plot_stages,
    plot_value_vs_output, STAGE_LABELS)
from .training import plot_ablation, plot_loss, plot_prediction_panels
from .wells import plot_metric_per_well
from .trace import (
    plot_trace_attention, plot_trace_embeddings, plot_trace_qkv, plot_trace_stages,
    plot_trace_value_vs_output, trace_array)

__all__ = [
    "STAGE_LABELS",
    "plot_ablation",
    "plot_attention",
    "plot_comparison_zoomed",
    "plot_attention_heads",
    "plot_comparison",
    "plot_plugs_on_log",
    "plot_coverage",
    "plot_cross_attention",
    "plot_crossplot",
    "plot_depth_match",
    "plot_embeddings",
    "plot_interval_vs_depth",
    "plot_log_tracks",
    "plot_metric_per_well",
    "plot_loss",
    "plot_positional_encoding",
    "plot_prediction",
    "plot_prediction_panels",
    "plot_qkv",
    "plot_shift_correlation",
    "plot_stages",
    "plot_trace_attention",
    "plot_trace_embeddings",
    "plot_trace_qkv",
    "plot_trace_stages",
    "plot_trace_value_vs_output",
    "plot_value_vs_output",
    "save_figure",
    "trace_array",
]
