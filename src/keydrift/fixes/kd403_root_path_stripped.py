"""KD403 (safe): ``path.rstrip("/")`` -> ``path.rstrip("/") or "/"``.

Only an empty result changes: the root "/" (or "", or "///") becomes "/" instead of "", which
no valid path or URL key is; every other input strips as before. (KD403 does not report a path
put back next to its host, where "/" and "" are one URL.)
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from keydrift.fixes._base import Fix, method_call, needs_parentheses, string_literal, target_span
from keydrift.fixes._document import Document
from keydrift.types import Config, Finding

CODE = "KD403"


def fix(finding: Finding, document: Document, config: Config) -> Optional[Fix]:
    call = method_call(document.node_at(target_span(finding), cst.Call), ("rstrip",))
    if call is None or len(call.args) != 1 or "/" not in (string_literal(call.args[0].value) or ""):
        return None
    bare = call.with_changes(lpar=[], rpar=[])
    argument = call.args[0].value
    quote = argument.quote if isinstance(argument, cst.SimpleString) and len(argument.quote) == 1 else '"'
    restored = cst.BooleanOperation(left=bare, operator=cst.Or(), right=cst.SimpleString(f"{quote}/{quote}"),
                                    lpar=call.lpar, rpar=call.rpar)
    if not call.lpar and needs_parentheses(document, call):
        restored = restored.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return Fix(CODE, 'Put the root back: add `or "/"`', True, ((call, restored),))
