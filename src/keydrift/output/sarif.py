"""SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

One run. ``tool.driver.rules`` carries every rule with the documentation ``keydrift explain``
prints (``help.text`` and ``help.markdown``). Each result has the reported location, the
finding's related locations (the read, the write, a helper's access, a reassignment) as
``relatedLocations``, and the same locations in order as a ``codeFlows`` thread flow, so a viewer
can step from the read to the write. Paths are relative to the project root, which
``originalUriBaseIds["%SRCROOT%"]`` names; files outside it get absolute ``file:`` URIs.
``partialFingerprints`` hash the finding's identity (rule, entity, field, transformation,
enclosing function) and its path, never a line number.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Type

from keydrift import __version__
from keydrift.output._common import (
    ReportContext, directory_uri, file_uri, full_message, occurrence_fingerprints, relative_uri,
)
from keydrift.types import Finding, Location

if TYPE_CHECKING:
    from keydrift.rules._base import Rule

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"
FINGERPRINT_NAME = "keydrift/v1"

Json = Dict[str, Any]


def format_findings(findings: Sequence[Finding], context: Optional[ReportContext] = None) -> str:
    return json.dumps(sarif_log(findings, context or ReportContext()), indent=2, ensure_ascii=False) + "\n"


def sarif_log(findings: Sequence[Finding], context: ReportContext) -> Json:
    from keydrift.rules import ALL_RULES  # the registry (and libcst) only when SARIF is written

    rule_index = {rule.CODE: index for index, rule in enumerate(ALL_RULES)}
    fingerprints = occurrence_fingerprints(findings, context.root)
    results = [_result(f, fp, rule_index, context.root) for f, fp in zip(findings, fingerprints)]
    run = {
        "tool": {"driver": _driver()},
        "originalUriBaseIds": {SOURCE_ROOT: {"uri": directory_uri(context.root)}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


# --- the tool and its rules -----------------------------------------------------------------

def _driver() -> Json:
    from keydrift.rules import ALL_RULES

    return {
        "name": "keydrift",
        "version": __version__,
        "semanticVersion": __version__,
        "rules": [rule_descriptor(rule) for rule in ALL_RULES],
    }


def rule_descriptor(rule: Type["Rule"]) -> Json:
    documentation = rule.documentation()
    return {
        "id": rule.CODE,
        "name": rule.NAME,
        "shortDescription": {"text": rule.SUMMARY},
        "fullDescription": {"text": first_paragraph(documentation)},
        "help": {"text": documentation, "markdown": documentation},
        "defaultConfiguration": {"level": level_for(rule.CODE)},
        "properties": {"tags": ["correctness"]},
    }


def first_paragraph(documentation: str) -> str:
    return documentation.split("\n\n", 1)[0].strip()


def level_for(code: str) -> str:
    """KD9xx say a file was not analyzed: a note about the run, not a defect in the code."""
    return "note" if code.startswith("KD9") else "warning"


# --- results --------------------------------------------------------------------------------

def _result(finding: Finding, fingerprint: str, rule_index: Dict[str, int], root: str) -> Json:
    result: Json = {
        "ruleId": finding.code,
        "level": level_for(finding.code),
        "message": {"text": full_message(finding)},
        "locations": [{"physicalLocation": _physical(finding.path, finding.line, finding.col, root,
                                                     max(finding.line, finding.end_line))}],
        "partialFingerprints": {FINGERPRINT_NAME: fingerprint},
    }
    if finding.code in rule_index:
        result["ruleIndex"] = rule_index[finding.code]
    if finding.related:
        result["relatedLocations"] = _related_locations(finding.related, root)
        result["codeFlows"] = [{"threadFlows": [{"locations": _flow(finding.related, root)}]}]
    return result


def _related_locations(related: Sequence[Location], root: str) -> List[Json]:
    return [
        {"id": index, "physicalLocation": _physical(r.path, r.line, r.col, root),
         "message": {"text": r.note or "related"}}
        for index, r in enumerate(related)
    ]


def _flow(related: Sequence[Location], root: str) -> List[Json]:
    return [
        {"location": {"physicalLocation": _physical(r.path, r.line, r.col, root),
                      "message": {"text": r.note or "step"}},
         "executionOrder": order}
        for order, r in enumerate(related, start=1)
    ]


def _physical(path: str, line: int, col: int, root: str, end_line: int = 0) -> Json:
    region: Json = {"startLine": max(1, line), "startColumn": col + 1}
    if end_line > line:
        region["endLine"] = end_line
    return {"artifactLocation": artifact_location(path, root), "region": region}


def artifact_location(path: str, root: str) -> Json:
    relative = relative_uri(path, root)
    if relative is None:
        return {"uri": file_uri(path)}
    return {"uri": relative, "uriBaseId": SOURCE_ROOT}
