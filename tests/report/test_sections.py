"""The report's structure: title and introduction in the chapter's words, the headline before the
figures, figures in the order of the story with the interactive attention map, the configuration
last and collapsed with what differs from the defaults first, and one page for a folder of runs."""

from __future__ import annotations

import html
import json
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from glassformer import plots as gp  # noqa: E402
from glassformer.models import run_config_defaults  # noqa: E402
from glassformer.report import write_report  # noqa: E402
from glassformer.report.tables import fmt  # noqa: E402

TABLE = {"transformer": {"rmse": 0.3, "mae": 0.2, "r2": 0.8, "parameters": 237, "train_s": 1.0, "n": 7},
         "porosity-permeability transform": {"rmse": 0.4, "mae": 0.3, "r2": 0.6, "parameters": 2, "train_s": 0.1,
                                             "n": 7}}
METRICS = {"units": {"rmse": "mD", "mae": "mD"}, "comparison": {"split": "test", "seeds": [42], "table": TABLE,
                                                                "per_seed": {"transformer": {"rmse": [0.3]}}},
           "printed_mse": {"0": 0.15, "2000": 0.0067}}
CONFIG = {"demo": "porosity", "seeds": [42],
          "model": {"d_model": 8, "lr": 0.003, "epochs": 30000, "positional_options": None},
          "lstm": {"hidden_size": 4, "bidirectional": True},
          "train_wells": [{"name": "W1", "top": 3400.0, "base": 3550.25}],
          "test_wells": [{"name": "W2", "top": 3551.0, "base": 3600.0}],
          "pipeline": {"inputs": ["PHIF", "VSH"], "target": "KLOGH", "log_target": True, "window": 32}}
ATTENTION = np.array([[0.2, 0.8, 0.0], [0.1, 0.1, 0.8], [0.5, 0.25, 0.25]])


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def make_run(folder, *, metrics=METRICS, config=CONFIG, figures=("loss", "attention", "tracks",
                                                                  "prediction_vs_depth", "mystery")):
    (folder / "figures").mkdir(parents=True)
    for stem in figures:
        fig = gp.plot_attention(ATTENTION) if stem == "attention" else gp.plot_loss({"train": [1.0, 0.5]})
        gp.save_figure(fig, folder / "figures" / f"{stem}.png")
    if "attention" in figures:
        (folder / "figures" / "attention.json").write_text(json.dumps(
            {"title": "attention weights (layer 0, head 0)", "matrix": ATTENTION.tolist(),
             "query_positions": [3400.0, 3400.5, 3401.0], "key_positions": [3400.0, 3400.5, 3401.0],
             "position_unit": "m"}))
    (folder / "metrics.json").write_text(json.dumps(metrics))
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_story_order_title_intro_headline_figures_results_configuration(tmp_path):
    text = html.unescape(write_report(make_run(tmp_path / "run")).read_text(encoding="utf-8"))
    assert "<title>Demonstration 1: seven depths</title>" in text and "<h1>Demonstration 1: seven depths</h1>" in text
    assert "The chapter's first demonstration (Pyrcz 2024" in text
    assert "Trained on W1 3400\u20133550.25 m; tested on W2 3551\u20133600 m. Inputs PHIF, VSH, target log10 KLOGH, " \
           "windows of 32 samples." in text
    marks = ["<h1>", "The chapter's first demonstration", '<table id="headline"', "transformer has the lowest RMSE",
             '<h2 id="figures">', '<h2 id="results">', '<h2 id="configuration">', '<details class="config">']
    positions = [text.index(m) for m in marks]
    assert positions == sorted(positions)
    assert text.index('<table id="headline"') < text.index("<figure")
    # known result entries get a heading in words, the single-seed per-seed list is not repeated
    assert "<h3>Training MSE at the epochs the chapter prints</h3>" in text and "per_seed" not in text


def test_configuration_is_collapsed_with_non_defaults_first(tmp_path):
    text = write_report(make_run(tmp_path / "run"), run_config_defaults()).read_text(encoding="utf-8")
    details = text[text.index('<details class="config">'):]
    assert text.count("config-differs") == 1 and "config-differs" in details
    assert details.index('id="config-differs"') < details.index('id="config-run"') < details.index('id="config-all"')
    differs = details[details.index('id="config-differs"'):details.index("</table>")]
    rows = re.findall(r"<tr><th>([^<]+)</th><td>([^<]+)</td><td>([^<]+)</td></tr>", differs)
    assert rows == [("model.d_model", "8", "16"), ("model.epochs", "30,000", "30"), ("lstm.hidden_size", "4", "16")]
    assert "<summary>Configuration: 3 settings differ from the defaults (12 in all)</summary>" in details
    run_table = details[details.index('id="config-run"'):]
    assert "<th>demo</th>" in run_table and "<th>pipeline.window</th>" in run_table
    assert "model.lr" not in differs and "<th>model.lr</th>" in details[details.index('id="config-all"'):]


def test_figures_follow_the_story_with_captions_and_the_interactive_attention_map(tmp_path):
    text = write_report(make_run(tmp_path / "run")).read_text(encoding="utf-8")
    order = [text.index(f'id="fig-{s}"') for s in ("prediction_vs_depth", "tracks", "attention", "loss", "mystery")]
    assert order == sorted(order)
    groups = [text.index(g) for g in ("<h3>What the model predicts</h3>", "<h3>The data</h3>",
                                      "<h3>Inside the model, step by step as in the chapter</h3>", "<h3>Training</h3>",
                                      "<h3>Other figures</h3>")]
    assert groups == sorted(groups)
    assert "<b>Figure 1. prediction_vs_depth.png</b>" in text and "<b>Figure 5. mystery.png</b>" in text
    fig = text[text.index('id="fig-attention"'):]
    fig = fig[:fig.index("</figure>")]
    tips = re.findall(r"<rect [^>]*><title>([^<]+)</title></rect>", fig)
    assert len(tips) == 9
    assert tips[1 * 3 + 2] == "query depth 3400.5 m, key depth 3401 m, weight 0.8"
    assert fig.index("<svg") < fig.index("<details><summary>Static image (attention.png)</summary><img")
    assert "<script" not in text and "http" not in text


def test_a_folder_of_runs_is_one_page(tmp_path):
    parent = tmp_path / "wells"
    worse = {**METRICS, "comparison": {**METRICS["comparison"], "table": {
        "transformer": {**TABLE["transformer"], "rmse": 0.5}, "LSTM": TABLE["porosity-permeability transform"]}}}
    make_run(parent / "second", metrics={**worse, "title": "Second well"}, figures=("loss", "attention"))
    make_run(parent / "first", metrics={**METRICS, "title": "First well"}, figures=("loss",))
    (parent / "metrics.json").write_text(json.dumps({"title": "Two wells", "second": {}, "first": {}}))
    text = html.unescape(write_report(parent).read_text(encoding="utf-8"))
    assert text.count('id="headline"') == 1 and text.count("<h1>") == 1
    assert re.findall(r'<section class="run" id="([^"]+)">', text) == ["run-second", "run-first"]  # metrics' order
    ids = re.findall(r' id="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    assert {"fig-second-loss", "fig-second-attention", "fig-first-loss"} <= set(ids)
    assert "Second well: on the test split, the transformer's RMSE is 0.5 mD and the LSTM's is 0.4 mD: a baseline " \
           "is better." in text
    assert "First well: on the test split, the transformer has the lowest RMSE" in text
    assert text.count('<details class="config">') == 2


def test_the_recommended_model_is_said_under_the_headline(tmp_path):
    said = "Recommended model: the gradient boosting, chosen on inner folds; it scored 0.82 log10 mD on held-out wells."
    metrics = {**METRICS, "recommendation": {"model": "gradient boosting", "text": said}}
    text = html.unescape(write_report(make_run(tmp_path / "run", metrics=metrics)).read_text(encoding="utf-8"))
    assert f'<p class="note">{said}</p>' in text
    assert text.index('<table id="headline"') < text.index(said) < text.index('<h2 id="figures">')


@pytest.mark.parametrize("value, shown", [
    (["15/9-F-11 B"], "15/9-F-11 B"),                                   # a list of names: no brackets
    (["W1", "W2"], "W1, W2"),
    ([0.001, 2262.0], "[0.001, 2262]"),                                 # numbers keep them: a range
    ([42], "[42]"),
    ({"transformer": 10, "LSTM": 19}, "transformer 10, LSTM 19"),       # plain values: no JSON
    ({"a": [1, 2]}, '{"a": [1, 2]}'),                                    # nested: JSON
])
def test_cells_show_lists_and_mappings_as_a_reader_writes_them(value, shown):
    assert fmt(value) == shown
