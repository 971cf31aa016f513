"""KD401 (unsafe): give scheme-less input a scheme before ``urlsplit``/``urlparse`` parses it.

``parts = urlsplit(url)`` gets ``if "://" not in url: url = "https://" + url`` before it. The
scheme is the project's where one is visible: the parse's ``scheme=`` argument, a scheme the
function puts on URLs itself (``"http://" + host``, ``parts.scheme or "http"``), or a module
constant named like ``DEFAULT_SCHEME``; https otherwise. An argument that is an expression of
one variable (``urlsplit(url.strip())``) is first assigned to that variable, when nothing after
the parse uses the variable. Unsafe: ``"example.com"`` now parses with a host.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from keydrift.fixes._base import Fix, string_literal, target_span
from keydrift.fixes._document import Document
from keydrift.fixes._statements import (
    enclosing_function, names_loaded_after, parse_statement, statement_line, with_statements_before,
)
from keydrift.types import Config, Finding

CODE = "KD401"
SCHEMES = ("http", "https")
DEFAULT = "https"


def fix(finding: Finding, document: Document, config: Config) -> Optional[Fix]:
    call = document.node_at(target_span(finding), cst.Call)
    line = statement_line(document, call) if call is not None and call.args else None
    function = enclosing_function(document, call) if line is not None else None
    if call is None or line is None or function is None:
        return None
    argument = call.args[0].value
    variable = _variable_of(argument)
    if variable is None:
        return None
    prefix = _scheme_prefix(call, function, document)
    separator = document.string("://")
    guard = parse_statement(f"if {separator} not in {variable}:\n    {variable} = {prefix} + {variable}\n",
                            document.module)
    new = [guard]
    if not isinstance(argument, cst.Name):
        if names_loaded_after(document, function, variable, line):
            return None  # assigning the expression to the variable would change its later uses
        hoisted = parse_statement(f"{variable} = {document.code(argument).strip()}\n", document.module)
        new = [hoisted, guard]
        line = line.deep_replace(argument, cst.Name(variable))  # type: ignore[assignment]
    original = document.statement_of(call)
    return Fix(CODE, "Add a scheme to input without one before parsing it", False,
               ((original, with_statements_before(line, new)),))  # type: ignore[arg-type]


def _variable_of(argument: cst.BaseExpression) -> Optional[str]:
    """The variable the parsed value is made of: ``url`` of ``url``, ``url.strip()``,
    ``url.strip().lower()`` (method calls with literal arguments on one variable)."""
    node = argument
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.lpar:
        if any(string_literal(a.value) is None for a in node.args):
            return None
        node = node.func.value
    return node.value if isinstance(node, cst.Name) and not node.lpar else None


def _scheme_prefix(call: cst.Call, function: cst.FunctionDef, document: Document) -> str:
    """The code of the scheme prefix to add: ``"http://"``, ``self.scheme + "://"``, ..."""
    for arg in call.args[1:]:
        if arg.keyword is not None and arg.keyword.value == "scheme" or arg.keyword is None:
            literal = string_literal(arg.value)
            if literal in SCHEMES:
                return document.string(f"{literal}://")
            if literal is None:
                return f'{document.code(arg.value).strip()} + {document.string("://")}'
            break
    for literal in _scheme_literals(function):
        return document.string(f"{literal}://")
    for name in _scheme_constants(document.module):
        return f'{name} + {document.string("://")}'
    return document.string(f"{DEFAULT}://")


def _scheme_literals(function: cst.FunctionDef) -> Iterator[str]:
    """Schemes the function writes itself: ``"http://" + host``, ``parts.scheme or "http"``."""
    for node in _walk(function):
        if isinstance(node, cst.BooleanOperation) and string_literal(node.right) in SCHEMES:
            yield string_literal(node.right)  # type: ignore[misc]
        literal = string_literal(node)
        for scheme in SCHEMES:
            if literal == scheme + "://":
                yield scheme


def _scheme_constants(module: cst.Module) -> Iterator[str]:
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name) \
                    and "SCHEME" in small.targets[0].target.value.upper() \
                    and string_literal(small.value) in SCHEMES:
                yield small.targets[0].target.value


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))
