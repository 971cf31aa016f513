"""Rule examples: small projects that are documentation and tests at once.

Every rule class carries ``INVALID`` examples (code the rule reports, each expected finding
marked ``# expect: KD101`` at the end of the line where it is reported) and ``VALID`` examples
(the fix, and near misses the rule must stay silent on; no marker). The test suite runs every
example (``tests/test_rule_examples.py``): an example's findings, of every rule, must be exactly
its markers. ``keydrift explain``, docs/rules.md and SARIF's rule help show them, so what the
documentation shows is what keydrift does.

An example is one file (``example.py`` unless named) or several, and may carry a
``[tool.keydrift]`` table::

    INVALID = (
        Invalid('''
            def record_visit(url):
                if not Page.objects.filter(url=url).exists():
                    Page.objects.create(url=url.rstrip("/"))  # expect: KD102
            '''),
        Invalid({"app/models.py": MODELS, "app/views.py": VIEW}, config='boundary = ["app.models"]'),
    )
    VALID = (Valid(FIXED, note="Transform once, before the read:"),)

Sources are dedented; a leading newline is dropped.
"""

from __future__ import annotations

from functools import cached_property
from typing import Callable, List, Mapping, Optional, Tuple, Union

from keydrift.patterns import lazy
from keydrift.records import record

DEFAULT_FILE = "example.py"

# ``# expect: KD101`` or ``# expect: KD101, KD202``; the codes run to the end of the comment.
EXAMPLE_MARKER = lazy(r"#\s*expect:\s*(?P<codes>KD\d{3}(?:\s*,\s*KD\d{3})*)\s*(?=#|$)")

Source = Union[str, Callable[[], str]]
Files = Union[Source, Mapping[str, Source]]
# What keydrift reports on an example, one line per finding (``path:line:col: CODE message``).
Reporter = Callable[["Example"], List[str]]


@record
class Example:
    """A tiny project: ``files`` as (relative path, source) pairs, the body of a
    ``[tool.keydrift]`` table (``config``), a sentence shown before it (``note``) and, for code
    too large to show, a ``shown`` description that replaces the code in the documentation.

    Sources are dedented when first read, and a source may be a function that builds it (a
    generated module): importing the rules costs nothing."""

    given: Tuple[Tuple[str, Source], ...]
    valid: bool
    config: str = ""
    note: str = ""
    shown: str = ""

    @cached_property
    def files(self) -> Tuple[Tuple[str, str], ...]:
        import textwrap  # only the documentation and the tests read an example: a check does not

        return tuple((path, textwrap.dedent(source() if callable(source) else source).lstrip("\n"))
                     for path, source in self.given)

    def pyproject(self) -> str:
        """The pyproject.toml the example runs with ("" without configuration)."""
        return f"[tool.keydrift]\n{self.config.strip()}\n" if self.config.strip() else ""

    def markers(self) -> List[Tuple[str, int, str]]:
        """``(path, line, code)`` of every ``# expect:`` marker."""
        found = []
        for path, source in self.files:
            for number, line in enumerate(source.splitlines(), 1):
                for match in EXAMPLE_MARKER.finditer(line):
                    found.extend((path, number, c.strip()) for c in match["codes"].split(","))
        return found

    def render(self, reporter: Optional[Reporter] = None) -> str:
        """Markdown: the note, the configuration, each file in a fenced block and, with a
        ``reporter``, what keydrift reports on it."""
        parts = [self.note.strip()] if self.note.strip() else []
        if self.shown:
            parts.append(self.shown.strip())
        else:
            if self.pyproject():
                parts.append(f"`pyproject.toml`:\n```toml\n{self.pyproject()}```")
            named = len(self.files) > 1 or self.files[0][0] != DEFAULT_FILE
            for path, source in self.files:
                if source.strip():
                    block = f"```python\n{source.rstrip()}\n```"
                    parts.append(f"`{path}`:\n{block}" if named else block)
        report = reporter(self) if reporter is not None and not self.valid else []
        if report:
            parts.append("keydrift reports:\n```text\n" + "\n".join(report) + "\n```")
        return "\n".join(parts)


def _files(files: Files) -> Tuple[Tuple[str, Source], ...]:
    items = list(files.items()) if isinstance(files, Mapping) else [(DEFAULT_FILE, files)]
    if not items:
        raise ValueError("an example needs at least one file")
    return tuple(items)


def Invalid(files: Files, config: str = "", note: str = "", shown: str = "") -> Example:  # noqa: N802
    """Code the rule reports; mark each expected finding with ``# expect: CODE``."""
    return Example(_files(files), valid=False, config=config, note=note, shown=shown)


def Valid(files: Files, config: str = "", note: str = "", shown: str = "") -> Example:  # noqa: N802
    """Code no rule reports: the fix, or a near miss."""
    return Example(_files(files), valid=True, config=config, note=note, shown=shown)


def render_section(title: str, examples: Tuple[Example, ...], reporter: Optional[Reporter] = None) -> str:
    """``## Example`` / ``## Use instead`` with every example, blank-line separated."""
    return f"## {title}\n" + "\n\n".join(e.render(reporter) for e in examples) + "\n"
