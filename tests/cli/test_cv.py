"""`glassformer cv`: leave-one-well-out over the three Volve F wells (PHIF VSH SW -> log10 KLOGH, floor 0.001 mD).

To keep the suite fast the networks train for one epoch on windows of 16 samples, and 15/9-F-11 B
contributes only 3351.6-3700 m (3,485 of its 13,933 valid samples); the other two wells are whole.
The porosity-permeability transform's RMSE on each held-out well is recomputed here from the files
(read with lasio) by plain least squares on the training wells' samples.

Data: Volve field data set, courtesy of Equinor and the Volve licence partners (see
../shared/data/real/README.md for the full attribution).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from glassformer.cli import main

FILES = {"15/9-F-11 B": "15_9-F11B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS",
         "15/9-F-1 A": "15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS",
         "15/9-F-1 B": "15_9-F-1B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS"}
F11B_PART = (3351.6, 3700.0)
MODELS = {"transformer", "LSTM", "random forest", "random forest + context", "gradient boosting",
          "gradient boosting + context", "porosity-permeability transform", "training mean",
          "transformer/boosting blend"}


@pytest.fixture(scope="module")
def cv_run(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("cv") / "run"
    args = ["cv", *(a for f in FILES.values() for a in ("--data", str(shared_data / "real" / f))),
            "--inputs", "PHIF", "VSH", "SW", "--target", "KLOGH", "--log-target",
            "--depth", f"F11B={F11B_PART[0]}:{F11B_PART[1]}", "--window", "16", "--epochs", "1",
            "--hidden-size", "2", "--out", str(out)]
    assert main(args) == 0
    return out, shared_data


def _samples(path, part=None):
    """(porosity, log10 permeability) of one file's whole valid log (every input and the target present)."""
    import lasio

    las = lasio.read(str(path))
    depth = las.index
    cols = {m: np.asarray(las[m], dtype=float) for m in ("PHIF", "VSH", "SW", "KLOGH")}
    keep = np.ones(len(depth), bool) if part is None else (depth >= part[0] - 1e-6) & (depth <= part[1] + 1e-6)
    valid = keep & np.all([np.isfinite(v) for v in cols.values()], axis=0)
    first, last = np.flatnonzero(valid)[[0, -1]]
    sl = slice(first, last + 1)
    phi, k = cols["PHIF"][sl], cols["KLOGH"][sl]
    logk = np.log10(np.maximum(k, 1e-3))
    use = np.isfinite(phi) & np.isfinite(logk)
    return phi[use], logk[use]


def test_one_record_per_well_for_every_model(cv_run):
    out, _ = cv_run
    m = json.loads((out / "metrics.json").read_text())
    records = m["records"]
    assert len(records) == 3 * len(MODELS)
    assert {(r["well"], r["model"]) for r in records} == {(w, k) for w in FILES for k in MODELS}
    assert [f["test_wells"] for f in m["folds"]] == [[w] for w in FILES]           # leave one well out
    for f in m["folds"]:
        assert set(f["train_wells"]) == set(FILES) - set(f["test_wells"])
    for r in records:
        assert r["n"] == {"15/9-F-11 B": 3485, "15/9-F-1 A": 2281, "15/9-F-1 B": 2105}[r["well"]]
        assert math.isfinite(r["rmse"]) and math.isfinite(r["mae"]) and r["rmse"] >= r["mae"] > 0
    table = m["comparison"]["table"]
    assert set(table) == MODELS and m["comparison"]["spread"] == "folds" and m["units"]["rmse"] == "log10 mD"
    for name, row in table.items():                      # mean and sample sd across the three folds
        per_fold = [r["rmse"] for r in records if r["model"] == name]
        assert row["rmse"] == pytest.approx(np.mean(per_fold), rel=1e-12)
        assert row["rmse_sd"] == pytest.approx(np.std(per_fold, ddof=1), rel=1e-12)
        assert row["n"] == 3485 + 2281 + 2105
    assert set(m["per_well_rmse"]) == set(FILES) and set(m["pooled"]) == MODELS
    assert "is better here." in m["verdict"] or "has the lowest RMSE" in m["verdict"]
    for name in ("report.html", "predictions.csv", "config.json", "figures/per_well.png",
                 "figures/blind_well_15_9_F_1_A.png"):
        assert (out / name).is_file(), name
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["scheme"] == "LeaveOneGroupOut" and [w["name"] for w in cfg["wells"]] == list(FILES)
    html = (out / "report.html").read_text()
    assert "RMSE per held-out well" in html and "15/9-F-1 B" in html and "Equinor" in html


def test_the_transform_per_well_matches_plain_least_squares(cv_run):
    out, data = cv_run
    samples = {w: _samples(data / "real" / f, F11B_PART if w == "15/9-F-11 B" else None) for w, f in FILES.items()}
    records = {r["well"]: r for r in json.loads((out / "metrics.json").read_text())["records"]
               if r["model"] == "porosity-permeability transform"}
    for held_out in FILES:
        phi = np.concatenate([samples[w][0] for w in FILES if w != held_out])
        logk = np.concatenate([samples[w][1] for w in FILES if w != held_out])
        (intercept, slope), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(phi), phi]), logk, rcond=None)
        phi_t, logk_t = samples[held_out]
        rmse = np.sqrt(np.mean((intercept + slope * phi_t - logk_t) ** 2))
        assert records[held_out]["rmse"] == pytest.approx(rmse, rel=1e-9), held_out
        assert records[held_out]["n"] == len(phi_t)


def test_cv_refuses_one_well_and_bad_fold_counts(shared_data, tmp_path, capsys):
    one = shared_data / "real" / FILES["15/9-F-1 A"]
    base = ["cv", "--inputs", "PHIF", "--target", "KLOGH", "--out", str(tmp_path / "x")]
    assert main([*base, "--data", str(one)]) == 2
    assert "at least 2 wells" in capsys.readouterr().err
    two = [a for f in list(FILES.values())[1:] for a in ("--data", str(shared_data / "real" / f))]
    assert main([*base, *two, "--folds", "3"]) == 2
    assert "--folds must be between 2 and the number of wells (2), got 3" in capsys.readouterr().err
    assert main([*base, *two, "--d-model", "5", "--heads", "2"]) == 2          # refused before any fold runs
    assert "d_model (5) must be divisible by num_heads (2)" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
