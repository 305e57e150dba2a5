"""glassformer.plots.attention: attention maps equal the weights drawn, per layer and head, cross-attention."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from glassformer import plots as gp
from glassformer.errors import InputError, ShapeError
from tests.plots._helpers import DEPTH, inverted, rng, softmax_rows


# -------------------------------------------------------------- attention
def test_attention_image_equals_weights_with_stated_scale():
    A = softmax_rows(rng().normal(size=(7, 7)))
    ax = gp.plot_attention(A, query_depths=DEPTH[:7])
    img = ax.images[0]
    assert np.array_equal(np.asarray(img.get_array()), A) and img.get_array().shape == (7, 7)
    assert img.get_clim() == (0.0, 1.0)
    cbar_axes = [a for a in ax.figure.axes if a is not ax]
    assert cbar_axes[0].get_ylabel() == "attention weight (0–1)"
    assert inverted(ax)  # first query depth at the top
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"{d:g}" for d in DEPTH[:7]]
    assert ax.get_ylabel() == "Query depth (m)" and ax.get_xlabel() == "Key depth (m)"
    assert len(ax.texts) == 49 and ax.texts[0].get_text() == f"{A[0, 0]:.2f}"
    ax2 = gp.plot_attention(A, vmax=None, annotate=False)
    assert ax2.images[0].get_clim()[1] == A.max() and not ax2.texts
    assert ax2.get_ylabel() == "Query depth (index)"
    with pytest.raises(ShapeError, match="query_depths must have length 7"):
        gp.plot_attention(A, query_depths=DEPTH)
    with pytest.raises(ShapeError, match="weights must be 2-D"):
        gp.plot_attention(A[None])


def test_attention_heads_one_panel_per_layer_and_head():
    W = softmax_rows(rng().normal(size=(2, 3, 10, 10)))
    fig = gp.plot_attention_heads(W, query_depths=DEPTH[:10])
    assert isinstance(fig, Figure)
    panels = [a for a in fig.axes if a.images]
    assert len(panels) == 6
    for k, ax in enumerate(panels):
        np.testing.assert_array_equal(ax.images[0].get_array(), W[k // 3, k % 3])
        assert ax.get_title() == f"layer {k // 3}, head {k % 3}"
        assert inverted(ax)
    assert any(a.get_ylabel() == "attention weight (0–1)" for a in fig.axes)  # one shared colour bar
    fig2 = gp.plot_attention_heads(W[0])
    assert len([a for a in fig2.axes if a.images]) == 3


def test_cross_attention_tokens_on_the_axes():
    src = "le chat dort .".split()
    tgt = "the cat sleeps . <eos>".split()
    W = softmax_rows(rng().normal(size=(5, 4)))
    ax = gp.plot_cross_attention(W, src, tgt)
    np.testing.assert_array_equal(ax.images[0].get_array(), W)
    assert [t.get_text() for t in ax.get_xticklabels()] == src
    assert [t.get_text() for t in ax.get_yticklabels()] == tgt
    assert "Source" in ax.get_xlabel() and "Target" in ax.get_ylabel()
    with pytest.raises(ShapeError, match="need 5 target and 4 source tokens"):
        gp.plot_cross_attention(W, src[:3], tgt)


def test_a_map_of_scores_says_score_on_its_colour_bar_and_uses_their_range():
    S = rng().normal(scale=2.0, size=(7, 7))                       # scaled scores: any sign, rows not summing to 1
    ax = gp.plot_attention(S, query_depths=DEPTH[:7])
    label = [a for a in ax.figure.axes if a is not ax][0].get_ylabel()
    assert label == f"score S = QKᵀ/√d_k ({S.min():.3g}–{S.max():.3g})" and "weight" not in label
    assert ax.images[0].get_clim() == (S.min(), S.max()) and ax.get_title() == "Scaled scores S"
    masked = np.where(np.triu(np.ones((7, 7), bool), 1), -np.inf, S)   # causal scores: -inf above the diagonal
    ax2 = gp.plot_attention(masked)
    assert ax2.images[0].get_clim() == (masked[np.isfinite(masked)].min(), masked.max())
    A = softmax_rows(S)
    ax3 = gp.plot_attention(A, quantity="score", vmin=None, vmax=None)   # stated explicitly: wins over the guess
    assert [a for a in ax3.figure.axes if a is not ax3][0].get_ylabel().startswith("score S")
    with pytest.raises(InputError, match="quantity must be one of"):
        gp.plot_attention(A, quantity="weights")


def test_trace_scores_per_layer_and_head_say_score():
    from glassformer import SequenceRegressor

    m = SequenceRegressor(d_model=8, num_heads=2, num_layers=2)
    m.build_network(1)
    tr = m.trace(rng().random((1, 6, 1)))
    fig = gp.plot_trace_attention(tr, symbol="S")
    panels = [a for a in fig.axes if a.images]
    np.testing.assert_array_equal(panels[3].images[0].get_array(), tr["layers.1.S"][0, 1])
    assert any(a.get_ylabel().startswith("score S") for a in fig.axes)
    fig2 = gp.plot_trace_attention(tr)
    assert any(a.get_ylabel() == "attention weight (0–1)" for a in fig2.axes)
