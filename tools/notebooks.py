"""Run the notebooks in notebooks/ and compare what they show with what is committed.

The notebooks are committed with their outputs, so that a reader browsing the repository sees
every table and figure.  This module is the one place that executes them (``--write`` updates
the committed copies; the tests execute temporary copies) and that says which parts of an output
count when a fresh run is compared with the committed one:

* text counts: every ``stdout`` stream and the ``text/plain`` of every displayed result, cell by
  cell, after :func:`normalise` (rounding-level numbers, timings and memory addresses vary from
  machine to machine and are replaced by placeholders);
* figures and HTML count by presence only: the same kinds of output (``image/png``, ``text/html``)
  in the same cells.  A PNG's bytes depend on the fonts and the matplotlib version; an HTML table
  repeats its ``text/plain`` numbers.
* ``stderr`` does not count (library warnings differ between versions).

Usage::

    PYTHONPATH=$PWD python tools/notebooks.py --write          # execute every notebook in place
    PYTHONPATH=$PWD python tools/notebooks.py --check          # execute copies, compare with the committed
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
NAMES = ["01_transformer_step_by_step.ipynb", "02_attention_learns_the_next_depth.ipynb", "03_a_real_well.ipynb"]

# Numbers at rounding level: in scientific notation with an exponent of -7 or below (or exactly zero
# written that way), e.g. "1.1e-16", "0.0e+00", "3.2e-10".  BLAS kernels differ between CPUs in the
# last bits, which is all these numbers measure; the tests check their size, not their digits.
_TINY = re.compile(r"-?\d+(?:\.\d+)?e(?:-(?:0?[7-9]|[1-9]\d)|[+-]00)\b")
_SECONDS = re.compile(r"\d+(?:\.\d+)? ?s\b")                 # "62.2 s", "0.4s": wall-clock timings
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")                  # object reprs


def normalise(text: str) -> str:
    """``text`` with rounding-level numbers, timings and memory addresses replaced by placeholders."""
    text = _TINY.sub("<tiny>", text)
    text = _SECONDS.sub("<seconds>", text)
    return _ADDRESS.sub("<address>", text)


def comparable(nb) -> list:
    """Per code cell: the normalised text it shows and the kinds of rich output, ``[(texts, kinds)]``."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        texts, kinds = [], []
        for out in cell.get("outputs", []):
            if out.output_type == "stream" and out.name == "stdout":
                texts.append(normalise(out.text))
            elif out.output_type in ("execute_result", "display_data"):
                texts.append(normalise(out.data.get("text/plain", "")))
                kinds.append(sorted(k for k in out.data if k != "text/plain"))
            elif out.output_type == "error":
                kinds.append(["error"])
        cells.append(("".join(texts), kinds))
    return cells


def execute(path: Path, workdir: Path | None = None, timeout: int = 1200) -> nbformat.NotebookNode:
    """Execute the notebook at ``path`` in a fresh python3 kernel; returns it with its outputs (raises on a cell error).

    The kernel runs in ``workdir`` (default: the notebook's folder) and imports this checkout's
    glassformer (its root is put first on PYTHONPATH).  No timing metadata is recorded, so that a
    re-run changes the file only where an output changed.
    """
    nb = nbformat.read(path, as_version=4)
    env_path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    old = {k: os.environ.get(k) for k in ("PYTHONPATH", "MPLBACKEND")}
    os.environ["PYTHONPATH"] = env_path
    os.environ.pop("MPLBACKEND", None)                  # the notebooks choose %matplotlib inline
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                       resources={"metadata": {"path": str(workdir or path.parent)}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def write(names=NAMES) -> None:
    """Execute each notebook (in a temporary folder, so that nothing it writes lands in the repository) in place."""
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / name
            shutil.copy(NOTEBOOKS / name, copy)
            nb = execute(copy, Path(tmp))
        nbformat.write(nb, NOTEBOOKS / name)
        print(f"wrote {name}: {(NOTEBOOKS / name).stat().st_size / 1e6:.2f} MB")


def check(names=NAMES) -> int:
    """Execute copies and compare them with the committed notebooks; returns the number that differ."""
    bad = 0
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / name
            shutil.copy(NOTEBOOKS / name, copy)
            fresh = comparable(execute(copy, Path(tmp)))
        committed = comparable(nbformat.read(NOTEBOOKS / name, as_version=4))
        differ = [i for i, (a, b) in enumerate(zip(committed, fresh)) if a != b]
        bad += bool(differ) or len(fresh) != len(committed)
        print(f"{name}: " + (f"code cells {differ} differ" if differ else "same as committed"))
    return bad


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="execute the notebooks and store their outputs")
    parser.add_argument("--check", action="store_true", help="execute copies and compare with the committed")
    parser.add_argument("names", nargs="*", default=NAMES, help="notebook file names (default: all three)")
    args = parser.parse_args(argv)
    if args.write:
        write(args.names)
    if args.check:
        return 1 if check(args.names) else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
