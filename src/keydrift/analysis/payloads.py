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

from dataclasses import dataclass
from typing import List, Optional

import libcst as cst

from keydrift.analysis.tree import walk
from keydrift.analysis.values import last_name

_LEAVING = (cst.Continue, cst.Break, cst.Return, cst.Raise)


@dataclass(frozen=True)
class Copy:
    """``mapping``'s keys assigned onto ``target`` at ``node``."""

    mapping: cst.BaseExpression
    target: cst.BaseExpression
    node: cst.CSTNode


def loop_copy(loop: cst.For) -> Optional[Copy]:
    """``for k, v in data.items(): setattr(obj, k, v)`` (or ``obj.__setattr__(k, ...)``, or
    ``for k in data: setattr(obj, k, data[k])``), unless a test on ``k`` skips some keys."""
    key, mapping = _loop_key(loop)
    if key is None or mapping is None:
        return None
    for node in walk(loop.body):
        if isinstance(node, cst.Call):
            target = _setattr_target(node, key)
            if target is not None:
                return None if _guarded(loop.body, key, node) else Copy(mapping, target, node)
    return None


def update_copy(call: cst.Call) -> Optional[Copy]:
    """``obj.__dict__.update(data)`` / ``vars(obj).update(data)``."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "update" and len(call.args) == 1):
        return None
    owner = func.value
    if isinstance(owner, cst.Attribute) and owner.attr.value == "__dict__":
        target: cst.BaseExpression = owner.value
    elif isinstance(owner, cst.Call) and last_name(owner.func) == "vars" and len(owner.args) == 1:
        target = owner.args[0].value
    else:
        return None
    arg = call.args[0]
    return Copy(arg.value, target, call) if arg.keyword is None else None


def _loop_key(loop: cst.For):
    """(key variable, mapping) of a loop over a mapping's items or keys."""
    iterable = loop.iter
    target = loop.target
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
            and iterable.func.attr.value == "items" and not iterable.args:
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2 \
                and isinstance(target.elements[0].value, cst.Name):
            return target.elements[0].value.value, iterable.func.value
        return None, None
    if isinstance(target, cst.Name) and isinstance(iterable, (cst.Name, cst.Attribute)):
        return target.value, iterable
    return None, None


def _setattr_target(call: cst.Call, key: str) -> Optional[cst.BaseExpression]:
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    func = call.func
    if isinstance(func, cst.Name) and func.value == "setattr" and len(args) == 3 and _is_name(args[1], key):
        return args[0]
    if isinstance(func, cst.Attribute) and func.attr.value == "__setattr__" and len(args) == 2 \
            and _is_name(args[0], key):
        return func.value
    return None


def _is_name(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _guarded(body: cst.CSTNode, key: str, assignment: cst.Call) -> bool:
    """A test comparing the key that skips the rest of the loop or encloses the assignment."""
    for node in walk(body):
        if isinstance(node, cst.If) and _compares(node.test, key):
            if _leaves(node.body) or (node.orelse is not None and _leaves(node.orelse)) \
                    or _contains(node, assignment):
                return True
    return False


def _compares(test: cst.BaseExpression, key: str) -> bool:
    for node in walk(test):
        if isinstance(node, cst.Comparison):
            sides: List[cst.BaseExpression] = [node.left] + [c.comparator for c in node.comparisons]
            if any(_is_name(s, key) for s in sides):
                return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and _is_name(node.func.value, key) and node.func.attr.value in ("startswith", "endswith"):
            return True
    return False


def _leaves(suite: cst.CSTNode) -> bool:
    return any(isinstance(n, _LEAVING) for n in walk(suite))


def _contains(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    return any(n is target for n in walk(root))
