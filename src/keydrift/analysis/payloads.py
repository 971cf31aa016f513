"""Payload copies: every key of a mapping assigned onto an object.

``for key, value in data.items(): setattr(obj, key, value)`` and ``obj.__dict__.update(data)``
copy whatever the mapping holds, its ``id`` included. When the mapping is a remote result (a
fetched record) and the object a local record that is saved afterwards, the remote side's key
replaces the local one and ``save()`` writes another row: the key of the write was re-derived
from the response. A loop that skips some keys (``if key == "id": continue``, ``if key in
ALLOWED: setattr(...)``) is not a blind copy.

This module finds the copies in syntax; the key-flow walker decides whether the mapping came
over the network and whether the object is saved.
"""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Sequence, Union

from keydrift.analysis.tree import current_source_lines, walk
from keydrift.analysis.values import last_name
from keydrift.records import record

_LEAVING = (ast.Continue, ast.Break, ast.Return, ast.Raise)


@record
class Copy:
    """``mapping``'s keys assigned onto ``target`` at ``node``."""

    mapping: ast.expr
    target: ast.expr
    node: ast.AST


def loop_copy(loop: Union[ast.For, ast.AsyncFor]) -> Optional[Copy]:
    """``for k, v in data.items(): setattr(obj, k, v)`` (or ``obj.__setattr__(k, ...)``, or
    ``for k in data: setattr(obj, k, data[k])``), unless a test on ``k`` skips some keys."""
    key, mapping = _loop_key(loop)
    if key is None or mapping is None or not _may_set_attributes(loop):
        return None
    for node in _walk_all(loop.body):
        if isinstance(node, ast.Call):
            target = _setattr_target(node, key)
            if target is not None:
                return None if _guarded(loop.body, key, node) else Copy(mapping, target, node)
    return None


def update_copy(call: ast.Call) -> Optional[Copy]:
    """``obj.__dict__.update(data)`` / ``vars(obj).update(data)``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "update" and _argument_count(call) == 1):
        return None
    owner = func.value
    if isinstance(owner, ast.Attribute) and owner.attr == "__dict__":
        target: ast.expr = owner.value
    elif isinstance(owner, ast.Call) and last_name(owner.func) == "vars" and _argument_count(owner) == 1:
        target = _only_argument(owner)
    else:
        return None
    # a positional (``*data`` too) or ``**data`` argument, not a named keyword
    if call.keywords and call.keywords[0].arg is not None:
        return None
    return Copy(_only_argument(call), target, call)


def _argument_count(call: ast.Call) -> int:
    """Every argument, positional, spread or named (spread ones count once each)."""
    return len(call.args) + len(call.keywords)


def _only_argument(call: ast.Call) -> ast.expr:
    """The value of a call's one argument (``*x`` and ``**x`` unwrapped)."""
    if call.args:
        arg = call.args[0]
        return arg.value if isinstance(arg, ast.Starred) else arg
    return call.keywords[0].value


def _loop_key(loop: Union[ast.For, ast.AsyncFor]):
    """(key variable, mapping) of a loop over a mapping's items or keys."""
    iterable = loop.iter
    target = loop.target
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
            and iterable.func.attr == "items" and not iterable.args and not iterable.keywords:
        if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2:
            first = target.elts[0]
            if isinstance(first, ast.Starred):  # ``*name``: the spread name
                first = first.value
            if isinstance(first, ast.Name):
                return first.id, iterable.func.value
        return None, None
    if isinstance(target, ast.Name) and isinstance(iterable, (ast.Name, ast.Attribute)):
        return target.id, iterable
    return None, None


def _setattr_target(call: ast.Call, key: str) -> Optional[ast.expr]:
    args = [a for a in call.args if not isinstance(a, ast.Starred)]
    func = call.func
    if isinstance(func, ast.Name) and func.id == "setattr" and len(args) == 3 and _is_name(args[1], key):
        return args[0]
    if isinstance(func, ast.Attribute) and func.attr == "__setattr__" and len(args) == 2 \
            and _is_name(args[0], key):
        return func.value
    return None


def _may_set_attributes(loop: ast.AST) -> bool:
    """False when the loop's text never says ``setattr`` (nor ``__setattr__``): most loops over
    a mapping's items copy nothing onto an object, and their text tells so for less than a
    walk of their bodies. True without the module's lines, or for text that is not ASCII (an
    identifier may be spelled otherwise and normalized to it)."""
    lines = current_source_lines()
    end = getattr(loop, "end_lineno", None)
    if lines is None or end is None or end > len(lines):
        return True
    return any("setattr" in line or not line.isascii() for line in lines[loop.lineno - 1:end])  # type: ignore[attr-defined]


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _guarded(body: Sequence[ast.stmt], key: str, assignment: ast.Call) -> bool:
    """A test comparing the key that skips the rest of the loop or encloses the assignment."""
    for node in _walk_all(body):
        if isinstance(node, ast.If) and _compares(node.test, key):
            if _leaves(node.body) or _leaves(node.orelse) \
                    or _contains(node, assignment):
                return True
    return False


def _compares(test: ast.expr, key: str) -> bool:
    for node in walk(test):
        if isinstance(node, ast.Compare):
            sides: List[ast.expr] = [node.left, *node.comparators]
            if any(_is_name(s, key) for s in sides):
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and _is_name(node.func.value, key) and node.func.attr in ("startswith", "endswith"):
            return True
    return False


def _walk_all(statements: Sequence[ast.AST]) -> Iterator[ast.AST]:
    """Every node under a suite (a list of statements), pre-order, in source order."""
    for statement in statements:
        yield from walk(statement)


def _leaves(suite: Sequence[ast.stmt]) -> bool:
    return any(isinstance(n, _LEAVING) for n in _walk_all(suite))


def _contains(root: ast.AST, target: ast.AST) -> bool:
    return any(n is target for n in walk(root))
