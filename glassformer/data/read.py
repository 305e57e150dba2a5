"""Read any well file: LAS or CSV, chosen by the file's suffix."""

from __future__ import annotations

from pathlib import Path

from ..errors import DataFileError
from .csv import read_csv
from .las import read_las
from .welllog import WellLog

__all__ = ["read_well"]


def read_well(path, **kwargs) -> WellLog:
    """Read a LAS (``.las``, any case) or CSV (``.csv``) file; keyword arguments go to that reader.

    Raises
    ------
    DataFileError
        For any other suffix, or anything the chosen reader raises.
    """
    suffix = Path(path).suffix.lower()
    if suffix == ".las":
        return read_las(path, **kwargs)
    if suffix == ".csv":
        return read_csv(path, **kwargs)
    raise DataFileError(f"{path}: unknown well file type {suffix or '(no suffix)'!r}; expected .las or .csv")
