"""bench/'s scripts import each other in one direction only: run.py uses tenant_play.py and
fleet.py, and what both run against (the installed collections) lives in a module of its own, so
a script never imports the one that imports it (tenant_play.py once imported run.py back)."""
from __future__ import annotations

import ast

from conftest import ROOT


def _imports_among(folder) -> dict[str, set[str]]:
    """Each module of the folder and the folder's modules it imports, anywhere in its code."""
    modules = {path.stem: path for path in folder.glob("*.py")}
    graph = {}
    for name, path in modules.items():
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names if alias.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.module in modules:
                imported.add(node.module)
        graph[name] = imported
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as the list of its modules, or []."""
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str]:
        if name in path:
            return path[path.index(name):] + [name]
        if name in done:
            return []
        for imported in sorted(graph[name]):
            found = visit(imported, path + [name])
            if found:
                return found
        done.add(name)
        return []

    for name in sorted(graph):
        found = visit(name, [])
        if found:
            return found
    return []


def test_bench_scripts_import_without_a_cycle():
    graph = _imports_among(ROOT / "bench")
    assert {"run", "tenant_play"} <= set(graph)
    assert _cycle(graph) == [], " -> ".join(_cycle(graph))
