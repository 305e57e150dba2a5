"""Run folders: created safely, written atomically, with the figures every run holds."""

from .figures import close_figure, write_figures, write_trace_figures
from .folder import check_out_folder, file_slug, prepare_run_dir, write_csv, write_json
from .protocol import Experiment, RunResult, run_experiment, write_run_folder

__all__ = ["Experiment", "RunResult", "check_out_folder", "close_figure", "file_slug", "prepare_run_dir",
           "run_experiment", "write_csv", "write_figures", "write_json", "write_run_folder", "write_trace_figures"]
