"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request.

``::warning file=PATH,line=N,col=N,title=CODE::MESSAGE``. Values are escaped as the
Actions runner expects: ``%``, CR and LF everywhere, and also ``:`` and ``,`` in properties.
"""

from __future__ import annotations

from typing import Optional, Sequence

from keydrift.output._common import ReportContext, full_message
from keydrift.types import Finding


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def format_finding(finding: Finding) -> str:
    properties = ",".join(f"{name}={escape_property(str(value))}" for name, value in (
        ("file", finding.path), ("line", finding.line), ("col", finding.col + 1),
        ("title", finding.code)))
    return f"::warning {properties}::{escape_data(full_message(finding))}"


def format_findings(findings: Sequence[Finding], context: Optional[ReportContext] = None) -> str:
    return "".join(format_finding(f) + "\n" for f in findings)
