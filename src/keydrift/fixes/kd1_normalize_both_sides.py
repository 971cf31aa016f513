"""KD102/KD103/KD104 (unsafe): apply the configured normalizer to the side of the key that lacks it.

When a record is written by ``normalize_email(email)`` and looked up by ``email`` (KD102), the
lookup becomes a lookup of ``normalize_email(email)``; when it is looked up normalized and
written raw (KD103), the write stores the normalized value; when the other side normalizes by
hand (KD104: ``email.strip().lower()``), its normalization is replaced by the call. Only for a normalizer listed in
``[tool.keydrift] normalizers``, when the two values differ by that one call and the raw value
appears once in the access (or once as the field's own keyword/key). Unsafe: it changes what is
looked up or stored.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from keydrift.fixes._base import Fix, hand_normalized, string_literal, target_span
from keydrift.fixes._document import Document
from keydrift.fixes._normalizers import qualified_name
from keydrift.types import Config, Finding

CODES = ("KD102", "KD103", "KD104")


def fix(finding: Finding, document: Document, config: Config) -> Optional[Fix]:
    facts = finding.fix
    if facts is None or not facts.normalizer or not facts.value:
        return None
    if qualified_name(document, facts.normalizer) not in config.normalizers:
        return None
    access = document.node_at(target_span(finding), cst.Call)
    value = _the_value(document, access, facts.value, facts.field) if access is not None else None
    if value is None:
        return None
    raw = hand_normalized(value) if finding.code == "KD104" else value
    if raw is None:
        return None  # normalized by hand before the access (a variable): the call alone would not match
    normalized = cst.Call(func=cst.parse_expression(facts.normalizer),
                          args=[cst.Arg(raw.with_changes(lpar=[], rpar=[]))], lpar=value.lpar, rpar=value.rpar)
    side = "stored value" if finding.code == "KD103" else "lookup" if finding.code == "KD102" else "key"
    return Fix(finding.code, f"Normalize the {side} with {facts.normalizer}()", False, ((value, normalized),))


def _the_value(document: Document, access: cst.Call, text: str, field: str) -> Optional[cst.BaseExpression]:
    """The one expression of ``access`` written as ``text`` (the field's own one when several)."""
    found = [node for node in _expressions_within(document, access)
             if document.code(node).strip() == text and not _a_name_of_syntax(document, node)]
    outermost = [n for n in found if not any(a in found for a in document.ancestors(n))]
    if len(outermost) == 1:
        return outermost[0]
    own = [n for n in outermost if _field_of(document, n) == field]
    return own[0] if len(own) == 1 else None


def _expressions_within(document: Document, access: cst.Call) -> List[cst.BaseExpression]:
    span = document.span(access)
    return [node for node, where in document.positions.items()
            if isinstance(node, cst.BaseExpression) and span is not None
            and (span.line, span.col) <= (where.start.line, where.start.column)
            and (where.end.line, where.end.column) <= (span.end_line, span.end_col) and node is not access]


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
