"""Which functions deserve the expensive work: one walk over each function's CPython tree picks
them, and the analysis reads the others as ``pass`` (the key-flow walk costs several times
CPython's parse, and most functions never touch a key).

A function is kept when it names database, normalization or transformation vocabulary
(``vocabulary.KEY_*``, or a configured name), when it returns or yields something made from its
parameters (a caller may pass a key through it), when it calls a name imported from the project
(a wrapper around a project helper), or when it calls kept code or kept code calls it (by name:
a helper passes keys through, a caller pairs two helpers' accesses). Module-level code and class
bodies are always kept: constants, models and constraints live there. A function left out keeps
its signature (callers still map their arguments); its body becomes ``pass`` on the body's first
line (``reduced_tree``; ``reduced_source`` gives the same as text, with empty lines after it), so
every kept line keeps its number and column.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

from keydrift.analysis.helpernames import helper_operation, is_runner_name
from keydrift.analysis.tree import child_fields, walk
from keydrift.frameworks.schema import DEFAULT_KEYWORDS
from keydrift.timing import count
from keydrift.vocabulary import (
    KEY_ATTRIBUTES, KEY_NAME_PARTS, KEY_NAMES, STORE_CLIENTS, STORING_METHODS,
)

_RECEIVERS = frozenset({"self", "cls"})
_STORE_METHODS = frozenset({"get", "set", "hget", "hset", "setex", "setnx", "exists", "delete", "incr", "incrby"})


@dataclass
class _Unit:
    name: str
    node: ast.AST  # a FunctionDef or AsyncFunctionDef
    first: int  # 1-based line of its first decorator or of ``def``
    last: int
    called: Set[str] = field(default_factory=set)  # names it calls: f(), self.f(), obj.f()
    kept: bool = False


@dataclass
class _Names:
    """What one walk over a function's tree collects."""

    names: Set[str] = field(default_factory=set)
    attributes: Set[str] = field(default_factory=set)
    called: Set[str] = field(default_factory=set)
    returns_parameter: bool = False
    table_helper: bool = False  # calls an in-house table helper with a dict of columns
    self_attributes: bool = False  # assigns self.x


def reduced_source(text: str, tree: ast.Module, module_name: str = "", extra_words: Sequence[str] = (),
                   is_project_module: Optional[Callable[[str], bool]] = None) -> str:
    """``text`` with the functions that cannot matter blanked out; ``text`` itself when none.
    ``is_project_module`` says whether an absolute import names a module of the project (the
    project index finds its file); without it, modules of this module's top package are."""
    lines = physical_lines(text)
    left_out = _left_out(text, tree, lines, module_name, extra_words, is_project_module)
    if not left_out:
        return text
    for unit, start in left_out:
        _blank(unit, start, lines)
    return "".join(lines)


def reduced_tree(text: str, tree: ast.Module, module_name: str = "", extra_words: Sequence[str] = (),
                 is_project_module: Optional[Callable[[str], bool]] = None) -> Tuple[ast.Module, int]:
    """The tree the analysis reads, and how many characters of code are left in it: the functions
    ``reduced_source`` blanks keep their signature and get a body of one ``pass`` on the body's
    first line (what the analysis read when it parsed the reduced text). ``tree`` itself is not
    changed (flake8 shares it with other plugins): the functions left out and the statements
    around them are copies, every other node is shared; ``tree`` itself when nothing is left out."""
    lines = physical_lines(text)
    left_out = _left_out(text, tree, lines, module_name, extra_words, is_project_module)
    if not left_out:
        return tree, len(text)
    characters = len(text)
    starts: Dict[int, int] = {}
    for unit, start in left_out:
        starts[id(unit.node)] = start
        characters -= sum(len(lines[index]) for index in range(start - 1, unit.last))
        first = lines[start - 1]
        characters += len(first) - len(first.lstrip(" \t")) + len("pass") + len(_ending(first))
        characters += sum(len(_ending(lines[index])) for index in range(start, unit.last))
    return _rebuilt(tree, starts, lines), characters  # type: ignore[return-value]


def _left_out(text: str, tree: ast.Module, lines: List[str], module_name: str, extra_words: Sequence[str],
              is_project_module: Optional[Callable[[str], bool]]) -> List[Tuple[_Unit, int]]:
    """The functions that cannot matter and can be blanked by whole lines, each with the first
    line of its body."""
    units = list(_units(tree.body))
    if not units:
        return []
    top = module_name.split(".", 1)[0] if module_name else ""
    project_names = _project_imports(tree, is_project_module or (lambda name: bool(top) and name.split(".", 1)[0] == top))
    extra = frozenset(extra_words)
    for unit in units:
        found = _collect(unit.node)
        unit.called = found.called
        unit.kept = _mentions_keys(unit.name, found, extra) or found.returns_parameter or bool(
            found.names & project_names)
    _keep_called(units, tree)
    left_out = []
    blanked = 0
    for unit in units:
        start = 0 if unit.kept else _body_start(unit, lines)
        if start:
            left_out.append((unit, start))
            blanked += unit.last - start + 1
    if blanked:
        count("lines gated out", blanked)
    return left_out


def _rebuilt(node: ast.AST, starts: Dict[int, int], lines: List[str]) -> ast.AST:
    """``node`` with the bodies of the functions in ``starts`` (id -> first body line) replaced by
    ``pass``; copies only where something changed below. Follows ``_units``' way down."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        start = starts.get(id(node))
        if start is None:
            return node
        first = lines[start - 1]
        column = len(first) - len(first.lstrip(" \t"))
        blank = copy.copy(node)
        blank.body = [ast.Pass(lineno=start, col_offset=column, end_lineno=start, end_col_offset=column + 4)]
        return blank
    changed: Dict[str, Any] = {}
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            new_block = [_rebuilt(statement, starts, lines) for statement in block]
            if any(new is not old for new, old in zip(new_block, block)):
                changed[name] = new_block
    for name in ("handlers", "cases"):
        parts = getattr(node, name, None)
        if parts:
            new_parts = [_rebuilt(part, starts, lines) for part in parts]
            if any(new is not old for new, old in zip(new_parts, parts)):
                changed[name] = new_parts
    if not changed:
        return node
    rebuilt = copy.copy(node)
    for name, value in changed.items():
        setattr(rebuilt, name, value)
    return rebuilt


def physical_lines(text: str) -> List[str]:
    """Lines as CPython numbers them (``\\r\\n``, ``\\r`` or ``\\n``; not form feeds), with their ends."""
    # one substring search per odd break (a character search in C), not a set lookup per character
    if any(odd in text for odd in _ODD_BREAKS):
        return _split_python_lines(text)
    return text.splitlines(keepends=True)


_ODD_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _split_python_lines(text: str) -> List[str]:
    lines: List[str] = []
    start = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\n" or char == "\r":
            if char == "\r" and text[index + 1:index + 2] == "\n":
                index += 1
            lines.append(text[start:index + 1])
            start = index + 1
        index += 1
    if start < len(text):
        lines.append(text[start:])
    return lines


def _units(body: Sequence[ast.stmt]) -> Iterator[_Unit]:
    """Functions defined at module or class level (nested functions go with their parent)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            yield _Unit(node.name, node, first, node.end_lineno or node.lineno)
        elif isinstance(node, ast.ClassDef):
            yield from _units(node.body)
        else:
            for block in _blocks(node):
                yield from _units(block)


def _blocks(node: ast.stmt) -> Iterator[List[ast.stmt]]:
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(node, "handlers", ()) or ():
        yield handler.body
    for case in getattr(node, "cases", ()) or ():
        yield case.body


def _collect(function: ast.AST) -> _Names:
    found = _Names()
    arguments = function.args  # type: ignore[attr-defined]
    params = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    params.update(extra.arg for extra in (arguments.vararg, arguments.kwarg) if extra is not None)
    params -= _RECEIVERS
    names, attributes, called = found.names, found.attributes, found.called
    name_kind, attribute_kind, keyword_kind, call_kind = ast.Name, ast.Attribute, ast.keyword, ast.Call
    store, returning = ast.Store, (ast.Return, ast.Yield, ast.YieldFrom)
    # every node of every function: the gate's cost is this loop (kinds compared by identity,
    # list fields pushed whole by ``_every_node``)
    for node in _every_node(function):
        kind = type(node)
        if kind is name_kind:
            names.add(node.id)  # type: ignore[attr-defined]
        elif kind is attribute_kind:
            attributes.add(node.attr)  # type: ignore[attr-defined]
            if type(node.ctx) is store and type(node.value) is name_kind \
                    and node.value.id == "self":  # type: ignore[attr-defined]
                found.self_attributes = True
        elif kind is call_kind:
            func = node.func  # type: ignore[attr-defined]
            callee = func.id if type(func) is name_kind else func.attr if type(func) is attribute_kind else ""
            if callee:
                called.add(callee)
                _note_helper_call(callee, node, found)  # type: ignore[arg-type]
        elif kind is keyword_kind:
            if node.arg:  # type: ignore[attr-defined]
                names.add(node.arg)  # type: ignore[attr-defined]
        elif kind in returning and params and not found.returns_parameter:
            value = node.value  # type: ignore[attr-defined]
            if value is not None and any(isinstance(n, ast.Name) and n.id in params for n in walk(value)):
                found.returns_parameter = True
    return found


# The gate's own memo of ``tree.child_fields``, with no fields for what is not a node.
_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _note_helper_call(callee: str, call: ast.Call, found: _Names) -> None:
    """A table helper given a dict of columns is key vocabulary; a function handed to a runner
    (``run_in_transaction(fn, x)``) is called by it."""
    if is_runner_name(callee):
        for arg in call.args:
            target = arg.attr if isinstance(arg, ast.Attribute) else arg.id if isinstance(arg, ast.Name) else ""
            if target:
                found.called.add(target)
    elif not found.table_helper and _has_dict_argument(call) and helper_operation(callee):
        found.table_helper = True


def _has_dict_argument(call: ast.Call) -> bool:
    for argument in call.args:
        if type(argument) is ast.Dict:
            return True
    for keyword in call.keywords:
        if type(keyword.value) is ast.Dict:
            return True
    return False


def _mentions_keys(name: str, found: _Names, extra: FrozenSet[str]) -> bool:
    if name in STORING_METHODS or name.startswith("clean") or found.table_helper:
        return True
    if name == "__init__" and found.self_attributes:
        return True  # what it assigns to self.x tells the class of the receivers self.x.m()
    if found.attributes & KEY_ATTRIBUTES or found.names & KEY_NAMES:
        return True
    if found.names & STORE_CLIENTS and found.attributes & _STORE_METHODS:
        return True
    if extra and (found.names & extra or found.attributes & extra):
        return True
    # each part looked for once in all the words (joined by a character no part contains), not
    # once per word
    words = "\n".join((*found.names, *found.attributes, name)).lower()
    return any(part in words for part in KEY_NAME_PARTS)


def _project_imports(tree: ast.Module, is_project_module: Callable[[str], bool]) -> Set[str]:
    """Local names bound at module level by relative imports or imports of project modules."""
    names: Set[str] = set()
    for node in _module_level(tree.body):
        if isinstance(node, ast.ImportFrom):
            if node.level or (node.module and is_project_module(node.module)):
                names.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if is_project_module(alias.name):
                    names.add(alias.asname or alias.name.split(".", 1)[0])
    return names


def _module_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements outside functions: the module's, its classes' and their compound statements'."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        yield node
        blocks = [node.body] if isinstance(node, ast.ClassDef) else _blocks(node)
        for block in blocks:
            yield from _module_level(block)


def _keep_called(units: List[_Unit], tree: ast.Module) -> None:
    """Keep what kept code calls by name and what calls kept code, until nothing changes (code
    outside functions counts as kept)."""
    called: Set[str] = set()
    for statement in _module_level(tree.body):
        if not isinstance(statement, ast.ClassDef) and not any(True for _ in _blocks(statement)):
            called.update(_called_names(statement, defaults=True))
        elif not isinstance(statement, ast.ClassDef):
            for name in ("test", "iter", "items", "subject"):
                part = getattr(statement, name, None)
                if isinstance(part, ast.AST):
                    called.update(_called_names(part))
        else:
            for part in (*statement.decorator_list, *statement.bases, *statement.keywords):
                called.update(_called_names(part))
    # both ways: a kept function's callees may pass keys through, and its callers may pair the
    # accesses of two helpers
    kept_names: Set[str] = set()
    for unit in units:
        unit.kept = unit.kept or unit.name in called  # module-level code is kept code
    fresh = [u for u in units if u.kept]
    while fresh:
        for unit in fresh:
            called.update(unit.called)
            kept_names.add(unit.name)
        fresh = [u for u in units if not u.kept and (u.name in called or not u.called.isdisjoint(kept_names))]
        for unit in fresh:
            unit.kept = True


def _called_names(node: ast.AST, defaults: bool = False) -> Iterator[str]:
    """The names ``node`` calls (``f()``, ``obj.f()``); with ``defaults``, the functions a
    declaration names as its default too (``TextField(default=_new_username)``): the schema
    reader looks into them (a generated identifier), though nothing calls them here."""
    for child in _every_node(node):
        if type(child) is ast.Call:
            func = child.func
            if type(func) is ast.Name:
                yield func.id
            elif type(func) is ast.Attribute:
                yield func.attr
            if defaults:
                for keyword in child.keywords:
                    if keyword.arg in DEFAULT_KEYWORDS and type(keyword.value) is ast.Name:
                        yield keyword.value.id  # type: ignore[attr-defined]


def _every_node(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node``, in no particular order, and what else its list fields hold
    (the ``None`` key of ``{**spread}``, the names of ``global x``): a list goes on the stack
    whole, and what is not a node has no fields."""
    stack: List[Any] = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    fields_of = _FIELDS
    while stack:
        current = pop()
        kind = type(current)
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = child_fields(kind) if issubclass(kind, ast.AST) else ()
        for name in fields:
            value = getattr(current, name, None)
            if type(value) is list:
                extend(value)
            elif value is not None:
                push(value)
        yield current


def _body_start(unit: _Unit, lines: List[str]) -> int:
    """The first line of the function's body when the body can be blanked by whole lines (it
    starts on a line of its own and nothing follows it on its last line); 0 otherwise."""
    body = unit.node.body  # type: ignore[attr-defined]
    first_statement = body[0]
    decorators = getattr(first_statement, "decorator_list", None) or []
    start = min([d.lineno for d in decorators] + [first_statement.lineno])
    if start <= unit.node.lineno or unit.last > len(lines):
        return 0
    line = lines[start - 1]
    code = line.lstrip(" \t")
    indent = len(line) - len(code)
    if not (code.startswith("@") if decorators else indent == first_statement.col_offset):
        return 0  # something precedes the statement on its line (the header's colon)
    end = getattr(unit.node, "end_col_offset", None)
    if end is None:
        return 0
    rest = lines[unit.last - 1].encode("utf-8", "surrogatepass")[end:].decode("utf-8", "replace").strip()
    return start if not rest or rest.startswith("#") else 0


def _blank(unit: _Unit, start: int, lines: List[str]) -> None:
    """The body becomes ``pass``: the signature stays, so callers still map their arguments."""
    first = lines[start - 1]
    indent = first[:len(first) - len(first.lstrip(" \t"))]
    lines[start - 1] = indent + "pass" + _ending(first)
    for index in range(start, unit.last):
        lines[index] = _ending(lines[index])


def _ending(line: str) -> str:
    for end in ("\r\n", "\n", "\r"):
        if line.endswith(end):
            return end
    return ""
