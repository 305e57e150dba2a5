"""Shared fixtures: headless matplotlib, the package importable from a bare checkout, and the data folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")   # figures are written, never shown

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:                  # `pytest` from a checkout without `pip install -e .`
    sys.path.insert(0, str(REPO))

try:  # pragma: no cover - depends on what is installed
    import matplotlib

    matplotlib.use("Agg", force=True)
except ImportError:  # pragma: no cover
    pass


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``<repo>/../shared/data``, the real well logs and corpora (never copied into the repo)."""
    path = REPO / ".." / "shared" / "data"
    if not path.is_dir():
        pytest.skip(f"shared data folder not found at {path.resolve()} (real-data tests need it)")
    return path.resolve()
