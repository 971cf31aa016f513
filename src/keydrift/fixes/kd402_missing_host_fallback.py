"""KD402 (unsafe): a missing host raises ``ValueError`` naming the input, instead of becoming "".

``host = parts.hostname or ""`` becomes ``host = parts.hostname`` followed by
``if not host: raise ValueError(f"URL without a host: {url!r}")``; a fallback inside a larger
expression (``(parts.hostname or "").lower()``) loses the fallback and gets the same check on a
line of its own before it. Unsafe: input that used to get the empty key now raises.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from keydrift.fixes._base import Fix, string_literal, target_span
from keydrift.fixes._document import Document
from keydrift.fixes._statements import (
    enclosing_function, input_parameter, missing_host_guard, statement_line, with_statements_after,
    with_statements_before,
)
from keydrift.types import Config, Finding

CODE = "KD402"
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def fix(finding: Finding, document: Document, config: Config) -> Optional[Fix]:
    span = target_span(finding)
    node = document.node_at(span, cst.BooleanOperation) or document.node_at(span, cst.Call)
    host = _host_read(node) if node is not None else None
    line = statement_line(document, node) if host is not None else None
    function = enclosing_function(document, node) if line is not None else None
    parameter = input_parameter(function) if function is not None else None
    if host is None or line is None or parameter is None:
        return None
    bare = _without_fallback(node, host)
    statement = line.body[0] if len(line.body) == 1 else None
    if isinstance(statement, cst.Assign) and statement.value is node and _single_name(statement):
        name = statement.targets[0].target.value  # type: ignore[attr-defined]
        guard = missing_host_guard(name, parameter, document)
        new = with_statements_after(line.with_changes(body=[statement.with_changes(value=bare)]), [guard])
    elif isinstance(host, (cst.Name, cst.Attribute)):
        guard = missing_host_guard(document.code(host).strip(), parameter, document)
        new = with_statements_before(_replace_in(line, node, bare), [guard])
    else:
        return None
    return Fix(CODE, "Raise ValueError when the URL has no host", False, ((line, new),))


def _host_read(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """``parts.hostname`` of ``parts.hostname or ""`` / ``getattr(parts, "hostname", "")``."""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        return node.left if string_literal(node.right) is not None else None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr" \
            and len(node.args) == 3:
        attribute = string_literal(node.args[1].value)
        if attribute and attribute.isidentifier():
            return cst.Attribute(value=node.args[0].value, attr=cst.Name(attribute))
    return None


def _without_fallback(node: cst.BaseExpression, host: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(host, _ATOMS):  # an atom needs no parentheses of its own
        return host.with_changes(lpar=[], rpar=[]) if not node.lpar else host
    return host.with_changes(lpar=node.lpar or [cst.LeftParen()], rpar=node.rpar or [cst.RightParen()])


def _single_name(statement: cst.Assign) -> bool:
    return len(statement.targets) == 1 and isinstance(statement.targets[0].target, cst.Name)


def _replace_in(line: cst.SimpleStatementLine, old: cst.CSTNode, new: cst.CSTNode) -> cst.SimpleStatementLine:
    return line.deep_replace(old, new)  # type: ignore[return-value]
