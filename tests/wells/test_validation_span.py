"""The validation span on hand-made wells: a validation block outside the training range is flagged, one
that spans it is not, and the share is the hand-counted one; the report shows the warning."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data import WellLog
from glassformer.report.sections import _long_notes
from glassformer.wells.splits import SPAN_THRESHOLD, span_warnings, validation_span


def _well(name, phif, k):
    depth = 1000.0 + 0.5 * np.arange(len(phif))
    return WellLog(name=name, depth=depth, curves={"PHIF": np.asarray(phif, float), "KLOGH": np.asarray(k, float)})


def test_a_deepest_block_outside_the_training_range_is_flagged():
    # porosity grows with depth: the deepest 10 % (10 of 100 samples) lies above every training value
    g = _well("A", np.linspace(0.05, 0.30, 100), np.full(100, 5.0))
    span = validation_span([g], [], ["PHIF", "KLOGH"], fraction=0.1, window=4)
    phif = span["curves"]["PHIF"]
    assert phif["share_inside"] == 0.0 and (phif["n_training"], phif["n_validation"]) == (90, 10)
    assert phif["validation_range"] == pytest.approx([0.05 + 0.25 * 90 / 99, 0.30])
    assert span["curves"]["KLOGH"]["share_inside"] == 1.0                  # constant: every value inside
    (warning,) = span_warnings(span)
    assert warning.startswith("the validation data do not span the training data in PHIF: only 0% of")


def test_a_block_that_spans_the_training_range_is_not_flagged():
    phif = 0.18 + 0.1 * np.sin(np.arange(100) / 2.0)                    # cycles faster than the block is long
    span = validation_span([_well("B", phif, 10 ** (10 * phif))], [], ["PHIF", "KLOGH"], fraction=0.1, window=4)
    assert all(c["share_inside"] > 0.9 for c in span["curves"].values())
    assert span_warnings(span) == []


def test_the_share_by_hand_with_validation_wells_given():
    train = _well("T", np.arange(10.0), np.arange(10.0))                  # values 0 .. 9
    val = _well("V", [3.0, 5.0, 4.0], [0.0, 9.0, 1.0])                    # ranges [3, 5] and [0, 9]
    span = validation_span([train], [val], ["PHIF", "KLOGH"])
    assert span["curves"]["PHIF"]["share_inside"] == pytest.approx(3 / 10)  # 3, 4, 5
    assert span["curves"]["KLOGH"]["share_inside"] == 1.0
    assert span["threshold"] == SPAN_THRESHOLD == 0.8
    assert [w.split(":")[0] for w in span_warnings(span)] == ["the validation data do not span the training data in "
                                                              "PHIF"]
    assert validation_span([train], [], ["PHIF"], validation="none") is None


def test_the_report_puts_the_warnings_under_the_headline():
    train = _well("T", np.arange(10.0), np.arange(10.0))
    span = validation_span([train], [_well("V", [3.0, 5.0], [0.0, 9.0])], ["PHIF"])
    notes = _long_notes({"validation_span": {**span, "warnings": span_warnings(span)}})
    assert len(notes) == 1 and notes[0].startswith("Warning: the validation data do not span")
    per_fold = _long_notes({"validation_span": {"held out T": {**span, "warnings": span_warnings(span)}}})
    assert per_fold[0].startswith("Warning (held out T): ")


def _span(share: float, threshold: float = SPAN_THRESHOLD) -> dict:
    return {"threshold": threshold, "curves": {"VSH": {"share_inside": share, "validation_range": [10.3, 62.4]}}}


def test_a_share_at_the_threshold_is_not_flagged_and_one_below_never_prints_as_the_threshold():
    # 8 of 10 training samples inside the validation range: exactly the threshold, which is no warning
    train = _well("T", np.arange(10.0), np.arange(10.0))                  # values 0 .. 9
    span = validation_span([train], [_well("V", [1.0, 8.0], [0.0, 9.0])], ["PHIF", "KLOGH"])
    assert span["curves"]["PHIF"]["share_inside"] == 0.8 and span_warnings(span) == []
    # below it: as many decimals as keep the printed share under the printed threshold
    (one,) = span_warnings(_span(0.799))
    assert "only 79.9% of the training samples" in one and "the other 20.1%" in one and "(threshold 80%)" in one
    (two,) = span_warnings(_span(3998 / 5000))                              # 0.7996
    assert "only 79.96% of the training samples" in two and "the other 20.04%" in two
    (plain,) = span_warnings(_span(0.78))                                   # far enough below: whole percent
    assert "only 78% of the training samples" in plain and "the other 22%" in plain
