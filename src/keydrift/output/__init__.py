"""Output formats. Each formatter turns the sorted findings of a run into the full text to
print; ``FORMATTERS`` maps the ``--format`` names to them. The ``ReportContext`` carries the
project root, which SARIF and GitLab paths are relative to."""

from __future__ import annotations

from typing import Callable, Dict, Optional, Sequence

from keydrift.output import github, gitlab, json, sarif, text
from keydrift.output._common import ReportContext
from keydrift.types import Finding

Formatter = Callable[[Sequence[Finding], Optional[ReportContext]], str]

FORMATTERS: Dict[str, Formatter] = {
    "text": text.format_findings,
    "json": json.format_findings,
    "github": github.format_findings,
    "gitlab": gitlab.format_findings,
    "sarif": sarif.format_findings,
}

__all__ = ["FORMATTERS", "Formatter", "ReportContext"]
