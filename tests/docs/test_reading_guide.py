"""docs/reading-guide.md names, for every symbol of the chapter's model, lines that really compute it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
CHAPTER_SYMBOLS = ["E", "P", "Z", "Q, K, V", "S", "A", "U", "T1", "R", "G", "F", "T2", "H", "ŷ", "loss", "update"]


def _tool():
    spec = importlib.util.spec_from_file_location("reading_guide", REPO / "tools" / "reading_guide.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_symbol_of_the_chapter_has_a_forward_and_a_backward_line_in_reading_order():
    tool = _tool()
    text = (REPO / "docs" / "reading-guide.md").read_text(encoding="utf-8")
    rows = tool.rows(text)
    assert [symbol for symbol, _, _ in rows] == CHAPTER_SYMBOLS
    for line in text.splitlines():
        if tool.ROW.match(line):
            forward, backward = line.split("|")[5:7]
            assert tool.LINK.search(forward), line
            assert tool.LINK.search(backward), line


def test_every_file_line_exists_begins_with_its_quoted_code_and_names_the_symbol():
    tool = _tool()
    assert tool.check((REPO / "docs" / "reading-guide.md").read_text(encoding="utf-8")) == []


def test_the_check_catches_a_stale_line_number_and_a_wrong_file():
    tool = _tool()
    text = (REPO / "docs" / "reading-guide.md").read_text(encoding="utf-8")
    link = next(tool.LINK.finditer(text))
    n = int(link["line"])
    stale = text.replace(link.group(0), link.group(0).replace(f":{n}`", f":{n + 1}`").replace(f"#L{n})", f"#L{n + 1})"), 1)
    assert any("does not begin with" in p for p in tool.check(stale))
    assert tool.check(tool.update(stale)) == []          # update moves it back to the quoted code
    missing = text.replace(link["file"], "glassformer/nowhere.py")
    assert any("does not exist" in p for p in tool.check(missing))


def test_the_readme_links_the_guide_on_its_first_screen():
    readme = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert any("docs/reading-guide.md" in line for line in readme[:25])


def _executed_lines(run) -> set:
    """``{(path relative to the repository, line)}`` of every glassformer line ``run()`` executes."""
    root = str(REPO / "glassformer")
    seen = set()

    def local(frame, event, arg):
        if event == "line":
            seen.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def calls(frame, event, arg):                 # trace lines only inside glassformer's own files
        return local if frame.f_code.co_filename.startswith(root) else None
    before = sys.gettrace()
    sys.settrace(calls)
    try:
        run()
    finally:
        sys.settrace(before)
    return {(str(Path(f).relative_to(REPO)), n) for f, n in seen}


_EXECUTED = {}


def _one_training_step(mode) -> set:
    """The glassformer lines one full-batch gradient step of ``SequenceRegressor.chapter_model()`` on
    seven depths executes with ``kernels(mode)`` (traced once per mode)."""
    from glassformer import SequenceRegressor, kernels

    if mode not in _EXECUTED:
        rng = np.random.default_rng(0)
        X, y = rng.uniform(0.05, 0.3, (4, 7, 1)), rng.uniform(0.0, 1.0, (4, 7, 1))
        model = SequenceRegressor.chapter_model(epochs=1)
        with kernels(mode):
            _EXECUTED[mode] = _executed_lines(lambda: model.fit(X, y, np.arange(1.0, 8.0)))
        assert len(model.history_.train_loss) == 1
    return _EXECUTED[mode]


@pytest.mark.parametrize("mode", ["fast", "reference"])
def test_every_linked_line_runs_in_one_training_step_of_the_chapters_model(mode):
    """Every line the guide links for ``mode`` (and for both modes) is executed."""
    tool = _tool()
    linked = tool.linked_lines((REPO / "docs" / "reading-guide.md").read_text(encoding="utf-8"), mode)
    assert {f for f, _ in linked} >= {"glassformer/nn/reference.py" if mode == "reference" else
                                      "glassformer/nn/functional.py", "glassformer/models/networks.py"}
    assert sorted(linked - _one_training_step(mode)) == []


def test_the_line_check_catches_lines_that_do_not_run():
    """The tracer sees the difference: no reference line runs with the fast kernels, no fast kernel
    line with the reference, and the fast softmax's shifted branch (scores beyond +-60) not at all."""
    tool = _tool()
    text = (REPO / "docs" / "reading-guide.md").read_text(encoding="utf-8")
    fast, reference = _one_training_step("fast"), _one_training_step("reference")
    only_reference = tool.linked_lines(text, "reference") - tool.linked_lines(text, "fast")
    only_fast = tool.linked_lines(text, "fast") - tool.linked_lines(text, "reference")
    assert only_reference and not only_reference & fast
    assert only_fast and not only_fast & reference
    source = (REPO / "glassformer" / "nn" / "functional.py").read_text(encoding="utf-8").splitlines()
    shifted = [i + 1 for i, line in enumerate(source) if "exp(-inf) = 0 removes blocked entries" in line]
    assert len(shifted) == 1 and ("glassformer/nn/functional.py", shifted[0]) not in fast
    assert tool.mode_of("glassformer/models/networks.py") == "both"
