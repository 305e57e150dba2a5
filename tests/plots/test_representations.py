"""glassformer.plots.representations: positional encodings, embeddings, Q/K/V, value vs output, the stages of a block."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import QuadMesh
from matplotlib.figure import Figure

from glassformer import plots as gp
from glassformer.errors import InputError, ShapeError
from tests.plots._helpers import DEPTH, INTERVALS, inverted, rng


# ------------------------------------------------------------- embeddings
def test_positional_encoding_lines_and_image():
    P = np.column_stack([np.sin(DEPTH), np.cos(DEPTH), np.sin(DEPTH / 100), np.cos(DEPTH / 100)])
    ax = gp.plot_positional_encoding(DEPTH, P, intervals=INTERVALS)
    # numbered 1-4 as in the chapter: component 1 is sin t, component 4 is cos t/100
    assert [ln.get_label() for ln in ax.lines[:4]] == [f"P, component {j}" for j in (1, 2, 3, 4)] and inverted(ax)
    assert len(ax.lines) == 6  # + one dotted line at the top of each interval
    for j in range(4):
        np.testing.assert_array_equal(ax.lines[j].get_xdata(), P[:, j])
    assert ax.get_ylabel() == "Depth (m)" and "Encoding value" in ax.get_xlabel()
    P16 = rng().normal(size=(14, 16))
    ax2 = gp.plot_positional_encoding(DEPTH, P16)  # > 8 components: a depth x component image
    mesh = [c for c in ax2.collections if isinstance(c, QuadMesh)][0]
    np.testing.assert_array_equal(np.asarray(mesh.get_array()).reshape(14, 16), P16)
    assert inverted(ax2) and ax2.get_xlabel() == "Component (1 to 16, as in the chapter)"
    assert mesh.get_coordinates()[0, 0, 0] == 0.5                 # column 0 is drawn over component 1
    with pytest.raises(ShapeError, match="P must have shape \\(seq=14"):
        gp.plot_positional_encoding(DEPTH, P[:5])


def test_embeddings_and_combined():
    E = rng().normal(size=(14, 4))
    fig = Figure()
    ax = fig.add_subplot()
    out = gp.plot_embeddings(DEPTH, E, title="Combined embeddings Z = E + P", ax=ax)
    assert out is ax and inverted(ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [f"Z, component {j}" for j in (1, 2, 3, 4)]
    ax2 = gp.plot_embeddings(DEPTH, E, components=[1, 3])          # the chapter's numbers: columns 0 and 2
    assert len(ax2.lines) == 2 and "components 1, 3 of 4" in ax2.get_title()
    np.testing.assert_array_equal(ax2.lines[1].get_xdata(), E[:, 2])
    assert ax2.lines[1].get_label() == "E, component 3"
    with pytest.raises(InputError, match="numbered 1 to d_model=4"):
        gp.plot_embeddings(DEPTH, E, components=[0])


def test_qkv_three_panels_and_heads_side_by_side():
    g = rng()
    Q = g.normal(size=(14, 4))
    K_heads = g.normal(size=(2, 14, 2))  # (num_heads, seq, head_dim)
    V = g.normal(size=(14, 4))
    axes = gp.plot_qkv(DEPTH, Q, K_heads, V, intervals=INTERVALS)
    assert len(axes) == 3 and [a.get_title() for a in axes] == ["Query Q", "Key K", "Value V"]
    np.testing.assert_array_equal(axes[1].lines[2].get_xdata(), K_heads[1, :, 0])  # head 1 follows head 0
    assert all(inverted(a) for a in axes)
    assert axes[0].get_ylabel() == "Depth (m)"


# ----------------------------------------------------------- inside block
def test_value_vs_output_panels_per_sequence():
    g = rng()
    V = g.normal(size=(5, 14, 4))
    U = g.normal(size=(5, 14, 4))
    axes = gp.plot_value_vs_output(DEPTH, V, U, sequences=(1, 3))
    assert len(axes) == 2 and axes[1].get_title() == "sequence 3"
    ax = axes[1]
    assert len(ax.lines) == 8
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), V[3, :, 0])  # dashed = V
    np.testing.assert_array_equal(ax.lines[1].get_xdata(), U[3, :, 0])  # solid = U
    assert ax.lines[0].get_linestyle() == "--" and ax.lines[1].get_linestyle() == "-"
    assert inverted(axes[0]) and axes[0].get_ylabel() == "Depth (m)"
    with pytest.raises(ShapeError, match="same shape"):
        gp.plot_value_vs_output(DEPTH, V, U[:, :7])


def test_stages_grid_rows_are_stages_columns_are_sequences():
    g = rng()
    stages = {s: g.normal(size=(4, 14, 4)) for s in gp.DEFAULT_STAGES}
    fig = gp.plot_stages(stages, DEPTH, sequences=(0, 2, 3))
    panels = [a for a in fig.axes if a.lines]
    assert len(panels) == 18
    grid = np.array(panels).reshape(6, 3)
    assert [grid[0, c].get_title() for c in range(3)] == ["sequence 0", "sequence 2", "sequence 3"]
    assert grid[1, 0].get_ylabel().startswith(gp.STAGE_LABELS["T1"])
    np.testing.assert_array_equal(grid[4, 1].lines[2].get_xdata(), stages["T2"][2, :, 2])
    assert all(inverted(a) for a in panels)
    with pytest.raises(InputError, match="sequences \\[9\\] out of range"):
        gp.plot_stages(stages, DEPTH, sequences=(9,))
