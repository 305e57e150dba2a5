"""The deep ensemble and the run on core plugs as experiments: any engine gives the serial numbers, the
requests of ``train --core`` / ``--ensemble`` and ``core-match`` are validated in the library with
one-line errors, before anything is written."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from glassformer.data import PlugTable, WellLog
from glassformer.errors import InputError
from glassformer.models import SequenceRegressor
from glassformer.parallel import JoblibEngine, SerialEngine
from glassformer.reporting import shown
from glassformer.wells import EnsembleExperiment, WellModel, run_ensemble_experiment, run_plugs_experiment
from glassformer.wells.plugs_match import PlugsMatchRequest
from glassformer.wells.plugs_request import check_plugs_request, run_ensemble_request, run_plugs_request
from glassformer.wells.requests import EngineRequest, PlugsRequest, TrainRequest, WellsRequest
from glassformer.wells.tree_baselines import ensemble_settings_text


def _well(name, top, seed, n=240):
    rng = np.random.default_rng(seed)
    depth = top + 0.2 * np.arange(n)
    phi = 0.17 + 0.06 * np.sin(depth / 1.7) + 0.01 * rng.standard_normal(n)
    return WellLog(name=name, depth=depth, curves={"PHIF": phi, "VSH": 0.45 - phi, "KLOGH": 10 ** (11 * phi - 0.8)},
                   units={"PHIF": "V/V", "VSH": "V/V", "KLOGH": "mD"})


def _wm():
    return WellModel(["PHIF", "VSH"], "KLOGH", log_target=True, window=8,
                     model=SequenceRegressor(d_model=4, num_heads=1, epochs=2, batch_size=16))


def _run(out, engine):
    train, test = _well("15/9-A", 1000.0, 1), _well("15/9-B", 1000.0, 2)
    lines = []
    with shown(lines.append):
        metrics = run_ensemble_experiment(out, [train.interval(1000, 1038)], [test], _wm(), n_members=2,
                                          validation_wells=[train.interval(1038.2, 1047.8)], engine=engine,
                                          report=False)
    return metrics, lines


def _without_times(value):
    """Metrics without what differs between two runs of the same work: wall-clock times, and the run
    folder that the recommended predict command names."""
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k not in ("seconds", "seconds_total", "train_s")}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"--model \S+", "--model RUN", value)
    return value


def test_the_ensemble_run_on_two_worker_processes_equals_the_serial_run(tmp_path):
    serial, said = _run(tmp_path / "serial", SerialEngine())
    with JoblibEngine(jobs=2) as engine:
        pooled, _ = _run(tmp_path / "pooled", engine)
    assert _without_times(pooled) == _without_times(serial)
    for name in ("predictions.csv",):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "pooled" / name), pd.read_csv(tmp_path / "serial" / name))
    a, b = (json.loads((tmp_path / run / "ensemble" / "ensemble.json").read_text()) for run in ("serial", "pooled"))
    assert a["calibration"] == b["calibration"] and a["info"]["seeds"] == b["info"]["seeds"] == [42, 0]
    # the run's own record: its members' seeds, the one random forest of the registry, the tables said
    config = json.loads((tmp_path / "serial" / "config.json").read_text())
    assert config["ensemble"] == {"members": 2, "seeds": [42, 0]}
    assert config["baselines"]["random forest"] == ensemble_settings_text()["random forest"]
    assert said[0] == "training 2 transformers ..." and said[-1] == serial["recommendation"]["text"]
    assert any(line.startswith("P10-P90 coverage of the transformer") for line in said)


def _plugs_run(out, engine):
    """A cored well (four cores of 10 plugs on its porosity) and a second well holding KLOGH for pretraining."""
    cored, other = _well("15/9-C", 1000.0, 5, n=300), _well("15/9-D", 1000.0, 6, n=300)
    at = np.concatenate([top + 0.4 * np.arange(10) for top in (1005.0, 1018.0, 1031.0, 1044.0)])
    phi = np.interp(at, cored.depth, cored.curve("PHIF"))
    rng = np.random.default_rng(7)
    plugs = PlugTable(depth=at, porosity=phi, permeability=10 ** (12 * phi - 1 + 0.1 * rng.standard_normal(at.size)),
                      run=np.repeat([1, 2, 3, 4], 10).astype(object))
    with shown(lambda line: None):
        return run_plugs_experiment(out, cored, plugs, _wm(), shifts=None, n_members=2, pretrain_logs=[other],
                                    pretrain_epochs=1, engine=engine, report=False)


def test_the_run_on_core_plugs_with_pretraining_on_two_worker_processes_equals_the_serial_run(tmp_path):
    serial = _plugs_run(tmp_path / "serial", SerialEngine())
    with JoblibEngine(jobs=2) as engine:
        pooled = _plugs_run(tmp_path / "pooled", engine)
    assert _without_times(pooled) == _without_times(serial)
    assert list(serial["comparison"]["table"])[:2] == ["transformer", "transformer, pretrained + fine-tuned"]
    for name in ("predictions.csv",):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "pooled" / name), pd.read_csv(tmp_path / "serial" / name))
    for folder in ("ensembles/core/member_01", "ensembles/pretrained/member_01",
                   "ensembles/pretrained/pretrained/member_01"):       # each member pretrained, then fine-tuned
        a, b = (np.load(tmp_path / run / folder / "model.npz", allow_pickle=False) for run in ("serial", "pooled"))
        assert sorted(a.files) == sorted(b.files) and all(np.array_equal(a[k], b[k]) for k in a.files), folder
    config = json.loads((tmp_path / "serial" / "config.json").read_text())
    assert config["pretraining"]["target"] == "KLOGH" and config["pretraining"]["wells"] == ["15/9-D", "15/9-C"]
    assert config["baselines"]["random forest"] == ensemble_settings_text()["random forest"]


def test_an_ensemble_experiment_refuses_before_writing(tmp_path):
    g = _well("15/9-A", 1000.0, 1)
    with pytest.raises(InputError, match="at least 2 members"):
        EnsembleExperiment([g], [g], _wm(), n_members=1).check()
    with pytest.raises(InputError, match=r"--validation-depth 2000:2010 holds no KLOGH value"):
        run_ensemble_experiment(tmp_path / "run", [g], [g], _wm(), n_members=2, validation_depth=(2000, 2010))
    assert not (tmp_path / "run").exists()


# --- requests: one-line errors, raised in the library --------------------------------------------------
def _request(**changes) -> TrainRequest:
    plugs = changes.pop("plugs", {})
    wells = changes.pop("wells", {})
    engine = changes.pop("engine", {})
    base = TrainRequest(inputs=("PHIF", "VSH"), target=None, out="run", wells=WellsRequest(data=("well.csv",)),
                        plugs=PlugsRequest(core="core.csv"))
    return replace(base, wells=replace(base.wells, **wells), plugs=replace(base.plugs, **plugs),
                   engine=replace(base.engine, **engine), **changes)


def _one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text and text, text
    return text


@pytest.mark.parametrize("request_, message", [
    (_request(plugs={"core": None, "test_cores": ("2",)}), "--test-cores is used only with --core CORE_TABLE.csv"),
    (_request(plugs={"core": None, "core_target": "KHOR"}), "--core-target is used only with --core"),
    (_request(plugs={"core": None, "shifts_file": "shifts.json"}), "--shifts is used only with --core"),
    (_request(plugs={"core": None, "validation_depth": "1040:1050"}),
     "--validation-depth is used only with --core or --ensemble K"),
    (_request(plugs={"core": None}, engine={"jobs": 2}), "--jobs and --scheduler run the members of an ensemble"),
    (_request(resume="run/checkpoint"), "--resume continues one interrupted transformer; it is not available with "
                                        "--core"),
    (_request(plugs={"core": None, "ensemble": 3}, resume="ck"), "not available with --ensemble"),
])
def test_bad_combinations_of_options_are_one_line_input_errors(request_, message):
    with pytest.raises(InputError) as info:
        check_plugs_request(request_)
    assert message in _one_line(info)


def test_good_combinations_pass():
    check_plugs_request(_request())
    check_plugs_request(_request(plugs={"core": None, "ensemble": 3, "validation_depth": "1:2"},
                                 engine={"jobs": 2}))


@pytest.mark.parametrize("request_, message", [
    (_request(wells={"data": ("a.csv", "b.csv")}), "--core: give the cored well as one --data file (got 2)"),
    (_request(target="KLOGH"), "--target is not used with --core"),
    (_request(wells={"test_data": ("blind.csv",)}), "--test-data is not used with --core"),
    (_request(plugs={"depth_shift": ("1:0.5",)}), "--depth-shift must be RUN=SHIFT (e.g. 1=1.6), got '1:0.5'"),
    (_request(plugs={"depth_shift": ("1=0.5",), "no_depth_match": True}),
     "--no-depth-match, --depth-shift and --shifts contradict each other"),
    (_request(wells={"test_depth": ("W=1:2",)}), "--test-depth: give one TOP:BASE here"),
    (_request(plugs={"validation_depth": "1050:1040"}), "--validation-depth must be TOP:BASE with TOP < BASE"),
])
def test_a_bad_plugs_request_is_refused_before_any_file_is_read(request_, message, tmp_path):
    request_ = replace(request_, out=str(tmp_path / "run"))
    with pytest.raises(InputError) as info:
        run_plugs_request(request_, names=["PHIF", "VSH"], model=SequenceRegressor())
    assert message in _one_line(info)
    assert not (tmp_path / "run").exists()


def test_an_ensemble_request_needs_held_out_data(tmp_path):
    request_ = _request(plugs={"core": None, "ensemble": 2}, out=str(tmp_path / "run"))
    g = _well("15/9-A", 1000.0, 1)
    with pytest.raises(InputError) as info:
        run_ensemble_request(request_, train_logs=[g], test_logs=[g], logs=[g], wm=_wm())
    assert "--ensemble measures the coverage of its P10-P90 interval on held-out data" in _one_line(info)


def test_the_core_match_request_is_filled_from_option_values_by_name():
    params = {"data": "w.las", "core": "c.csv", "out": "o", "core_depth": "OrigDepth", "core_porosity": "CPOR",
              "core_porosity_unit": "%", "core_run": "none", "match_depth": "PHIF", "shift_window": 1.5,
              "min_plugs": 5, "overwrite": True}
    request_ = PlugsMatchRequest.from_options(params)
    assert (request_.core_depth, request_.core_run, request_.shift_window, request_.min_plugs) == ("OrigDepth", "none",
                                                                                                   1.5, 5)
    assert PlugsMatchRequest.from_options({"data": "w", "core": "c", "out": "o"}).core_run == "auto"
