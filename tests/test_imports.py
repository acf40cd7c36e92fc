"""The shape of the package's sources: no import cycles, no overlong modules.

The import graph is read from the sources with :mod:`ast`, without importing anything. Every
``import`` and ``from ... import`` statement in a module counts, at module level or inside a
function or class (a late import inside a function is still a dependency), except those under
``if TYPE_CHECKING:``, which never run. Relative imports are resolved against the importing
module's package; an import of a package counts as an import of its ``__init__``; and
``from pkg import name`` where ``pkg.name`` is a submodule counts as an import of that
submodule (only of it: the statement needs ``pkg`` itself only to reach the submodule).

Two graphs must be free of cycles: the modules' own, and the same with each subpackage
(``dsl``, ``interp``, ``emit``, ...) collapsed into one node, so that two subpackages cannot
import each other through different modules either. A failing test names one cycle per tangle
as ``a -> b -> c -> a``. A module longer than 600 lines must say why in its docstring.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "nttgen"
MAX_LINES = 600
LONG_REASON = "Longer than 600 lines because"


def module_files(src: Path = SRC, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of ``package`` under ``src``: its dotted name (a package under the name of
    its ``__init__``) mapped to its file."""
    modules: dict[str, Path] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    """Whether an ``if`` condition is ``TYPE_CHECKING`` (bare or as ``typing.TYPE_CHECKING``)."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node`` at any depth, leaving out the bodies of
    ``if TYPE_CHECKING:`` blocks (their ``else`` branches still count)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.orelse:
                yield from _import_nodes(ast.Module(body=[stmt], type_ignores=[]))
        else:
            yield from _import_nodes(child)


def _base_package(module: str, is_package: bool, level: int) -> str:
    """The package a relative import of ``level`` dots in ``module`` starts from."""
    parts = module.split(".")
    if not is_package:
        parts.pop()
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts)


def module_imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that ``module`` (its source at ``path``) imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        if node.level:
            base = _base_package(module, is_package, node.level)
            target = f"{base}.{node.module}" if node.module else base
        else:
            target = node.module or ""
        for alias in node.names:
            submodule = f"{target}.{alias.name}"
            found.add(submodule if submodule in modules else target)
    return {name for name in found if name in modules and name != module}


def import_graph(src: Path = SRC, package: str = PACKAGE) -> dict[str, set[str]]:
    """Each module of ``package`` mapped to the modules of the package it imports."""
    modules = module_files(src, package)
    return {name: module_imports(name, path, modules) for name, path in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One shortest cycle through each strongly connected component of ``graph`` that has a
    cycle, each as the list of its modules with the first repeated at the end; sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                connect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            components.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    cycles = []
    for component in components:
        if len(component) > 1:
            cycles.append(_shortest_cycle(graph, component))
    return sorted(cycles)


def _shortest_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """The shortest cycle inside ``component`` (breadth first from each member; the first
    member in sorted order on ties), with its first module repeated at the end."""
    best: list[str] | None = None
    for start in sorted(component):
        parents: dict[str, str] = {}
        frontier = [start]
        found = None
        while frontier and found is None:
            nxt = []
            for node in frontier:
                for succ in sorted(graph[node] & component):
                    if succ == start:
                        found = node
                        break
                    if succ not in parents:
                        parents[succ] = node
                        nxt.append(succ)
                if found is not None:
                    break
            frontier = nxt
        if found is None:
            continue
        path = [found]
        while path[-1] != start:
            path.append(parents[path[-1]])
        cycle = [*reversed(path), start]
        if best is None or len(cycle) < len(best):
            best = cycle
    assert best is not None
    return best


def test_cycle_finder_names_a_cycle() -> None:
    """The finder itself: a three-module circle is named in order, an acyclic graph has none."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_relative_and_submodule_imports_resolve(tmp_path: Path) -> None:
    """``from . import sub`` is an edge to the submodule, ``from .pkg import name`` (not a
    submodule) one to the package's ``__init__``, a late import inside a function counts and
    one under ``if TYPE_CHECKING:`` does not."""
    pkg = tmp_path / "p"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import b\n"
        "from .sub import thing\n"
        "if TYPE_CHECKING:\n"
        "    from . import c\n"
        "def f():\n"
        "    from .sub.deep import x\n"
    )
    (pkg / "b.py").write_text("")
    (pkg / "c.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from ..b import y\n")
    (pkg / "sub" / "deep.py").write_text("import p.c\n")
    graph = import_graph(tmp_path, "p")
    assert graph["p.a"] == {"p.b", "p.sub", "p.sub.deep"}
    assert graph["p.sub"] == {"p.b"}
    assert graph["p.sub.deep"] == {"p.c"}
    assert find_cycles(graph) == []
    # p.sub.deep -> p.c -> p.sub is a cycle of the subpackage p.sub with p.c, not of modules
    (pkg / "c.py").write_text("from .sub import thing\n")
    graph = import_graph(tmp_path, "p")
    assert find_cycles(graph) == []
    assert find_cycles(package_graph(graph, "p")) == [["p.c", "p.sub", "p.c"]]


def test_no_import_cycles() -> None:
    """No module of nttgen imports itself through a chain of imports."""
    cycles = find_cycles(import_graph())
    assert not cycles, f"{len(cycles)} import cycle(s), one per tangle:\n" + "\n".join(
        " -> ".join(cycle) for cycle in cycles
    )


def package_graph(graph: dict[str, set[str]], package: str = PACKAGE) -> dict[str, set[str]]:
    """``graph`` with each subpackage of ``package`` collapsed into one node (its name; a
    module directly in ``package`` stays a node of its own), imports inside one node left out."""
    depth = package.count(".") + 2

    def node(module: str) -> str:
        return ".".join(module.split(".")[:depth])

    out: dict[str, set[str]] = {}
    for module, imported in graph.items():
        out.setdefault(node(module), set()).update(
            node(m) for m in imported if node(m) != node(module)
        )
    return out


def test_no_package_cycles() -> None:
    """No two parts of nttgen (its subpackages, such as ``dsl`` and ``interp``, and its
    top-level modules) import each other through a chain, even where no single module does:
    each subpackage is one layer, wholly above or wholly below another."""
    cycles = find_cycles(package_graph(import_graph()))
    assert not cycles, f"{len(cycles)} cycle(s) between subpackages, one per tangle:\n" + "\n".join(
        " -> ".join(cycle) for cycle in cycles
    )


def test_no_overlong_modules() -> None:
    """No module is longer than 600 lines unless a sentence of its module docstring starts
    with "Longer than 600 lines because" and gives the reason."""
    offenders = []
    for name, path in module_files().items():
        lines = len(path.read_text().splitlines())
        if lines <= MAX_LINES:
            continue
        doc = " ".join((ast.get_docstring(ast.parse(path.read_text())) or "").split())
        if not re.search(rf"(^|[.!?:] ){LONG_REASON}", doc):
            offenders.append(f"{name} ({lines} lines)")
    assert not offenders, (
        f"over {MAX_LINES} lines without a '{LONG_REASON} ...' sentence in the module "
        "docstring: " + ", ".join(offenders)
    )
