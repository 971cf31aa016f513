"""One module's source as libcst sees it, with the positions and parents fixes need.

The analysis reports positions; fixes find the libcst nodes back from them here, so nothing in
the analysis has to hand libcst nodes to a fix.
"""

from __future__ import annotations

from typing import Dict, Iterator, Optional, Tuple, Type, TypeVar, Union

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, ParentNodeProvider, PositionProvider

from keydrift.types import Span

N = TypeVar("N", bound=cst.CSTNode)


class Document:
    """A parsed module (bytes keep their declared encoding), its node positions and parents."""

    def __init__(self, source: Union[str, bytes]) -> None:
        self.module = cst.parse_module(source)
        wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self.positions: Dict[cst.CSTNode, CodeRange] = dict(wrapper.resolve(PositionProvider))
        self.parents: Dict[cst.CSTNode, cst.CSTNode] = dict(wrapper.resolve(ParentNodeProvider))

    def span(self, node: cst.CSTNode) -> Optional[Span]:
        where = self.positions.get(node)
        if where is None:
            return None
        return Span(where.start.line, where.start.column, where.end.line, where.end.column)

    def node_at(self, span: Span, kind: Type[N]) -> Optional[N]:
        """The outermost node of type ``kind`` spanning exactly ``span``."""
        for node, where in self.positions.items():
            if isinstance(node, kind) and _same(where, span):
                return self._outermost(node, span, kind)
        return None

    def _outermost(self, node: N, span: Span, kind: Type[N]) -> N:
        parent = self.parents.get(node)
        while isinstance(parent, kind) and _same(self.positions[parent], span):
            node, parent = parent, self.parents.get(parent)
        return node

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parents.get(node)
        while parent is not None:
            yield parent
            parent = self.parents.get(parent)

    def enclosing(self, node: cst.CSTNode, kind: Union[Type[N], Tuple[type, ...]]) -> Optional[N]:
        for parent in self.ancestors(node):
            if isinstance(parent, kind):
                return parent  # type: ignore[return-value]
        return None

    def statement_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The statement holding ``node``: a ``SimpleStatementLine`` (one line of small
        statements) or, for a node in a compound statement's header, that statement."""
        for parent in [node, *self.ancestors(node)]:
            if isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return parent
        return None

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def quote(self) -> str:
        """The quote the module writes most of its one-line strings with (``"`` when even)."""
        counts = {"'": 0, '"': 0}
        for node in self.positions:
            if isinstance(node, cst.SimpleString) and len(node.quote) == 1:
                counts[node.quote] += 1
        return "'" if counts["'"] > counts['"'] else '"'

    def string(self, value: str) -> str:
        """``value`` as a string literal in the module's quote (``value`` holds neither quote)."""
        quote = self.quote()
        return f"{quote}{value}{quote}"


def _same(where: CodeRange, span: Span) -> bool:
    return (where.start.line, where.start.column, where.end.line, where.end.column) == (
        span.line, span.col, span.end_line, span.end_col)
