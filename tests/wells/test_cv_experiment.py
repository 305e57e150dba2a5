"""Cross-validation and the sweep as experiments: any engine gives the serial numbers, the one run-folder writer
writes the sweep's files, and a bad request is refused in one line before anything is written.

Data: three synthetic wells (glassformer.data.synthetic_wells, 160 samples each); the fits are tiny
(2 epochs), what is checked is that two engines and two writers agree, not skill.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from glassformer.data import synthetic_wells
from glassformer.errors import InputError
from glassformer.models import LSTMRegressor, SequenceRegressor
from glassformer.parallel import JoblibEngine, SerialEngine
from glassformer.reporting import shown
from glassformer.runs import protocol
from glassformer.wells import WellModel
from glassformer.wells import sweep as sweep_module
from glassformer.wells.cv_experiment import CvRequest, cross_validate, run_cv
from glassformer.wells.requests import TransformerRequest, WellsRequest
from glassformer.wells.sweep import run_sweep
from glassformer.wells.sweep_request import SweepRequest, run_sweep_request

TIMES = ("fit_s", "train_s", "train_s_sd", "seconds")


def _without_times(obj):
    if isinstance(obj, dict):
        return {k: _without_times(v) for k, v in obj.items() if k not in TIMES}
    if isinstance(obj, list):
        return [_without_times(v) for v in obj]
    return obj


def _well_model(epochs=2):
    return WellModel(["PHI", "VSH"], "PERM", window=16,
                     model=SequenceRegressor(d_model=4, num_heads=2, epochs=epochs, random_state=3, batch_size=16),
                     lstm=LSTMRegressor(hidden_size=2, epochs=epochs, random_state=3, batch_size=16))


def test_cv_on_two_worker_processes_equals_the_serial_run(tmp_path):
    wells = synthetic_wells(n_wells=3, n_samples=160, seed=7)
    said = []
    with shown(said.append):
        serial = cross_validate(tmp_path / "serial", wells, _well_model(), engine=SerialEngine(), report=False)
    with JoblibEngine(2) as engine:
        pooled = cross_validate(tmp_path / "pool", wells, _well_model(), engine=engine, report=False)
    assert _without_times(pooled) == _without_times(serial)
    assert json.loads((tmp_path / "pool" / "metrics.json").read_text())["records"] == \
        json.loads((tmp_path / "serial" / "metrics.json").read_text())["records"]
    frames = [pd.read_csv(tmp_path / name / "predictions.csv") for name in ("serial", "pool")]
    pd.testing.assert_frame_equal(frames[0], frames[1])
    assert [f["test_wells"] for f in serial["folds"]] == [[g.name] for g in wells]
    # what the writer shows: one line per fold, the tables, the verdict (the library prints nothing itself)
    text = "\n".join(said)
    assert text.count("  fold ") == 3 and serial["verdict"] in text and "RMSE per held-out well" in text
    # the mean of the table is the mean of the per-fold records (recomputed here)
    per_fold = [r["rmse"] for r in serial["records"] if r["model"] == "transformer"]
    assert serial["comparison"]["table"]["transformer"]["rmse"] == pytest.approx(np.mean(per_fold), rel=1e-12)


def test_the_sweep_writes_its_folder_through_the_one_writer(tmp_path, monkeypatch):
    wells = synthetic_wells(n_wells=3, n_samples=160, seed=5)
    written = []

    def spy(out, result, **kw):
        written.append(result)
        return write(out, result, **kw)

    write = protocol.write_run_folder
    monkeypatch.setattr(protocol, "write_run_folder", spy)
    monkeypatch.setattr(sweep_module, "write_run_folder", spy)
    wm = WellModel(["PHI", "VSH"], "PERM", window=16, model=SequenceRegressor(epochs=1, random_state=3, batch_size=16))
    grid = {"d_model": [4, 8], "num_heads": [2], "num_layers": [1], "window": [16], "lr": [3e-3]}
    out = tmp_path / "run"
    result = run_sweep(out, wells[:2], wells[2:], wm, grid)
    assert len(written) == 1 and set(written[0].csv) == {"sweep.csv"} and written[0].predictions is None
    table = pd.read_csv(out / "sweep.csv")
    frame = written[0].csv["sweep.csv"]                # the file is the writer's CSV of the result's table
    assert list(table.columns) == list(frame.columns) and table["setting"].tolist() == frame["setting"].tolist()
    np.testing.assert_allclose(table["val_rmse"], frame["val_rmse"], rtol=1e-5)
    np.testing.assert_allclose(table["val_rmse"], [r["val_rmse"] for r in result["rows"]], rtol=1e-5)
    assert table["chosen"].tolist() == [i == result["chosen"] for i in range(2)]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["selection"]["chosen"] == result["rows"][result["chosen"]]["setting"]
    assert metrics["verdict"].startswith("no test data given")
    config = json.loads((out / "config.json").read_text())
    assert config["grid_keys"] == ["d_model", "num_heads", "num_layers", "window", "lr"]
    assert (out / "figures" / "sweep.png").is_file() and not (out / "predictions.csv").exists()


def _cv_request(tmp_path, **kw):
    return CvRequest(inputs=("PHIF",), target="KLOGH", out=str(tmp_path / "out"), **kw)


def _sweep_request(tmp_path, wells=None, **kw):
    base = dict(inputs=("PHIF",), target="KLOGH", out=str(tmp_path / "out"),
                grid={"d_model": (4,), "num_heads": (2,), "num_layers": (1,), "window": (8,), "lr": (0.01,)},
                wells=wells or WellsRequest(data=("w.csv",), train_depth=("2000:2025",)), val_depth=("2025:2030",))
    return SweepRequest(**{**base, **kw})


@pytest.mark.parametrize("make, message", [
    (lambda p: _cv_request(p), r"cv needs the wells: --data FILE \(repeat it\) or --manifest FILE"),
    (lambda p: _cv_request(p, wells=WellsRequest(data=("w.csv",)), transformer=TransformerRequest(d_model=5)),
     r"SequenceRegressor: d_model \(5\) must be divisible by num_heads \(2\)"),
    (lambda p: _cv_request(p, wells=WellsRequest(data=("w.csv",)), hidden_size=0),
     "LSTMRegressor: hidden_size must be a positive integer, got 0"),
    (lambda p: _sweep_request(p, val_depth=()), "sweep chooses on validation data: give --val-depth"),
    (lambda p: _sweep_request(p, target="PHIF"), "--target PHIF is also one of --inputs PHIF"),
    (lambda p: _sweep_request(p, transformer=TransformerRequest(positional="wavelengths")),
     "--positional wavelengths fixes d_model"),
    (lambda p: _sweep_request(p, transformer=TransformerRequest(positional="bogus")),
     "--positional: positional name must be one of"),
    (lambda p: _sweep_request(p, wells=WellsRequest(data=("w.csv",))), "sweep needs the training wells and interval"),
])
def test_a_bad_request_is_one_line_and_writes_nothing(tmp_path, make, message):
    request = make(tmp_path)
    with pytest.raises(InputError, match=message) as caught:
        (run_cv if isinstance(request, CvRequest) else run_sweep_request)(request)
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_a_sweep_interval_is_one_top_base_for_every_well(tmp_path):
    path = tmp_path / "w.csv"
    depth = 2000 + 0.1 * np.arange(400)
    pd.DataFrame({"DEPTH": depth, "PHIF": 0.2 + 0.01 * np.sin(depth), "KLOGH": 10 + np.cos(depth)}).to_csv(path,
                                                                                                          index=False)
    for spec, message in (("2000-2025", "--train-depth must be TOP:BASE"),
                          ("W=2000:2025", "--train-depth: sweep takes one TOP:BASE for every well, got W=2000:2025")):
        request = _sweep_request(tmp_path, wells=WellsRequest(data=(str(path),), train_depth=(spec,)))
        with pytest.raises(InputError, match=message) as caught:
            run_sweep_request(request)
        assert "\n" not in str(caught.value) and not (tmp_path / "out").exists()


def test_the_recommended_model_is_chosen_on_inner_folds_and_scored_on_the_held_out_well(tmp_path):
    wells = synthetic_wells(n_wells=3, n_samples=160, seed=9)
    wm = WellModel(["PHI", "VSH"], "PERM", window=16, tree_baselines=False,
                   model=SequenceRegressor(d_model=4, num_heads=2, epochs=2, random_state=3, batch_size=16))
    metrics = cross_validate(tmp_path / "nested", wells, wm, recommend=True, report=False)
    rec = metrics["recommendation"]
    table = metrics["comparison"]["table"]
    assert rec["model"] == min(table, key=lambda m: table[m]["rmse"]) and rec["rmse"] == table[rec["model"]]["rmse"]
    for fold in rec["per_fold"]:
        k = fold["fold"]
        train = [g for g in wells if g.name not in fold["test_wells"]]
        # the inner folds, recomputed as a cross-validation of the fold's training wells alone
        inner = cross_validate(tmp_path / f"inner{k}", train, wm, report=False)["comparison"]["table"]
        assert fold["inner_rmse"] == pytest.approx({m: row["rmse"] for m, row in inner.items()}, rel=1e-12)
        assert fold["chosen"] == min(inner, key=lambda m: inner[m]["rmse"])
        held_out = next(r for r in metrics["records"] if r["fold"] == k and r["model"] == fold["chosen"])
        assert fold["held_out_rmse"] == pytest.approx(held_out["rmse"], rel=1e-12)
    scores = [f["held_out_rmse"] for f in rec["per_fold"]]
    assert rec["held_out_rmse"] == pytest.approx(np.mean(scores)) and rec["held_out_rmse_sd"] == pytest.approx(
        np.std(scores, ddof=1))
    assert f"the {rec['model']}" in rec["text"] and f"{rec['held_out_rmse']:.3f}" in rec["text"]
    saved = json.loads((tmp_path / "nested" / "metrics.json").read_text())
    assert saved["recommendation"]["model"] == rec["model"]
    with pytest.raises(InputError, match="needs at least 2 training wells in every fold"):
        cross_validate(tmp_path / "two", wells[:2], wm, recommend=True)
    assert not (tmp_path / "two").exists()
