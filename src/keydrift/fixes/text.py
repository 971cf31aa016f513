"""Source bytes as text and back, keeping the file's declared encoding and byte-order mark."""

from __future__ import annotations

import difflib
import io
import tokenize
from typing import Tuple


def decoded(source: bytes) -> Tuple[str, str]:
    """The text and the encoding to write it back with (``utf-8-sig`` keeps a BOM)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError:
        encoding = "utf-8"
    return source.decode(encoding, "surrogateescape"), encoding


def encoded(text: str, encoding: str) -> bytes:
    return text.encode(encoding, "surrogateescape")


def unified_diff(before: bytes, after: bytes, path: str) -> str:
    """The diff ``patch -p0`` applies, for ``--diff``."""
    old, _ = decoded(before)
    new, _ = decoded(after)
    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), fromfile=path, tofile=path)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
