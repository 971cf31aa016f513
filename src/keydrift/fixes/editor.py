"""Fixes as the editor applies them: one finding's fix as one text replacement."""

from __future__ import annotations

from dataclasses import dataclass
import io
import tokenize
from typing import Callable, List, Optional

import libcst as cst

from keydrift.fixes import fix_for
from keydrift.fixes._apply import fix_source, render
from keydrift.fixes._document import Document
from keydrift.fixes.noqa import line_offsets
from keydrift.types import Config, Finding


@dataclass(frozen=True)
class TextEdit:
    """Replace ``line:col`` to ``end_line:end_col`` (1-based lines, code-point columns) by ``text``."""

    title: str
    safe: bool
    line: int
    col: int
    end_line: int
    end_col: int
    text: str


def fix_edit(text: str, finding: Finding, config: Config) -> Optional[TextEdit]:
    """The smallest replacement that applies ``finding``'s fix to ``text``, if it has one."""
    try:
        document = Document(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return None
    try:
        fix = fix_for(finding, document, config)
    except Exception:  # noqa: BLE001 - a bug in one fix must not break the editor
        return None
    fixed = render(document, [fix]) if fix is not None else None
    if fix is None or fixed is None:
        return None
    return replacement(text, fixed.decode(document.module.encoding), fix.title, fix.safe)


def fix_all_edit(text: str, findings: List[Finding], check: Callable[[str], List[Finding]],
                 config: Config) -> Optional[TextEdit]:
    """Every safe fix of the document, applied until it is stable (``source.fixAll``)."""
    encoding = _declared_encoding(text)
    try:
        source = text.encode(encoding)
    except (UnicodeError, LookupError):
        return None
    outcome = fix_source(source, findings, lambda data: check(data.decode(encoding)), fix_for, config, unsafe=False)
    if not outcome.applied:
        return None
    title = f"Fix all auto-fixable keydrift problems ({outcome.applied})"
    return replacement(text, outcome.source.decode(encoding), title, True)


def replacement(text: str, new: str, title: str, safe: bool) -> TextEdit:
    """The smallest edit that turns ``text`` into ``new``."""
    start = _common_prefix(text, new)
    tail = _common_prefix(text[start:][::-1], new[start:][::-1])
    offsets = line_offsets(text)
    line, col = _position(offsets, start)
    end_line, end_col = _position(offsets, len(text) - tail)
    return TextEdit(title, safe, line, col, end_line, end_col, new[start:len(new) - tail])


def _declared_encoding(text: str) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(text.encode("utf-8", "surrogatepass")).readline)
    except SyntaxError:
        return "utf-8"
    return "utf-8" if encoding == "utf-8-sig" else encoding


def _common_prefix(a: str, b: str) -> int:
    size = 0
    for x, y in zip(a, b):
        if x != y:
            break
        size += 1
    return size


def _position(offsets: list, offset: int) -> tuple:
    line = max(i for i, start in enumerate(offsets) if start <= offset)
    return line + 1, offset - offsets[line]
