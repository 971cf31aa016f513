"""Cheap traversal of libcst trees.

``CSTNode.children`` rebuilds every child through a visitor (it costs more than the parse on
big files); this reads the dataclass fields directly and skips whitespace and punctuation.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Iterator, Optional, Tuple, Type

import libcst as cst

_SKIPPED_FIELDS = frozenset({
    "lpar", "rpar", "comma", "dot", "equal", "colon", "semicolon", "whitespace", "header",
    "footer", "leading_lines", "lines_after_decorators", "newline", "trailing_whitespace",
    "leading_whitespace", "indent", "first_line", "empty_lines", "star", "star_arg",
})
_FIELDS: Dict[Type[cst.CSTNode], Tuple[str, ...]] = {}


def _fields(node_type: Type[cst.CSTNode]) -> Tuple[str, ...]:
    names = _FIELDS.get(node_type)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(node_type)
                      if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace"))
        _FIELDS[node_type] = names
    return names


_WHITESPACE = (cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline)
_KIND: Dict[type, int] = {tuple: 2, list: 2}  # by exact type: 1 a syntax node, 2 a sequence, 0 else


def _kind(value_type: type) -> int:
    """isinstance() against libcst's abstract classes is slow; a type's answer never changes."""
    kind = _KIND.get(value_type)
    if kind is None:
        is_node = issubclass(value_type, cst.CSTNode) and not issubclass(value_type, _WHITESPACE)
        kind = _KIND[value_type] = 1 if is_node else 0
    return kind


def child_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The syntactic children of a node, in source order, without whitespace nodes."""
    for name in _fields(type(node)):
        value = getattr(node, name, None)
        kind = _kind(type(value))
        if kind == 1:
            yield value
        elif kind == 2:
            for item in value:
                if _kind(type(item)) == 1:
                    yield item


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (pre-order), iteratively: deep trees cannot overflow the stack."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(child_nodes(current))))


def string_literal(node: Optional[cst.CSTNode]) -> Optional[str]:
    """The value of a plain (or implicitly concatenated) string literal, else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd prefixes
            return None
        return value if isinstance(value, str) else None
    return None
