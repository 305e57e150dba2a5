"""published.json: every case is complete and cited, and each stored number is written nowhere else."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from glassformer.selftest import published

REPO = Path(__file__).resolve().parents[2]
JSON = REPO / "glassformer" / "selftest" / "published.json"


def test_every_bug_report_names_what_it_checks_and_where_to_find_it():
    cases = published.bug_reports()
    assert len(cases) == 11
    for key, case in cases.items():
        assert case.key == key and case.title and case.about and case.urls
        assert re.search(r"issues? #\d+|\b(19|20)\d\d\b", case.source), case.source   # an issue or a paper's year
        assert all(u.startswith("https://") for u in case.urls)
        assert not re.search(r"\bB\d\d\b|seed 00\d", case.title + case.source + case.about)
        assert case.name == f"{case.title} ({case.source})"


def test_lists_become_arrays_with_their_dtypes():
    case = published.bug_report("fully_padded_sequence")
    assert case.inputs["x"].shape == (2, 3, 2) and case.inputs["x"].dtype == np.float64
    assert case.inputs["key_padding_mask"].dtype == bool
    grads = published.bug_report("adam_three_steps").inputs["grads"]
    assert len(grads) == 3 and [g.shape for g in grads[0]] == [(1,), (2,)]     # ragged: one array per parameter
    assert published.bug_report("rope_values").inputs["head_dim"] == 4
    with pytest.raises(KeyError, match="known: fully_padded_sequence, "):
        published.bug_report("B05")


def test_a_caller_cannot_change_what_the_next_caller_reads():
    stored = json.loads(JSON.read_text(encoding="utf-8"))
    published.bug_report("causal_attention").expected["output"][1] = 0.0
    published.demonstration_1()["printed_mse"][0] = 1.0
    assert published.bug_report("causal_attention").expected["output"][1] == \
        stored["bug_reports"]["causal_attention"]["expected"]["output"][1] > 8
    assert published.demonstration_1()["printed_mse"][0] == \
        stored["chapter"]["demonstration_1"]["printed_mse"]["values"]["0"] > 0.1


def test_chapter_values_are_the_printed_ones():
    d1, d2 = published.demonstration_1(), published.demonstration_2()
    assert d1["name"] == "demonstration 1: seven depths" and d2["name"] == "demonstration 2: the next depth"
    assert list(d1["printed_mse"]) == list(range(0, 30000, 2000))
    assert all(v == 0.0 for e, v in d1["printed_mse"].items() if e >= 16000)
    assert d1["printed_training_permeability_mD"].shape == (7,)
    assert list(d2["printed_mean_batch_mse"]) == [20, 500, 1000]
    assert set(d2) == {"name", "printed_mean_batch_mse", "held_out_mse", "attention_next_depth_weight",
                       "attention_elsewhere_weight", "ablation_mse"}
    assert "doi:10.5281/zenodo.15169139" in published.chapter_source()


def _stored_numbers(value) -> set:
    """Every number in the file with at least 4 significant digits, as Python writes it."""
    if isinstance(value, dict):
        return set().union(*map(_stored_numbers, value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*map(_stored_numbers, value)) if value else set()
    if isinstance(value, float) and not value.is_integer():
        text = repr(abs(value))
        digits = re.sub(r"e.*$", "", text).replace(".", "").strip("0")
        return {text} if len(digits) >= 4 else set()
    return set()


def test_each_stored_number_is_written_in_one_place():
    numbers = _stored_numbers(json.loads(JSON.read_text(encoding="utf-8")))
    # the guard covers the long hand values and the chapter's six-decimal MSE alike
    assert len(numbers) > 50
    assert repr(published.demonstration_1()["printed_mse"][0]) in numbers
    assert repr(float(published.bug_report("fully_padded_sequence").expected["output_0"][0, 0])) in numbers
    pattern = re.compile(r"(?<![\d.])(" + "|".join(map(re.escape, sorted(numbers))) + r")(?!\d)")
    found = []
    for folder in ("glassformer", "tests", "benchmarks"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if m := pattern.search(line):
                    found.append(f"{path.relative_to(REPO)}:{lineno}: {m.group(1)}")
    assert not found, "published numbers written again instead of read from published.json:\n" + "\n".join(found)


def test_the_package_text_cites_only_what_a_reader_can_find():
    """No internal numbering (seed documents, bug codes, issue or decision numbers) and no path
    outside the package in any module, docstring or message of glassformer: cite the chapter,
    the demonstrations by name, and papers or public bug reports instead."""
    internal = re.compile(r"seed 00\d|\bB\d\d\b|\bissue \d|decision \d|\.\./shared|seed00\d|DESIGN\.md|"
                          r"\bthe seed's\b", re.I)
    files = sorted(p for p in (REPO / "glassformer").rglob("*") if p.suffix in (".py", ".json"))
    hits = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in files
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if internal.search(line)]
    assert not hits, "\n".join(hits)
