"""KD407 (safe): test the hostname before calling a method on it.

``host = parts.hostname.lower()`` gets ``if not parts.hostname: raise ValueError(f"URL without a
host: {url!r}")`` before it (``url`` is the normalizer's input). Safe: a URL with a host takes
the same path as before; one without a host raised AttributeError and now raises ValueError,
which says what is wrong with the input.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from keydrift.fixes._base import Fix, target_span
from keydrift.fixes._document import Document
from keydrift.fixes._statements import (
    enclosing_function, input_parameter, missing_host_guard, statement_line, with_statements_before,
)
from keydrift.types import Config, Finding

CODE = "KD407"


def fix(finding: Finding, document: Document, config: Config) -> Optional[Fix]:
    call = document.node_at(target_span(finding), cst.Call)
    host = call.func.value if call is not None and isinstance(call.func, cst.Attribute) else None
    if host is None or not _plain_reference(host):
        return None
    line = statement_line(document, call)
    function = enclosing_function(document, call) if line is not None else None
    parameter = input_parameter(function) if function is not None else None
    if line is None or parameter is None:
        return None
    guard = missing_host_guard(document.code(host).strip(), parameter, document)
    return Fix(CODE, "Raise ValueError when the URL has no host", True,
               ((line, with_statements_before(line, [guard])),))


def _plain_reference(node: cst.BaseExpression) -> bool:
    """``host`` or ``parts.hostname``: a name or attribute chain, safe to evaluate twice."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)
