"""KD403: ``path.rstrip("/")`` -> ``path.rstrip("/") or "/"``.

Only an empty result changes: the root "/" (or "", or "///") becomes "/" instead of "", which
no valid path key is; every other input strips as before. Safe, except in a normalizer that puts
the path back into a URL (``_replace``, ``urlunsplit``, ``geturl``...): there "https://x.com" and
"https://x.com/" are one URL and the fix changes which spelling is stored, so it is unsafe.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from keydrift.fixes._base import Fix, last_name, method_call, needs_parentheses, string_literal, target_span
from keydrift.fixes._document import Document
from keydrift.types import Config, Finding

CODE = "KD403"
# Calls that put a path back next to its host.
URL_BUILDERS = ("_replace", "urlunsplit", "urlunparse", "geturl", "urljoin")


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
    function = document.enclosing(call, cst.FunctionDef)
    safe = function is None or not _rebuilds_url(function)
    return Fix(CODE, 'Put the root back: add `or "/"`', safe, ((call, restored),))


def _rebuilds_url(function: cst.FunctionDef) -> bool:
    stack: List[cst.CSTNode] = [function]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and last_name(node.func) in URL_BUILDERS:
            return True
        stack.extend(node.children)
    return False
