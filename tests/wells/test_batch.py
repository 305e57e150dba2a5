"""Batch prediction in the library: input patterns, output names, the per-well function, the manifest,
resuming, and the out-of-range hook.

One tiny model (d_model 8, 1 epoch, --log-target) is trained once on a hand-written CSV well; the
batch runs on the serial engine here (the parallel engines are compared with it in
tests/cli/test_predict_batch.py).
"""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main
from glassformer.errors import InputError
from glassformer.wells import WellModel
from glassformer.wells.batch import MANIFEST_COLUMNS, expand_inputs, output_paths, plan_batch, run_batch
from glassformer.wells.manifest import Manifest
from glassformer.wells.prediction import predict_file

N = 300


def _well(path, seed: int, n: int = N, curves=("PHIF", "VSH", "KLOGH")):
    rng = np.random.default_rng(seed)
    depth = 2000.0 + 0.5 * np.arange(n)
    phi = 0.2 + 0.08 * np.sin(depth / 3.0) + 0.01 * rng.standard_normal(n)
    phi[40:43] = np.nan                                      # a gap: no prediction there
    cols = {"DEPTH": depth, "PHIF": phi, "VSH": np.clip(0.3 - 0.5 * (phi - 0.2), 0, 1), "KLOGH": 10 ** (12 * phi - 1)}
    pd.DataFrame({k: cols[k] for k in ("DEPTH", *curves)}).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def field(tmp_path_factory):
    """A model trained on W1, and a folder of wells: W1-W3 good, W4 without VSH, W5 not a well file."""
    root = tmp_path_factory.mktemp("batch")
    wells = root / "wells"
    wells.mkdir()
    for i in (1, 2, 3):
        _well(wells / f"W{i}.csv", seed=i)
    _well(wells / "W4.csv", seed=4, curves=("PHIF", "KLOGH"))
    (wells / "W5.csv").write_text("this is not a well file\n")
    run = root / "run"
    assert main(["train", "--data", str(wells / "W1.csv"), "--inputs", "PHIF", "VSH", "--target", "KLOGH",
                 "--log-target", "--train-depth", "2000:2100", "--window", "16", "--epochs", "1", "--d-model", "8",
                 "--out", str(run), "--no-progress", "--checkpoint-every", "100"]) == 0
    return root, wells, run


def flag_porous(wm, log):
    """A hand-made range check (a top-level function, as workers import it): porosity above 0.25 v/v."""
    return np.asarray(log.curve("PHIF")) > 0.25


# ----------------------------------------------------------------------------- inputs and output names
def test_patterns_expand_sorted_once_each(field):
    _, wells, _ = field
    files = expand_inputs([str(wells / "W[12].csv"), str(wells / "W*.csv"), str(wells / "W3.csv")])
    assert [f.name for f in files] == ["W1.csv", "W2.csv", "W3.csv", "W4.csv", "W5.csv"]


@pytest.mark.parametrize("pattern, message", [
    ("nowhere/*.las", "--data 'nowhere/*.las' matches no file"),
    ("nowhere/W1.las", "--data nowhere/W1.las: no such file"),
])
def test_patterns_that_name_nothing_are_errors_naming_them(pattern, message):
    with pytest.raises(InputError, match=message.replace("*", r"\*").replace(".", r"\.")):
        expand_inputs([pattern])


def test_a_folder_is_refused_with_the_pattern_to_use(field):
    _, wells, _ = field
    with pytest.raises(InputError, match=r"is a folder; give its files, e.g. --data '.*\*\.las'"):
        expand_inputs([str(wells)])


def test_outputs_are_named_by_stem_and_never_collide(field, tmp_path):
    _, wells, _ = field
    outs = output_paths([wells / "W1.csv", wells / "W2.csv"], tmp_path / "o", "las")
    assert outs == [tmp_path / "o" / "W1.las", tmp_path / "o" / "W2.las"]
    (tmp_path / "b").mkdir()
    other = _well(tmp_path / "b" / "w1.csv", seed=9)
    with pytest.raises(InputError, match=r"W1\.csv and .*w1\.csv would both be written to .*w1\.las"):
        output_paths([wells / "W1.csv", other], tmp_path / "o", "las")
    with pytest.raises(InputError, match="would replace the input well"):
        output_paths([wells / "W1.csv"], wells, "csv")
    with pytest.raises(InputError, match="--format 'xlsx'"):
        output_paths([wells / "W1.csv"], tmp_path, "xlsx")


# ----------------------------------------------------------------------------- one well
def test_predict_file_row_and_output_match_the_model(field, tmp_path):
    root, wells, run = field
    row = predict_file(run, wells / "W2.csv", tmp_path / "W2.csv")
    wm = WellModel.load(run)
    from glassformer.data import read_well

    expected = wm.predict_log(read_well(wells / "W2.csv"))           # log10 mD, NaN in the gap
    out = pd.read_csv(tmp_path / "W2.csv")
    assert list(out.columns) == ["DEPTH", "KLOGH_PRED_LOG10", "KLOGH_PRED", "KLOGH_OOR"]
    np.testing.assert_allclose(out["KLOGH_PRED_LOG10"], expected, rtol=1e-8, equal_nan=True)
    assert out["KLOGH_PRED_LOG10"].isna().sum() == 3
    # the flag curve: an input outside the 0.5-99.5 percentiles of the training samples (W1, 2000-2100 m)
    train, well = pd.read_csv(wells / "W1.csv"), pd.read_csv(wells / "W2.csv")
    train = train[(train["DEPTH"] >= 2000) & (train["DEPTH"] <= 2100)]
    outside = np.zeros(N, bool)
    for m in ("PHIF", "VSH"):
        low, high = np.percentile(train[m].dropna(), [0.5, 99.5])
        outside |= ((well[m] < low) | (well[m] > high)).to_numpy()
    predicted = np.isfinite(expected)                                 # no flag where nothing is predicted
    np.testing.assert_array_equal(out["KLOGH_OOR"], np.where(predicted, outside.astype(float), np.nan))
    assert {k: row[k] for k in ("well", "samples", "samples_predicted", "samples_flagged", "status", "error")} == {
        "well": "W2", "samples": N, "samples_predicted": N - 3, "samples_flagged": int((outside & predicted).sum()),
        "status": "ok", "error": ""}
    assert list(row) == list(MANIFEST_COLUMNS) and row["seconds"] > 0
    with pytest.raises(InputError, match="already exists"):
        predict_file(run, wells / "W2.csv", tmp_path / "W2.csv")
    with pytest.raises(InputError, match="would replace the input well"):
        predict_file(run, wells / "W2.csv", wells / "W2.csv", overwrite=True)


def test_the_range_check_hook_counts_and_writes_a_flag_curve(field, tmp_path):
    _, wells, run = field
    row = predict_file(run, wells / "W3.csv", tmp_path / "W3.csv", flag_samples=flag_porous)
    phi = pd.read_csv(wells / "W3.csv")["PHIF"].to_numpy()
    out = pd.read_csv(tmp_path / "W3.csv")
    predicted = out["KLOGH_PRED"].notna().to_numpy()
    assert row["samples_flagged"] == int(np.sum((phi > 0.25) & predicted)) > 0
    np.testing.assert_array_equal(out["KLOGH_OOR"], np.where(predicted, (phi > 0.25).astype(float), np.nan))


# ----------------------------------------------------------------------------- the batch and its manifest
def test_a_bad_file_never_stops_the_batch(field, tmp_path):
    _, wells, run = field
    out = tmp_path / "out"
    rows = run_batch(run, expand_inputs([str(wells / "*.csv")]), out, fmt="csv")
    assert [r["status"] for r in rows] == ["ok", "ok", "ok", "error", "error"]
    assert [r["output"] for r in rows] == ["W1.csv", "W2.csv", "W3.csv", "", ""]
    assert rows[3]["error"].startswith("CurveNotFoundError: curve 'VSH' not found") and "W4.csv" in rows[3]["error"]
    assert rows[4]["error"].startswith("DataFileError") and "W5.csv" in rows[4]["error"]
    assert sorted(p.name for p in out.iterdir()) == ["W1.csv", "W2.csv", "W3.csv", "manifest.csv", "manifest.json"]
    body = json.loads((out / "manifest.json").read_text())
    assert body["summary"] == {"wells": 5, "ok": 3, "failed": 2, "not_finished": 0}
    assert body["format"] == "csv" and body["rows"] == rows
    table = pd.read_csv(out / "manifest.csv", keep_default_na=False, dtype=str)
    assert list(table.columns) == list(MANIFEST_COLUMNS)
    assert table["samples_predicted"].tolist() == [str(N - 3)] * 3 + ["", ""]      # integers, blank when failed
    # the outputs are what the single-well function writes
    predict_file(run, wells / "W2.csv", tmp_path / "single.csv")
    assert (out / "W2.csv").read_bytes() == (tmp_path / "single.csv").read_bytes()


def test_an_earlier_batch_is_refused_resumed_or_overwritten(field, tmp_path):
    _, wells, run = field
    out = tmp_path / "out"
    files = expand_inputs([str(wells / "W[123].csv")])
    run_batch(run, files, out)
    with pytest.raises(InputError, match="holds an earlier batch .*pass --resume to finish it, or --overwrite"):
        run_batch(run, files, out)
    # a batch cut short: W3's output and row are gone (as after a kill between two wells)
    (out / "W3.las").unlink()
    body = json.loads((out / "manifest.json").read_text())
    kept = {p.name: os.stat(p).st_mtime_ns for p in out.glob("W*.las")}
    time.sleep(0.01)
    rows = run_batch(run, files, out, resume=True)
    assert [r["status"] for r in rows] == ["ok"] * 3 and (out / "W3.las").is_file()
    assert {p: os.stat(out / p).st_mtime_ns for p in kept} == kept             # W1, W2 not predicted again
    assert rows[:2] == body["rows"][:2]
    rows = run_batch(run, files, out, overwrite=True)
    assert all(os.stat(out / p).st_mtime_ns > kept[p] for p in kept)


def test_resume_refuses_another_model_or_format(field, tmp_path):
    root, wells, run = field
    out = tmp_path / "out"
    files = expand_inputs([str(wells / "W1.csv")])
    run_batch(run, files, out)
    other = tmp_path / "other"
    assert main(["train", "--data", str(wells / "W2.csv"), "--inputs", "PHIF", "VSH", "--target", "KLOGH",
                 "--log-target", "--train-depth", "2000:2100", "--window", "16", "--epochs", "1", "--d-model", "8",
                 "--out", str(other), "--no-progress", "--checkpoint-every", "100"]) == 0
    with pytest.raises(InputError, match=r"other settings \(the model differs"):
        plan_batch(other, files, out, resume=True)
    with pytest.raises(InputError, match=r"format is 'las' there, 'csv' here"):
        plan_batch(run, files, out, fmt="csv", resume=True)
    with pytest.raises(InputError, match="holds no manifest.json"):
        plan_batch(run, files, tmp_path / "empty", resume=True)


def test_the_manifest_waits_when_rewriting_would_cost_more_than_the_wells(tmp_path):
    m = Manifest(tmp_path, {"format": "las"})
    row = {k: None for k in MANIFEST_COLUMNS}
    assert m.update([dict(row, status="ok")]) is True                     # the first rows are always written
    m._last_cost = 3600.0                                                 # as if a rewrite took an hour
    assert m.update([dict(row, status="ok"), dict(row, status="error")]) is False
    assert json.loads(m.json_path.read_text())["summary"]["wells"] == 1
    m.write([dict(row, status="ok"), dict(row, status="error"), None])   # the final write: now, timer cancelled
    assert json.loads(m.json_path.read_text())["summary"] == {"wells": 3, "ok": 1, "failed": 1, "not_finished": 1}
    assert m._timer is None


def test_rows_held_back_are_written_by_the_timer_even_if_no_well_follows(tmp_path):
    m = Manifest(tmp_path, {"format": "las"})
    row = {k: None for k in MANIFEST_COLUMNS}
    m.update([dict(row, status="ok")])
    m._last_end, m._last_cost = time.perf_counter(), 0.01                 # the next rewrite waits 0.2 s
    assert m.update([dict(row, status="ok"), dict(row, status="ok")]) is False
    deadline = time.monotonic() + 60
    while not (json.loads(m.json_path.read_text())["summary"]["wells"] == 2         # no further update:
               and len(m.csv_path.read_text().splitlines()) == 3):                 # the timer writes both
        assert time.monotonic() < deadline, "the held-back rows were never written"
        time.sleep(0.05)
    assert "None" not in m.csv_path.read_text()


def test_a_deep_ensemble_batch_writes_p10_p50_p90_as_the_single_well_form(field, tmp_path):
    _, wells, _ = field
    ens = tmp_path / "ens"
    assert main(["train", "--data", str(wells / "W1.csv"), "--inputs", "PHIF", "VSH", "--target", "KLOGH",
                 "--log-target", "--train-depth", "2000:2149.5", "--validation-depth", "2120:2149.5", "--test-data",
                 str(wells / "W3.csv"), "--ensemble", "2", "--window", "16", "--epochs", "1", "--d-model", "8",
                 "--no-progress", "--out", str(ens)]) == 0
    files = expand_inputs([str(wells / "W[23].csv")])
    rows = run_batch(ens, files, tmp_path / "out", fmt="csv")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    out = pd.read_csv(tmp_path / "out" / "W2.csv")
    p10, p50, p90 = (out[f"KLOGH_{k}_LOG10"] for k in ("P10", "P50", "P90"))
    ok = p50.notna()
    assert ok.sum() == rows[0]["samples_predicted"] == N - 3
    assert (p10[ok] <= p50[ok]).all() and (p50[ok] <= p90[ok]).all() and (p10[ok] < p90[ok]).any()
    np.testing.assert_array_equal(out["KLOGH_PRED_LOG10"], p50)                  # the prediction is the P50
    assert main(["predict", "--model", str(ens), "--data", str(wells / "W2.csv"), "--out",
                 str(tmp_path / "one.csv")]) == 0
    assert (tmp_path / "one.csv").read_bytes() == (tmp_path / "out" / "W2.csv").read_bytes()
    body = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(body["model_checksum"]["members"]) == 2
    assert set(plan_batch(ens, files, tmp_path / "out", fmt="csv", resume=True)["jobs"]) == set()


# ----------------------------------------------------------------------------- the model, loaded once
@pytest.fixture
def loads(monkeypatch):
    """Counts the well models read from files (a run folder, or each member of an ensemble)."""
    calls = []
    real = WellModel.load.__func__

    def counted(cls, directory):
        calls.append(str(directory))
        return real(cls, directory)

    monkeypatch.setattr(WellModel, "load", classmethod(counted))
    return calls


def test_a_prediction_and_a_serial_batch_read_the_model_once(field, tmp_path, loads):
    _, wells, run = field
    assert main(["predict", "--model", str(run), "--data", str(wells / "W2.csv"), "--out",
                 str(tmp_path / "one.csv")]) == 0
    assert loads == [str(run)]
    loads.clear()
    assert main(["predict", "--model", str(run), "--data", str(wells / "W[123].csv"), "--out-dir", str(tmp_path / "b"),
                 "--no-progress"]) == 0
    assert loads == [str(run)]                                   # three wells, one read


def test_a_predictor_knows_its_name_and_identity_and_travels_as_its_folder(field):
    import pickle

    from glassformer.errors import ModelFileError
    from glassformer.wells.predictor import Predictor, _reload

    _, wells, run = field
    saved = json.loads((run / "model" / "model.json").read_text())["checksum"]
    default, gbm = Predictor.load(run), Predictor.load(run, use="gradient boosting")
    assert (default.name, gbm.name, default.curve, default.unit) == ("transformer", "gradient boosting", "KLOGH_PRED",
                                                                     "")
    assert default.identity == {"folder": str(run), "checksum": saved}
    assert default.describe() == f"transformer (mean of 5 members) of {run} (checksum {saved['meta'][:12]})"
    assert default.label == f"transformer (mean of 5 members), {run / 'model'}" and gbm.label == "gradient boosting"
    with pytest.raises(InputError, match=r"--use 'forest': the run in .* has no such model; it has: transformer"):
        Predictor.load(run, use="forest")
    sent = pickle.dumps(gbm)
    assert len(sent) < 2000                                      # the folder and checksum, not the model's arrays
    back = pickle.loads(sent)
    assert (back.name, back.identity) == (gbm.name, gbm.identity) and back.wm is not gbm.wm
    with pytest.raises(ModelFileError, match="the model files changed since the batch was planned"):
        _reload(str(run), None, False, {"algorithm": "sha256", "arrays": "0", "meta": "0"})


def test_the_request_is_checked_before_the_model_is_read(field, tmp_path, loads):
    from glassformer.wells.predict_request import PredictRequest, run_prediction

    _, wells, run = field
    both = PredictRequest(model_dir=str(run), data=(str(wells / "W2.csv"),), out=str(tmp_path / "a.csv"),
                          out_dir=str(tmp_path / "d"))
    with pytest.raises(InputError, match=r"give --out FILE \(one well\) or --out-dir DIR \(a batch of wells\), "
                                         r"not both"):
        run_prediction(both)
    one = PredictRequest.from_options({"model_dir": str(run), "data": [str(wells / "W2.csv")],
                                       "out": str(tmp_path / "a.csv"), "out_dir": None, "jobs": 2, "units": []})
    assert one.engine.jobs == 2 and one.data == (str(wells / "W2.csv"),)
    with pytest.raises(InputError, match=r"--jobs apply to a batch \(--out-dir DIR\), not to --out FILE"):
        run_prediction(one)
    assert loads == []
