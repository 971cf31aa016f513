"""Output formats. Each formatter turns the sorted findings of a run into the full text to
print; ``FORMATTERS`` maps the ``--format`` names to them."""

from __future__ import annotations

from typing import Callable, Dict, Sequence

from keydrift.output import github, json, text
from keydrift.types import Finding

Formatter = Callable[[Sequence[Finding]], str]

FORMATTERS: Dict[str, Formatter] = {
    "text": text.format_findings,
    "json": json.format_findings,
    "github": github.format_findings,
}
