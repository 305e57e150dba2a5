"""The layering is a checked rule: import-linter's contracts (pyproject.toml) hold for every import.

Arrows point down only: the command line and the demonstrations use the well job, which uses the
estimators, reports and figures, which use training and data, which use the layers of ``nn``;
``nn`` imports nothing of the package but ``errors`` and ``_validation``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:     # Python 3.10: import-linter brings tomli
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "glassformer"
CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def _children() -> set[str]:
    """The direct children of the package: its sub-packages and modules."""
    return {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {
        p.parent.name for p in PACKAGE.glob("*/__init__.py")}


def _contract(kind: str) -> dict:
    (found,) = [c for c in CONTRACTS if c["type"] == kind]
    return found


def test_lint_imports_keeps_every_contract_of_pyproject():
    # the checkout under test first on the path: grimp reads the package Python would import
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in res.stdout


def test_the_layers_contract_names_every_child_of_the_package_and_nn_below_all_but_errors_and_validation():
    layers = _contract("layers")
    assert layers["exhaustive"] is True and layers["containers"] == ["glassformer"]
    rows = [[name.strip().strip("()") for name in row.split("|")] for row in layers["layers"]]
    listed = [name for row in rows for name in row]
    assert len(listed) == len(set(listed))
    assert _children() <= set(listed)
    position = {name: i for i, row in enumerate(rows) for name in row}
    assert position["cli"] == position["demos"] < position["wells"] < position["models"] < position["train"] \
        < position["nn"] < position["errors"]
    assert {name for name, i in position.items() if i > position["nn"]} >= {"errors", "_validation"}


def test_nn_is_forbidden_every_other_child_of_the_package():
    forbidden = _contract("forbidden")
    assert forbidden["source_modules"] == ["glassformer.nn"]
    expected = {f"glassformer.{name}" for name in _children() - {"nn", "errors", "_validation"}}
    assert set(forbidden["forbidden_modules"]) == expected
