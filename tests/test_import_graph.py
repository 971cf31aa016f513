"""The package's import graph, read statically (``ast``, every ``import`` wherever it stands: at
module level, in a function, under ``TYPE_CHECKING``): no cycle anywhere, the core never imports
a front end, the framework tables import nothing, and every database layer has one module, one
registry entry and its table."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

import pytest

import keydrift

PACKAGE = Path(keydrift.__file__).resolve().parent
FRONT_ENDS = ("cli", "flake8_plugin", "lsp", "output", "fixes", "audit")
CORE = ("keydrift.analysis", "keydrift.frameworks")


def _modules() -> Dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("keydrift",) + path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _imported(name: str, path: Path, node: ast.AST) -> List[str]:
    """The names an import statement loads: ``from a.b import c`` loads ``a.b`` and, when it is
    a module, ``a.b.c``; relative imports are resolved against the importing module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        target = f"{package}.{node.module}" if node.module else package
    else:
        target = node.module or ""
    return [target] + [f"{target}.{alias.name}" for alias in node.names]


def _graph() -> Dict[str, Set[str]]:
    graph: Dict[str, Set[str]] = {}
    for name, path in MODULES.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _imported(name, path, node):
                while target and target not in MODULES:  # a name in a module: the module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


GRAPH = _graph()


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_reads_the_package():
    assert "keydrift.analysis.keyflow" in GRAPH
    assert "keydrift.analysis.chains" in GRAPH["keydrift.analysis.layers.registry"]
    assert "keydrift.analysis.layers.registry" in GRAPH["keydrift.analysis.accesses"]


def test_the_import_graph_has_no_cycle():
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith(CORE)))
def test_the_core_imports_no_front_end(module):
    front = {f"keydrift.{name}" for name in FRONT_ENDS}
    assert sorted(t for t in GRAPH[module] if t in front or t.startswith(tuple(f + "." for f in front))) == []


def test_the_framework_tables_import_nothing_of_keydrift():
    tables = [m for m in GRAPH if m.startswith("keydrift.frameworks.")]
    assert tables
    assert {m: sorted(GRAPH[m]) for m in tables if GRAPH[m] - {"keydrift.frameworks"}} == {}


def test_the_chain_machinery_imports_no_layer():
    assert sorted(t for t in GRAPH["keydrift.analysis.chains"] if t.startswith("keydrift.analysis.layers")) == []


def test_every_layer_is_registered_once_and_has_its_table():
    from keydrift.analysis.layers.registry import LAYERS

    names = [layer.name for layer in LAYERS]
    assert len(names) == len(set(names))
    modules = {m.rpartition(".")[2] for m in GRAPH if m.startswith("keydrift.analysis.layers.")}
    assert modules - {"registry", "querysets"} == set(names)
    for name in names:
        assert f"keydrift.frameworks.{name}" in MODULES, name
        assert f"keydrift.frameworks.{name}" in GRAPH[f"keydrift.analysis.layers.{name}"], name
        layer = next(layer for layer in LAYERS if layer.name == name)
        assert layer.call or layer.chain or layer.last, name


def test_one_layer_imports_no_other():
    """A layer reaches the others' knowledge only through the shared queryset reader."""
    layers = {f"keydrift.analysis.layers.{layer}" for layer in _layer_names()}
    for layer in layers:
        assert GRAPH[layer] & layers == set(), layer


def _layer_names() -> List[str]:
    from keydrift.analysis.layers.registry import LAYERS

    return [layer.name for layer in LAYERS]
