"""One model specification (WellModel is a scikit-learn estimator whose spec is get_params()) and one
definition per baseline name, the same in a train, a cv and a core run's config."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from glassformer.cli import main
from glassformer.data import WellLog
from glassformer.models import LSTMRegressor, SequenceRegressor
from glassformer.wells import WellModel, with_seed
from glassformer.wells.baselines import BLEND, make_baselines
from glassformer.wells.tree_baselines import ensemble_settings_text


def _well(name, n, seed, top=1000.0):
    rng = np.random.default_rng(seed)
    depth = top + 0.5 * np.arange(n)
    phi = 0.2 + 0.05 * np.sin(depth / 2) + 0.01 * rng.standard_normal(n)
    return WellLog(name=name, depth=depth, curves={"PHIF": phi, "VSH": 0.5 - phi, "KLOGH": 10 ** (12 * phi - 1)})


def _unusual():
    """A well model with no argument at its default."""
    return WellModel(["phif", "vsh"], "klogh", log_target=False, window=8, stride=3, positions="depth",
                     model=SequenceRegressor(epochs=1, d_model=4, num_heads=1, lr=0.01, random_state=5),
                     lstm=LSTMRegressor(epochs=1, hidden_size=2, random_state=6), floor_mD=0.01, tree_baselines=True,
                     validation="none", validation_fraction=0.2, random_state=7)


def test_clone_copies_every_parameter_and_shares_no_estimator():
    wm = _unusual()
    twin = clone(wm)
    assert twin.spec() == wm.spec()
    assert twin.model is not wm.model and twin.lstm is not wm.lstm
    assert twin.get_params(deep=True)["model__d_model"] == 4 and twin.get_params(deep=True)["lstm__hidden_size"] == 2
    assert not hasattr(twin, "model_")                         # __init__ only stores: nothing fitted, nothing checked


def test_set_params_sets_nested_parameters_and_refuses_unknown_ones():
    wm = _unusual()
    wm.set_params(window=16, model__d_model=8, lstm__hidden_size=3, validation="deepest")
    assert (wm.window, wm.model.d_model, wm.lstm.hidden_size, wm.validation) == (16, 8, 3, "deepest")
    with pytest.raises(ValueError, match="d_modle"):
        wm.set_params(model__d_modle=8)
    seeded = with_seed(wm, 11)
    assert (seeded.random_state, seeded.model.random_state, seeded.lstm.random_state) == (11, 11, 11)
    assert wm.model.random_state == 5                          # the original is left alone


def test_fit_validates_what_init_only_stored():
    wm = WellModel(["PHIF"], "KLOGH", positions="sideways")    # stored without a check
    from glassformer.errors import InputError

    with pytest.raises(InputError, match="positions must be 'index' or 'depth'"):
        wm.fit([_well("A", 100, 0)])


def test_the_spec_is_json_and_rebuilds_the_same_model():
    wm = _unusual()
    spec = json.loads(json.dumps(wm.spec()))
    assert spec["model"]["class"] == "SequenceRegressor" and spec["model"]["params"]["lr"] == 0.01
    assert WellModel.from_spec(spec).spec() == wm.spec()
    assert WellModel.from_spec(WellModel(["PHIF"], "KLOGH").spec()).model is None


def test_save_and_load_keep_every_parameter(tmp_path):
    wm = _unusual().fit([_well("A", 120, 0), _well("B", 80, 1, 2000.0)])
    wm.save(tmp_path / "model")
    back = WellModel.load(tmp_path / "model")
    assert back.spec() == wm.spec()
    # the three that load dropped before the specification was saved whole
    assert (back.tree_baselines, back.validation, back.random_state) == (True, "none", 7)
    assert back.get_params(deep=True).keys() == wm.get_params(deep=True).keys()
    for key, value in wm.get_params(deep=True).items():
        if key not in ("model", "lstm"):
            assert back.get_params(deep=True)[key] == value, key
    assert back.lstm_ is not None and back.model_names() == wm.model_names()
    assert BLEND in back.model_names()


def test_one_definition_per_name():
    a = make_baselines(16, random_state=1)
    b = make_baselines(16, random_state=2)
    assert {n: x.describe() for n, x in a.items()} == {n: x.describe() for n, x in b.items()}
    rf = a["random forest"]
    assert rf.describe() == ensemble_settings_text()["random forest"]
    assert rf._make().get_params()["n_estimators"] == 100 and rf._make().get_params()["min_samples_leaf"] == 5


# --- the same random forest in a train, a cv and a core run's config -------------------------------------
TINY = ["--inputs", "PHIF", "VSH", "SW", "--log-target", "--window", "8", "--epochs", "1", "--d-model", "4",
        "--heads", "1", "--no-progress"]


@pytest.fixture(scope="module")
def field(tmp_path_factory, las_writer):
    root = tmp_path_factory.mktemp("field")
    wells = [las_writer(root / f"w{i}.las", f"15/9-W-{i}", 1000.0 + 0.5 * np.arange(160), seed=i) for i in range(3)]
    rng = np.random.default_rng(5)
    depth = 1000 + 0.2 * np.arange(300)
    phi = 0.17 + 0.06 * np.sin(depth / 1.7) + 0.01 * rng.standard_normal(300)
    pd.DataFrame({"DEPTH": depth, "PHIF": phi, "VSH": 0.45 - phi, "SW": 0.3 + phi,
                  "KLOGH": 10 ** (11 * phi - 0.8)}).to_csv(root / "cored.csv", index=False)
    plugs = np.concatenate([top + 0.3 * np.arange(10) for top in (1005.0, 1018.0, 1031.0, 1044.0)])
    core_phi = np.interp(plugs, depth, phi)
    pd.DataFrame({"DEPTH": plugs, "CORE_NO": np.repeat([1, 2, 3, 4], 10), "CPOR": 100 * core_phi,
                  "CKHL": 10 ** (12 * core_phi - 1 + 0.1 * rng.standard_normal(40))}).to_csv(root / "core.csv",
                                                                                            index=False)
    return root, wells


def test_the_same_random_forest_in_a_train_a_cv_and_a_core_run(field):
    root, wells = field
    assert main(["train", "--data", str(wells[0]), "--test-data", str(wells[1]), "--target", "KLOGH",
                 "--out", str(root / "train"), *TINY]) == 0
    assert main(["cv", *(a for w in wells for a in ("--data", str(w))), "--target", "KLOGH", "--out", str(root / "cv"), *TINY]) == 0
    assert main(["train", "--data", str(root / "cored.csv"), "--core", str(root / "core.csv"), "--core-porosity-unit",
                 "%", "--out", str(root / "core"), "--ensemble", "2", *TINY]) == 0
    configs = {kind: json.loads((root / kind / "config.json").read_text()) for kind in ("train", "cv", "core")}
    expected = ensemble_settings_text()
    for kind, cfg in configs.items():
        assert cfg["baselines"]["random forest"] == expected["random forest"], kind
        assert cfg["baselines"]["gradient boosting"] == expected["gradient boosting"], kind
        assert cfg["baselines"]["random forest + context"].startswith(expected["random forest"] + " on each input")
    # the run's own tables hold the same names
    for kind in ("train", "cv", "core"):
        table = json.loads((root / kind / "metrics.json").read_text())["comparison"]["table"]
        assert {"random forest", "random forest + context", "gradient boosting"} <= set(table), kind
