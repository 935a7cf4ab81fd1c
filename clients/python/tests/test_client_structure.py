"""The Python client's modules do not import each other in a circle (issue 29): the graph of
`from .x import ...` / `from . import x` between the modules of `eslm` (imports inside a function
count; those under `if TYPE_CHECKING:` do not, as they never run) must be acyclic. The checker is
tried on hand-made graphs too, so it demonstrably fails on a circle. No node needed."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "eslm"


def imports_of(source: str, modules: set[str]) -> set[str]:
    """The sibling modules `source` imports at run time."""
    tree = ast.parse(source)
    type_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node.test)
                 for stmt in node.body for n in ast.walk(stmt)}
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level != 1 or id(node) in type_only:
            continue
        names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
        found.update(n for n in names if n in modules)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_graph(package: Path) -> dict[str, set[str]]:
    files = {f.stem: f for f in package.glob("*.py")}
    return {name: imports_of(f.read_text(), set(files)) - {name} for name, f in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle as the modules along it, the first repeated at the end; None when acyclic."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            cycle = visit(nxt, path + [node])
            if cycle:
                return cycle
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = visit(start, [])
        if cycle:
            return cycle
    return None


def test_the_client_modules_import_each_other_without_a_circle():
    graph = import_graph(PACKAGE)
    assert {"held", "options"} <= graph["client"], graph  # the scan sees the imports
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_checker_finds_a_circle_and_skips_type_only_imports():
    modules = {"client", "session", "options"}
    source = ("from . import options\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
              "    from .client import Locks\ndef f():\n    from .session import Session\n")
    assert imports_of(source, modules) == {"options", "session"}
    graph = {"client": {"session"}, "session": {"options", "client"}, "options": set()}
    assert find_cycle(graph) == ["client", "session", "client"]
    assert find_cycle({"client": {"session"}, "session": {"options"}, "options": set()}) is None
