"""The rules of a train or compare request are the library's: each broken rule is one InputError line naming
the options, raised before any folder exists (no click involved)."""

from __future__ import annotations

import pytest

from glassformer.errors import InputError
from glassformer.wells.requests import EngineRequest, PlugsRequest, TrainRequest, TransformerRequest, WellsRequest
from glassformer.wells.compare_job import CompareRequest, plan_compare
from glassformer.wells.train_job import plan_train, run_signature


def _request(tmp_path, **kw) -> TrainRequest:
    return TrainRequest(**{"inputs": ("PHIF", "VSH"), "target": "KLOGH", "out": str(tmp_path / "run"), **kw})


@pytest.mark.parametrize("kw, message", [
    ({"target": "phif"}, r"^--target phif is also one of --inputs PHIF VSH; the model would see the answer"),
    ({"engine": EngineRequest(jobs=2)}, r"^--jobs and --scheduler run the members of an ensemble: use them with "
                                        r"--core or --ensemble K$"),
    ({"target": None}, r"^Missing option '--target' \(or give --core to learn from core plugs\)\.$"),
    ({"plugs": PlugsRequest(test_cores=("2",))}, r"^--test-cores is used only with --core CORE_TABLE\.csv$"),
    ({"plugs": PlugsRequest(validation_depth="10:20")}, r"^--validation-depth is used only with --core or "
                                                        r"--ensemble K$"),
    ({"plugs": PlugsRequest(ensemble=3), "resume": "somewhere"}, r"^--resume continues one interrupted transformer; "
                                                                 r"it is not available with --ensemble$"),
    ({"transformer": TransformerRequest(lr=float("nan"))}, r"^--lr: the learning rate must be a finite number > 0, "
                                                           r"got nan$"),
    ({"inputs": ("PHIF", "VSH", "phif")}, r"^--inputs lists phif more than once; give each curve once, e\.g\. "
                                          r"--inputs PHIF VSH$"),
    ({}, r"^give the training wells with --data FILE \(repeatable\) or --manifest FILE$"),
])
def test_a_broken_train_rule_is_one_line_and_leaves_no_folder(tmp_path, kw, message):
    with pytest.raises(InputError, match=message) as info:
        plan_train(_request(tmp_path, **kw))
    assert "\n" not in str(info.value)
    assert not (tmp_path / "run").exists()


def test_a_non_empty_out_needs_overwrite(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "old.txt").write_text("x")
    with pytest.raises(InputError, match=r"folder exists and is not empty; pass --overwrite"):
        plan_train(_request(tmp_path))


@pytest.mark.parametrize("kw, message", [
    ({"demo_name": "porosity", "wells": WellsRequest(data=("w.las",))}, r"^give either --demo or --data / --manifest"),
    ({"demo_name": "porosity", "engine": EngineRequest(jobs=2)}, r"^--jobs / --scheduler apply to --data runs"),
    ({"demo_name": "porosity", "wavelengths": (4.0,)}, r"^--positional / --wavelengths apply to --data runs"),
    ({"inputs": ("PHIF",)}, r"^compare needs --data, --target \(or --demo NAME\)$"),
])
def test_a_broken_compare_rule_is_one_line_and_leaves_no_folder(tmp_path, kw, message):
    with pytest.raises(InputError, match=message):
        plan_compare(CompareRequest(out=str(tmp_path / "run"), **kw))
    assert not (tmp_path / "run").exists()


def test_the_resume_signature_is_the_options_that_change_the_result(tmp_path):
    sig = run_signature(_request(tmp_path, wells=WellsRequest(data=("w.las",)), checkpoint_every=5,
                                 transformer=TransformerRequest(d_model=8, progress=False)))
    assert sig["data"] == [str((tmp_path.cwd() / "w.las").resolve())] and sig["inputs"] == ["PHIF", "VSH"]
    assert sig["d_model"] == 8 and sig["ensemble"] is None and sig["jobs"] is None
    assert not {"out", "overwrite", "progress", "resume", "checkpoint_every"} & set(sig)
