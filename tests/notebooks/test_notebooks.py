"""The notebooks in notebooks/ run top to bottom in a real Jupyter kernel, show the library's own numbers,
and are committed with the outputs a fresh run gives.

Each notebook is executed once per session (a temporary copy, in a temporary folder) with
nbclient through tools/notebooks.py; any cell error fails -- and every exercise ends in an
``assert`` against the library, so a failing exercise is a cell error.  The assertions read the
executed outputs (what a reader sees) and compare them with the chapter's printed values
(glassformer.selftest.published), with baselines computed here independently, and with the
outputs committed in the repository (text after tools/notebooks.normalise; figures by presence).
The kernel imports this checkout's glassformer (PYTHONPATH), not an installed copy.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest

from glassformer.selftest.published import demonstration_1, demonstration_2

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
NAMES = ["01_transformer_step_by_step.ipynb", "02_attention_learns_the_next_depth.ipynb", "03_a_real_well.ipynb"]
CHAPTER_LINE = re.compile(r"epoch\s+(\d+) \| chapter ([\d.]+) \| glassformer ([\d.]+)")
MAX_TOTAL_BYTES = 3_000_000          # the three committed notebooks together, outputs included


def _tools():
    spec = importlib.util.spec_from_file_location("notebook_tools", REPO / "tools" / "notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOLS = _tools()


@pytest.fixture(scope="session")
def executed(tmp_path_factory):
    """``executed(name)``: the notebook run once in this session (a temporary copy), with its outputs."""
    done = {}

    def run(name: str):
        if name not in done:
            folder = tmp_path_factory.mktemp(name.split("_")[0])
            shutil.copy(NOTEBOOKS / name, folder / name)
            done[name] = TOOLS.execute(folder / name, folder)
        return done[name]

    return run


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


def exercises(nb) -> list:
    """The code cells after the notebook's "Exercises" heading (up to the next level-2 heading)."""
    cells, inside = [], False
    for cell in nb.cells:
        if cell.cell_type == "markdown" and re.search(r"^## ", cell.source, re.M):
            inside = bool(re.search(r"^## (\d+\. )?Exercises", cell.source, re.M))
        elif inside and cell.cell_type == "code":
            cells.append(cell)
    return cells


def assert_exercises_checked(nb, name: str, at_least: int) -> None:
    """Every exercise cell checks its answer with an assert; the fresh run got through all of them."""
    cells = exercises(nb)
    assert len(cells) >= at_least, f"{name}: {len(cells)} exercise cells, expected at least {at_least}"
    for cell in cells:
        assert re.search(r"^\s*assert ", cell.source, re.M), f"{name}: an exercise without an assert:\n{cell.source[:200]}"
        assert cell.get("execution_count") is not None and not any(o.output_type == "error" for o in cell.outputs)


def assert_matches_committed(fresh, name: str) -> None:
    """The committed notebook shows what a fresh run shows (text normalised, figures by presence)."""
    committed = TOOLS.comparable(nbformat.read(NOTEBOOKS / name, as_version=4))
    now = TOOLS.comparable(fresh)
    assert len(committed) == len(now), f"{name}: {len(committed)} code cells committed, {len(now)} run"
    for i, (old, new) in enumerate(zip(committed, now)):
        assert old == new, (f"{name}, code cell {i}: the committed output differs from a fresh run; "
                            f"run `python tools/notebooks.py --write {name}` and commit.\n"
                            f"committed: {old[0][:600]!r}\nfresh:     {new[0][:600]!r}")


# ------------------------------------------------------------------ static checks (fast)
@pytest.mark.parametrize("name", NAMES)
def test_notebooks_are_committed_with_their_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{name} has no code cells"
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), \
        f"{name}: not executed top to bottom in one run (run tools/notebooks.py --write)"
    assert not any(o.output_type == "error" for c in code for o in c.outputs), f"{name} is committed with an error"
    assert n_figures(nb) >= 4, f"{name} is committed without its figures"
    assert not any("execution" in c.metadata for c in code), f"{name} carries execution timings"


def test_committed_notebooks_stay_small():
    sizes = {name: (NOTEBOOKS / name).stat().st_size for name in NAMES}
    assert sum(sizes.values()) < MAX_TOTAL_BYTES, sizes


def test_normalise_keeps_results_and_hides_what_varies():
    text = "max |trace - equation| = 1.1e-16; relative error 3.2e-10; fitted in 62.2 s; at 0x7f3a2b1c4d50; MSE 0.012345"
    assert TOOLS.normalise(text) == ("max |trace - equation| = <tiny>; relative error <tiny>; fitted in <seconds>; "
                                     "at <address>; MSE 0.012345")
    assert TOOLS.normalise("0.0e+00 and 1.5e-03 and 2.0e+01") == "<tiny> and 1.5e-03 and 2.0e+01"


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
def test_step_by_step_notebook_reproduces_the_chapter(executed):
    nb = executed(NAMES[0])
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
    assert n_figures(nb) >= 15

    # the backward trace walked by hand: every gradient from dy_hat down to dS and dX, in backward's
    # order, has the shape of its array and equals the chain rule computed in the notebook
    assert f"loss in the trace: {printed[0]:.6f}" in text
    walked = re.findall(r"^(\S+)\s+shape (\([\d, ]+\))\s+max \|trace - chain rule\| = (\S+)$", text, re.M)
    layer_shapes = {"dH": (1, 7, 4), "dT2": (1, 7, 4), "dF": (1, 7, 4), "dG": (1, 7, 16), "dR": (1, 7, 4),
                    "dT1": (1, 7, 4), "dU": (1, 7, 4), "dA": (1, 1, 7, 7), "dS": (1, 1, 7, 7),
                    "dQ": (1, 1, 7, 4), "dK": (1, 1, 7, 4), "dV": (1, 1, 7, 4)}
    expected = ([("dy_hat", (1, 7, 1))] + [(f"layers.0.{k}", s) for k, s in layer_shapes.items()]
                + [("dZ", (1, 7, 4)), ("dE", (1, 7, 4)), ("dP", (7, 4)), ("dX", (1, 7, 1))])
    assert [(key, ast.literal_eval(shape)) for key, shape, _ in walked] == expected
    assert max(float(d) for _, _, d in walked) < 1e-12, walked
    assert "walked in the order of backward_steps(): True" in text
    assert number(r"largest \|row sum of dS\| = (\S+)", text) < 1e-15     # the softmax's backward removes row means

    # errata: the encoding's standard form, T2 = R + F, and the chapter's forecast listing relabelled
    assert number(r"wavelengths 2π, 200π\s+max \|P - P_chapter\| = (\S+)", text) < 1e-12
    assert number(r"max \|T2 - \(R \+ F\)\|  = (\S+)", text) < 1e-12
    assert number(r"max \|T2 - \(T1 \+ U\)\| = (\S+)", text) > 0.1
    listing = demonstration_1()["printed_forecast_listing_mD"]
    shown = re.findall(r"the chapter prints 'Depth (\d+): \.\.\. ([\d.]+)' \| glassformer, 14-depth window, "
                       r"depth\s+(\d+) m: ([\d.]+) mD", text)
    assert [(int(label), float(printed), int(d)) for label, printed, d, _ in shown] == \
        [(8 + i, listing[i], 1 + i) for i in range(7)]
    assert all(printed == ours for _, printed, _, ours in shown)
    # the exercises: each asserts against the library, and these are their answers
    assert_exercises_checked(nb, NAMES[0], 4)
    # exercise 1: a plain function passed as positional= gives the chapter's model, the text's wavelengths another
    assert any("positional=code_encoding" in c.source for c in exercises(nb))
    chapter_p, yours, text_p = re.search(r"MSE at epoch 1999: chapter's encoding ([\d.]+) \| yours, 2π and 200π "
                                         r"([\d.]+) \| yours, 2π and 20π ([\d.]+)", text).groups()
    assert chapter_p == yours != text_p
    assert number(r"largest difference from the library's step: (\S+)", text) < 1e-15
    d3, d4 = re.search(r"outputs at depths 3 and 4: ([\d.]+), ([\d.]+)", text).groups()
    assert d3 == d4


def test_next_depth_notebook_shows_the_attention_and_an_honest_comparison(executed):
    nb = executed(NAMES[1])
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
    assert n_figures(nb) >= 6

    # errata: the code's encoding is the standard form at 2π and 200π, fixed, and T2 = R + F
    assert number(r"wavelengths 2π, 200π: max difference (\S+)", text) < 1e-12
    assert "trainable values in P: 0;" in text
    assert number(r"max \|T2 - \(R \+ F\)\| = (\S+)", text) < 1e-12
    # the exercises: fixed attention or no encoding leaves the model near the same-depth fit
    assert_exercises_checked(nb, NAMES[1], 4)
    adam = number(r"transformer \(Adam, as the LSTM\)\s+([\d.]+)", text)
    for variant in ("uniform", "identity"):
        assert number(rf"trained with {variant}\s+attention: held-out MSE ([\d.]+)", text) > 10 * adam
    assert number(r"held-out MSE without P: ([\d.]+)", text) > 10 * adam
    assert number(r"max \|U by hand - trace U\| = (\S+)", text) < 1e-12


def needs_volve():
    from glassformer.data import volve

    if not volve.volve_available():
        pytest.skip(f"03_a_real_well.ipynb needs the Volve files, not found under {volve.data_root() / 'real'}")


def test_real_well_notebook_scores_the_models_beside_the_baselines(executed, shared_data):
    from glassformer.data import volve

    needs_volve()
    nb = executed(NAMES[2])
    text = output_text(nb)

    def rows(model: str) -> list:
        found = re.findall(rf"^{re.escape(model)}\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(\d+)$", text, re.M)
        return [tuple(map(float, r)) for r in found]

    # the single-well split: one row per model
    transformer, lstm = rows("transformer"), rows("LSTM")
    transform, mean = rows("porosity-permeability transform"), rows("training mean")
    assert len(transformer) == len(lstm) == len(transform) == len(mean) == 1

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

    # both networks more than halve the transform's error within the well
    assert transformer[0][0] < transform[0][0] / 2 and lstm[0][0] < transform[0][0] / 2
    assert "Lowest RMSE on the forecast interval:" in text

    # out-of-range flags and the P10-P90 coverage (calibration moves it towards the nominal 80 %)
    assert re.search(r"\d+ of 4448 predicted depths have inputs outside the training range", text)
    raw, calibrated = (float(c) for c in re.findall(r"covers\s+([\d.]+) % of 4448 test depths", text))
    assert abs(calibrated - 80) < abs(raw - 80)

    # blind wells: the transform of each fold, fitted here on the other two wells
    wells = {name: volve.read_volve(key) for name, key in
             (("15/9-F-11 B", "F-11B"), ("15/9-F-1 A", "F-1A"), ("15/9-F-1 B", "F-1B"))}
    data = {}
    for name, g in wells.items():
        phi_g, k_g = g.curve("PHIF"), np.log10(np.maximum(g.curve("KLOGH"), 1e-3))
        ok = np.isfinite(phi_g) & np.isfinite(k_g) & np.isfinite(g.curve("VSH")) & np.isfinite(g.curve("SW"))
        data[name] = (phi_g[ok], k_g[ok])
    # the first of its two rows (pandas wraps the wide table): RMSE on each held-out well
    shown = re.search(r"^porosity-permeability transform\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", text, re.M)
    assert shown, "no per-well RMSE row of the transform in the cross-validation table"
    for held_out, value in zip(wells, map(float, shown.groups())):
        phi_t = np.concatenate([data[w][0] for w in wells if w != held_out])
        k_t = np.concatenate([data[w][1] for w in wells if w != held_out])
        line = LinearRegression().fit(phi_t[:, None], k_t)
        expected = float(np.sqrt(np.mean((line.predict(data[held_out][0][:, None]) - data[held_out][1]) ** 2)))
        assert value == pytest.approx(expected, abs=6e-4), held_out
    assert "Lowest mean RMSE over the held-out wells:" in text
    best = re.search(r"Lowest mean RMSE over the held-out wells: (.+?) \(", text).group(1)
    assert best == "transformer" or "A baseline is better here:" in text
    assert_exercises_checked(nb, NAMES[2], 3)
    assert n_figures(nb) >= 8


@pytest.mark.parametrize("name", NAMES)
def test_committed_outputs_match_a_fresh_run(executed, name):
    if name == NAMES[2]:
        needs_volve()
    assert_matches_committed(executed(name), name)
