"""glassformer.report: a self-contained report.html per run folder, and `glassformer report` (the page as a whole)."""

from __future__ import annotations

import base64
import json
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from glassformer import plots as gp  # noqa: E402
from glassformer.cli import cli, main  # noqa: E402
from glassformer.errors import DataFileError, InputError  # noqa: E402
from glassformer.report import FIGURE_GUIDES, GENERIC_GUIDE, figure_guide, write_report  # noqa: E402

METRICS = {
    "title": "Synthetic wells <demo>",
    "units": {"rmse": "log10 mD", "mae": "log10 mD", "r2": "dimensionless"},
    "model": {"rmse": 0.31234, "mae": 0.2468, "r2": 0.8125, "n": 420},
    "baselines": {
        "porosity-permeability transform": {"rmse": 0.4567, "mae": 0.3501, "r2": 0.6012, "n": 420},
        "training mean": {"rmse": 0.9, "mae": 0.75, "r2": -0.01, "n": 420},
    },
    "test": {"transformer": {"rmse": 0.31234, "mae": 0.2468, "r2": 0.8125, "n": 420}},
    "training": {"epochs_run": 200, "best_epoch": 187, "stop_reason": "max_epochs"},
    "note": "A long note about what these metrics mean, which is longer than eighty characters in total.",
}
CONFIG = {
    "title": "ignored when metrics has one",
    "model": {"d_model": 4, "num_heads": 1, "activation": "<relu & co>"},
    "train_wells": [{"name": "W1", "top": 3400.0, "base": 3550.0}],
    "attribution": "Data: example field, courtesy of the operator.",
}


def make_run(tmp_path, *, figures=("loss", "attention", "mystery_plot"), config=CONFIG, metrics=METRICS):
    run = tmp_path / "run"
    (run / "figures").mkdir(parents=True)
    for stem in figures:
        if stem == "loss":
            fig = gp.plot_loss({"train": [1.0, 0.5, 0.3]})
        elif stem.startswith("attention"):
            fig = gp.plot_attention(np.full((3, 3), 1 / 3))
        else:
            fig = gp.plot_ablation({"learned": 1.0, "uniform": 2.0})
        gp.save_figure(fig, run / "figures" / f"{stem}.png")
    if config is not None:
        (run / "config.json").write_text(json.dumps(config))
    if metrics is not None:
        (run / "metrics.json").write_text(json.dumps(metrics))
    (run / "predictions.csv").write_text("depth_m,interval,k_mD\n3400.0,train,10\n3400.5,train,12\n3700,test,5\n")
    return run


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def test_report_embeds_every_figure_and_metrics(tmp_path):
    run = make_run(tmp_path)
    path = write_report(run)
    assert path == run / "report.html"
    text = path.read_text(encoding="utf-8")
    uris = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(uris) == 3
    embedded = {base64.b64decode(u) for u in uris}
    assert embedded == {p.read_bytes() for p in (run / "figures").glob("*.png")}
    # metrics table: model beside baselines, 4 significant digits, units in the header
    for cell in ("0.3123", "0.2468", "0.8125", "0.4567", "0.6012", "porosity-permeability transform",
                 "training mean", "rmse (log10 mD)"):
        assert cell in text
    assert '<td class="best num">0.3123</td>' in text  # best RMSE in bold
    assert text.index(">model<") < text.index("porosity-permeability transform")
    # reading guides: known stems get theirs, unknown ones the generic sentence
    assert FIGURE_GUIDES["loss"].split(":")[0] in text
    assert FIGURE_GUIDES["attention"].split(":")[0] in text
    assert GENERIC_GUIDE in text
    # figures in the seed's order: attention before loss, unknown last
    assert text.index("attention.png") < text.index("loss.png") < text.index("mystery_plot.png")
    # data summary and attribution
    assert "Data: example field, courtesy of the operator." in text
    assert "predictions.csv rows" in text and "3400 – 3700" in text and "train: 2, test: 1" in text
    assert "W1" in text and "3550" in text


def test_report_is_self_contained_and_escaped(tmp_path):
    text = write_report(make_run(tmp_path)).read_text(encoding="utf-8")
    for bad in ("http://", "https://", 'src="//', "<script", "@import", "url(", "<link"):
        assert bad not in text
    assert "&lt;relu &amp; co&gt;" in text and "<relu" not in text
    assert "<title>Synthetic wells &lt;demo&gt;</title>" in text
    # every src= is a data URI
    assert all(s.startswith("data:") for s in re.findall(r'src="([^"]*)"', text))


def test_attribution_with_url_is_text_only_and_from_file(tmp_path):
    config = {**CONFIG, "attribution": "Data: Volve, courtesy of Equinor. https://example.invalid/terms"}
    run = make_run(tmp_path, config=config, figures=("loss",))
    (run / "attribution.txt").write_text("Core data courtesy of a lab.\n")
    text = write_report(run).read_text(encoding="utf-8")
    assert "https://example.invalid/terms" in text  # shown to the reader...
    assert not re.search(r'(src|href)="https?:', text)  # ...but never fetched or linked
    assert "Core data courtesy of a lab." in text


def test_missing_and_broken_files_still_give_a_report(tmp_path):
    run = make_run(tmp_path, figures=(), config=None, metrics=None)
    (run / "metrics.json").write_text("{not json")
    (run / "figures" / "fake.png").write_text("not a png")
    text = write_report(run).read_text(encoding="utf-8")
    assert "metrics.json could not be read" in text
    assert "No metrics.json in this run" not in text    # the file is there: the note above says why
    assert "No config.json in this run." in text
    assert "fake.png is not a PNG file" in text
    assert [p.name for p in run.iterdir() if p.name.startswith(".")] == []  # atomic: no temp files left
    with pytest.raises(InputError, match="does not exist or is not a folder"):
        write_report(tmp_path / "nope")


def test_figure_guide_prefix_matching():
    assert figure_guide("attention") == FIGURE_GUIDES["attention"]
    assert figure_guide("attention_layer1_head0") == FIGURE_GUIDES["attention"]
    assert figure_guide("attention_heads") == FIGURE_GUIDES["attention_heads"]
    assert figure_guide("prediction_panels-test") == FIGURE_GUIDES["prediction_panels"]
    assert figure_guide("prediction_vs_depth") == FIGURE_GUIDES["prediction_vs_depth"]
    assert figure_guide("lossy") == GENERIC_GUIDE


def test_a_held_out_wells_figures_get_their_parts_guides_whatever_the_wells_name():
    assert figure_guide("blind_well_15_9_F_11_B") == FIGURE_GUIDES["blind_well"]
    assert figure_guide("blind_well_15_9_F_11_B_tracks") == FIGURE_GUIDES["blind_well_tracks"]
    assert figure_guide("blind_well_15_9_F_11_B_zoom_2") == FIGURE_GUIDES["blind_well_zoom"]
    assert figure_guide("blind_well_15_9_F_11_B_crossplot") == FIGURE_GUIDES["blind_well_crossplot"]
    assert figure_guide("blind_well_my_tracks_well") == FIGURE_GUIDES["blind_well"]     # a name is not a part


def test_cli_report_command(tmp_path):
    run = make_run(tmp_path, figures=("loss",))
    result = CliRunner().invoke(cli, ["report", str(run)])
    assert result.exit_code == 0, result.output
    assert "report.html" in result.output and (run / "report.html").is_file()
    assert main(["report", str(tmp_path / "missing")]) == 2


def test_a_folder_that_is_not_a_run_is_refused(tmp_path, capsys):
    empty = tmp_path / "empty"
    (empty / "stuff").mkdir(parents=True)
    (empty / "notes.txt").write_text("hello")
    with pytest.raises(DataFileError, match=r"is not a run folder \(no config.json, metrics.json or figures/"):
        write_report(empty)
    assert not (empty / "report.html").exists()
    assert main(["report", str(empty)]) == 2
    err = capsys.readouterr().err.strip()
    assert "is not a run folder" in err and len(err.splitlines()) == 1
    (empty / "metrics.json").write_text(json.dumps({"rmse": 0.5}))      # one run file is enough
    assert "0.5" in write_report(empty).read_text(encoding="utf-8")


def test_parent_folder_links_its_sub_runs_relatively(tmp_path):
    parent = tmp_path / "real-wells"
    for name, title in (("f11b-depth-split", "15/9-F-11 B depth split"), ("across-wells", "Across <wells>")):
        run = make_run(parent, figures=("loss",), metrics={**METRICS, "title": title})
        run.rename(parent / name)
        write_report(parent / name)
    (parent / "model").mkdir()                       # a sub-folder without a report is not listed
    (parent / "metrics.json").write_text(json.dumps({"title": "Real wells", "seeds": [0]}))
    text = write_report(parent).read_text(encoding="utf-8")
    hrefs = re.findall(r'href="([^"#][^"]*)"', text)
    assert hrefs == ["across-wells/report.html", "f11b-depth-split/report.html"]   # sorted, relative
    assert "15/9-F-11 B depth split" in text and "Across &lt;wells&gt;" in text
    assert "No config.json" not in text and "No figures folder" not in text
    for bad in ("http://", "https://", 'src="//', "<script"):
        assert bad not in text
    # a sub-folder's report alone (no config/metrics/figures in the parent) also makes a parent report
    (parent / "metrics.json").unlink()
    text = write_report(parent).read_text(encoding="utf-8")
    assert 'href="f11b-depth-split/report.html"' in text and "No metrics.json" not in text
