"""Positions for the few nodes that appear in findings.

libcst's PositionProvider costs about twice a parse, so it runs only for modules that have a
finding, over the same tree (no copy), after the analysis is done.
"""

from __future__ import annotations

from typing import Dict, Iterable, List

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from keydrift.analysis.facts import RawFinding
from keydrift.types import Finding, Location


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
        ))
    return findings
