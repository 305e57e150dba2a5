"""The CLI never shows a raw traceback or loses a file.

Every bad file of the corpus (tests/fixtures/wells/bad_*), every bad option, and every bad model
file gives exit status 2 and exactly one line on stderr naming the file/curve/option; disguised
pickles are refused without being unpickled; outputs are never overwritten without --overwrite;
a save that dies halfway keeps the previous run folder.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "wells"
REPO = Path(__file__).resolve().parents[2]
BAD = sorted(p.name for p in FIX.glob("bad_*"))


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and lines[0].startswith("glassformer: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def well_csv(tmp_path_factory):
    rng = np.random.default_rng(11)
    n = 600
    depth = 2000 + 0.1 * np.arange(n)
    phi = 0.2 + 0.08 * np.sin(depth / 3) + 0.02 * rng.standard_normal(n)
    vsh = np.clip(0.3 - 0.5 * (phi - 0.2), 0, 1)
    k = 10 ** (12 * phi - 1)
    k[:50] = np.nan                                   # 2000-2004.9 m: target all null
    phi[300] = np.nan                                 # a gap in the inputs at 2030 m
    path = tmp_path_factory.mktemp("well") / "well.csv"
    pd.DataFrame({"DEPTH": depth, "PHIF": phi, "VSH": vsh, "KLOGH": k}).to_csv(path, index=False)
    return path


def _args(data, out, *extra, train="2005:2029", inputs=("PHIF", "VSH"), target="KLOGH"):
    return ["train", "--data", str(data), "--inputs", *inputs, "--target", target, "--train-depth", train,
            "--window", "16", "--epochs", "1", "--d-model", "8", "--out", str(out), "--no-progress",
            "--checkpoint-every", "100", *extra]


@pytest.fixture(scope="module")
def run(well_csv, tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "run"
    assert main(_args(well_csv, out)) == 0
    return out


# ------------------------------------------------------------------------- the bad-file corpus
@pytest.mark.parametrize("name", BAD)
def test_every_bad_file_exits_2_with_one_line(name, tmp_path, capsys):
    rc = main(_args(FIX / name, tmp_path / "out"))
    line = _one_error_line(capsys)
    assert rc == 2 and name in line
    assert not (tmp_path / "out").exists()            # nothing created for a refused run


@pytest.mark.parametrize("name", ["bad_truncated_mid_row.las", "bad_missing_depth.csv", "bad_non_utf8.csv"])
def test_bad_file_to_predict_exits_2(run, name, tmp_path, capsys):
    capsys.readouterr()
    rc = main(["predict", "--model", str(run), "--data", str(FIX / name), "--out", str(tmp_path / "p.csv")])
    assert rc == 2 and name in _one_error_line(capsys)
    assert not (tmp_path / "p.csv").exists()


def test_bad_file_in_a_real_process_has_no_traceback(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "glassformer", *_args(FIX / "bad_wrap_invalid.las", tmp_path / "o")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"glassformer: error: {FIX / 'bad_wrap_invalid.las'}: WRAP must be YES or NO, got 'MAYBE'"]


# ------------------------------------------------------------------------- bad options and intervals
@pytest.mark.parametrize("kwargs, extra, message", [
    ({"target": "PERM"}, (), r"curve 'PERM' not found in .*well\.csv.*; available: DEPTH, PHIF, VSH, KLOGH"),
    ({"inputs": ("PHIF", "GR")}, (), r"curve 'GR' not found .*available: DEPTH, PHIF, VSH, KLOGH"),
    ({"train": "1990:2010"}, (), r"interval 1990 to 2010 m reaches outside the log's depth range 2000 to 2059\.9 m"),
    ({"train": "2000:2004.9"}, (), r"well\.csv: target curve KLOGH has no valid \(non-null\) sample in the training "
                                   r"interval 2000:2004\.9 m \(50 samples, all null\)"),
    ({"train": "2005:2035"}, ("--window", "400"), r"--window 400: no gap-free run of inputs PHIF, VSH is that long "
                                                  r"in the training interval 2005:2035 \(longest per file: .*well\.csv: "
                                                  r"250\); use --window 250 or less"),
    ({"train": "2029.9:2030.1"}, (), r"no gap-free run of at least 2 samples"),
    ({"train": "2010-2020"}, (), r"--train-depth must be TOP:BASE"),
    ({"train": "2020:2010"}, (), r"--train-depth must be TOP:BASE with TOP < BASE"),
    ({"train": "nan:2010"}, (), r"--train-depth must be TOP:BASE with TOP < BASE"),
    ({"target": "PHIF"}, (), r"--target PHIF is also one of --inputs PHIF VSH"),
    ({}, ("--seed", "-1"), r"Invalid value for '--seed'"),
    ({}, ("--lr", "nan"), r"--lr: the learning rate must be a finite number > 0, got nan"),
    ({}, ("--heads", "3"), r"d_model \(8\) must be divisible by num_heads \(3\)"),
    ({}, ("--positional", "bogus"), r"Invalid value for '--positional': 'bogus' is not one of 'chapter', .*'rotary'"),
    ({}, ("--window", "1"), r"Invalid value for '--window'"),
    ({}, ("--test-depth", "2010:2020"), r"--test-depth 2010:2020 lies inside --train-depth 2005:2029"),
    ({}, ("--test-depth", "2020:2040"), r"--test-depth 2020:2040 overlaps --train-depth 2005:2029 in well: 91 depth "
                                        r"samples \(2020 to 2029 m\) would be both trained on and tested; .*"
                                        r"\(e\.g\. test 2029:2040 m\)$"),
    ({"train": "2020:2040"}, ("--test-depth", "2010:2030"), r"--test-depth 2010:2030 overlaps --train-depth "
                                                            r"2020:2040 in well: 101 depth samples \(2020 to 2030 m\)"
                                                            r".*\(e\.g\. test 2010:2020 m\)$"),
    ({"train": "2020:2040"}, ("--test-depth", "2010:2050"), r"overlaps --train-depth 2020:2040 in well: 201 depth "
                                                            r"samples \(2020 to 2040 m\)"),
    ({"train": "-10:2010"}, (), r"interval -10 to 2010 m reaches outside the log's depth range 2000 to 2059\.9 m"),
    ({}, ("--positional", "wavelengths"), r"--positional wavelengths needs --wavelengths W1 W2 \.\.\. .*d_model "
                                          r"must be 2 x their count"),
    ({}, ("--positional", "wavelengths", "--wavelengths", "4", "16", "64"),
     r"--d-model \(8\) must be 2 x the number of --wavelengths \(3\); use --d-model 6$"),
    ({}, ("--positional", "wavelengths", "--wavelengths", "4", "-16", "--d-model", "4"),
     r"--wavelengths must be finite numbers > 0, got -16"),
    ({}, ("--wavelengths", "4", "16"), r"--wavelengths is used only with --positional wavelengths"),
    ({"inputs": ("PHIF", "VSH", "PHIF")}, (), r"--inputs lists PHIF more than once; give each curve once, e\.g\. "
                                              r"--inputs PHIF VSH$"),
    ({"inputs": ("PHIF", "phif")}, (), r"--inputs lists phif more than once"),
])
def test_bad_options_exit_2_naming_what_and_where(well_csv, tmp_path, capsys, kwargs, extra, message):
    import re

    rc = main(_args(well_csv, tmp_path / "out", *extra, **kwargs))
    line = _one_error_line(capsys)
    assert rc == 2 and re.search(message, line), line
    assert not (tmp_path / "out").exists()


def test_mixed_depth_units_across_data_files(well_csv, tmp_path, capsys):
    import lasio

    df = pd.read_csv(well_csv)
    las = lasio.LASFile()
    las.append_curve("DEPT", df["DEPTH"].to_numpy(), unit="FT")
    for c in ("PHIF", "VSH", "KLOGH"):
        las.append_curve(c, df[c].to_numpy())
    ft = tmp_path / "feet.las"
    with open(ft, "w") as fh:
        las.write(fh, version=2.0)
    args = _args(well_csv, tmp_path / "out")
    assert main(args[:3] + ["--data", str(ft)] + args[3:]) == 2
    line = _one_error_line(capsys)
    assert f"wells mix depth units (convert them first): {well_csv}: m; {ft}: ft" in line
    assert main(args + ["--test-data", str(ft)]) == 2
    assert f"{ft}: ft" in _one_error_line(capsys)


# ------------------------------------------------------------------------- model files
def test_pickle_disguised_as_model_is_refused_without_unpickling(run, tmp_path, capsys):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    fake = tmp_path / "fake"
    shutil.copytree(run / "model", fake / "model")
    (fake / "model" / "model.npz").write_bytes(pickle.dumps(Evil()))
    rc = main(["predict", "--model", str(fake), "--data", str(FIX / "good.csv"), "--out", str(tmp_path / "p.csv")])
    line = _one_error_line(capsys)
    assert rc == 2 and "model.npz: not a NumPy .npz archive; it looks like a Python pickle" in line
    assert not marker.exists() and not (tmp_path / "p.csv").exists()
    # an .npz whose member is an object array (np.save pickles it) is refused the same way
    np.savez(fake / "model" / "model.npz", **{"head.weight": np.array([Evil()], dtype=object)})
    assert main(["predict", "--model", str(fake), "--data", str(FIX / "good.csv"), "--out", str(tmp_path / "p.csv")]) == 2
    assert "never unpickles" in _one_error_line(capsys)
    assert not marker.exists()


@pytest.mark.parametrize("damage, message", [
    (lambda b: b[: len(b) // 2], "truncated or corrupted archive"),
    (lambda b: b[:-200] + bytes([b[-200] ^ 0xFF]) + b[-199:], "corrupt|checksum mismatch|truncated"),
    (lambda b: b"DEPTH,PHIF\n1,2\n", "looks like a text file"),
    (lambda b: b"", "the file is empty"),
])
def test_damaged_model_files_exit_2(run, tmp_path, capsys, damage, message):
    import re

    fake = tmp_path / "fake"
    shutil.copytree(run / "model", fake)
    npz = fake / "model.npz"
    npz.write_bytes(damage(npz.read_bytes()))
    rc = main(["predict", "--model", str(fake), "--data", str(FIX / "good.csv"), "--out", str(tmp_path / "p.csv")])
    line = _one_error_line(capsys)
    assert rc == 2 and re.search(message, line) and "model.npz" in line, line


def test_model_folder_without_model_exits_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    rc = main(["predict", "--model", str(tmp_path / "empty"), "--data", str(FIX / "good.csv"),
               "--out", str(tmp_path / "p.csv")])
    assert rc == 2 and "no model found" in _one_error_line(capsys)


# ------------------------------------------------------------------------- never lose a file
def test_existing_run_is_not_overwritten_without_overwrite(run, well_csv, capsys):
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    assert main(_args(well_csv, run, train="2005:2025")) == 2
    assert "folder exists and is not empty; pass --overwrite" in _one_error_line(capsys)
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def _files(folder):
    """relative path -> bytes of every file under ``folder`` (None for a folder)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else None for p in folder.rglob("*")}


def test_run_folder_save_dying_halfway_keeps_the_previous_model(run, well_csv, tmp_path, monkeypatch, capsys):
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    model_before = _files(copy / "model")
    assert any(name.startswith("members/seed_0.") for name in model_before)    # the five members' files too
    real = np.lib.format.write_array

    def dying(fh, arr, **kw):
        if arr.ndim == 2 and arr.shape[0] == 1:        # the head weight (1, d_model): dies mid-archive
            raise OSError(28, "No space left on device")
        return real(fh, arr, **kw)

    monkeypatch.setattr(np.lib.format, "write_array", dying)
    rc = main(_args(well_csv, copy, "--overwrite", "--seed", "7"))
    monkeypatch.undo()
    line = _one_error_line(capsys)
    assert rc == 1 and "No space left on device" in line
    assert _files(copy / "model") == model_before                  # no temp file or new member folder either
    assert main(["predict", "--model", str(copy), "--data", str(well_csv), "--out", str(tmp_path / "p.csv")]) == 0


def test_existing_prediction_file_is_not_overwritten_without_overwrite(run, well_csv, tmp_path, capsys):
    out = tmp_path / "pred.csv"
    out.write_text("keep me\n")
    assert main(["predict", "--model", str(run), "--data", str(well_csv), "--out", str(out)]) == 2
    assert "already exists; pass --overwrite" in _one_error_line(capsys)
    assert out.read_text() == "keep me\n"
    assert main(["predict", "--model", str(run), "--data", str(well_csv), "--out", str(out), "--overwrite"]) == 0
    assert out.read_text().startswith("DEPTH,")


def test_inputs_without_a_mnemonic_is_a_usage_error(well_csv, tmp_path, capsys):
    args = ["train", "--data", str(well_csv), "--inputs", "--target", "KLOGH", "--train-depth", "2005:2029",
            "--out", str(tmp_path / "run")]
    assert main(args) == 2
    assert "--inputs needs at least one curve mnemonic" in _one_error_line(capsys)
    assert not (tmp_path / "run").exists()


def test_a_single_shared_boundary_sample_stays_in_training(well_csv, tmp_path, capsys):
    """Test interval above the training one, sharing 2010 m: that sample is trained on, not tested."""
    out = tmp_path / "run"
    assert main(_args(well_csv, out, "--test-depth", "2005:2010", train="2010:2029")) == 0
    capsys.readouterr()
    rows = pd.read_csv(out / "predictions.csv")
    test, train = rows[rows["split"] == "test"], rows[rows["split"] == "train"]
    assert test["depth"].min() == pytest.approx(2005.0) and test["depth"].max() == pytest.approx(2009.9)
    assert len(test) == 50 and train["depth"].min() == pytest.approx(2010.0)


def test_positional_help_and_error_list_the_same_names(well_csv, tmp_path, capsys):
    import re

    from glassformer.cli import cli

    with pytest.raises(SystemExit):
        cli.main(["train", "--help"], standalone_mode=True)
    text = " ".join(capsys.readouterr().out.split())
    helped = re.search(r"Positional encoding: ([a-z, ]+)\.", text).group(1).split(", ")
    assert main(_args(well_csv, tmp_path / "out", "--positional", "foo")) == 2
    listed = re.findall(r"'(\w+)'", re.search(r"is not one of (.*)\.$", _one_error_line(capsys)).group(1))
    assert helped == listed and "rotary" in listed and "wavelengths" in listed
    assert "--wavelengths" in text and "2 x their count" in text


def test_positional_wavelengths_and_rotary_train(well_csv, tmp_path, capsys):
    import json

    out = tmp_path / "wl"
    assert main(_args(well_csv, out, "--positional", "wavelengths", "--wavelengths", "4", "16", "--d-model",
                      "4")) == 0
    cfg = json.loads((out / "config.json").read_text())
    text = json.dumps(cfg)
    assert '"wavelengths": [4.0, 16.0]' in text and '"positional": "wavelengths"' in text
    assert main(_args(well_csv, tmp_path / "rope", "--positional", "rotary")) == 0


def test_predict_never_replaces_its_input_well(run, well_csv, tmp_path, capsys):
    data = tmp_path / "well.csv"
    shutil.copy(well_csv, data)
    before = data.read_bytes()
    for out in (data, tmp_path / "sub" / ".." / "well.csv"):
        assert main(["predict", "--model", str(run), "--data", str(data), "--out", str(out), "--overwrite"]) == 2
        assert f"--out {out} would replace the input well --data {data}" in _one_error_line(capsys)
    assert data.read_bytes() == before


def test_missing_depth_column_message_suits_cli_and_python(tmp_path, capsys):
    assert main(_args(FIX / "bad_missing_depth.csv", tmp_path / "out")) == 2
    line = _one_error_line(capsys)
    assert ("name the depth column DEPTH or pass --depth-column NAME (Python: read_csv(..., depth_column=NAME))"
            in line)
    assert "pass depth_column=" not in line


# ------------------------------------------------------------------------- demo output folders
@pytest.fixture
def fake_demos(monkeypatch):
    """Replace the demos by a stub writing one file, so the CLI's folder handling is tested in milliseconds."""
    import glassformer.demos as demos

    ran = []

    def run_demo(name, out, **kw):
        ran.append(name)
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "metrics.json").write_text(f"{name} {len(ran)}")
        return {}

    monkeypatch.setattr(demos, "run_demo", run_demo)
    monkeypatch.setattr("glassformer.data.volve.volve_available", lambda: True)
    return ran


def test_demo_refuses_an_existing_folder_without_overwrite(fake_demos, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "porosity"]) == 0
    folder = Path("glassformer_runs") / "porosity"
    assert (folder / "metrics.json").read_text() == "porosity 1"
    capsys.readouterr()
    assert main(["demo", "porosity"]) == 2
    line = _one_error_line(capsys)
    assert f"demo output {folder}: folder exists and is not empty; pass --overwrite" in line
    assert (folder / "metrics.json").read_text() == "porosity 1" and fake_demos == ["porosity"]
    assert main(["demo", "porosity", "--overwrite"]) == 0
    assert (folder / "metrics.json").read_text() == "porosity 2"


def test_demo_run_all_checks_every_folder_before_running_any(fake_demos, tmp_path, capsys):
    out = tmp_path / "runs"
    (out / "real-wells").mkdir(parents=True)
    (out / "real-wells" / "keep.txt").write_text("keep")
    assert main(["demo", "--out", str(out)]) == 2
    assert str(out / "real-wells") in _one_error_line(capsys)
    assert fake_demos == [] and not (out / "porosity").exists()      # nothing ran
    assert main(["demo", "--out", str(out), "--overwrite"]) == 0
    assert fake_demos == ["porosity", "neighbor", "synthetic-wells", "real-wells"]


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_before_or_after_the_command_shows_the_traceback(tmp_path, where):
    from glassformer.errors import GlassformerError

    args = ["predict", "--model", str(tmp_path), "--data", str(FIX / "bad_missing_depth.csv"), "--out",
            str(tmp_path / "o.csv")]
    args = ["--debug", *args] if where == "before" else [*args, "--debug"]
    with pytest.raises(GlassformerError):            # raised, not turned into one line
        main(args)
