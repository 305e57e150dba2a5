"""`glassformer predict --out x.las` keeps the input well's header, index curve, units, NULL and gaps.

One tiny model (1 epoch, d_model 8, --log-target) is trained once on a hand-written LAS file; the
predictions are written as LAS from that LAS (header carried over), from a LAS with another NULL,
and from the same well as CSV, and read back with lasio.
"""

from __future__ import annotations

from pathlib import Path

import lasio
import numpy as np
import pandas as pd
import pytest

from glassformer.cli import main

N = 160
DEPTH = 3000.0 + 0.5 * np.arange(N)
GAP = 100                      # PHIF is null at DEPTH[GAP] = 3050 m


def _curves():
    phi = 0.2 + 0.08 * np.sin(DEPTH / 3.0)
    vsh = np.clip(0.3 - 0.5 * (phi - 0.2), 0.0, 1.0)
    k = 10 ** (12 * phi - 1)
    return phi, vsh, k


def write_las(path: Path, null: float = -999.25) -> Path:
    """A LAS 2.0 file written by hand (not by lasio), with a full ~Well header and one null in PHIF."""
    phi, vsh, k = _curves()
    rows = []
    for i, d in enumerate(DEPTH):
        p = f"{null:g}" if i == GAP else f"{phi[i]:.6f}"
        rows.append(f"{d:9.2f} {p:>10} {vsh[i]:10.6f} {k[i]:12.6f}")
    text = f"""~Version information
VERS.                  2.0 : CWLS LOG ASCII STANDARD - VERSION 2.0
WRAP.                   NO : One line per depth step
~Well information
STRT.M          {DEPTH[0]:.2f} : START DEPTH
STOP.M          {DEPTH[-1]:.2f} : STOP DEPTH
STEP.M               0.50 : STEP
NULL.          {null:g} : NULL VALUE
COMP.      TEST OPERATOR AS : COMPANY
WELL.            15/9-T-1 X : WELL
FLD.              TESTFIELD : FIELD
LOC.           Block 15/9 : LOCATION
LATI.DEG        58.441 : LATITUDE
LONG.DEG         1.887 : LONGITUDE
~Curve information
DEPTH.M              : Measured depth along hole
PHIF.V/V             : Final effective porosity
VSH.V/V              : Shale volume
KLOGH.MD             : Horizontal permeability (core-calibrated)
~Parameter information
BHT.DEGC        95.0 : Bottom hole temperature
~ASCII
""" + "\n".join(rows) + "\n"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("predict_las")
    las = write_las(root / "well.las")
    run = root / "run"
    rc = main(["train", "--data", str(las), "--inputs", "PHIF", "VSH", "--target", "KLOGH", "--log-target",
               "--train-depth", "3000:3060", "--window", "16", "--epochs", "1", "--d-model", "8",
               "--out", str(run), "--no-progress", "--checkpoint-every", "100"])
    assert rc == 0
    return root, las, run


def _predict(run, data, out, *extra):
    assert main(["predict", "--model", str(run), "--data", str(data), "--out", str(out), *extra]) == 0
    return out


def test_las_from_las_keeps_the_header_units_and_nulls(trained):
    root, las_in, run = trained
    out = _predict(run, las_in, root / "pred.las")
    csv = pd.read_csv(_predict(run, las_in, root / "pred.csv"))
    text = out.read_text()
    assert "-9999.25" not in text and "-999.25" in text
    las = lasio.read(out)
    for mnem, value in [("WELL", "15/9-T-1 X"), ("COMP", "TEST OPERATOR AS"), ("FLD", "TESTFIELD"),
                        ("LOC", "Block 15/9"), ("LATI", 58.441), ("LONG", 1.887), ("NULL", -999.25)]:
        assert las.well[mnem].value == value, mnem
    assert las.params["BHT"].value == 95.0
    # the index keeps its mnemonic, unit and description; input curves keep theirs
    depth = las.curves[0]
    assert (depth.mnemonic, depth.unit, depth.descr) == ("DEPTH", "M", "Measured depth along hole")
    assert (las.curves["PHIF"].unit, las.curves["PHIF"].descr) == ("V/V", "Final effective porosity")
    assert (las.curves["VSH"].unit, las.curves["VSH"].descr) == ("V/V", "Shale volume")
    assert las.well["STRT"].value == pytest.approx(DEPTH[0]) and las.well["STOP"].value == pytest.approx(DEPTH[-1])
    np.testing.assert_allclose(las.index, DEPTH)
    # the prediction curves, with units a LAS reader parses, and NaN where the input was null
    pred, log10 = las.curves["KLOGH_PRED"], las.curves["KLOGH_PRED_LOG10"]
    assert pred.unit == "mD" and log10.unit == "log10(mD)"
    assert pred.descr == f"glassformer prediction (model transformer (mean of 5 members), {run / 'model'})" == log10.descr
    assert np.isnan(las["PHIF"][GAP]) and np.isnan(las["KLOGH_PRED"][GAP])
    assert np.isfinite(las["KLOGH_PRED"]).sum() == np.isfinite(csv["KLOGH_PRED"]).sum() > N // 2
    np.testing.assert_allclose(las["KLOGH_PRED"], csv["KLOGH_PRED"], rtol=1e-8, equal_nan=True)
    np.testing.assert_allclose(las["KLOGH_PRED_LOG10"], np.log10(las["KLOGH_PRED"]), rtol=1e-7, equal_nan=True)


def test_las_keeps_another_null_and_updates_the_depth_range(trained):
    root, _, run = trained
    las_in = write_las(root / "well_null9999.las", null=-9999.0)
    out = _predict(run, las_in, root / "pred9999.las", "--depth", "3020:3070")
    las = lasio.read(out)
    assert las.well["NULL"].value == -9999.0 and las.well["WELL"].value == "15/9-T-1 X"
    assert las.well["STRT"].value == pytest.approx(3020.0) and las.well["STOP"].value == pytest.approx(3070.0)
    i = int(np.flatnonzero(las.index == DEPTH[GAP])[0])
    assert np.isnan(las["PHIF"][i]) and np.isnan(las["KLOGH_PRED"][i])
    data_lines = out.read_text().split("~A")[1].splitlines()[1:]
    assert sum("-9999" in line for line in data_lines) >= 1 and not any("-999.25" in ln for ln in data_lines)


def test_las_from_csv(trained):
    root, _, run = trained
    phi, vsh, k = _curves()
    phi[GAP] = np.nan
    csv_in = root / "T1.csv"
    pd.DataFrame({"DEPTH": DEPTH, "PHIF": phi, "VSH": vsh, "KLOGH": k}).to_csv(csv_in, index=False)
    las = lasio.read(_predict(run, csv_in, root / "from_csv.las"))
    assert las.well["NULL"].value == -999.25 and las.well["WELL"].value == "T1"
    assert (las.curves[0].mnemonic, las.curves[0].unit) == ("DEPT", "M")
    np.testing.assert_allclose(las.index, DEPTH)
    assert np.isnan(las["KLOGH_PRED"][GAP]) and np.isfinite(las["KLOGH_PRED"][:GAP]).any()
    assert las.curves["KLOGH_PRED"].unit == "mD"
