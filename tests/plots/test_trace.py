"""glassformer.plots.trace: the figures of a trained model's trace, and trace layouts."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import plots as gp
from glassformer.errors import InputError
from tests.plots._helpers import DEPTH, inverted, softmax_rows


# ------------------------------------------------------------- trace (model)
@pytest.fixture(scope="module")
def trained_trace():
    from glassformer.models import SequenceRegressor

    g = np.random.default_rng(1)
    X = g.random((8, 7, 1))
    y = np.roll(X, -1, axis=1)  # the seed's lag: permeability follows porosity one depth below
    model = SequenceRegressor.chapter_model(d_model=4, num_heads=2, num_layers=2, epochs=30, lr=0.05)
    model.fit(X, y, DEPTH[:7])
    return model.trace(X[:5], DEPTH[:7])


def test_trace_attention_matches_the_trace(trained_trace):
    tr = trained_trace
    fig = gp.plot_trace_attention(tr, sample=2)
    panels = [a for a in fig.axes if a.images]
    assert len(panels) == 4  # 2 layers x 2 heads
    for k, ax in enumerate(panels):
        np.testing.assert_array_equal(ax.images[0].get_array(), tr[f"layers.{k // 2}.A"][2, k % 2])
        assert inverted(ax)
    assert [t.get_text() for t in panels[0].get_yticklabels()] == [f"{d:g}" for d in DEPTH[:7]]


def test_trace_embeddings_qkv_value_output_and_stages(trained_trace):
    tr = trained_trace
    axes = gp.plot_trace_embeddings(tr, sample=1)
    np.testing.assert_array_equal(axes[0].lines[0].get_xdata(), tr["E"][1, :, 0])
    np.testing.assert_array_equal(axes[2].lines[3].get_xdata(), tr["Z"][1, :, 3])
    qkv = gp.plot_trace_qkv(tr, layer=1, sample=0)
    np.testing.assert_array_equal(qkv[0].lines[2].get_xdata(), tr["layers.1.Q"][0, 1, :, 0])
    vu = gp.plot_trace_value_vs_output(tr, sequences=(0, 4))
    assert [a.get_title() for a in vu] == ["sequence 0", "sequence 4"]
    np.testing.assert_array_equal(vu[1].lines[1].get_xdata(), tr["layers.0.U"][4, :, 0])
    fig = gp.plot_trace_stages(tr, layer=1, sequences=(0, 1, 2))
    grid = np.array([a for a in fig.axes if a.lines]).reshape(6, 3)
    np.testing.assert_array_equal(grid[0, 1].lines[0].get_xdata(), tr["layers.0.H"][1, :, 0])  # block input
    assert grid[0, 0].get_ylabel().startswith("input = H of layer 0")
    np.testing.assert_array_equal(grid[5, 2].lines[1].get_xdata(), tr["layers.1.H"][2, :, 1])


def test_trace_array_tolerates_nested_and_flat_layouts():
    A0 = softmax_rows(np.zeros((1, 1, 3, 3)))
    nested = {"Z": np.zeros((1, 3, 2)), "layers": [{"A": A0}, {"A": A0 * 2}]}
    assert gp.trace_array(nested, "A", layer=1)[0, 0, 0, 0] == 2 / 3
    flat = {"Z": np.zeros((1, 3, 2)), "layers.0.A": A0, "F_out": np.ones((1, 3, 2))}
    assert gp.trace_array(flat, "A").shape == (1, 1, 3, 3)
    assert gp.trace_array(flat, "F").shape == (1, 3, 2)  # the seed's name F_out
    with pytest.raises(InputError, match="trace has no 'V' for layer 0"):
        gp.trace_array(flat, "V")
    fig = gp.plot_trace_attention(nested, depth=[10.0, 10.5, 11.0])
    assert len([a for a in fig.axes if a.images]) == 2
