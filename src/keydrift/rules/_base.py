"""The rule base class: a code, a name, documentation, and a filter over analysis facts."""

from __future__ import annotations

import re
from typing import ClassVar, Iterable, Iterator, Optional, Tuple

from keydrift.patterns import lazy
from keydrift.rules._examples import Example, Reporter, render_section

REQUIRED_SECTIONS: Tuple[str, ...] = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Known problems",
)

_SECTION = lazy(r"^## (.+)$", re.MULTILINE)


class Rule:
    """A rule's docstring and its examples are its documentation: ``keydrift explain``,
    docs/rules.md and every output format read ``documentation()``. The docstring has the
    sections "What it does", "Why is this bad?" and "Known problems" (optionally
    "Configuration") as ``## `` headings; "Example" and "Use instead" are rendered from
    ``INVALID`` and ``VALID`` (see ``keydrift.rules._examples``), which the test suite runs."""

    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    SUMMARY: ClassVar[str] = ""
    INVALID: ClassVar[Tuple[Example, ...]] = ()
    VALID: ClassVar[Tuple[Example, ...]] = ()

    @classmethod
    def documentation(cls, reporter: Optional[Reporter] = None) -> str:
        """The rule's documentation in Markdown; with a ``reporter`` (see
        ``keydrift.testing.report_example``), each invalid example shows what keydrift reports."""
        doc = (cls.__doc__ or "").strip("\n")
        lines = doc.splitlines()
        indent = min((len(l) - len(l.lstrip()) for l in lines[1:] if l.strip()), default=0)
        body = "\n".join([lines[0].strip()] + [l[indent:] for l in lines[1:]]).strip() + "\n"
        return _with_examples(body, cls.INVALID, cls.VALID, reporter)

    @classmethod
    def examples(cls) -> Tuple[Example, ...]:
        return cls.INVALID + cls.VALID

    @classmethod
    def sections(cls) -> Tuple[str, ...]:
        return tuple(m.group(1).strip() for m in _SECTION.finditer(cls.documentation()))

    def check(self, facts: Iterable[object]) -> Iterator[object]:  # pragma: no cover - abstract
        raise NotImplementedError


def _with_examples(body: str, invalid: Tuple[Example, ...], valid: Tuple[Example, ...],
                   reporter: Optional[Reporter]) -> str:
    """The docstring with "## Example" and "## Use instead" rendered from the examples, placed
    before "## Known problems" (or at the end)."""
    if not invalid and not valid:
        return body
    sections = "\n".join(render_section(title, examples, reporter) for title, examples in
                         (("Example", invalid), ("Use instead", valid)) if examples)
    head, marker, tail = body.partition("## Known problems")
    if not marker:
        return body.rstrip("\n") + "\n\n" + sections
    return head + sections + "\n" + marker + tail
