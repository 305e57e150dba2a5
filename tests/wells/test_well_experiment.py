"""The train/compare experiment: its seeds are fit_seed tasks, so two worker processes give the serial run's
numbers; what it reports is shown only inside glassformer.reporting.shown()."""

from __future__ import annotations

import json
import re

import pytest

from glassformer.data.synthetic import synthetic_wells
from glassformer.errors import InputError
from glassformer.models import SequenceRegressor
from glassformer.parallel import JoblibEngine
from glassformer.reporting import shown
from glassformer.train import EarlyStopping
from glassformer.wells import WellModel, format_comparison_table, run_well_experiment

SEEDS = [42, 0]


def _without_times(obj):
    """Metrics without what differs between two runs of the same work: wall-clock times, and the run
    folder that the recommended predict command names."""
    if isinstance(obj, dict):
        return {k: _without_times(v) for k, v in obj.items() if k not in ("fit_s", "train_s", "train_s_sd", "seconds")}
    if isinstance(obj, list):
        return [_without_times(v) for v in obj]
    if isinstance(obj, str):
        return re.sub(r"--model \S+", "--model RUN", obj)
    return obj


@pytest.fixture(scope="module")
def wells():
    logs = synthetic_wells(n_wells=3, n_samples=120, seed=13)
    return logs[:2], logs[2:]


def _model():
    return WellModel(["PHI", "VSH"], "PERM", window=8, model=SequenceRegressor(d_model=8, epochs=2, progress=False))


@pytest.fixture(scope="module")
def serial_and_parallel(wells, tmp_path_factory):
    train, test = wells
    root = tmp_path_factory.mktemp("experiment")
    lines = []
    with shown(lines.append):                    # the serial engine: the default one, in this process
        serial = run_well_experiment(root / "serial", train, test, _model(), title="two seeds", seeds=SEEDS)
    with JoblibEngine(2) as engine:
        parallel = run_well_experiment(root / "parallel", train, test, _model(), title="two seeds", seeds=SEEDS,
                                       engine=engine)
    return root, serial, parallel, lines


def test_two_worker_processes_give_the_serial_runs_metrics_for_two_seeds(serial_and_parallel):
    root, serial, parallel, _ = serial_and_parallel
    assert serial["comparison"]["seeds"] == SEEDS
    assert _without_times(parallel) == _without_times(serial)
    per_seed = serial["comparison"]["per_seed"]["transformer"]
    assert len(per_seed["rmse"]) == 2 and per_seed["rmse"][0] != per_seed["rmse"][1]     # two different fits
    assert serial["model"]["rmse"] == per_seed["rmse"][0]                                # the first seed's model
    for name in ("serial", "parallel"):
        run = root / name
        assert (run / "model" / "model.npz").is_file() and (run / "seeds" / "seed_0" / "model" / "model.npz").is_file()
        assert json.loads((run / "config.json").read_text())["seeds"] == SEEDS
        assert (run / "report.html").is_file() and (run / "figures" / "prediction_vs_depth.png").is_file()
    assert (root / "serial" / "predictions.csv").read_bytes() == (root / "parallel" / "predictions.csv").read_bytes()


def test_the_tables_are_shown_only_inside_shown(serial_and_parallel, wells, tmp_path, capsys):
    _, serial, _, lines = serial_and_parallel
    assert format_comparison_table(serial, "log10 mD") in lines
    assert serial["verdict"] in lines and serial["recommendation"]["text"] in lines
    rmse = serial["comparison"]["per_seed"]["transformer"]["rmse"]
    assert [line for line in lines if line.startswith("  seed ")][0].startswith(f"  seed 42: transformer RMSE {rmse[0]:.4f}")
    capsys.readouterr()
    train, test = wells
    run_well_experiment(tmp_path / "quiet", train, test, _model(), title="one seed", report=False)
    assert capsys.readouterr().out == ""         # a library prints nothing unless its user shows it


def test_callbacks_on_worker_processes_are_refused_before_any_file(wells, tmp_path):
    train, test = wells
    with JoblibEngine(2) as engine, pytest.raises(InputError, match="callbacks .* live in this process"):
        run_well_experiment(tmp_path / "run", train, test, _model(), title="t", seeds=SEEDS, engine=engine,
                            callbacks=[EarlyStopping(patience=1)])
    assert not (tmp_path / "run").exists()
