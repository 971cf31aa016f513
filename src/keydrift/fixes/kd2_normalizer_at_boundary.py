"""KD201/KD202 (unsafe): normalize a key with the configured normalizer of its field.

``email.strip().lower()`` (KD202), or another normalizer's call (KD201: ``slugify(name)`` where
the project's is ``make_slug``), becomes ``normalize_email(email)``: the one configured normalizer
(``[tool.keydrift] normalizers``) whose name says it is for the key's field, imported when the
module does not import it yet. Unsafe: the key may now be normalized differently. The call stays
outside the boundary, so KD201 may still ask to move it there.
"""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from keydrift.fixes._base import Fix, hand_normalized, target_span
from keydrift.fixes._document import Document
from keydrift.fixes._normalizers import normalizer_for_field, qualified_name, reference
from keydrift.types import Config, Finding

CODES = ("KD201", "KD202")


def fix(finding: Finding, document: Document, config: Config) -> Optional[Fix]:
    if finding.fix is None or not config.boundary:
        return None
    normalizer = normalizer_for_field(finding.fix.field, config)
    call = document.node_at(target_span(finding), cst.Call)
    if normalizer is None or call is None:
        return None
    value = hand_normalized(call) if finding.code == "KD202" else _other_normalizer(call, document, normalizer)
    named = reference(document, normalizer) if value is not None else None
    if value is None or named is None:
        return None
    name, imports = named
    replacement = cst.Call(func=cst.parse_expression(name), args=[cst.Arg(value.with_changes(lpar=[], rpar=[]))],
                           lpar=call.lpar, rpar=call.rpar)
    title = f"Normalize with {normalizer.rpartition('.')[2]}()"
    return Fix(finding.code, title, False, ((call, replacement),), imports, _replaced_import(call, document))


def _replaced_import(call: cst.Call, document: Document) -> Tuple[Tuple[str, str], ...]:
    """The import of the function a KD201 fix no longer calls (removed if nothing else uses it)."""
    if not isinstance(call.func, cst.Name):
        return ()
    module, _, name = qualified_name(document, call.func.value).rpartition(".")
    return ((module, name),) if module and name == call.func.value else ()


def _other_normalizer(call: cst.Call, document: Document, normalizer: str) -> Optional[cst.BaseExpression]:
    """The argument of a one-argument call of another function than ``normalizer``."""
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    callee = document.code(call.func).strip()
    if qualified_name(document, callee) == normalizer:
        return None
    return call.args[0].value
