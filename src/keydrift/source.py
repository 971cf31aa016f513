"""Turning a file's bytes into text the way Python does. No parser: the CLI's warm path and
``# noqa`` handling use it without loading the analysis."""

from __future__ import annotations

import io
import tokenize
from typing import Union

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
