"""The notebooks in notebooks/ run top to bottom in a real Jupyter kernel and show the library's own numbers.

Each notebook is copied to a temporary folder and executed there with nbclient; any cell error fails
the test.  The assertions read the executed outputs (what a reader sees) and compare them with the
chapter's printed values (glassformer.selftest.published) and with baselines computed here
independently.  The kernel imports this checkout's glassformer (PYTHONPATH), not an installed copy.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

from glassformer.selftest.published import demonstration_1, demonstration_2

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
NAMES = ["01_transformer_step_by_step.ipynb", "02_attention_learns_the_next_depth.ipynb", "03_a_real_well.ipynb"]
CHAPTER_LINE = re.compile(r"epoch\s+(\d+) \| chapter ([\d.]+) \| glassformer ([\d.]+)")


def execute(name: str, tmp_path: Path, monkeypatch) -> nbformat.NotebookNode:
    """Run a temporary copy of ``notebooks/<name>``; returns the executed notebook (raises on a cell error)."""
    copy = tmp_path / name
    shutil.copy(NOTEBOOKS / name, copy)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.delenv("MPLBACKEND", raising=False)          # the notebooks choose %matplotlib inline
    nb = nbformat.read(copy, as_version=4)
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.write(nb, copy)
    return nb


def output_text(nb) -> str:
    """Everything the notebook printed or displayed as text, in cell order."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                parts.append(out.text)
            elif out.output_type in ("execute_result", "display_data"):
                parts.append(out.data.get("text/plain", ""))
    return "\n".join(parts)


def n_figures(nb) -> int:
    return sum("image/png" in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", []))


def number(pattern: str, text: str) -> float:
    match = re.search(pattern, text)
    assert match, f"no output matches {pattern!r}"
    return float(match.group(1))


def chapter_table(text: str) -> dict:
    """``{epoch: (chapter value, glassformer value)}`` as printed, six-decimal strings."""
    return {int(e): (c, g) for e, c, g in CHAPTER_LINE.findall(text)}


# ------------------------------------------------------------------ static checks (fast)
@pytest.mark.parametrize("name", NAMES)
def test_notebooks_are_committed_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{name} has no code cells"
    assert all(not c.outputs and c.execution_count is None for c in code), f"{name} is committed with outputs"


@pytest.mark.parametrize("name", NAMES)
def test_notebooks_use_only_the_public_api(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    tree = ast.parse("\n".join(line for line in source.splitlines() if not line.startswith("%")))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("glassformer"):
            assert "demos" not in node.module and not any(p.startswith("_") for p in node.module.split(".")), \
                f"{name} imports from {node.module}"
            assert not any(a.name.startswith("_") for a in node.names), f"{name} imports a private name"
        if isinstance(node, ast.Attribute):
            assert not (node.attr.startswith("_") and not node.attr.startswith("__")), \
                f"{name} uses the private attribute .{node.attr}"


# ------------------------------------------------------------------ executed notebooks
def test_step_by_step_notebook_reproduces_the_chapter(tmp_path, monkeypatch):
    nb = execute(NAMES[0], tmp_path, monkeypatch)
    text = output_text(nb)
    printed = demonstration_1()["printed_mse"]

    # every intermediate equals the chapter's equation computed by hand, E through y_hat
    diffs = [float(d) for d in re.findall(r"max \|trace - equation\| = (\S+)", text)]
    assert len(diffs) == 16 and max(diffs) < 1e-12, diffs
    assert f"MSE of the untrained model: {printed[0]:.6f}" in text
    assert number(r"largest relative error: (\S+)", text) < 1e-6           # gradcheck on network_
    by_hand, loop = re.search(r"one step by hand: ([\d.]+); the training loop's epoch 1: ([\d.]+)", text).groups()
    assert by_hand == loop
    table = chapter_table(text)
    assert sorted(table) == sorted(printed)
    for epoch, value in printed.items():
        assert table[epoch] == (f"{value:.6f}", f"{value:.6f}"), (epoch, table[epoch])
    assert number(r"printed permeabilities: ([\d.]+) mD", text) < 0.05      # printed with one decimal
    assert n_figures(nb) >= 12


def test_next_depth_notebook_shows_the_attention_and_an_honest_comparison(tmp_path, monkeypatch):
    nb = execute(NAMES[1], tmp_path, monkeypatch)
    text = output_text(nb)
    chapter = demonstration_2()

    table = chapter_table(text)
    assert {e: g for e, (_, g) in table.items()} == {e: f"{v:.6f}" for e, v in chapter["printed_mean_batch_mse"].items()}
    assert f"held-out MSE of the transformer: {chapter['held_out_mse']:.6f}" in text
    assert f"key i+1: {chapter['attention_next_depth_weight']:.3f}" in text
    assert f"weight elsewhere:             {chapter['attention_elsewhere_weight']:.3f}" in text
    for variant in ("uniform", "identity"):
        assert number(rf"attention {variant}\s+held-out MSE ([\d.]+)", text) == round(chapter["ablation_mse"][variant], 6)

    # the references, computed here from the same data and split
    from glassformer.data import neighbor_dataset, split_by_sequence

    X, y = neighbor_dataset(n_sequences=1000, seq_length=7, noise_std=0.01, seed=42)
    tr, te = split_by_sequence(len(X), 0.8, seed=42)
    rule = np.concatenate([2 * X[te][:, 1:], 2 * X[te][:, -1:]], axis=1)
    assert number(r"training mean\s+held-out MSE ([\d.]+)", text) == round(float(np.mean((y[tr].mean() - y[te]) ** 2)), 6)
    assert number(r"noise floor\)\s+held-out MSE ([\d.]+)", text) == round(float(np.mean((rule - y[te]) ** 2)), 6)

    # the bidirectional LSTM wins this one, and the notebook says so
    lstm = number(r"Lowest held-out MSE: bidirectional LSTM \(Adam\) \(([\d.]+)\)", text)
    assert lstm < chapter["held_out_mse"]
    assert "A baseline is better here: the bidirectional LSTM beats the transformer" in text
    assert n_figures(nb) >= 5


def test_real_well_notebook_scores_the_models_beside_the_baselines(tmp_path, monkeypatch, shared_data):
    from glassformer.data import volve

    if not volve.volve_available():
        pytest.skip(f"03_a_real_well.ipynb needs the Volve files, not found under {volve.data_root() / 'real'}")
    nb = execute(NAMES[2], tmp_path, monkeypatch)
    text = output_text(nb)

    def rows(model: str) -> list:
        found = re.findall(rf"^{re.escape(model)}\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(\d+)$", text, re.M)
        return [tuple(map(float, r)) for r in found]

    # the single-well split, then the held-out well: one row per model in each table
    transformer, lstm = rows("transformer"), rows("LSTM")
    transform, mean = rows("porosity-permeability transform"), rows("training mean")
    assert len(transformer) == len(lstm) == len(transform) == len(mean) == 2

    # the two baselines on 15/9-F-11 B, fitted here on 3351.6-4300 m and scored on 4300.1-4744.8 m
    from sklearn.linear_model import LinearRegression

    well = volve.read_volve("F-11B")
    phi, k = well.curve("PHIF"), np.log10(np.maximum(well.curve("KLOGH"), 1e-3))
    train = (well.depth <= volve.F11B_TRAIN_M[1]) & np.isfinite(phi) & np.isfinite(k)
    test = (well.depth > volve.F11B_TRAIN_M[1]) & (well.depth <= volve.F11B_FORECAST_M[1]) \
        & np.isfinite(phi) & np.isfinite(k)
    line = LinearRegression().fit(phi[train, None], k[train])
    rmse_transform = float(np.sqrt(np.mean((line.predict(phi[test, None]) - k[test]) ** 2)))
    rmse_mean = float(np.sqrt(np.mean((k[train].mean() - k[test]) ** 2)))
    assert transform[0][3] == mean[0][3] == transformer[0][3] == test.sum()
    assert transform[0][0] == pytest.approx(rmse_transform, abs=6e-4)
    assert mean[0][0] == pytest.approx(rmse_mean, abs=6e-4)

    # both networks more than halve the transform's error within the well, and beat it across wells
    for i in (0, 1):
        assert transformer[i][0] < transform[i][0] and lstm[i][0] < transform[i][0]
    assert transformer[0][0] < transform[0][0] / 2
    assert "Lowest RMSE on the forecast interval:" in text and "Lowest RMSE on 15/9-F-1 A:" in text
    assert n_figures(nb) >= 6
