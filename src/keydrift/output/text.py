"""flake8-style lines: ``path:line:col: CODE message`` with a 1-based column."""

from __future__ import annotations

from typing import Optional, Sequence

from keydrift.output._common import ReportContext, full_message
from keydrift.types import Finding


def format_finding(finding: Finding) -> str:
    return f"{finding.path}:{finding.line}:{finding.col + 1}: {full_message(finding)}"


def format_findings(findings: Sequence[Finding], context: Optional[ReportContext] = None) -> str:
    return "".join(format_finding(f) + "\n" for f in findings)
