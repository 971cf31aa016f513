"""What a fix is: edits of libcst nodes of one parsed module, marked safe or unsafe."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Tuple, Union

import libcst as cst

from keydrift.fixes._document import Document
from keydrift.types import Config, Finding, Span

Replacement = Union[cst.CSTNode, cst.FlattenSentinel, cst.RemovalSentinel]
Edit = Tuple[cst.CSTNode, Replacement]  # (a node of the document, what replaces it)


@dataclass(frozen=True)
class Fix:
    """A fix of one finding. ``safe``: it cannot change behaviour on valid input (``--fix``
    applies it); unsafe fixes change what is stored or looked up (``--unsafe-fixes``)."""

    code: str
    title: str  # imperative, shown as the editor's quick fix
    safe: bool
    edits: Tuple[Edit, ...]
    imports: Tuple[Tuple[str, str], ...] = ()  # (module, name) the edited code needs
    # (module, name) imports the edit may leave unused: removed if nothing else uses them
    unused_imports: Tuple[Tuple[str, str], ...] = ()


# A rule's fix: None when the finding's code is not of a shape the fix can repair.
Fixer = Callable[[Finding, Document, Config], Optional[Fix]]


def target_span(finding: Finding) -> Span:
    """The expression a fix rewrites: the rule's fix target, else the reported node."""
    if finding.fix is not None:
        return finding.fix.target
    return Span(finding.line, finding.col, finding.end_line or finding.line, finding.end_col)


def string_literal(node: cst.CSTNode) -> Optional[str]:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd prefixes: not a literal we reason about
            return None
        return value if isinstance(value, str) else None
    return None


# str methods a hand normalization chains: they all return a str of the same value's key
STRING_METHODS = ("lower", "upper", "casefold", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix")


def hand_normalized(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The value under a chain of str methods with literal arguments (``x`` of
    ``x.strip().lower()``); None when ``node`` is no such chain."""
    value = node
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in STRING_METHODS and all(string_literal(a.value) is not None for a in value.args):
        value = value.func.value
    return value if value is not node else None


def method_call(node: cst.CSTNode, names: Tuple[str, ...]) -> Optional[cst.Call]:
    """``node`` if it is ``receiver.<one of names>(...)``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in names:
        return node
    return None


# Parents under which an expression of the lowest precedence (``a or b``, ``f(x)`` replaced by
# one) needs no parentheses.
_LOOSE_PARENTS = (
    cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Arg, cst.Expr, cst.Index, cst.Element,
    cst.DictElement, cst.FormattedStringExpression, cst.If, cst.While, cst.Yield,
)


def needs_parentheses(document: Document, node: cst.CSTNode) -> bool:
    """Whether a boolean expression put in ``node``'s place must be parenthesized."""
    parent = document.parents.get(node)
    if isinstance(parent, cst.Assign) and node is not parent.value:
        return True
    return not isinstance(parent, _LOOSE_PARENTS)
