"""The real Volve files: every file listed, shapes, valid ranges, units, published details."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data.volve import VOLVE_WELLS, data_root, read_volve, volve_path
from glassformer.errors import DataFileError, InputError


@pytest.fixture(scope="module")
def real(shared_data):
    return shared_data / "real"


@pytest.fixture(scope="module")
def real_logs(real):
    return {key: read_volve(key, root=real.parent) for key in VOLVE_WELLS}


def test_every_real_file_is_listed(real):
    files = {p.name for p in real.iterdir() if p.suffix.lower() in (".las", ".csv")}
    assert files == {w.filename for w in VOLVE_WELLS.values()}


@pytest.mark.parametrize("key", list(VOLVE_WELLS))
def test_real_file_shapes_and_valid_range(key, real_logs):
    info = VOLVE_WELLS[key]
    log = real_logs[key]
    assert len(log) == info.n_samples
    assert log.depth_unit == "m" and np.all(np.diff(log.depth) > 0)
    if info.kind == "cpi":
        assert log.name == info.well
        assert {"PHIF", "KLOGH", "VSH", "SW"} <= set(log.mnemonics)
        assert log.units["KLOGH"].upper() == "MD"
        valid = log.valid_mask(["PHIF", "KLOGH"])
    else:
        assert log.mnemonics == ["ORIGDEPTH", "CORE_NO", "SAMPLE", "CKHG", "CKHL", "CKVG", "CKVL",
                                 "CPOR", "CPORV", "SO", "SW", "CGD", "CGDV"]
        assert log.units["CPOR"] == "%" and log.units["CKHL"] == "mD"
        valid = log.valid_mask(["CPOR", "CKHL"])
    assert int(valid.sum()) == info.n_valid
    np.testing.assert_allclose(log.depth[valid][[0, -1]], info.valid_m, atol=1e-6)


def test_real_f11b_details(real_logs):
    log = real_logs["F-11B"]
    assert log.mnemonics == ["BVW", "CARB_FLAG", "COAL_FLAG", "KLOGH", "PHIF", "SAND_FLAG", "SW", "VSH"]
    np.testing.assert_allclose(log.depth[[0, -1]], [3351.6, 4759.2])
    both = log.valid_mask(["PHIF", "KLOGH", "SW", "VSH"])
    assert int(both.sum()) == 13933
    np.testing.assert_allclose(np.nanmin(log.curve("PHIF")), 0.02)
    np.testing.assert_allclose(np.nanmin(log.curve("KLOGH")), 0.001)
    np.testing.assert_allclose(np.nanmax(log.curve("KLOGH")), 3224, rtol=1e-3)
    # the single-well split of F-11 B (train, then forecast) lies inside the file's range
    assert len(log.interval(3351.6, 4300.0)) == 9485
    assert len(log.interval(4300.0, 4744.8)) == 4449


def test_real_19a_wrapped_values(real_logs):
    log = real_logs["19A"]
    np.testing.assert_allclose(log.depth[[0, -1]], [3666.5916, 4124.8584])
    np.testing.assert_allclose(np.diff(log.depth), 0.1524, atol=1e-6)
    k = log.curve("KLOGH")
    assert int(np.count_nonzero(k == 0)) == 597
    np.testing.assert_allclose(np.nanmax(k), 7900, rtol=1e-3)


def test_volve_paths_and_env_override(real, monkeypatch, tmp_path):
    assert volve_path("F-1A", real.parent).name == "15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS"
    monkeypatch.setenv("GLASSFORMER_DATA", str(tmp_path))
    assert data_root() == tmp_path
    with pytest.raises(DataFileError, match=r"15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1\.LAS not found under .*set GLASSFORMER_DATA"):
        volve_path("F-1A")
    monkeypatch.delenv("GLASSFORMER_DATA")
    assert data_root() == real.parent.resolve()
    with pytest.raises(InputError, match=r"unknown Volve well 'F-99'; known: F-1A"):
        volve_path("F-99")


def test_units_are_kept_as_written_and_the_step_is_the_files(real_logs):
    """The files write v/v, V/V, mD, MD and %: each unit string comes back unchanged."""
    assert real_logs["F-11B"].units["PHIF"] == "v/v" and real_logs["F-1A"].units["PHIF"] == "V/V"
    assert real_logs["F-1A"].units["KLOGH"] == "mD" and real_logs["19A"].units["KLOGH"] == "MD"
    assert real_logs["19A-CORE"].units["CPOR"] == "%" and real_logs["19A"].units["J"] == ""
    for key in ("F-1A", "F-1B", "F-11B"):
        assert real_logs[key].step == pytest.approx(0.1, abs=1e-9)
    assert real_logs["19A"].step == pytest.approx(0.1524, abs=1e-9)  # half a foot
