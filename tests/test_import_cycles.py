"""No import cycle among the project's modules, hidden or not.

The graph is read from the source with :mod:`ast`: every ``import`` and ``from ...
import`` of a module, at its top and inside its functions alike (an import inside a
function that closes a cycle only hides it). An edge goes to the most specific module
named: ``from answerable.builders.drafting import stage`` is an edge to
``answerable.builders.drafting.stage``, ``from answerable.pipeline import StepOutput``
one to ``answerable.pipeline``. Each strongly connected component of more than one
module is a cycle; the test prints it with one import that closes it per edge.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = {  # folder -> the package it is installed as (pyproject's package-dir)
    "src/answerable": "answerable",
    "builders": "answerable.builders",
    "release": "answerable.release",
    "annotation": "answerable.annotation",
    "schemas": "answerable.schemas",
}

# The imports that close the cycles other work is breaking, by cycle: the test leaves
# them out of the graph, then finds no cycle. This list must shrink to empty: a cycle
# not closed by one of them fails the test, and so does an import listed here that the
# code no longer makes.
KNOWN_CYCLE_IMPORTS: dict[str, list[tuple[str, str]]] = {}


def modules() -> dict[str, Path]:
    """Every module of the roots by its dotted name (a package by its ``__init__``)."""
    found = {}
    for folder, package in ROOTS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """The project modules ``name`` imports anywhere in its file, with the line."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _known(alias.name, known, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(name, is_package, node.module, node.level)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in known else base
                yield from _known(target, known, node.lineno)


def _absolute(name: str, is_package: bool, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    parts = name.split(".") if is_package else name.split(".")[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


def _known(target: str, known: dict[str, Path], line: int) -> Iterator[tuple[str, int]]:
    """``target`` or the nearest package above it that is a project module."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    if target:
        yield target, line


def graph() -> dict[str, dict[str, int]]:
    """Each module's imports of other project modules, with the first line of each."""
    known = modules()
    edges: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        mine = edges.setdefault(name, {})
        for target, line in imported(name, path, known):
            if target != name:
                mine.setdefault(target, line)
    return edges


def cycles(edges: dict[str, dict[str, int]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, {})):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def describe(component: frozenset[str], edges: dict[str, dict[str, int]]) -> str:
    """The component's modules and each import between two of them, with its line."""
    known = modules()
    lines = [f"cycle of {len(component)} modules:"]
    for name in sorted(component):
        for target, line in sorted(edges[name].items()):
            if target in component:
                where = known[name].relative_to(REPO)
                lines.append(f"  {name} -> {target}  ({where}:{line})")
    return "\n".join(lines)


def test_the_graph_sees_function_level_and_relative_imports(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .a import f\n")
    (package / "a.py").write_text("def f():\n    from pkg import b\n    return b\n")
    (package / "b.py").write_text("import pkg.a\n")
    known = {"pkg": package / "__init__.py", "pkg.a": package / "a.py", "pkg.b": package / "b.py"}
    edges = {name: dict(imported(name, path, known)) for name, path in known.items()}
    assert set(edges["pkg"]) == {"pkg.a"} and set(edges["pkg.a"]) == {"pkg.b"}
    assert cycles(edges) == [frozenset({"pkg.a", "pkg.b"})]


def test_no_import_cycle_but_the_known_ones():
    edges = graph()
    listed = [pair for pairs in KNOWN_CYCLE_IMPORTS.values() for pair in pairs]
    gone = [pair for pair in listed if pair[1] not in edges[pair[0]]]
    assert not gone, f"no longer imported (remove them from KNOWN_CYCLE_IMPORTS): {gone}"
    for importer, imported_module in listed:
        del edges[importer][imported_module]
    found = [describe(c, edges) for c in cycles(edges)]
    assert not found, "\n\n".join(found)


KERNEL = "answerable.kernel"
BENEATH_THE_KERNEL = ("answerable.schemas",)  # the JSON Schemas and their validator


def test_the_kernel_imports_no_stage():
    """The kernel (ids, errors, records, the recipe, the item model ...) imports only
    itself: every stage, the pipeline and the commands build on it, never the reverse."""
    edges = graph()
    kernel = [name for name in edges if name == KERNEL or name.startswith(KERNEL + ".")]
    assert len(kernel) > 5  # the walk found the package
    outside = {
        f"{name} -> {target}"
        for name in kernel
        for target in edges[name]
        if not (target == KERNEL or target.startswith(KERNEL + "."))
        and target not in BENEATH_THE_KERNEL
    }
    assert not outside, sorted(outside)
