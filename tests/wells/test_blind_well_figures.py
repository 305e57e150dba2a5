"""glassformer.wells.blind_well_figures: the figures of one held-out well from a run's predictions.csv rows.

The real-data test runs ``glassformer cv`` on the three Volve F wells the way tests/cli/test_cv.py does
(one epoch, windows of 16 samples, 15/9-F-11 B cut to 3351.6-3700 m, whose top sits on the 0.001 mD
floor of KLOGH) and draws every figure of every held-out well to PNG.

Data: Volve field data set, courtesy of Equinor and the Volve licence partners (see
../shared/data/real/README.md for the full attribution).
"""

from __future__ import annotations

import sys

import matplotlib.image
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from glassformer.cli import main
from glassformer.errors import InputError
from glassformer.plots import save_figure
from glassformer.wells.blind_well_figures import blind_well_figures, model_columns

FILES = ("15_9-F11B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS", "15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS",
         "15_9-F-1B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS")
INPUTS = ["PHIF", "VSH", "SW"]
V_V = {name: "v/v" for name in INPUTS}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")       # figures are pyplot's only when a caller imported it
    if pyplot is not None:
        pyplot.close("all")


@pytest.fixture(scope="module")
def cv_rows(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("cv") / "run"
    args = ["cv", *(a for f in FILES for a in ("--data", str(shared_data / "real" / f))),
            "--inputs", *INPUTS, "--target", "KLOGH", "--log-target", "--depth", "F11B=3351.6:3700",
            "--window", "16", "--epochs", "1", "--hidden-size", "2", "--out", str(out)]
    assert main(args) == 0
    return pd.read_csv(out / "predictions.csv")


def test_every_figure_of_every_held_out_well_draws_and_those_of_f11b_render_to_png(cv_rows, tmp_path):
    for well in ("15/9-F-11 B", "15/9-F-1 A", "15/9-F-1 B"):
        figures = blind_well_figures(cv_rows, well, input_names=INPUTS, target_name="KLOGH", input_units=V_V)
        slug = well.replace("/", "_").replace("-", "_").replace(" ", "_")
        assert list(figures) == [f"blind_well_{slug}_tracks", f"blind_well_{slug}_zoom_1",
                                 f"blind_well_{slug}_zoom_2", f"blind_well_{slug}_crossplot"]
        for name, draw in figures.items():
            fig = draw()
            if name.endswith("_tracks"):
                titles = [ax.get_title().replace("\n", " ") for ax in fig.axes]
                # every model of the table on its own track: the trees without depth context too
                for model in ("random forest", "random forest + context", "gradient boosting",
                              "gradient boosting + context", "transformer", "LSTM", "training mean"):
                    assert any(t.startswith(f"{model} RMSE") for t in titles), (model, titles)
                assert len(fig.axes) == 3 + len(model_columns(cv_rows)) + 1
            if well != "15/9-F-11 B":                                 # drawing every PNG costs a minute
                continue
            image = matplotlib.image.imread(save_figure(fig, tmp_path / f"{name}.png"))
            assert image.shape[0] > 500 and image.shape[1] > 500


def test_zooms_of_f11b_fall_where_klogh_varies_not_on_its_floored_top(cv_rows):
    well = cv_rows[cv_rows["well"] == "15/9-F-11 B"]
    observed = well["KLOGH_observed_log10_mD"].to_numpy()
    depth = well["depth"].to_numpy()
    assert np.all(observed[depth < 3381.5] == -3.0)                  # the top 30 m sit on 0.001 mD
    figures = blind_well_figures(cv_rows, "15/9-F-11 B", input_names=INPUTS, target_name="KLOGH")
    for k in (1, 2):
        fig = figures[f"blind_well_15_9_F_11_B_zoom_{k}"]()
        shown = fig.axes[3].lines[0].get_xdata()                       # the observed curve on the first model track
        assert shown.size >= 250 and np.ptp(shown) > 2.0                # ~30 m at 0.1 m, over two decades of KLOGH
        assert np.mean(shown == -3.0) < 0.5


def hand_rows():
    depth = np.arange(3000.0, 3010.0, 0.1)                            # 100 samples
    observed = np.sin(depth)
    rows = pd.DataFrame({"well": "W-1", "split": "test", "depth": depth, "PHIF": 0.2, "VSH": 0.3, "SW": 0.5,
                         "KLOGH_observed_log10_mD": observed,
                         "transformer_log10_mD": observed + 1.0,             # RMSE 1
                         "random_forest_log10_mD": observed + 0.1,           # RMSE 0.1
                         "gradient_boosting_log10_mD": observed - 0.2,       # RMSE 0.2
                         "training_mean_log10_mD": 0.0})
    return rows


def test_default_models_follow_the_table_and_residuals_take_the_best_two_and_the_transformer():
    rows = hand_rows()
    assert model_columns(rows) == {"transformer_log10_mD": "transformer", "random_forest_log10_mD": "random forest",
                                   "gradient_boosting_log10_mD": "gradient boosting",
                                   "training_mean_log10_mD": "training mean"}
    figures = blind_well_figures(rows, "W-1", input_names=INPUTS, target_name="KLOGH", zoom_length=2.0, n_zooms=1)
    assert list(figures) == ["blind_well_W_1_tracks", "blind_well_W_1_zoom_1", "blind_well_W_1_crossplot"]
    fig = figures["blind_well_W_1_tracks"]()
    residual = fig.axes[-1]
    assert [t.get_text() for t in residual.get_legend().get_texts()] == ["random forest", "gradient boosting",
                                                                          "transformer"]
    np.testing.assert_allclose(residual.lines[0].get_xdata(), 0.1, atol=1e-12)      # prediction - observed
    np.testing.assert_allclose(residual.lines[1].get_xdata(), -0.2, atol=1e-12)
    assert fig.get_suptitle().startswith("W-1 (held out): input logs")
    # each model keeps its colour of the full table (here without the LSTM, C1): the same in every run
    assert [to_hex(ax.lines[1].get_color()) for ax in fig.axes[3:7]] == [to_hex(f"C{i}") for i in (0, 2, 4, 7)]


def test_chosen_models_bands_duplicate_depths_and_clear_errors():
    rows = hand_rows()
    rows["transformer_p10_log10_mD"] = rows["transformer_log10_mD"] - 0.5
    rows["transformer_p90_log10_mD"] = rows["transformer_log10_mD"] + 0.5
    doubled = pd.concat([rows.assign(split="train", transformer_log10_mD=99.0), rows], ignore_index=True)
    figures = blind_well_figures(doubled, "W-1", input_names=INPUTS, target_name="KLOGH",
                                 models={"gradient_boosting_log10_mD": "GB", "transformer_log10_mD": "TF"},
                                 bands={"transformer_log10_mD": ("transformer_p10_log10_mD",
                                                                 "transformer_p90_log10_mD")},
                                 residual_models=["transformer_log10_mD"], zoom_length=2.0, n_zooms=1)
    fig = figures["blind_well_W_1_tracks"]()
    assert len(fig.axes) == 3 + 2 + 1
    assert fig.axes[4].get_title().startswith("TF\nRMSE 1.00")        # the last row of each depth kept (not 99)
    assert len(fig.axes[4].collections) == 1                          # the P10-P90 band
    np.testing.assert_allclose(fig.axes[-1].lines[0].get_xdata(), 1.0)
    assert fig.get_suptitle().startswith("W-1 (held out)")            # the rows drawn are the test rows
    split = rows.assign(split=np.where(rows["depth"] < 3005.0, "train", "test"))
    tracks = blind_well_figures(split, "W-1", input_names=INPUTS, target_name="KLOGH", n_zooms=0)
    assert list(tracks) == ["blind_well_W_1_tracks", "blind_well_W_1_crossplot"]
    assert tracks["blind_well_W_1_tracks"]().get_suptitle().startswith("W-1 (train, test)")
    with pytest.raises(InputError, match="well 'W-2' not in the rows; wells: \\['W-1'\\]"):
        blind_well_figures(rows, "W-2", input_names=INPUTS, target_name="KLOGH")
    with pytest.raises(InputError, match="no column \\['GR'\\]"):
        blind_well_figures(rows, "W-1", input_names=["GR"], target_name="KLOGH")
    with pytest.raises(InputError, match="no column \\['KLOGH_observed_mD'\\]"):
        blind_well_figures(rows, "W-1", input_names=INPUTS, target_name="KLOGH", unit="mD")
