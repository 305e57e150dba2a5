"""The import graph shows the architecture: imports sit at module level, and they form no circle.

The graph is read from the source (``ast``), counting every import outside a function body
(module and class level, inside ``if``/``try`` too).  ``from package import name`` counts as an
import of the package *and*, when ``name`` is a submodule, of that submodule: a module that reaches
its siblings through its own package's ``__init__`` (``from . import sibling``) closes a circle
with the ``__init__`` that imports it, and is reported as one.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "glassformer"

#: Third-party packages that are optional (extras) or heavy to import, and so imported where used.
OPTIONAL = {"torch", "dask", "distributed", "selenium", "IPython", "openpyxl", "joblib",
            "skops"}   # skops.io imports torch when it is installed
#: Modules of the package that import ``torch`` at their top, reached only when a conversion runs.
IMPORT_TORCH = {"glassformer.interop.export", "glassformer.interop.restore"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(tree: ast.AST, in_function: bool = False):
    """``(node, in_function)`` for every import statement of ``tree``."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function
        inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield from _imports(child, inner)


def _targets(module: str, node: ast.AST) -> list[str]:
    """The absolute names an import statement of ``module`` may load."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [target] + [f"{target}.{alias.name}" for alias in node.names]


def _graph(*, in_functions: bool = False) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for node, in_function in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if in_function == in_functions:
                graph[module] |= {t for t in _targets(module, node) if t in MODULES and t != module}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node."""
    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reachable = {m: reach(m) for m in graph}
    groups = {frozenset(n for n in reachable[m] if m in reachable[n]) for m in graph if m in reachable[m]}
    return sorted(sorted(g) for g in groups)


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_the_module_level_import_graph_has_no_circle():
    graph = _graph()
    assert sum(map(len, graph.values())) > 300          # the reader sees the real graph
    assert _circles(graph) == []


def test_the_package_level_import_graph_has_no_circle():
    packages: dict[str, set[str]] = {}
    for module, targets in _graph().items():
        packages.setdefault(_package(module), set()).update(
            _package(t) for t in targets if _package(t) != _package(module))
    for targets in list(packages.values()):
        for target in targets:
            packages.setdefault(target, set())
    assert packages["cli"] >= {"wells", "models"}
    assert _circles(packages) == []


def test_the_graph_reader_finds_a_circle_through_a_package_init():
    graph = {"p": {"p.a"}, "p.a": {"p", "p.b"}, "p.b": set()}
    assert _circles(graph) == [["p", "p.a"]]


def test_imports_inside_functions_are_only_optional_dependencies_and_say_so():
    hidden = []
    for module, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for node, in_function in _imports(ast.parse("\n".join(lines))):
            if not in_function:
                continue
            names = _targets(module, node)
            optional = names[0].split(".")[0] in OPTIONAL or names[0] in IMPORT_TORCH or bool(
                IMPORT_TORCH & set(names))
            commented = any("#" in line for line in lines[max(node.lineno - 2, 0):node.end_lineno])
            if not (optional and commented):
                hidden.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
    assert hidden == []
