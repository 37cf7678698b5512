"""The import graph of lichhook's own modules: no module imports another that imports it
back, directly or through others, none imports the package's face, and none imports a
room that docs/architecture.md's rooms table lists above its own (nor, inside
lichhook/install/, a wing its wings table lists above its own)."""

from __future__ import annotations

import ast
from pathlib import Path

from testkit.constants import ROOT

SOURCES = {"lichhook": ROOT / "lichhook"}
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# Imports that still run up the rooms table, each to be removed by moving code down.
KNOWN_UPWARD = {
    "lichhook.install.copies.stable -> lichhook.__main__",
    "lichhook.waits.hooks.text -> lichhook.install.quoting",
}


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


def rooms(doc: Path = ARCHITECTURE, package: str = "lichhook", heading: str = "## The rooms") -> dict[str, list[int]]:
    """Each name the table under ``heading`` lists -> the rows (0 at the top) it stands
    in: a backticked ``x.py`` in the modules column is the module ``package.x``
    (``__init__.py`` the package itself), a backticked ``x/`` the package ``package.x``
    and everything in it."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(heading))
    table = []
    for line in lines[first + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not line.startswith("|---"):
            table.append(line.split("|")[2])
    found: dict[str, list[int]] = {}
    for row, cell in enumerate(table[1:]):  # the first is the header
        for name in cell.split("`")[1::2]:
            path = name.removesuffix("/").removesuffix(".py").removesuffix("__init__").rstrip("/")
            module = ".".join([package, *path.split("/")]) if path else package
            found.setdefault(module, []).append(row)
    return found


def room_of(module: str, table: dict[str, list[int]]) -> int | None:
    """The row of ``module``: its own, or that of the innermost package listed that holds it."""
    name = module
    while name:
        if name in table and (name == module or name != "lichhook"):
            return table[name][0]
        name = name.rpartition(".")[0]
    return None


def upward(edges: dict[str, set[str]], table: dict[str, list[int]]) -> list[str]:
    """'a -> b' for every import of b by a where b's room is listed above a's."""
    return sorted(f"{a} -> {b}" for a, uses in edges.items() for b in uses
                  if room_of(b, table) < room_of(a, table))  # type: ignore[operator]


def test_every_module_is_in_one_room():
    table = rooms()
    assert [name for name, rows in table.items() if len(rows) > 1] == []
    assert [name for name in table if name not in modules()] == []  # no row names a module gone
    assert [name for name in modules() if room_of(name, table) is None] == []


def test_no_room_imports_a_room_above_it():
    assert upward(graph(), rooms()) == sorted(KNOWN_UPWARD)


def test_the_room_check_finds_an_upward_import():
    table = {"lichhook.a": [1], "lichhook.b": [0], "lichhook.c": [2], "lichhook.d": [0]}
    edges = {"lichhook.a": {"lichhook.b", "lichhook.c"}, "lichhook.b": set(), "lichhook.c": set(),
             "lichhook.d.x": {"lichhook.a"}}
    assert upward(edges, table) == ["lichhook.a -> lichhook.b"]


INSTALL_WINGS = "## The wings of install/"


def wings() -> dict[str, list[int]]:
    """The wings table of docs/architecture.md, read as the rooms table is, for the
    modules of ``lichhook.install``."""
    return rooms(ARCHITECTURE, "lichhook.install", INSTALL_WINGS)


def install_graph() -> dict[str, set[str]]:
    """The import graph inside ``lichhook/install/``: its modules and what of it they import."""
    inside = {name: uses for name, uses in graph().items() if name.startswith("lichhook.install.")}
    return {name: {m for m in uses if m.startswith("lichhook.install.")} for name, uses in inside.items()}


def test_every_install_module_is_in_one_wing():
    table = wings()
    assert [name for name, rows in table.items() if len(rows) > 1] == []
    assert [name for name in table if name not in modules()] == []  # no row names a module gone
    assert [name for name in install_graph() if room_of(name, table) is None] == []
    assert len({row for rows in table.values() for row in rows}) <= 12  # at most a dozen at install/'s level


def test_no_wing_of_install_imports_a_wing_above_it():
    assert upward(install_graph(), wings()) == []
