"""Positions for the few nodes that appear in findings, after the analysis is done.

A node's line and columns come from CPython's tree; columns are counted in characters (``ast``
counts UTF-8 bytes) from 0, ends exclusive, as editors and flake8 show them. A
tuple's or a generator's range leaves out the parentheses around it (``ast`` includes them).
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from keydrift.analysis.facts import RawFinding, RawFix
from keydrift.analysis.tree import char_column, walk
from keydrift.analysis.values import _after, _before, _enclosed, _text_between
from keydrift.types import Finding, FixFacts, Location, Span

# (line, column, end line, end column): lines from 1, columns in characters from 0
Range = Tuple[int, int, int, int]


def line_ref(index: int) -> str:
    """A placeholder in a message for the line of ``RawFinding.related[index]``."""
    return f"\x00{index}\x00"


def resolve_positions(module: ast.Module, lines: Sequence[str], raw: Iterable[RawFinding],
                      path: str) -> List[Finding]:
    """The findings at their positions. ``module`` is the tree the analysis read (a node not in
    it, from another module, is never reported), ``lines`` its source lines
    (``str.splitlines(keepends=True)``)."""
    resolver = _Resolver(module, lines)
    findings = []
    for item in raw:
        where = resolver.range(item.node)
        if where is None:
            continue  # a node of another module: never report at a position we cannot name
        located = [(resolver.range(node), note) for node, note in item.related]
        message = item.message
        for index, (span, _) in enumerate(located):
            message = message.replace(line_ref(index), str(span[0]) if span else "?")
        related = tuple(Location(path, span[0], span[1], note) for span, note in located if span is not None)
        findings.append(Finding(
            code=item.code,
            message=message,
            path=path,
            line=where[0],
            col=where[1],
            end_line=where[2],
            related=related,
            fingerprint=item.fingerprint,
            end_col=where[3],
            fix=_fix_facts(item.fix, resolver),
        ))
    return findings


def node_range(lines: Sequence[str], node: ast.AST) -> Optional[Range]:
    """The node's range in ``lines``; None for a node without a position (or not in them)."""
    start_line, end_line = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if start_line is None or end_line is None or start_line < 1 or end_line > len(lines):
        return None
    start, end = (start_line, node.col_offset), (end_line, node.end_col_offset)  # type: ignore[attr-defined]
    if isinstance(node, (ast.Tuple, ast.GeneratorExp)):
        start, end = _inside_parentheses(lines, start, end)
    return (start[0], char_column(lines[start[0] - 1], start[1]),
            end[0], char_column(lines[end[0] - 1], end[1]))


def _inside_parentheses(lines: Sequence[str], start: Tuple[int, int],
                        end: Tuple[int, int]) -> Tuple[Tuple[int, int], Tuple[int, int]]:
    """``(a, b)`` -> ``a, b``; ``(x for x in y)`` -> ``x for x in y`` (the text the node spans)."""
    if not _enclosed(_text_between(lines, start, end)):
        return start, end
    first = _after(lines, (start[0], start[1] + 1))
    last = _before(lines, (end[0], end[1] - 1))
    if first is None or last is None or first[0] > last[0]:
        return (start[0], start[1] + 1), (start[0], start[1] + 1)  # ``()``: the empty range inside
    return first[0], (last[0][0], last[0][1] + 1)


class _Resolver:
    """Ranges of the nodes of one module (which nodes are its own is looked up once)."""

    def __init__(self, module: ast.Module, lines: Sequence[str]) -> None:
        self.module = module
        self.lines = lines
        self.own: Optional[Set[int]] = None
        self.ranges: Dict[int, Optional[Range]] = {}

    def range(self, node: Optional[ast.AST]) -> Optional[Range]:
        if node is None:
            return None
        if self.own is None:
            self.own = {id(n) for n in walk(self.module)}
        # a node the reader built for a piece ast has no node for (one f-string of an
        # implicit concatenation) lies inside one of the module's own nodes
        if id(node) not in self.own and id(getattr(node, "keydrift_part_of", None)) not in self.own:
            return None
        key = id(node)
        if key not in self.ranges:
            self.ranges[key] = node_range(self.lines, node)
        return self.ranges[key]


def _fix_facts(fix: Optional[RawFix], resolver: _Resolver) -> Optional[FixFacts]:
    where = resolver.range(fix.target) if fix is not None else None
    if fix is None or where is None:
        return None
    span = Span(*where)
    return FixFacts(span, fix.entity, fix.field, fix.normalizer, fix.value)
