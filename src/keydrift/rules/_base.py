"""The rule base class: a code, a name, documentation, and a filter over analysis facts."""

from __future__ import annotations

import re
from typing import ClassVar, Iterable, Iterator, Tuple

REQUIRED_SECTIONS: Tuple[str, ...] = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Known problems",
)

_SECTION = re.compile(r"^## (.+)$", re.MULTILINE)


class Rule:
    """A rule's docstring is its documentation: ``keydrift explain``, docs/rules.md and every
    output format read it. It must have the sections in ``REQUIRED_SECTIONS`` as ``## `` headings."""

    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    SUMMARY: ClassVar[str] = ""

    @classmethod
    def documentation(cls) -> str:
        doc = (cls.__doc__ or "").strip("\n")
        lines = doc.splitlines()
        indent = min((len(l) - len(l.lstrip()) for l in lines[1:] if l.strip()), default=0)
        body = [lines[0].strip()] + [l[indent:] for l in lines[1:]]
        return "\n".join(body).strip() + "\n"

    @classmethod
    def sections(cls) -> Tuple[str, ...]:
        return tuple(m.group(1).strip() for m in _SECTION.finditer(cls.documentation()))

    def check(self, facts: Iterable[object]) -> Iterator[object]:  # pragma: no cover - abstract
        raise NotImplementedError
