"""``keydrift audit-db DATABASE_URL [PATH ...]``: the run that ties the audit's modules together
(discovery -> reflection -> queries -> report and plan); its arguments are ``audit/arguments.py``."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from contextlib import ExitStack, nullcontext
from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from keydrift.audit.model import AuditError, ColumnReport, KeyColumn, Reference, Skipped


def run(args: argparse.Namespace) -> int:
    try:
        with warnings.catch_warnings():
            # SQLAlchemy warns about what it cannot reflect (expression indexes): not the user's concern
            warnings.filterwarnings("ignore", module=r"sqlalchemy\.")
            warnings.filterwarnings("ignore", message=r".*(reflection|reflect)")
            return _run(args)
    except AuditError as exc:
        print(f"keydrift: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from keydrift.audit import connect, forms
    from keydrift.audit.report import render

    url, config, settings = _inputs(args)
    steps = forms.parse_url_steps(args.url_steps) if args.url_steps is not None else settings.url_steps
    engine, shown = connect.open_engine(url)
    try:
        connect.check_connection(engine, shown)
        normalizers = forms.parse_normalizers(args.normalizer, config.root)
        targets, skipped = _targets(engine, shown, args, config, settings)
        reports = _audit(engine, args, targets, normalizers, steps, skipped, shown)
    finally:
        engine.dispose()
    if not reports:
        _print_skipped(skipped)
        raise AuditError(f"no key column of {shown} could be audited (see the skipped columns above)")
    _write(render(args.format, shown, reports, skipped), args.output)
    return 1 if any(r.groups for r in reports) else 0


def _inputs(args: argparse.Namespace) -> Tuple[str, Any, Any]:
    """The database URL, the project's configuration and its [tool.keydrift.audit] settings."""
    from keydrift.audit import connect
    from keydrift.audit.settings import load_settings
    from keydrift.config import ConfigError, load_config, load_config_file

    if args.url and "://" not in args.url and os.environ.get(connect.ENVIRONMENT_VARIABLE):
        # `keydrift audit-db app/` with the URL in the environment: the argument is a path
        args.paths = [args.url] + (args.paths if args.paths != ["."] else [])
        args.url = ""
    url = connect.database_url(args.url)
    if args.top < 0:
        raise AuditError("--top must be 0 or more")
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        raise AuditError(f"{missing[0]}: no such file or directory")
    try:
        config = load_config_file(args.config) if args.config else load_config(args.paths[0])
    except ConfigError as exc:
        raise AuditError(str(exc)) from None
    if args.no_cache:
        config = replace(config, cache=False)
    return url, config, load_settings(config.config_file)


def _targets(engine: Any, shown: str, args: argparse.Namespace, config: Any, settings: Any) -> Tuple[List[Any], List[Skipped]]:
    """The key columns of the code that the database has, and those skipped."""
    from keydrift.audit import connect, reflect
    from keydrift.audit.discovery import key_columns

    keys, skipped = key_columns(list(args.paths), config, settings.columns, None if args.quiet else sys.stderr)
    keys = _selected(keys, settings.ignore, skipped)
    try:
        schema = reflect.Schema(engine, args.schema)
        targets, missing_columns = reflect.targets(schema, keys)
    except Exception as exc:  # noqa: BLE001 - reflection failing as a whole: permissions, schema
        raise AuditError(f"cannot read the schema of {shown}: {connect.driver_message(exc)}") from None
    skipped += missing_columns
    _configured_references(schema, targets, settings.references, skipped)
    if args.only:  # after references: a table left out still counts as referencing
        wanted = {o.lower() for o in args.only}
        targets = [t for t in targets if t.label.lower() in wanted or t.key.label.lower() in wanted]
        if not targets:
            raise AuditError(f"--only {' '.join(args.only)}: no such key column in the code and the database")
    if not targets:
        _print_skipped(skipped)
        raise AuditError(f"nothing to audit in {shown}: {len(keys)} key columns found in the code, "
                         "none of them readable in the database" if keys else
                         f"no key columns found in {' '.join(args.paths)} (list them under [tool.keydrift.audit] columns)")
    return targets, skipped


def _selected(keys: List[KeyColumn], ignore: frozenset, skipped: List[Skipped]) -> List[KeyColumn]:
    ignored = {i.lower() for i in ignore}
    out = []
    for key in keys:
        if key.label.lower() in ignored:
            skipped.append(Skipped(key.label, "ignored in [tool.keydrift.audit]"))
        else:
            out.append(key)
    return out


def _configured_references(schema: Any, targets: List[Any], references: Dict[Tuple[str, str], Tuple[str, str]],
                           skipped: List[Skipped]) -> None:
    for (table, column), (key_table, key_column) in references.items():
        target = next((t for t in targets if t.table.lower() == key_table.lower()
                       and t.column.lower() == key_column.lower()), None)
        real_table = schema.table(table)
        real_column = schema.column(real_table, column) if real_table else None
        if target is None or real_column is None:
            skipped.append(Skipped(f"{table}.{column}", f"reference to {key_table}.{key_column}: "
                                   f"{'no such column in the database' if real_column is None else 'that key is not audited'}"))
            continue
        target.references.append(Reference(real_table, real_column, "same key"))


def _audit(engine: Any, args: argparse.Namespace, targets: List[Any], normalizers: Dict[str, Any],
           steps: frozenset, skipped: List[Skipped], shown: str) -> List[ColumnReport]:
    from keydrift.audit.audit import audit_column, form_for
    from keydrift.audit.plan import PlanWriter, footer, header
    from keydrift.audit.queries import Queries

    queries = Queries(engine, args.schema)
    reports: List[ColumnReport] = []
    with ExitStack() as stack:
        plan_file = _open_plan(args.plan, stack)
        if plan_file:
            header(plan_file, shown, engine.dialect.name)
        writer = PlanWriter(plan_file, queries) if plan_file else None
        for target in sorted(targets, key=lambda t: (t.table.lower(), t.column.lower())):
            form = form_for(target.key, normalizers, steps)
            if form is None:
                skipped.append(Skipped(target.label, f"no built-in normal form for a {target.key.kind or 'column'} "
                                                      "named so: pass --normalizer or give it a kind under "
                                                      "[tool.keydrift.audit] columns"))
                continue
            report = audit_column(queries, target, form, args, skipped, writer)
            if report is not None:
                reports.append(report)
        if plan_file:
            footer(plan_file)
    return reports


def _open_plan(path: Optional[str], stack: ExitStack) -> Any:
    if not path:
        return None
    try:
        return stack.enter_context(open(path, "w", encoding="utf-8"))
    except OSError as exc:
        raise AuditError(f"cannot write the plan to {path}: {exc.strerror or exc}") from None


def _print_skipped(skipped: Sequence[Skipped]) -> None:
    for item in skipped:
        print(f"keydrift: skipped {item.label}: {item.reason}", file=sys.stderr)


def _write(report: str, output: Optional[str]) -> None:
    """The report on stdout, or in ``output``."""
    try:
        stream = open(output, "w", encoding="utf-8") if output else None
    except OSError as exc:
        raise AuditError(f"cannot write {output}: {exc.strerror or exc}") from None
    with stream or nullcontext(sys.stdout) as target:
        target.write(report)
        target.flush()
