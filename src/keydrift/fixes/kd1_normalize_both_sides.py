"""KD102/KD103/KD104 (unsafe): apply the configured normalizer to the side of the key that lacks it.

When a record is written by ``normalize_email(email)`` and looked up by ``email`` (KD102), the
lookup becomes a lookup of ``normalize_email(email)``; when it is looked up normalized and
written raw (KD103), the write stores the normalized value; when the other side normalizes by
hand (KD104: ``email.strip().lower()``), its normalization is replaced by the call. A lookup
of a raw key that the project stores through one normalizer (KD108, the project's registry) is
a lookup of that normalizer's result, imported where it is missing. Only for a normalizer listed in
``[tool.keydrift] normalizers``, when the two values differ by that one call and the raw value
appears once in the access (or once as the field's own keyword/key). Unsafe: it changes what is
looked up or stored.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from keydrift.fixes._base import Fix, hand_normalized, string_literal, target_span
from keydrift.fixes._document import Document
from keydrift.fixes._normalizers import Reference, qualified_name, reference
from keydrift.types import Config, Finding, Span

CODES = ("KD102", "KD103", "KD104", "KD108")


def fix(finding: Finding, document: Document, config: Config) -> Optional[Fix]:
    facts = finding.fix
    if facts is None or not facts.normalizer or not facts.value:
        return None
    named = _callable(document, facts.normalizer, config)
    within = _statement_nodes(document, facts.target) if facts.target.end_col == 0 else \
        _expressions_within(document, document.node_at(target_span(finding), cst.Call))
    value = _the_value(document, within, facts.value, facts.field)
    if named is None or value is None:
        return None
    name, imports = named
    raw = hand_normalized(value) if finding.code == "KD104" else value
    if raw is None:
        return None  # normalized by hand before the access (a variable): the call alone would not match
    normalized = cst.Call(func=cst.parse_expression(name),
                          args=[cst.Arg(raw.with_changes(lpar=[], rpar=[]))], lpar=value.lpar, rpar=value.rpar)
    side = "stored value" if finding.code == "KD103" else "key" if finding.code == "KD104" else "lookup"
    return Fix(finding.code, f"Normalize the {side} with {name}()", False, ((value, normalized),), imports)


def _callable(document: Document, normalizer: str, config: Config) -> Optional[Reference]:
    """How to call the configured normalizer named ``normalizer`` (as called in this module, or
    the last component of a configured one, which is then imported)."""
    if qualified_name(document, normalizer) in config.normalizers:
        return normalizer, ()
    matches = [q for q in config.normalizers if q.rpartition(".")[2] == normalizer]
    return reference(document, matches[0]) if len(matches) == 1 else None


def _the_value(document: Document, within: List[cst.BaseExpression], text: str,
               field: str) -> Optional[cst.BaseExpression]:
    """The one expression of ``within`` written as ``text`` (the field's own one when several)."""
    found = [node for node in within if document.code(node).strip() == text and not _a_name_of_syntax(document, node)]
    outermost = [n for n in found if not any(a in found for a in document.ancestors(n))]
    if len(outermost) == 1:
        return outermost[0]
    own = [n for n in outermost if _field_of(document, n) == field]
    return own[0] if len(own) == 1 else None


def _expressions_within(document: Document, access: Optional[cst.Call]) -> List[cst.BaseExpression]:
    span = document.span(access) if access is not None else None
    if span is None:
        return []
    return [node for node, where in document.positions.items()
            if isinstance(node, cst.BaseExpression) and node is not access
            and (span.line, span.col) <= (where.start.line, where.start.column)
            and (where.end.line, where.end.column) <= (span.end_line, span.end_col)]


def _statement_nodes(document: Document, span: Span) -> List[cst.BaseExpression]:
    """The expressions on the lines of the statement starting at ``span``."""
    return [node for node, where in document.positions.items()
            if isinstance(node, cst.BaseExpression) and span.line <= where.start.line and where.end.line <= span.end_line]


def _a_name_of_syntax(document: Document, node: cst.CSTNode) -> bool:
    """The keyword of ``f(email=...)`` or the attribute of ``User.email``: not values."""
    parent = document.parents.get(node)
    return (isinstance(parent, cst.Arg) and parent.keyword is node) or (
        isinstance(parent, cst.Attribute) and parent.attr is node)


def _field_of(document: Document, node: cst.CSTNode) -> str:
    """``email`` for the value of ``email=...``, ``email__iexact=...`` or ``{"email": ...}``."""
    parent = document.parents.get(node)
    if isinstance(parent, cst.Arg) and parent.keyword is not None:
        return parent.keyword.value.split("__")[0]
    if isinstance(parent, cst.DictElement):
        return string_literal(parent.key) or ""
    return ""
