"""Syntax of a newer Python than the one running keydrift, recognized in a syntax error.

CPython rejects code written for a later version with a bare "invalid syntax"; flake8 users
expect to be told that the file is fine and the interpreter is too old. When CPython rejects a
file, the line it points at is compared with a small table of constructs and the Python
version that introduced each; a match below the running version is never claimed.
"""

from __future__ import annotations

import sys
from typing import Optional, Pattern, Sequence, Tuple

from keydrift.patterns import lazy

# (version, what, pattern on the line CPython points at, or on CPython's message with "msg:")
_CONSTRUCTS: Tuple[Tuple[Tuple[int, int], str, Pattern[str]], ...] = (
    ((3, 10), "a match statement", lazy(r"^\s*(match|case)\b[^=]*:\s*(#.*)?$")),
    ((3, 11), "except*", lazy(r"^\s*except\s*\*")),
    ((3, 13), "a type parameter default", lazy(
        r"^\s*((async\s+)?def|class|type)\s+\w+\s*\[[^\]]*\b\w+\s*=")),
    ((3, 12), "a type alias statement", lazy(r"^\s*type\s+[A-Za-z_]\w*\s*(\[.*\])?\s*=")),
    ((3, 12), "type parameters", lazy(r"^\s*((async\s+)?def|class)\s+\w+\s*\[")),
    ((3, 12), "an f-string that nests quotes, backslashes or comments", lazy(r"^msg:f-string")),
    ((3, 14), "a template string", lazy(r"(?<![\w\"'])[rR]?[tT][rR]?(\"|')")),
    ((3, 14), "except without parentheses around several exceptions", lazy(
        r"^\s*except\s+[^(\s*][^:]*,[^:]*:(?!.*\bas\b)")),
)


def running_version() -> Tuple[int, int]:
    return sys.version_info[0], sys.version_info[1]


def newer_syntax(lines: Sequence[str], line: int, message: str,
                 running: Optional[Tuple[int, int]] = None) -> Optional[Tuple[Tuple[int, int], str]]:
    """``((3, 12), "type parameters")`` when the rejected line (1-based ``line``) or CPython's
    ``message`` shows a construct newer than ``running`` (default: this interpreter)."""
    running = running or running_version()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    for version, what, pattern in _CONSTRUCTS:
        if version <= running:
            continue
        subject = "msg:" + message if pattern.pattern.startswith("^msg:") else text
        if pattern.search(subject):
            return version, what
    return None


def describe(version: Tuple[int, int], what: str, running: Optional[Tuple[int, int]] = None) -> str:
    """``uses syntax of Python 3.12 (type parameters); keydrift runs on Python 3.11``."""
    running = running or running_version()
    return (f"uses syntax of Python {version[0]}.{version[1]} ({what}); keydrift runs on Python "
            f"{running[0]}.{running[1]}")
