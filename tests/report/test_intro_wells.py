"""The report's sentence on wells: each interval in its well's own depth unit, and what was held out
(validation blocks; no test wells when the run was scored on its training intervals)."""

from __future__ import annotations

import html
import json

from glassformer.report import write_report
from glassformer.report.intro import wells_sentence


def _well(name, top, base, unit):
    return {"name": name, "source": f"{name}.csv", "top": top, "base": base, "depth_unit": unit}


def _blocks(*blocks):
    return {"method": "deepest 10 %", "blocks": [{"well": w, "top": t, "base": b, "depth_unit": u, "samples": 4}
                                                 for w, t, b, u in blocks]}


def test_feet_wells_are_written_in_feet_with_their_validation_blocks():
    config = {"train_wells": [_well("A", 5000.0, 5399.5, "ft")], "test_wells": [_well("B", 6100.0, 6399.5, "ft")],
              "validation": _blocks(("A", 5360.0, 5399.5, "ft"))}
    text = wells_sentence(config)
    assert text == ("Trained on A 5000\u20135399.5 ft; early stopping watched the held-out blocks "
                    "A 5360\u20135399.5 ft; tested on B 6100\u20136399.5 ft.")
    assert " m;" not in text and " m." not in text


def test_each_well_keeps_its_own_unit_and_an_unrecorded_unit_reads_metres():
    config = {"train_wells": [_well("A", 10.0, 20.0, "m"), {"name": "C", "top": 30.0, "base": 40.5}],
              "test_wells": [_well("B", 100.0, 150.0, "ft")]}
    assert wells_sentence(config) == "Trained on A 10\u201320 m, C 30\u201340.5 m; tested on B 100\u2013150 ft."


def test_a_run_without_test_wells_does_not_say_it_was_tested_on_its_training_wells(tmp_path):
    train = [_well("W-11", 5000.0, 5249.5, "ft"), _well("W-12", 5100.0, 5324.5, "ft")]
    config = {"title": "glassformer train", "train_wells": train, "test_wells": [dict(w) for w in train],
              "validation": _blocks(("W-11", 5225.0, 5249.5, "ft"), ("W-12", 5302.5, 5324.5, "ft")),
              "test_data": []}
    expected = ("Trained on W-11 5000\u20135249.5 ft, W-12 5100\u20135324.5 ft; early stopping watched the held-out "
                "blocks W-11 5225\u20135249.5 ft, W-12 5302.5\u20135324.5 ft; no test wells (the scores are in-sample, "
                "on the training intervals).")
    assert wells_sentence(config) == expected
    folder = tmp_path / "run"
    (folder / "figures").mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "metrics.json").write_text(json.dumps({"title": "glassformer train"}))
    page = html.unescape(write_report(folder).read_text(encoding="utf-8"))
    assert expected in page and "tested on" not in page


def test_validation_wells_are_named_instead_of_blocks():
    config = {"train_wells": [_well("A", 0.0, 10.0, "m")], "validation_wells": [_well("V", 0.0, 5.0, "m")],
              "test_wells": [_well("B", 0.0, 8.0, "m")], "validation": _blocks(("A", 9.0, 10.0, "m"))}
    assert wells_sentence(config) == "Trained on A 0\u201310 m; validated on V 0\u20135 m; tested on B 0\u20138 m."
