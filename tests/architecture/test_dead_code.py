"""No unused code: vulture finds nothing in glassformer/ outside the commented whitelist.

vulture counts a name listed in ``__all__`` as used; here it does not, so that a function the
package exports but never calls (called only from tests, or from nothing) is reported too.  What
only a framework or a user calls -- click callbacks, the training hooks the trainer calls by name,
Jupyter's ``_repr_html_``, the public API documented for users -- is named in
``tools/vulture_whitelist.py``, each group with the reason.  A package ``__init__`` re-exports
names, so its imports are not reported as unused.
"""

from __future__ import annotations

from pathlib import Path

import vulture

REPO = Path(__file__).resolve().parents[2]
WHITELIST = REPO / "tools" / "vulture_whitelist.py"
#: 60 %: vulture's confidence for an unused function, class, method, attribute or variable.
MIN_CONFIDENCE = 60


class _AllIsNoUse(vulture.Vulture):
    """vulture, except that ``__all__ = [...]`` does not count as a use of the names it lists."""

    def visit_Assign(self, node):
        pass


def _unused(paths) -> list[str]:
    scan = _AllIsNoUse(verbose=False)
    scan.scavenge([str(p) for p in paths])
    return [item.get_report(add_size=False) for item in scan.get_unused_code(min_confidence=MIN_CONFIDENCE)
            if not (item.typ == "import" and Path(item.filename).name == "__init__.py")]


def test_vulture_finds_no_unused_code_outside_the_whitelist():
    assert _unused([REPO / "glassformer", WHITELIST]) == []


def test_the_check_reports_an_exported_function_nothing_calls(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .mod import used, exported\n__all__ = ['used', 'exported']\n")
    (package / "mod.py").write_text("def used():\n    return 1\n\n\ndef exported():\n    return used()\n\n\n"
                                    "def stale():\n    return 2\n\n\n__all__ = ['exported', 'stale']\n")
    found = _unused([package])
    assert len(found) == 2 and all("unused function" in line for line in found)
    assert {"'exported'", "'stale'"} == {line.split(" unused function ")[1].split(" ")[0] for line in found}
