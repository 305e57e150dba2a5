"""glassformer.plots.training: loss curves, prediction panels, ablation bars; saving figures."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

from glassformer import plots as gp
from glassformer.errors import InputError
from tests.plots._helpers import DEPTH, inverted, rng, softmax_rows


# ------------------------------------------------------- training/results
def test_loss_log_scale_validation_and_best_epoch():
    train = [1.0, 0.5, 0.25, 0.2]
    val = [1.2, 0.6, 0.4, 0.45]
    ax = gp.plot_loss({"train": train, "val": val})
    assert ax.get_yscale() == "log" and ax.get_xlabel() == "Epoch" and "MSE" in ax.get_ylabel()
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [1, 2, 3, 4])
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), val)
    assert ax.lines[2].get_xdata()[0] == 3 and ax.lines[2].get_ydata()[0] == 0.4  # best validation epoch
    assert gp.plot_loss({"train": [1.0, 0.0]}).get_yscale() == "linear"  # a zero loss cannot go on a log axis
    with pytest.raises(InputError, match="'train'"):
        gp.plot_loss({"val": [1.0]})


def test_prediction_and_comparison_against_depth():
    y = np.linspace(40, 120, 14)
    ax = gp.plot_prediction(DEPTH, y, y + 1, boundary=7.5)
    assert inverted(ax) and ax.get_xlabel() == "Permeability (mD)" and ax.get_ylabel() == "Depth (m)"
    boundary = [ln for ln in ax.lines if np.allclose(ln.get_ydata(), 7.5)]
    assert boundary, "train/forecast line at 7.5 m"
    assert {"train", "forecast"} <= {t.get_text() for t in ax.texts}
    preds = {"transformer": y + 1, "LSTM": y - 1, "training mean": np.full(14, y.mean())}
    ax2 = gp.plot_comparison(DEPTH, y, preds, quantity="log10 permeability", unit="log10 mD")
    assert [t.get_text() for t in ax2.get_legend().get_texts()] == ["observed", *preds]
    np.testing.assert_array_equal(ax2.lines[2].get_xdata(), y - 1)
    assert ax2.get_xlabel() == "log10 permeability (log10 mD)"


def test_prediction_panels_three_by_three():
    g = rng()
    yt = g.random((20, 7))
    yp = yt + 0.1
    fig = gp.plot_prediction_panels(DEPTH[:7], yt, yp[..., None], inputs=g.random((20, 7)))
    visible = [a for a in fig.axes if a.get_visible() and a.get_title()]
    assert len(visible) == 9
    ids = [int(a.get_title().split()[-1]) for a in visible]
    assert ids == sorted(set(ids)) and ids[0] == 0 and ids[-1] == 19
    np.testing.assert_array_equal(visible[1].lines[1].get_xdata(), yp[ids[1]])
    assert all(inverted(a) for a in visible)
    fig2 = gp.plot_prediction_panels(DEPTH[:7], yt[:4], yp[:4])
    assert sum(a.get_visible() for a in fig2.axes) == 4


def test_ablation_bars():
    errors = {"learned": 8.1, "uniform": 12.4, "identity": 15.0}
    ax = gp.plot_ablation(errors)
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, list(errors.values()))
    assert ax.get_ylabel().startswith("RMSE (mD)")
    assert [t.get_text() for t in ax.get_xticklabels()] == list(errors)


# ------------------------------------------------------------ save / purity
def test_save_figure_png_atomic_and_rcparams_untouched(tmp_path):
    before = dict(matplotlib.rcParams)
    ax = gp.plot_attention(softmax_rows(np.zeros((4, 4))))
    path = gp.save_figure(ax, tmp_path / "sub" / "attention.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in path.parent.iterdir()] == ["attention.png"]  # no temp file left
    axes = gp.plot_qkv(DEPTH, *(np.ones((14, 2)),) * 3)
    assert gp.save_figure(axes, tmp_path / "qkv.png").stat().st_size > 1000
    assert dict(matplotlib.rcParams) == before
