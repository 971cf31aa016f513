"""The audit's report: text for people, JSON for scripts (stable fields, like ``check``)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Sequence

from keydrift import __version__
from keydrift.audit.model import ColumnReport, Group, ReferenceCount, Skipped

JSON_VERSION = 1
_SHOWN_SPELLINGS = 10


def render(format: str, database: str, reports: Sequence[ColumnReport], skipped: Sequence[Skipped]) -> str:
    return (to_json if format == "json" else to_text)(database, reports, skipped)


# -- text ----------------------------------------------------------------------------------------

def to_text(database: str, reports: Sequence[ColumnReport], skipped: Sequence[Skipped]) -> str:
    lines: List[str] = []
    for report in reports:
        lines.extend(_column_text(report))
        lines.append("")
    if skipped:
        lines.append("skipped:")
        lines.extend(f"  {s.label}: {s.reason}" for s in skipped)
        lines.append("")
    drifting = sum(1 for r in reports if r.groups)
    audited = _count(len(reports), "key column")
    if drifting:
        lines.append(f"keydrift: drift in {drifting} of {audited} of {database}")
    else:
        lines.append(f"keydrift: no drift in {audited} of {database}")
    return "\n".join(lines) + "\n"


def _column_text(report: ColumnReport) -> List[str]:
    key = report.key
    lines = [f"{key.label}  ({key.kind or 'key'}; normal form: {report.normal_form}, computed {'by the database' if report.computed_in == 'database' else 'in Python'})"]
    if key.sources:
        lines.append(f"  key because: {'; '.join(key.sources)}")
    facts = f"{_count(report.rows, 'row')}"
    if report.null_rows:
        facts += f" ({report.null_rows:,} NULL, not audited)"
    lines.append(f"  {facts}; {_count(report.groups, 'key')} written in more than one spelling, "
                 f"{_count(report.rows_in_groups, 'row')} in them ({report.share:.1%} of the table)")
    if report.invalid_values:
        lines.append(f"  {_count(report.invalid_values, 'value')} without a normal form "
                     "(not a valid key of this kind): each kept as its own key")
    for group in report.worst:
        lines.extend(_group_text(group))
    if report.groups > len(report.worst):
        lines.append(f"  ... and {report.groups - len(report.worst):,} more (--top N shows more, --format json all counts)")
    for count in report.references:
        lines.append("  " + _reference_text(report, count))
    return lines


def _group_text(group: Group) -> List[str]:
    lines = [f"  {group.normal!r}: {len(group.spellings)} spellings, {_count(group.rows, 'row')}"]
    width = max(len(repr(s.value)) for s in group.spellings[:_SHOWN_SPELLINGS])
    for spelling in group.spellings[:_SHOWN_SPELLINGS]:
        lines.append(f"      {spelling.value!r:<{width}}  {_count(spelling.rows, 'row')}")
    if len(group.spellings) > _SHOWN_SPELLINGS:
        lines.append(f"      ... {len(group.spellings) - _SHOWN_SPELLINGS} more spellings")
    return lines


def _reference_text(report: ColumnReport, count: ReferenceCount) -> str:
    ref = count.reference
    if ref.via == "foreign key":
        how = f"{ref.table}.{ref.column} -> {report.key.table}.{ref.referred_column}"
    else:
        how = f"{ref.table}.{ref.column} (the same key)"
    share = count.rows / count.total if count.total else 0.0
    return f"referencing: {how}: {count.rows:,} of {_count(count.total, 'row')} ({share:.1%}) belong to drifting keys"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


# -- JSON ----------------------------------------------------------------------------------------

def to_json(database: str, reports: Sequence[ColumnReport], skipped: Sequence[Skipped]) -> str:
    document = {
        "version": JSON_VERSION,
        "keydrift": __version__,
        "database": database,
        "drift": any(r.groups for r in reports),
        "columns": [_column_json(r) for r in reports],
        "skipped": [{"column": s.label, "reason": s.reason} for s in skipped],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _column_json(report: ColumnReport) -> Dict[str, Any]:
    key = report.key
    return {
        "table": key.table,
        "column": key.column,
        "entity": key.entity,
        "field": key.attribute,
        "kind": key.kind,
        "sources": list(key.sources),
        "normal_form": report.normal_form,
        "computed_in": report.computed_in,
        "rows": report.rows,
        "null_rows": report.null_rows,
        "invalid_values": report.invalid_values,
        "groups": report.groups,
        "rows_in_groups": report.rows_in_groups,
        "share": round(report.share, 6),
        "worst_groups": [{"normal_form": g.normal, "rows": g.rows,
                          "spellings": [{"value": s.value, "rows": s.rows} for s in g.spellings]}
                         for g in report.worst],
        "references": [{"table": c.reference.table, "column": c.reference.column, "via": c.reference.via,
                        "referred_column": c.reference.referred_column or None, "rows": c.rows,
                        "total": c.total, "share": round(c.rows / c.total, 6) if c.total else 0.0}
                       for c in report.references],
    }
