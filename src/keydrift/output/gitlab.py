"""GitLab Code Quality: a JSON array of issues, shown in merge requests.

Each issue has ``description``, ``check_name`` (the rule code), ``fingerprint`` (unique per
issue, stable across edits that move code), ``severity`` and ``location.path`` (relative to the
project root, which should be the repository root) with ``location.lines.begin``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Sequence

from keydrift.output._common import ReportContext, display_path, full_message, occurrence_fingerprints
from keydrift.types import Finding


def severity_for(code: str) -> str:
    """Code Quality severities: info, minor, major, critical, blocker."""
    return "minor" if code.startswith("KD9") else "major"


def issue(finding: Finding, fingerprint: str, root: str) -> Dict[str, Any]:
    return {
        "type": "issue",
        "check_name": finding.code,
        "description": full_message(finding),
        "categories": ["Bug Risk"],
        "severity": severity_for(finding.code),
        "fingerprint": fingerprint,
        "location": {"path": display_path(finding.path, root),
                     "lines": {"begin": finding.line, "end": max(finding.line, finding.end_line)}},
    }


def format_findings(findings: Sequence[Finding], context: Optional[ReportContext] = None) -> str:
    root = (context or ReportContext()).root
    fingerprints = occurrence_fingerprints(findings, root)
    issues = [issue(f, fp, root) for f, fp in zip(findings, fingerprints)]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
