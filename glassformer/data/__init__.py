"""Well data: well logs and their files, curve names and units, core tables and depth matching,
windows, scaling, example data.

* :mod:`~glassformer.data.welllog` -- :class:`WellLog`, curves on a depth axis.
* :mod:`~glassformer.data.las` (with :mod:`~glassformer.data.las_sections`) -- LAS reading and
  writing; :mod:`~glassformer.data.csv` -- CSV reading; :mod:`~glassformer.data.excel` -- Excel
  sheets; :func:`read_well` picks by suffix.
* :mod:`~glassformer.data.parsing` -- encodings, numbers and missing values both readers share.
* :mod:`~glassformer.data.units` -- depth units; porosity-like units as fraction or percent; units
  written in a table's headers.
* :mod:`~glassformer.data.aliases` -- common mnemonics for the same quantity (PHIF, PHIE, ...).
* :mod:`~glassformer.data.plugs`, :mod:`~glassformer.data.plugs_merge`,
  :mod:`~glassformer.data.depth_matching` -- core tables, plugs on the log grid, depth shifts.
* :mod:`~glassformer.data.windows`, :mod:`~glassformer.data.scaling` -- model inputs.
* :mod:`~glassformer.data.synthetic`, :mod:`~glassformer.data.volve` -- example data.

pandas is imported only when a file is read, so importing this package stays cheap (lasio, which
the LAS reader is built on, costs about 0.1 s).
"""

from .aliases import DEFAULT_ALIASES, describe_use, parse_aliases, resolve_curves, with_requested_names
from .csv import read_csv
from .las import read_las, write_las
from .parsing import DEFAULT_NULL_VALUES
from .excel import read_excel
from .read import names_depth, parse_units, read_well, read_wells, state_units
from .scaling import Log10Transform, MinMaxScaler, StandardScaler, scaler_from_dict
from .synthetic import SyntheticWellParams, neighbor_dataset, split_by_sequence, synthetic_wells
from .units import curve_name, depth_unit_from_string, split_header, volume_fraction_kind
from .volve import ATTRIBUTION, VOLVE_WELLS, data_root, read_volve, volve_path
from .welllog import WellLog, common_depth_unit
from .windows import Windows, contiguous_runs, make_windows, stitch_windows, window_starts
from .plugs import RUN_COLUMNS, PlugTable, read_plugs
from .plugs_merge import PlugsOnLog, MergeReport, merge_plugs
from .depth_matching import DepthMatch, RunShift, estimate_depth_shifts

__all__ = [
    "ATTRIBUTION",
    "PlugsOnLog",
    "PlugTable",
    "DepthMatch",
    "MergeReport",
    "RunShift",
    "DEFAULT_ALIASES",
    "DEFAULT_NULL_VALUES",
    "Log10Transform",
    "MinMaxScaler",
    "StandardScaler",
    "SyntheticWellParams",
    "VOLVE_WELLS",
    "WellLog",
    "Windows",
    "common_depth_unit",
    "curve_name",
    "contiguous_runs",
    "data_root",
    "estimate_depth_shifts",
    "depth_unit_from_string",
    "describe_use",
    "make_windows",
    "merge_plugs",
    "names_depth",
    "neighbor_dataset",
    "read_plugs",
    "parse_aliases",
    "parse_units",
    "read_csv",
    "read_excel",
    "read_las",
    "read_volve",
    "read_well",
    "read_wells",
    "resolve_curves",
    "scaler_from_dict",
    "split_by_sequence",
    "split_header",
    "state_units",
    "stitch_windows",
    "synthetic_wells",
    "volume_fraction_kind",
    "volve_path",
    "window_starts",
    "with_requested_names",
    "write_las",
]
