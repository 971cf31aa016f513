"""Where a fix may put new statements: before or after the one line holding an expression."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from keydrift.fixes._document import Document

# An expression under one of these is evaluated conditionally, lazily or in another scope: a
# statement added before its line would not run under the same conditions.
_CONDITIONAL = (
    cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
    cst.NamedExpr,
)


def statement_line(document: Document, node: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
    """The statement line of a function body holding ``node``, when ``node`` runs every time the
    line runs (not under a conditional expression, a lambda or a comprehension)."""
    for parent in document.ancestors(node):
        if isinstance(parent, cst.SimpleStatementLine):
            block = document.parents.get(parent)
            if isinstance(block, cst.IndentedBlock) and enclosing_function(document, parent) is not None:
                return parent
            return None
        if isinstance(parent, _CONDITIONAL) or isinstance(parent, cst.BaseCompoundStatement):
            return None
    return None


def enclosing_function(document: Document, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
    return document.enclosing(node, cst.FunctionDef)


def input_parameter(function: cst.FunctionDef) -> Optional[str]:
    """The normalizer's input: its first parameter that is not ``self``/``cls``."""
    params = [*function.params.posonly_params, *function.params.params]
    for index, param in enumerate(params):
        if index == 0 and param.name.value in ("self", "cls"):
            continue
        return param.name.value
    return None


def with_statements_before(line: cst.SimpleStatementLine,
                           new: Sequence[cst.BaseStatement]) -> cst.FlattenSentinel:
    """``new`` then ``line``: blank lines above ``line`` go above ``new``, the comments right
    above ``line`` stay with it (they speak of it)."""
    if not new:
        return cst.FlattenSentinel([line])
    leading = list(line.leading_lines)
    blank = 0
    while blank < len(leading) and leading[blank].comment is None:
        blank += 1
    first = new[0].with_changes(leading_lines=leading[:blank])
    return cst.FlattenSentinel([first, *new[1:], line.with_changes(leading_lines=leading[blank:])])


def with_statements_after(line: cst.BaseStatement, new: Sequence[cst.BaseStatement]) -> cst.FlattenSentinel:
    return cst.FlattenSentinel([line, *new])


def parse_statement(code: str, module: cst.Module) -> cst.BaseStatement:
    """A statement written in the module's own indentation and line ending."""
    return cst.parse_statement(code, config=module.config_for_parsing)


def names_loaded_after(document: Document, function: cst.FunctionDef, name: str, line: cst.CSTNode) -> bool:
    """Whether ``name`` is used anywhere in ``function`` after the statement ``line``."""
    end = document.positions[line].end
    for node, where in document.positions.items():
        if isinstance(node, cst.Name) and node.value == name and (where.start.line, where.start.column) >= (
                end.line, end.column) and _inside(document, node, function):
            return True
    return False


def _inside(document: Document, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
    return any(parent is ancestor for parent in document.ancestors(node))


def missing_host_guard(tested: str, parameter: str, document: Document) -> cst.BaseStatement:
    """``if not <tested>: raise ValueError(f"URL without a host: {<parameter>!r}")``."""
    message = document.string(f"URL without a host: {{{parameter}!r}}")
    return parse_statement(f"if not {tested}:\n    raise ValueError(f{message})\n", document.module)
