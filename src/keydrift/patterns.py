"""Regular expressions compiled when first used, not when their module is imported.

A one-file check (an editor's save, a hook) imports the whole analysis and uses well under half
of its module-level patterns; compiling all of them at import was about a tenth of that import.
``lazy(text)`` stands for ``re.compile(text)``: the first use of any attribute compiles the
pattern and keeps its bound methods on the object, so later calls cost what a compiled
pattern's do. Never pass one to ``re.match(PATTERN, ...)``-style functions: call its methods.
"""

from __future__ import annotations

import re
from typing import Any, cast

_FORWARDED = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split",
              "pattern", "flags", "groups", "groupindex")


class _LazyPattern:
    def __init__(self, text: str, flags: int) -> None:
        self._text = text
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # only for attributes not set yet: the first use
        compiled = re.compile(self._text, self._flags)
        for attribute in _FORWARDED:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._text!r}, {self._flags!r})"


def lazy(text: str, flags: int = 0) -> "re.Pattern[str]":
    """``re.compile(text, flags)``, compiled on first use."""
    return cast("re.Pattern[str]", _LazyPattern(text, flags))
