"""glassformer.plots: every figure of seed 000 on small synthetic arrays, a trained model's trace,
and a real well (Agg back end; values drawn are compared with the arrays given)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.collections import QuadMesh  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from glassformer import plots as gp  # noqa: E402
from glassformer.errors import InputError, ShapeError  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "real"
DEPTH = np.arange(1.0, 15.0)
INTERVALS = {"train": (1, 7.5), "forecast": (7.5, 14)}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def rng():
    return np.random.default_rng(0)


def softmax_rows(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def inverted(ax):
    lo, hi = ax.get_ylim()
    return lo > hi


# ------------------------------------------------------------------- data
def test_log_tracks_draw_curves_units_intervals_and_depth_downward():
    phi = np.linspace(5, 12, 14)
    k = np.linspace(40, 120, 14)
    axes = gp.plot_log_tracks(DEPTH, {"porosity": phi, "permeability": k}, porosity_unit="%", intervals=INTERVALS)
    assert len(axes) == 2 and all(isinstance(a, Axes) for a in axes)
    assert axes[0].get_xlabel() == "porosity (%)"
    assert axes[1].get_xlabel() == "permeability (mD)"
    assert axes[0].get_ylabel() == "Depth (m)"
    assert all(inverted(a) for a in axes)
    np.testing.assert_array_equal(axes[0].lines[0].get_xdata(), phi)
    np.testing.assert_array_equal(axes[1].lines[0].get_ydata(), DEPTH)
    assert len(axes[0].patches) == 2  # one shaded span per interval
    assert {"train", "forecast"} <= {t.get_text().strip() for t in axes[1].texts}
    assert axes[1].get_xscale() == "linear"  # 40-120 mD: less than two decades


def test_caller_axes_are_used_and_each_depth_axis_inverted():
    fig = Figure()
    given = fig.subplots(1, 2)  # not sharing y: every panel must be inverted on its own
    axes = gp.plot_log_tracks(DEPTH, {"porosity": DEPTH, "permeability": DEPTH}, axes=given)
    assert list(axes) == list(given) and all(inverted(a) for a in axes)
    with pytest.raises(ShapeError, match="axes must hold 1x3"):
        gp.plot_qkv(DEPTH, *(np.ones((14, 2)),) * 3, axes=given)


def test_log_tracks_log_axis_for_wide_permeability_and_explicit_units():
    d = np.linspace(3400, 3410, 101)
    k = np.logspace(-1, 3, 101)
    k[10:20] = np.nan  # a gap is drawn as a break, not an error
    axes = gp.plot_log_tracks(d, {"KLOGH": k, "GR": np.ones(101)}, units={"GR": "gAPI"})
    assert axes[0].get_xscale() == "log"
    assert axes[1].get_xlabel() == "GR (gAPI)"
    with pytest.raises(ShapeError, match="curves\\['GR'\\] must have length 101"):
        gp.plot_log_tracks(d, {"GR": np.ones(5)})
    with pytest.raises(InputError, match="curves is empty"):
        gp.plot_log_tracks(d, {})


def test_crossplot_raw_log_and_normalised_variants():
    phi = np.array([13.0, 11, 9, 9, 10, 8, 7])
    k = np.array([122.0, 110, 67, 55, 72, 40, 0.0])
    ax = gp.plot_crossplot(phi, k, labels=np.arange(1.0, 8.0), porosity_unit="%")
    np.testing.assert_array_equal(ax.collections[0].get_offsets(), np.column_stack([phi, k]))
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "Porosity (%)" and "mD" in ax.get_ylabel()
    texts = [t.get_text() for t in ax.texts]
    assert [t for t in texts if t in {"1", "2", "7"}] == ["1", "2", "7"]  # depth labels beside the points
    assert "1 point(s) <= 0 mD not shown" in texts
    ax2 = gp.plot_crossplot(phi / 20, k / 122, normalised=True)
    assert "normalised" in ax2.get_title() and ax2.get_yscale() == "linear"
    assert ax2.get_xlabel().startswith("Normalised porosity")
    ax3 = gp.plot_crossplot(phi, k + 1, depth=np.arange(7.0), log_perm=False)
    assert ax3.get_ylabel() == "Permeability (mD)"
    assert any(a.get_ylabel() == "Depth (m)" for a in ax3.figure.axes)  # colour bar in metres
    with pytest.raises(InputError, match="porosity_unit"):
        gp.plot_crossplot(phi, k, porosity_unit="pct")


# ------------------------------------------------------------- embeddings
def test_positional_encoding_lines_and_image():
    P = np.column_stack([np.sin(DEPTH), np.cos(DEPTH), np.sin(DEPTH / 100), np.cos(DEPTH / 100)])
    ax = gp.plot_positional_encoding(DEPTH, P, intervals=INTERVALS)
    assert [ln.get_label() for ln in ax.lines[:4]] == ["P[0]", "P[1]", "P[2]", "P[3]"] and inverted(ax)
    assert len(ax.lines) == 6  # + one dotted line at the top of each interval
    for j in range(4):
        np.testing.assert_array_equal(ax.lines[j].get_xdata(), P[:, j])
    assert ax.get_ylabel() == "Depth (m)" and "Encoding value" in ax.get_xlabel()
    P16 = rng().normal(size=(14, 16))
    ax2 = gp.plot_positional_encoding(DEPTH, P16)  # > 8 components: a depth x component image
    mesh = [c for c in ax2.collections if isinstance(c, QuadMesh)][0]
    np.testing.assert_array_equal(np.asarray(mesh.get_array()).reshape(14, 16), P16)
    assert inverted(ax2)
    with pytest.raises(ShapeError, match="P must have shape \\(seq=14"):
        gp.plot_positional_encoding(DEPTH, P[:5])


def test_embeddings_and_combined():
    E = rng().normal(size=(14, 4))
    fig = Figure()
    ax = fig.add_subplot()
    out = gp.plot_embeddings(DEPTH, E, title="Combined embeddings Z = E + P", ax=ax)
    assert out is ax and inverted(ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Z[0]", "Z[1]", "Z[2]", "Z[3]"]
    ax2 = gp.plot_embeddings(DEPTH, E, components=[1, 3])
    assert len(ax2.lines) == 2 and "components 1-3 of 4" in ax2.get_title()


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


# ------------------------------------------------------------- a real well
def test_real_well_tracks_and_crossplot():
    path = DATA / "15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS"
    if not path.is_file():
        pytest.skip(f"real well data not found at {path} (shared/data is not part of the repo)")
    lasio = pytest.importorskip("lasio")
    las = lasio.read(str(path))
    depth = np.asarray(las.index, dtype=float)
    phi = np.asarray(las["PHIF"], dtype=float)
    k = np.asarray(las["KLOGH"], dtype=float)
    ok = np.isfinite(phi) & np.isfinite(k)
    axes = gp.plot_log_tracks(depth, {"PHIF": phi, "KLOGH": k},
                              intervals={"train": (3430, 3600), "forecast": (3600, 3657)})
    assert axes[0].get_xlabel() == "PHIF (fraction, v/v)" and axes[1].get_xlabel() == "KLOGH (mD)"
    assert axes[1].get_xscale() == "log" and inverted(axes[0])
    assert axes[0].get_ylim()[0] >= depth.max()
    ax = gp.plot_crossplot(phi[ok], k[ok], depth=depth[ok])
    assert len(ax.collections[0].get_offsets()) == ok.sum() > 2000
    assert ax.get_yscale() == "log"
