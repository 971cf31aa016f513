"""Where a value bound by ``for`` loops comes from: the collection the outermost loop walks.

``for group in fixture: for s in group[1]["settings"]: Setting(key=s[0])`` writes ``s[0]``,
which is ``fixture`` -> each element -> ``[1]["settings"]`` -> each element -> ``[0]``. The
project-wide registry asks this of a key written as given: when the walk starts at a parameter,
the callers decide what is stored (a fixture table passed in, like any argument); when it starts
at a literal table of the module, the stored keys are the table's strings, and they can be
read off it (``literal_strings``).
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple, Union

from keydrift.analysis import tree
from keydrift.patterns import lazy
from keydrift.records import record

# A step of the walk: an index or dict key, or one of the words below.
PathStep = Union[int, str]
EACH = "[*]"  # every element (of a list, tuple, set; the keys of a dict)
ITEMS, VALUES = "[*items]", "[*values]"  # every (key, value) pair, every value of a dict
_VIEWS = {"items": ITEMS, "keys": EACH, "values": VALUES}
_MAX_LOOPS = 8  # nested loops followed back; more is not a table walk


@record
class LoopSource:
    """Where a value bound by loops comes from: the collection the outermost loop walks, and
    the steps from its elements to the value."""

    root: str  # the name the outermost loop walks
    path: Tuple[PathStep, ...]  # from that collection to the value


def walked_from(text: str, scope: ast.AST) -> Optional[LoopSource]:
    """The collection a value written as ``text`` (an origin: ``s[0]``) is an element of, through
    the loops of ``scope`` that bind its names; None when no loop binds it or a step is not a
    plain index (a call, an attribute: a record's field, not a table's)."""
    return ScopeLoops(scope).walked_from(text)


class ScopeLoops:
    """The loops and assignments of one scope, found in one walk of it, however many origins are
    asked about (the registry asks for every key written as given in a function, or at a
    module's top level, where the scope is the whole module)."""

    def __init__(self, scope: ast.AST) -> None:
        self.scope = scope
        self._walked = False  # the scope is walked when the first origin is asked about
        self._loops: List[Union[ast.For, ast.AsyncFor, ast.comprehension]] = []
        self._assigned: List[ast.expr] = []  # the targets of assignments

    def walked_from(self, text: str) -> Optional[LoopSource]:
        """``walked_from`` in this scope."""
        parsed = _parse(text)
        if parsed is None:
            return None
        name, path = parsed
        followed = 0
        while True:
            binding = self.only_loop_binding(name)
            if binding is None:
                break
            iterable, within = binding
            parsed = _walk_of(iterable)
            if parsed is None or followed >= _MAX_LOOPS:
                return None
            name, path = parsed[0], parsed[1] + within + path
            followed += 1
        return LoopSource(name, path) if followed else None

    def only_loop_binding(self, name: str) -> Optional[Tuple[ast.expr, Tuple[PathStep, ...]]]:
        """The iterable of the one loop that binds ``name`` in the scope, with the element step
        and the place of the name in its target (``for k, v in d.items()``: v is ``(*items,
        1)``); None when no loop or more than one binding does."""
        if not self._walked:
            self._walk()
        if any(_place(target, name) is not None for target in self._assigned):
            return None
        found: List[Tuple[ast.expr, Tuple[PathStep, ...]]] = []
        for loop in self._loops:
            place = _place(loop.target, name)
            if place is not None:
                each: Tuple[PathStep, ...] = () if _is_view(loop.iter) else (EACH,)
                found.append((loop.iter, each + place))
        return found[0] if len(found) == 1 else None

    def _walk(self) -> None:
        self._walked = True
        for node in tree.walk(self.scope):
            if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                self._loops.append(node)
            elif isinstance(node, ast.Assign):
                self._assigned.extend(node.targets)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                self._assigned.append(node.target)


_ORIGIN = lazy(r"^([A-Za-z_]\w*)((?:\[(?:\*|-?\d+|\"[^\"\\]*\"|'[^'\\]*')\])*)$")
_INDEX = lazy(r"\[(\*|-?\d+|\"[^\"\\]*\"|'[^'\\]*')\]")


def _parse(text: str) -> Optional[Tuple[str, Tuple[PathStep, ...]]]:
    """An origin's text as a name and plain indexes (``group[1]["settings"][*]``); None for
    anything else (no parse: origins are read for every key of the project)."""
    match = _ORIGIN.match(text)
    if match is None:
        return None
    path: List[PathStep] = []
    for index in _INDEX.findall(match.group(2)):
        path.append(EACH if index == "*" else int(index) if index[0] not in "\"'" else index[1:-1])
    return match.group(1), tuple(path)


def _walk_of(node: ast.expr) -> Optional[Tuple[str, Tuple[PathStep, ...]]]:
    """``group[1]["settings"]`` as ("group", (1, "settings")); ``d.items()`` as ("d", (ITEMS,)):
    a view's step reaches its elements already."""
    path: List[PathStep] = []
    view = ""
    if _is_view(node):
        view, node = _VIEWS[node.func.attr], node.func.value  # type: ignore[attr-defined]
    while isinstance(node, ast.Subscript):
        index = node.slice
        if isinstance(index, ast.Constant) and index.value is Ellipsis:
            path.append(EACH)
        elif isinstance(index, ast.Constant) and isinstance(index.value, (int, str)) and not isinstance(index.value, bool):
            path.append(index.value)
        else:
            return None
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return node.id, tuple(reversed(path)) + ((view,) if view else ())


def _is_view(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VIEWS \
        and not node.args and not node.keywords


def _place(target: ast.expr, name: str) -> Optional[Tuple[PathStep, ...]]:
    if isinstance(target, ast.Name):
        return () if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)):
        for index, element in enumerate(target.elts):
            inner = _place(element, name)
            if inner is not None:
                return (index,) + inner
    return None


def module_tables(module: ast.Module) -> Dict[str, ast.expr]:
    """Module-level names bound once to a literal list, tuple, set or dict."""
    bound: Dict[str, List[ast.expr]] = {}
    for statement in module.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(statement.value)
    return {name: values[0] for name, values in bound.items()
            if len(values) == 1 and isinstance(values[0], (ast.List, ast.Tuple, ast.Set, ast.Dict))}


def literal_strings(table: ast.expr, path: Sequence[PathStep]) -> Optional[Tuple[str, ...]]:
    """The strings ``path`` reaches in a literal table; None unless every value it reaches is one."""
    nodes: List[ast.expr] = [table]
    for step in path:
        following: List[ast.expr] = []
        for node in nodes:
            reached = _step(node, step)
            if reached is None:
                return None
            following.extend(reached)
        nodes = following
    if not nodes or not all(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in nodes):
        return None
    return tuple(dict.fromkeys(n.value for n in nodes))  # type: ignore[attr-defined]


def _step(node: ast.expr, step: PathStep) -> Optional[List[ast.expr]]:
    if isinstance(node, ast.Dict):
        keys = node.keys
        if None in keys:  # ``{**other}``: not all of it is written here
            return None
        if step == EACH:
            return list(keys)  # type: ignore[arg-type]
        if step == VALUES:
            return list(node.values)
        if step == ITEMS:
            return [ast.Tuple(elts=[k, v], ctx=ast.Load()) for k, v in zip(keys, node.values)]  # type: ignore[list-item]
        for key, value in zip(keys, node.values):
            if isinstance(key, ast.Constant) and key.value == step:
                return [value]
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        if step == EACH:
            return list(node.elts)
        if isinstance(step, int) and not isinstance(node, ast.Set) and -len(node.elts) <= step < len(node.elts):
            return [node.elts[step]]
    return None
