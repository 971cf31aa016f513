"""The audit of one key column: counts, drift groups, referencing tables, and its part of the
plan. Database errors on one column (no permission, a table dropped meanwhile) skip that
column with the reason; the others are still audited."""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from dataclasses import replace
from typing import Any, Dict, FrozenSet, List, Optional

from keydrift.audit.connect import driver_message
from keydrift.audit.forms import NormalForm, builtin_form
from keydrift.audit.model import AuditError, ColumnReport, KeyColumn, Skipped
from keydrift.audit.queries import Queries, Scratch
from keydrift.audit.reflect import Target
from keydrift.output.progress import Progress


def form_for(key: KeyColumn, normalizers: Dict[str, NormalForm], url_steps: FrozenSet[str]) -> Optional[NormalForm]:
    """The project's normalizer for the key's kind, else one for every key, else the built-in."""
    return normalizers.get(key.kind or "") or normalizers.get("") or builtin_form(key.kind, url_steps)


def audit_column(queries: Queries, target: Target, form: NormalForm, args: argparse.Namespace,
                 skipped: List[Skipped], writer: Any = None) -> Optional[ColumnReport]:
    try:
        scratch = Scratch()
    except (OSError, sqlite3.Error) as exc:
        raise AuditError(f"cannot make a scratch file in {tempfile.gettempdir()} (set TMPDIR): {exc}") from None
    try:
        return _audit(queries, target, form, args, scratch, writer)
    except AuditError:
        raise
    except Exception as exc:  # noqa: BLE001 - one unreadable column must not stop the audit
        skipped.append(Skipped(target.label, f"cannot be read: {driver_message(exc)}"))
        return None
    finally:
        scratch.close()


def _audit(queries: Queries, target: Target, form: NormalForm, args: argparse.Namespace, scratch: Scratch,
           writer: Any) -> ColumnReport:
    key = replace(target.key, table=target.table, column=target.column)  # as the database spells them
    report = ColumnReport(key, form.description, "database" if form.sql else "python")
    report.rows, report.null_rows = queries.counts(target.table, target.column)
    progress = Progress(None if args.quiet else sys.stderr, report.rows - report.null_rows)

    def show(seen: int) -> None:
        progress.show(seen, f"{bar(seen, progress.total)} rows of {target.label}")

    try:
        if form.sql:
            queries.spellings_in_sql(target.table, target.column, form, scratch, show)
        else:
            report.invalid_values = queries.spellings_in_python(target.table, target.column, form, scratch, show)
        scratch.group()
        report.groups, report.rows_in_groups = scratch.totals()
        report.worst = list(scratch.groups(args.top))
        if report.groups:
            report.references = [queries.reference_count(target.table, target.column, reference, index, form, scratch)
                                 for index, reference in enumerate(target.references)]
        if writer is not None:
            writer.column(target, form, scratch)
    finally:
        progress.clear()
    return report


def bar(done: int, total: int, width: int = 24) -> str:
    """``[#########---------------]  37%``"""
    fraction = min(1.0, done / total) if total > 0 else 1.0
    filled = int(fraction * width)
    return f"[{'#' * filled}{'-' * (width - filled)}] {fraction:4.0%}"
