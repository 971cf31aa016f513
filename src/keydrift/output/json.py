"""Machine-readable output. The format is stable: fields are only ever added, and
``version`` changes if one is removed or changes meaning.

    {
      "version": 1,
      "keydrift": "0.1.0",
      "findings": [
        {
          "code": "KD101",
          "message": "KD101 AuditResult.url is written with ...",
          "path": "app/audit.py",          # as given on the command line
          "line": 6,                        # 1-based
          "column": 9,                      # 1-based, like the text format
          "end_line": 6,                    # last line of the reported statement
          "related": [{"path": ..., "line": 3, "column": 12, "note": "read by domain.url"}],
          "fingerprint": "3f2a9c0d41b7e6a5"  # stable across edits that move the code
        }
      ]
    }

``fingerprint`` hashes the rule code, entity, field, transformation and enclosing function,
not the line, so it survives unrelated edits; pair it with ``path`` for a baseline.
"""

from __future__ import annotations

import json as _json
from typing import Any, Dict, Optional, Sequence

from keydrift import __version__
from keydrift.output._common import ReportContext, full_message, identity, short_hash
from keydrift.types import Finding, Location

FORMAT_VERSION = 1


def fingerprint(finding: Finding) -> str:
    return short_hash(identity(finding))


def _location(location: Location) -> Dict[str, Any]:
    return {"path": location.path, "line": location.line, "column": location.col + 1,
            "note": location.note}


def finding_to_dict(finding: Finding) -> Dict[str, Any]:
    return {
        "code": finding.code,
        "message": full_message(finding),
        "path": finding.path,
        "line": finding.line,
        "column": finding.col + 1,
        "end_line": max(finding.line, finding.end_line),
        "related": [_location(r) for r in finding.related],
        "fingerprint": fingerprint(finding),
    }


def format_findings(findings: Sequence[Finding], context: Optional[ReportContext] = None) -> str:
    document = {"version": FORMAT_VERSION, "keydrift": __version__,
                "findings": [finding_to_dict(f) for f in findings]}
    return _json.dumps(document, indent=2, ensure_ascii=False) + "\n"
