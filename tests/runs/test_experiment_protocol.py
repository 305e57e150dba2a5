"""run_experiment drives any experiment the same way: check before the folder exists, the tasks on an engine
in task order, one writer for config, metrics, predictions, tables and the report."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from glassformer.errors import InputError
from glassformer.parallel import SerialEngine
from glassformer.reporting import shown
from glassformer.runs import RunResult, run_experiment


def square(item: dict) -> dict:
    """The task: plain data in, plain data out."""
    return {"x": item["x"], "y": item["x"] ** 2}


class Squares:
    """A fake experiment: one task per x, the result a table of x and x squared."""

    task = staticmethod(square)

    def __init__(self, xs, *, refuse: bool = False):
        self.xs = xs
        self.refuse = refuse

    def check(self) -> None:
        if self.refuse:
            raise InputError("squares: refused before any file is written")

    def tasks(self, out):
        return [{"x": x} for x in self.xs]

    def collect(self, results, out) -> RunResult:
        frame = pd.DataFrame(results)
        return RunResult(metrics={"title": "Squares", "sum": float(frame["y"].sum())},
                         config={"title": "Squares", "xs": list(self.xs)}, predictions=frame,
                         tables=[f"sum of squares {frame['y'].sum():g}"], warnings=["x = 3 is odd"])


def test_a_fake_experiment_writes_its_run_folder_through_run_experiment(tmp_path):
    lines = []
    with shown(lines.append):
        metrics = run_experiment(Squares([1, 2, 3]), tmp_path / "run", engine=SerialEngine())
    assert metrics == {"title": "Squares", "sum": 14.0}                     # 1 + 4 + 9
    run = tmp_path / "run"
    assert json.loads((run / "metrics.json").read_text()) == metrics
    assert json.loads((run / "config.json").read_text()) == {"title": "Squares", "xs": [1, 2, 3]}
    rows = pd.read_csv(run / "predictions.csv")
    np.testing.assert_array_equal(rows["y"], [1, 4, 9])                      # task order kept
    assert (run / "report.html").is_file() and "Squares" in (run / "report.html").read_text()
    assert lines == ["sum of squares 14", "warning: x = 3 is odd"]         # tables, then warnings


def test_a_refused_experiment_leaves_no_folder_and_says_nothing(tmp_path, capsys):
    with pytest.raises(InputError, match="refused before any file is written"):
        run_experiment(Squares([1], refuse=True), tmp_path / "run")
    assert not (tmp_path / "run").exists()
    run_experiment(Squares([2]), tmp_path / "quiet", report=False)       # no shown(): a library prints nothing
    assert capsys.readouterr().out == ""
    assert not (tmp_path / "quiet" / "report.html").exists()
