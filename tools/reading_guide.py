"""Keep docs/reading-guide.md true: every ``file:line`` it names holds the code it quotes.

(That each linked line also *runs*, in its mode of ``glassformer.kernels``, is checked by
``tests/docs/test_reading_guide.py`` with a line tracer; :func:`linked_lines` lists them.)

Each link in the guide reads ``[`glassformer/x.py:123`](../glassformer/x.py#L123) `code``: the file,
the line, and the quoted code that must begin that line (leading spaces aside).  ``check`` lists
what no longer holds; ``update`` moves each line number to where the quoted code now is (the
occurrence nearest to the old number), so an edit above a quoted line does not leave the guide
pointing at the wrong place.

    python tools/reading_guide.py            # check (exit 1 and a list of problems if any)
    python tools/reading_guide.py --update   # rewrite the line numbers
"""

from __future__ import annotations

import ast
import re
import sys
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "reading-guide.md"
LINK = re.compile(r"\[`(?P<file>glassformer/[\w/]+\.py):(?P<line>\d+)`\]\(\.\./(?P<file2>glassformer/[\w/]+\.py)"
                  r"#L(?P<line2>\d+)\) `(?P<code>[^`]+)`")
ROW = re.compile(r"^\| *(?P<step>\d+) *\| *(?P<symbol>[^|]+?) *\| *(?P<names>[^|]+?) *\|")


#: Files whose lines run only in one mode of ``glassformer.kernels``; every other file runs in both.
MODE_OF_FILE = {"glassformer/nn/reference.py": "reference", "glassformer/nn/functional.py": "fast",
                "glassformer/nn/attention_blocks.py": "fast"}


def mode_of(path: str) -> str:
    """``"reference"``, ``"fast"`` or ``"both"``: the kernel modes in which a line of ``path`` runs."""
    return MODE_OF_FILE.get(path, "both")


def linked_lines(text: str, mode: str) -> set:
    """``{(path, line)}``: every line the guide links that must run in ``mode`` ("fast" or "reference")."""
    return {(m["file"], int(m["line"])) for _, _, links in rows(text) for m in links
            if mode_of(m["file"]) in (mode, "both")}


def _lines(path: str) -> list:
    return (REPO / path).read_text(encoding="utf-8").splitlines()


@lru_cache(maxsize=None)
def _docstring_lines(path: str) -> frozenset:
    """Line numbers inside the file's docstrings: prose that may repeat an equation but never runs it."""
    inside = set()
    for node in ast.walk(ast.parse((REPO / path).read_text(encoding="utf-8"))):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
                and isinstance(body[0].value.value, str)):
            inside.update(range(body[0].lineno, body[0].end_lineno + 1))
    return frozenset(inside)


def rows(text: str) -> list:
    """``[(symbol, names, [link match, ...])]`` for every numbered row of the guide's table."""
    out = []
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            names = [n.strip().strip("`") for n in m["names"].split(",")]
            out.append((m["symbol"].strip("` "), names, list(LINK.finditer(line))))
    return out


def check(text: str) -> list:
    """Problems, one line each: a missing file, a line that no longer begins with the quoted code,
    or a quoted line that names none of its row's code names."""
    problems = []
    for symbol, names, links in rows(text):
        if not links:
            problems.append(f"row {symbol}: no file:line link")
        for m in links:
            where = f"{m['file']}:{m['line']}"
            if m["file"] != m["file2"] or m["line"] != m["line2"]:
                problems.append(f"row {symbol}: link text {where} and target {m['file2']}#L{m['line2']} differ")
                continue
            if not (REPO / m["file"]).is_file():
                problems.append(f"row {symbol}: {m['file']} does not exist")
                continue
            lines, n = _lines(m["file"]), int(m["line"])
            if not 1 <= n <= len(lines) or not lines[n - 1].strip().startswith(m["code"]):
                problems.append(f"row {symbol}: {where} does not begin with `{m['code']}`")
            elif n in _docstring_lines(m["file"]):
                problems.append(f"row {symbol}: {where} is in a docstring, not the code that runs")
            elif not any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", lines[n - 1]) for name in names):
                problems.append(f"row {symbol}: {where} names none of {names}")
    return problems


def update(text: str) -> str:
    """The guide with every line number moved to where its quoted code is now."""
    def fix(m):
        lines = _lines(m["file"])
        prose = _docstring_lines(m["file"])
        hits = [i + 1 for i, line in enumerate(lines) if line.strip().startswith(m["code"]) and i + 1 not in prose]
        if not hits:
            return m.group(0)
        n = min(hits, key=lambda h: abs(h - int(m["line"])))
        return m.group(0).replace(f":{m['line']}`", f":{n}`").replace(f"#L{m['line2']})", f"#L{n})")
    return LINK.sub(fix, text)


def main(argv) -> int:
    text = GUIDE.read_text(encoding="utf-8")
    if "--update" in argv:
        text = update(text)
        GUIDE.write_text(text, encoding="utf-8")
    problems = check(text)
    print("\n".join(problems) if problems else f"{GUIDE.relative_to(REPO)}: every file:line holds its code")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
