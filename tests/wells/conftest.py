"""Small LAS wells written by hand for the well-level tests (depths in m, porosity in v/v unless asked)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


def las_text(name: str, depth, curves: dict, *, depth_unit: str = "M", null: float = -999.25) -> str:
    """LAS 2.0 text: ``curves`` is ``{mnemonic: (unit, values)}``; NaN values are written as ``null``."""
    head = [
        "~Version information",
        " VERS.   2.0 : CWLS LOG ASCII STANDARD - VERSION 2.0",
        " WRAP.    NO : One line per depth step",
        "~Well information",
        f" STRT.{depth_unit}  {depth[0]:.4f} : START DEPTH",
        f" STOP.{depth_unit}  {depth[-1]:.4f} : STOP DEPTH",
        f" STEP.{depth_unit}  {depth[1] - depth[0]:.4f} : STEP",
        f" NULL.  {null:g} : NULL VALUE",
        f" WELL.  {name} : WELL",
        "~Curve information",
        f" DEPT.{depth_unit} : Depth",
        *(f" {m}.{unit} : {m}" for m, (unit, _) in curves.items()),
        "~ASCII",
    ]
    rows = []
    for i, d in enumerate(depth):
        vals = [f"{null:g}" if not np.isfinite(v[i]) else f"{v[i]:.6f}" for _, v in curves.values()]
        rows.append(f"{d:.8f} " + " ".join(vals))
    return "\n".join(head + rows) + "\n"


def synthetic_curves(depth, seed: int, *, porosity: str = "PHIF", percent: bool = False) -> dict:
    """Porosity, shale volume, water saturation and a permeability that follows porosity and shale."""
    rng = np.random.default_rng(seed)
    phi = 0.18 + 0.07 * np.sin(depth / 2.3) + 0.01 * rng.standard_normal(len(depth))
    vsh = np.clip(0.35 - 1.5 * (phi - 0.18) + 0.03 * rng.standard_normal(len(depth)), 0, 1)
    sw = np.clip(0.4 + 0.5 * vsh + 0.02 * rng.standard_normal(len(depth)), 0, 1)
    k = 10 ** (14 * phi - 3 * vsh - 0.5)
    return {porosity: ("%" if percent else "V/V", 100 * phi if percent else phi), "VSH": ("V/V", vsh),
            "SW": ("V/V", sw), "KLOGH": ("MD", k)}


def write_las_file(path, well_name, depth, curves=None, seed=0, **options) -> Path:
    """Write a LAS well to ``path``; ``curves`` default to :func:`synthetic_curves` of ``seed``."""
    depth = np.asarray(depth, dtype=float)
    path = Path(path)
    path.write_text(las_text(well_name, depth, curves or synthetic_curves(depth, seed), **options))
    return path


@pytest.fixture
def write_well(tmp_path):
    """``write_well(file_name, well_name, depth, curves=None, seed=0, **las_options) -> Path`` in ``tmp_path``."""
    return lambda file_name, *args, **kw: write_las_file(Path(tmp_path) / file_name, *args, **kw)


@pytest.fixture(scope="session")
def las_writer():
    """:func:`write_las_file` (a full path as first argument), for module-scoped fixtures."""
    return write_las_file


@pytest.fixture(scope="session")
def make_curves():
    """:func:`synthetic_curves`, for tests that change a curve before writing the well."""
    return synthetic_curves
