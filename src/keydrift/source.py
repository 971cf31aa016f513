"""Turning a file's bytes into text the way Python does. No parser: the CLI's warm path and
``# noqa`` handling use it without loading the analysis."""

from __future__ import annotations

import io
import tokenize
from typing import List, Union

PARSE_ERROR = "KD900"
ANALYSIS_ERROR = "KD901"


class SourceError(Exception):
    """A file that cannot be decoded or parsed."""


def decode_source(source: Union[str, bytes]) -> str:
    """Decode bytes the way Python does: BOM, coding cookie, else UTF-8."""
    if isinstance(source, str):
        return source[1:] if source.startswith("\ufeff") else source
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode(encoding)
    except (SyntaxError, LookupError, UnicodeError) as exc:  # UnicodeError: codecs such as "undefined"
        raise SourceError(f"cannot decode the file: {exc}") from exc
    return text[1:] if text.startswith("\ufeff") else text


def physical_lines(text: str) -> List[str]:
    """Lines as CPython numbers them (``\\r\\n``, ``\\r`` or ``\\n``; not form feeds), with their ends."""
    # one substring search per odd break (a character search in C), not a set lookup per character
    if any(odd in text for odd in _ODD_BREAKS):
        return _split_python_lines(text)
    return text.splitlines(keepends=True)


_ODD_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _split_python_lines(text: str) -> List[str]:
    lines: List[str] = []
    start = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\n" or char == "\r":
            if char == "\r" and text[index + 1:index + 2] == "\n":
                index += 1
            lines.append(text[start:index + 1])
            start = index + 1
        index += 1
    if start < len(text):
        lines.append(text[start:])
    return lines
