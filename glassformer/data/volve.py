"""The real Volve wells: where the files are, what they hold, and the attribution to print.

The files are not part of the package (never copied into the repository).  They are looked up
under a *data root*: the environment variable ``GLASSFORMER_DATA`` if set, otherwise a folder
``shared/data`` beside the repository checkout, found relative to this package.  The Volve files sit in
``<root>/real/``.

Whenever results on these wells are shown, print :data:`ATTRIBUTION` beside them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataFileError, InputError
from .read import read_well
from .welllog import WellLog

__all__ = [
    "ATTRIBUTION",
    "CORE_PERMEABILITY",
    "CORE_POROSITY",
    "DATA_ENV_VAR",
    "F11B_FORECAST_M",
    "F11B_TRAIN_M",
    "PERMEABILITY",
    "POROSITY",
    "VOLVE_WELLS",
    "VolveWell",
    "data_root",
    "is_volve",
    "read_volve",
    "volve_available",
    "volve_path",
]

#: Environment variable that overrides the data root.
DATA_ENV_VAR = "GLASSFORMER_DATA"

#: Credit line required wherever these data, or results derived from them, appear
#: (as the data's distribution asks; check Equinor's current licence terms before publishing).
ATTRIBUTION = (
    "Data: Volve field data set, courtesy of Equinor and the Volve licence partners, released "
    "under the Equinor Open Data Licence. https://www.equinor.com/energy/volve-data-sharing — "
    "files obtained via github.com/andymcdgeo/spwla_volve and "
    "github.com/andymcdgeo/Petrophysics-Python-Series (A. McDonald)."
)

#: Porosity and permeability mnemonics of the CPI logs: PHIF (fraction v/v), KLOGH (mD, computed from logs).
POROSITY = "PHIF"
PERMEABILITY = "KLOGH"
#: Core table columns: CPOR (porosity, percent) and CKHL (horizontal permeability, mD, Klinkenberg-corrected).
CORE_POROSITY = "CPOR"
CORE_PERMEABILITY = "CKHL"

#: The single-well depth split of 15/9-F-11 B (metres): train 3351.6-4300, forecast 4300-4744.8.
F11B_TRAIN_M = (3351.6, 4300.0)
F11B_FORECAST_M = (4300.0, 4744.8)


@dataclass(frozen=True)
class VolveWell:
    """One Volve file: its key, file name, well name, kind and where PHIF and KLOGH are both valid.

    ``valid_m`` is the depth range (m) where porosity and permeability are both present, as
    checked against the data's documentation; ``n_samples`` the file's row count.
    """

    key: str
    filename: str
    well: str
    kind: str  # "cpi" (LAS log) or "core" (CSV table)
    n_samples: int
    valid_m: tuple[float, float]
    n_valid: int


#: The five Volve files, by short key.
VOLVE_WELLS: dict[str, VolveWell] = {
    w.key: w
    for w in (
        VolveWell("F-1A", "15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS", "15/9-F-1 A", "cpi", 3240, (3429.4, 3657.4), 2281),
        VolveWell("F-1B", "15_9-F-1B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS", "15/9-F-1 B", "cpi", 2610, (3229.4, 3439.8), 2105),
        VolveWell("F-11B", "15_9-F11B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS", "15/9-F-11 B", "cpi", 14077, (3351.6, 4744.8), 13933),
        VolveWell("19A", "15_9-19_A_CPI.las", "NO_15/9-19_A", "cpi", 3008, (3666.5916, 3966.21), 1967),
        VolveWell("19A-CORE", "15_9-19A-CORE.csv", "15/9-19 A", "core", 728, (3838.6, 3999.95), 557),
    )
}

# The core CSV has no units row; these follow the source notebooks (README, file 5).
_CORE_UNITS = {
    "ORIGDEPTH": "m", "CKHG": "mD", "CKHL": "mD", "CKVG": "mD", "CKVL": "mD",
    "CPOR": "%", "CPORV": "%", "CGD": "g/cm3", "CGDV": "g/cm3",
}


def data_root() -> Path:
    """The data root: ``$GLASSFORMER_DATA`` if set, else ``shared/data`` beside the repository checkout.

    The path is returned whether or not it exists; :func:`volve_path` checks.
    """
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env).expanduser()
    # glassformer/data/volve.py -> parents[2] is the repository root
    return (Path(__file__).resolve().parents[2] / ".." / "shared" / "data").resolve()


def volve_path(key: str, root=None) -> Path:
    """Path of the Volve file ``key`` (one of :data:`VOLVE_WELLS`) under ``root`` (default :func:`data_root`).

    Raises
    ------
    InputError
        Unknown key (lists the known ones).
    DataFileError
        The file is not there (says where it looked and how to point elsewhere).
    """
    if key not in VOLVE_WELLS:
        raise InputError(f"unknown Volve well {key!r}; known: {', '.join(VOLVE_WELLS)}")
    base = Path(root) if root is not None else data_root()
    path = base / "real" / VOLVE_WELLS[key].filename
    if not path.is_file():
        raise DataFileError(
            f"Volve file {VOLVE_WELLS[key].filename} not found under {base / 'real'}; "
            f"set {DATA_ENV_VAR} to the folder that holds real/"
        )
    return path


def read_volve(key: str, root=None) -> WellLog:
    """Read the Volve file ``key`` as a :class:`WellLog` (depth in m).

    CPI logs keep their LAS units (PHIF v/v, KLOGH mD).  The core table gets the units of
    the source notebooks (CPOR %, CKHL/CKHG mD, CGD g/cm3), since the file has none.
    """
    path = volve_path(key, root)
    if VOLVE_WELLS[key].kind == "core":
        return read_well(path, units=_CORE_UNITS, name=VOLVE_WELLS[key].well)
    return read_well(path)


def volve_available(root=None) -> bool:
    """True when the three Volve F-well files can be found under the data root."""
    try:
        for key in ("F-11B", "F-1B", "F-1A"):
            volve_path(key, root)
    except DataFileError:
        return False
    return True


def is_volve(log: WellLog) -> bool:
    """True when ``log`` looks like a Volve well (name 15/9-..., or a file from the Volve data set),
    so that outputs derived from it carry :data:`ATTRIBUTION`."""
    return "volve" in (log.source + log.name).lower() or "15/9" in log.name or "15_9" in log.source
