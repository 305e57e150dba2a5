"""docs/reading-guide.md names, for every symbol of the chapter's model, lines that really compute it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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
