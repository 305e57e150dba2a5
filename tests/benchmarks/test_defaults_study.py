"""The nested choice of the defaults study (benchmarks/defaults_study.py) on hand-made scores."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import defaults_study  # noqa: E402


class _Well:
    def __init__(self, name: str, n: int = 5):
        self.name, self.n = name, n

    def __len__(self) -> int:
        return self.n


class _Scores:
    """RMSE by (setting label, training wells, test wells): stands in for the fitted ensembles."""

    def __init__(self, table: dict):
        self.table = table
        self.asked = []

    def rmse(self, setting, train, test):
        key = (defaults_study.label(setting), tuple(train), tuple(test))
        self.asked.append(key)
        return self.table[key]


def test_choose_takes_the_lowest_inner_mean_first_on_a_tie_never_a_non_finite():
    assert defaults_study.choose({"a": [0.9, 0.5], "b": [0.6, 0.6]}) == "b"       # means 0.70 and 0.60
    assert defaults_study.choose({"a": [0.3, 0.7], "b": [0.6, 0.6]}) == "a"       # 0.50 and 0.60
    assert defaults_study.choose({"a": [0.6, 0.6], "b": [0.5, 0.7]}) == "a"       # equal means: the first
    assert defaults_study.choose({"a": [math.nan, 0.1], "b": [0.8, 0.8]}) == "b"
    with pytest.raises(ValueError):
        defaults_study.choose({"a": [math.nan]})


def test_nested_chooses_on_inner_folds_and_scores_the_choice_on_the_held_out_well():
    small, large = {"d_model": 4, "epochs": 2, "members": 1}, {"d_model": 8, "epochs": 2, "members": 1}
    s, l = defaults_study.label(small), defaults_study.label(large)
    wells = [_Well("A"), _Well("B"), _Well("C")]
    table = {}
    # Outer fold 1 holds out A: inner folds train on B, score C and back.  The small model wins inside
    # (0.5, 0.7 -> 0.6 against 0.8) though the large one is far better on A itself (0.2 against 0.9).
    table.update({(s, (1,), (2,)): 0.5, (s, (2,), (1,)): 0.7, (l, (1,), (2,)): 0.8, (l, (2,), (1,)): 0.8,
                  (s, (1, 2), (0,)): 0.9, (l, (1, 2), (0,)): 0.2})
    # Outer fold 2 holds out B; fold 3 holds out C: the large model wins inside, by 0.1.
    table.update({(s, (0,), (2,)): 0.6, (s, (2,), (0,)): 0.6, (l, (0,), (2,)): 0.5, (l, (2,), (0,)): 0.5,
                  (s, (0, 2), (1,)): 0.3, (l, (0, 2), (1,)): 0.4,
                  (s, (0,), (1,)): 0.7, (s, (1,), (0,)): 0.7, (l, (0,), (1,)): 0.6, (l, (1,), (0,)): 0.6,
                  (s, (0, 1), (2,)): 0.1, (l, (0, 1), (2,)): 0.5})
    folds = defaults_study.nested(wells, [small, large], _Scores(table))
    assert [f["test_wells"] for f in folds] == [["A"], ["B"], ["C"]]
    assert [f["chosen"] for f in folds] == [s, l, l]
    assert [f["held_out_rmse"] for f in folds] == [0.9, 0.4, 0.5]       # the choice's score, not the best one
    assert folds[0]["inner_mean"] == pytest.approx({s: 0.6, l: 0.8})
    assert folds[0]["held_out_all"] == {s: 0.9, l: 0.2}
    text = defaults_study.markdown(folds, [small, large])
    assert "**0.600 ± 0.265**" in text                                 # mean of 0.9, 0.4, 0.5 and its sample sd


def test_quick_run_writes_the_nested_table(tmp_path):
    assert defaults_study.main(["--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "nested.md").read_text(encoding="utf-8")
    assert "| outer fold (held out) | chosen setting |" in text and "nested score" in text
    rows = [line.split(" | ")[0] for line in text.splitlines() if line.startswith(("| d4", "| d8"))]
    assert rows == ["| d4 e2 x1", "| d4 e2 x2", "| d8 e2 x1", "| d8 e2 x2"]      # every setting's held-out row
