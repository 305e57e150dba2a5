"""Well data: reading LAS/CSV logs and core tables, depth matching, windows along depth, scaling,
synthetic and Volve data.

lasio and pandas are imported only when a file is read, so importing this package is cheap.
"""

from .scaling import Log10Transform, MinMaxScaler, StandardScaler, scaler_from_dict
from .synthetic import SyntheticWellParams, neighbor_dataset, split_by_sequence, synthetic_wells
from .volve import ATTRIBUTION, VOLVE_WELLS, data_root, read_volve, volve_path
from .wells import (
    DEFAULT_NULL_VALUES,
    WellLog,
    common_depth_unit,
    read_csv,
    read_las,
    read_well,
)
from .windows import Windows, contiguous_runs, make_windows, stitch_windows, window_starts
from .core import CoreTable, read_core
from .core_merge import CoreOnLog, MergeReport, merge_core
from .depth_matching import DepthMatch, RunShift, estimate_depth_shifts

__all__ = [
    "ATTRIBUTION",
    "CoreOnLog",
    "CoreTable",
    "DepthMatch",
    "MergeReport",
    "RunShift",
    "DEFAULT_NULL_VALUES",
    "Log10Transform",
    "MinMaxScaler",
    "StandardScaler",
    "SyntheticWellParams",
    "VOLVE_WELLS",
    "WellLog",
    "Windows",
    "common_depth_unit",
    "contiguous_runs",
    "data_root",
    "estimate_depth_shifts",
    "make_windows",
    "merge_core",
    "neighbor_dataset",
    "read_core",
    "read_csv",
    "read_las",
    "read_volve",
    "read_well",
    "scaler_from_dict",
    "split_by_sequence",
    "stitch_windows",
    "synthetic_wells",
    "volve_path",
    "window_starts",
]
