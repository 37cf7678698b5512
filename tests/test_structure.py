"""The import graph of lichhook's own modules: no module imports another that imports it
back, directly or through others, and none imports the package's face
(docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

from testkit.constants import ROOT

SOURCES = {"lichhook": ROOT / "lichhook"}


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The lichhook modules ``name`` imports anywhere in it (in functions and under
    TYPE_CHECKING too), as their full names."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in out if m in known and m != name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def rings(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_graph_is_read():
    edges = graph()
    assert "lichhook.contracts" in edges["lichhook.adapter"]
    assert "lichhook.adapters._fields" in edges["lichhook.adapters.claude"]  # a relative import
    assert "lichhook.contracts.session_state" not in edges["lichhook.report"]  # by name, through contracts


def test_no_module_imports_another_that_imports_it_back():
    assert rings(graph()) == []


def test_the_ring_finder_finds_a_ring():
    assert rings({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_the_package_face():
    # lichhook/__init__.py re-exports the plugin API from modules below it; a module that
    # imported it would stand below it and be imported back. The entry point stands above
    # it: it runs first, and gives a hooks run's package the complete archive's modules.
    assert [name for name, uses in graph().items() if "lichhook" in uses] == ["lichhook.__main__"]
