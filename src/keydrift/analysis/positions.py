"""Positions for the few nodes that appear in findings.

libcst's PositionProvider costs about twice a parse, so it runs only for modules that have a
finding, over the same tree (no copy), after the analysis is done.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, Iterable, List, Optional, Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from keydrift.analysis.facts import RawFinding, RawFix
from keydrift.types import Finding, FixFacts, Location, Span


def line_ref(index: int) -> str:
    """A placeholder in a message for the line of ``RawFinding.related[index]``."""
    return f"\x00{index}\x00"


def resolve_positions(module: cst.Module, raw: Iterable[RawFinding], path: str) -> List[Finding]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions: Dict[cst.CSTNode, CodeRange] = dict(wrapper.resolve(PositionProvider))
    findings = []
    for item in raw:
        where = positions.get(item.node)
        if where is None:
            continue  # a node of another module: never report at a position we cannot name
        located = [(positions.get(node), note) for node, note in item.related]
        message = item.message
        for index, (span, _) in enumerate(located):
            message = message.replace(line_ref(index), str(span.start.line) if span else "?")
        related = tuple(Location(path, span.start.line, span.start.column, note)
                        for span, note in located if span is not None)
        findings.append(Finding(
            code=item.code,
            message=message,
            path=path,
            line=where.start.line,
            col=where.start.column,
            end_line=where.end.line,
            related=related,
            fingerprint=item.fingerprint,
            end_col=where.end.column,
            fix=_fix_facts(item.fix, positions),
        ))
    return findings


def _fix_facts(fix: Optional[RawFix], positions: Dict[cst.CSTNode, CodeRange]) -> Optional[FixFacts]:
    where = positions.get(fix.target) if fix is not None else None
    if fix is None or where is None:
        return None
    span = Span(where.start.line, where.start.column, where.end.line, where.end.column)
    return FixFacts(span, fix.entity, fix.field, fix.normalizer, fix.value)


# -- statement lines without PositionProvider ----------------------------------------------
#
# The project index needs a line for each access it exports ("app/repo.py:40" in a message).
# CPython's tree has line numbers for free; its statements are paired with libcst's by order,
# block by block, so each libcst statement gets the line its first token is on.

_COMPOUND_PAIRS = (
    (cst.FunctionDef, (ast.FunctionDef, ast.AsyncFunctionDef)),
    (cst.ClassDef, (ast.ClassDef,)),
    (cst.If, (ast.If,)),
    (cst.For, (ast.For, ast.AsyncFor)),
    (cst.While, (ast.While,)),
    (cst.With, (ast.With, ast.AsyncWith)),
    (cst.Try, (ast.Try,)),
)


def statement_lines(module: cst.Module, tree: ast.Module) -> Dict[int, int]:
    """id(libcst statement) -> its first line, for simple and compound statements."""
    return {key: node.lineno for key, node in statement_nodes(module, tree).items()}


def statement_nodes(module: cst.Module, tree: ast.Module) -> Dict[int, ast.stmt]:
    """id(libcst statement) -> CPython's statement (line, column and last line for free)."""
    nodes: Dict[int, ast.stmt] = {}
    _pair_block(module.body, tree.body, nodes)
    return nodes


def _pair_block(statements: Sequence[cst.CSTNode], nodes: List[ast.stmt], lines: Dict[int, ast.stmt]) -> None:
    index = 0
    for statement in statements:
        if index >= len(nodes):
            return
        if isinstance(statement, cst.SimpleStatementLine):
            lines[id(statement)] = nodes[index]
            for offset, small in enumerate(statement.body):
                if index + offset < len(nodes):
                    lines[id(small)] = nodes[index + offset]
            index += len(statement.body)
            continue
        node = nodes[index]
        if not _same_kind(statement, node):
            return  # the trees disagree: leave the rest without lines rather than guess
        lines[id(statement)] = node
        _pair_children(statement, node, lines)
        index += 1


def _same_kind(statement: cst.CSTNode, node: ast.stmt) -> bool:
    for libcst_type, ast_types in _COMPOUND_PAIRS:
        if isinstance(statement, libcst_type):
            return isinstance(node, ast_types)
    try_star = getattr(ast, "TryStar", None)
    if isinstance(statement, cst.TryStar):
        return try_star is not None and isinstance(node, try_star)
    match = getattr(ast, "Match", None)
    if isinstance(statement, cst.Match):
        return match is not None and isinstance(node, match)
    return False


def _pair_suite(suite: cst.BaseSuite, nodes: List[ast.stmt], lines: Dict[int, ast.stmt]) -> None:
    if isinstance(suite, cst.IndentedBlock):
        _pair_block(suite.body, nodes, lines)
    elif isinstance(suite, cst.SimpleStatementSuite):
        for small, node in zip(suite.body, nodes):
            lines[id(small)] = node


def _pair_children(statement: cst.CSTNode, node: Any, lines: Dict[int, ast.stmt]) -> None:
    if not isinstance(statement, cst.Match):
        _pair_suite(statement.body, node.body, lines)  # type: ignore[attr-defined]
    if isinstance(statement, cst.If):
        if isinstance(statement.orelse, cst.If) and node.orelse and isinstance(node.orelse[0], ast.If):
            lines[id(statement.orelse)] = node.orelse[0]
            _pair_children(statement.orelse, node.orelse[0], lines)
        elif isinstance(statement.orelse, cst.Else):
            _pair_suite(statement.orelse.body, node.orelse, lines)
    elif isinstance(statement, (cst.For, cst.While)) and statement.orelse is not None:
        _pair_suite(statement.orelse.body, node.orelse, lines)
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        for handler, ast_handler in zip(statement.handlers, node.handlers):
            _pair_suite(handler.body, ast_handler.body, lines)
        if statement.orelse is not None:
            _pair_suite(statement.orelse.body, node.orelse, lines)
        if statement.finalbody is not None:
            _pair_suite(statement.finalbody.body, node.finalbody, lines)
    elif isinstance(statement, cst.Match):
        for case, ast_case in zip(statement.cases, node.cases):
            _pair_suite(case.body, ast_case.body, lines)
