"""Deep ensembles: members differ, quantiles are ordered, files round-trip, pretraining continues the weights."""

from __future__ import annotations

import json

import numpy as np
import pytest

from glassformer.data import WellLog
from glassformer.errors import InputError
from glassformer.models import SequenceRegressor
from glassformer.wells import DeepEnsemble, WellModel, fit_ensemble, fit_member, fit_pretrained_ensemble
from glassformer.wells.ensemble import find_ensemble


def _well(n=400, seed=0, name="W"):
    rng = np.random.default_rng(seed)
    depth = 1000 + 0.1 * np.arange(n)
    phi = 0.18 + 0.07 * np.sin(depth / 2.3) + 0.01 * rng.standard_normal(n)
    vsh = np.clip(0.4 - phi, 0, 1)
    k = 10 ** (10 * phi - 0.5 + 0.1 * rng.standard_normal(n))
    return WellLog(name=name, depth=depth, curves={"PHIF": phi, "VSH": vsh, "KLOGH": k, "KCORE": 3 * k},
                   units={"PHIF": "V/V", "VSH": "V/V", "KLOGH": "mD", "KCORE": "mD"})


def _wm(target="KLOGH", epochs=3):
    return WellModel(["PHIF", "VSH"], target, window=16,
                     model=SequenceRegressor(d_model=8, num_heads=2, epochs=epochs, batch_size=8))


@pytest.fixture(scope="module")
def ensemble(tmp_path_factory):
    g = _well()
    folder = tmp_path_factory.mktemp("ens") / "ensemble"
    ens = fit_ensemble(_wm(), [g.interval(1000, 1028)], [g.interval(1028.1, 1033)], folder=folder, n_members=3)
    return ens, g, folder


def test_members_differ_and_quantiles_are_ordered(ensemble):
    ens, g, _ = ensemble
    preds = ens.predict_members(g)                                       # (3, n)
    assert preds.shape == (3, len(g))
    assert ens.info["seeds"] == [42, 0, 1]
    for i in range(3):
        for j in range(i + 1, 3):
            assert np.nanmax(np.abs(preds[i] - preds[j])) > 1e-3       # different seeds, different fits
    for calibrated in (False, True):
        q = ens.predict_quantiles(g, calibrated=calibrated)
        ok = np.isfinite(q["P50"])
        assert ok.all()
        assert (q["P10"] <= q["P50"]).all() and (q["P50"] <= q["P90"]).all()
        np.testing.assert_allclose(q["P50"], preds.mean(axis=0), rtol=0, atol=1e-12)


def test_calibration_is_fitted_on_the_validation_logs_only(ensemble):
    ens, g, _ = ensemble
    val = g.interval(1028.1, 1033)
    q = ens.predict_quantiles(val, calibrated=False)
    y = ens.first.target_values(val)
    scores = np.sort(np.abs(y - q["mean"]) / q["sd"])
    k = int(np.ceil((scores.size + 1) * 0.8))                          # the finite-sample rank
    assert ens.calibration.n_ == scores.size == len(val)
    assert ens.calibration.quantile_ == pytest.approx(scores[k - 1], rel=1e-12)
    inside = np.abs(y - q["mean"]) <= ens.calibration.quantile_ * q["sd"] + 1e-12
    assert inside.mean() >= 0.8                                         # on its own calibration data, by construction


def test_ensemble_folder_round_trips(ensemble):
    ens, g, folder = ensemble
    doc = json.loads((folder / "ensemble.json").read_text())
    assert doc["members"] == ["member_00", "member_01", "member_02"]
    assert doc["calibration"]["scale"] == pytest.approx(ens.scale)
    back = DeepEnsemble.load(folder)
    a, b = ens.predict_quantiles(g), back.predict_quantiles(g)
    for key in ("P10", "P50", "P90"):
        np.testing.assert_array_equal(a[key], b[key])
    assert find_ensemble(folder) == folder / "ensemble.json"
    assert find_ensemble(folder.parent) == folder / "ensemble.json"          # a run folder holding ensemble/
    assert find_ensemble(folder / "member_00") is None


def test_an_ensemble_described_from_another_folder_finds_its_members(ensemble, tmp_path):
    ens, g, folder = ensemble
    ens.save(tmp_path / "elsewhere")
    back = DeepEnsemble.load(tmp_path / "elsewhere")
    np.testing.assert_array_equal(back.predict_members(g), ens.predict_members(g))


def test_fit_member_is_a_function_of_plain_data(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 8, 2))
    Y = X.sum(axis=-1, keepdims=True)
    Y[:, ::2] = np.nan                                                  # sparse targets: every other position
    params = SequenceRegressor(d_model=8, epochs=2, batch_size=4, validation_fraction=None).get_params()
    out = fit_member({"params": params, "seed": 7, "X": X, "Y": Y, "P": np.arange(1.0, 9.0),
                      "out": str(tmp_path / "m")})
    assert out["seed"] == 7 and out["training"]["epochs_run"] == 2
    model = SequenceRegressor.load(out["folder"])
    assert model.random_state == 7 and model.predict(X, np.arange(1.0, 9.0)).shape == (12, 8, 1)
    again = fit_member({"params": params, "seed": 7, "X": X, "Y": Y, "P": np.arange(1.0, 9.0),
                        "out": str(tmp_path / "m2")})
    np.testing.assert_array_equal(SequenceRegressor.load(again["folder"]).predict(X), model.predict(X))


def test_fine_tuning_starts_from_the_pretrained_weights(tmp_path):
    """With zero fine-tuning epochs' worth of change (lr tiny), the fine-tuned member predicts as
    its pretrained member; the pretraining target goes through the core target's scalers."""
    g = _well(seed=3)
    other = _well(seed=4, name="OTHER")
    ens = fit_pretrained_ensemble(_wm("KCORE"), [other], "KLOGH", [g.interval(1000, 1028)],
                                  [g.interval(1028.1, 1033)], folder=tmp_path / "pre", n_members=2,
                                  pretrain_epochs=2, finetune_lr=1e-12)
    assert ens.info["pretrained"]["target"] == "KLOGH" and ens.info["pretrained"]["wells"] == ["OTHER"]
    for i in range(2):
        pre = SequenceRegressor.load(tmp_path / "pre" / "pretrained" / f"member_{i:02d}")
        tuned = ens.members[i].model_
        for name, value in pre.network_.state_dict().items():
            np.testing.assert_allclose(tuned.network_.state_dict()[name], value, atol=1e-9)
    assert ens.first.target_name == "KCORE"


def test_an_ensemble_needs_two_members(tmp_path):
    with pytest.raises(InputError, match="at least 2 members"):
        fit_ensemble(_wm(), [_well()], folder=tmp_path, n_members=1)


def test_members_trained_side_by_side_are_the_same_ensemble(ensemble, tmp_path):
    ens, g, _ = ensemble
    batched = fit_ensemble(_wm(), [g.interval(1000, 1028)], [g.interval(1028.1, 1033)], folder=tmp_path / "b",
                           n_members=3, batched=True)
    np.testing.assert_array_equal(batched.predict_members(g), ens.predict_members(g))
    assert batched.scale == ens.scale
    assert [m["training"]["final_train_loss"] for m in batched.info["members"]] == \
        [m["training"]["final_train_loss"] for m in ens.info["members"]]
    back = DeepEnsemble.load(tmp_path / "b")                     # members saved as fit_member saves them
    np.testing.assert_array_equal(back.predict_members(g), ens.predict_members(g))
