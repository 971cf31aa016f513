"""The ``audit-db`` command's arguments. Every ``keydrift`` run registers them (argparse needs
the subcommand to parse any command line), so they live apart from the audit itself
(``audit/command.py``), which a check never imports."""

from __future__ import annotations

import argparse
from typing import Any

DEFAULT_TOP = 10


def add_parser(commands: Any) -> None:
    """Registers ``audit-db`` on the ``keydrift`` command's subparsers."""
    audit = commands.add_parser(
        "audit-db", help="find key drift already in a database (read-only; needs keydrift[db])",
        description="Group each key column of the database by its normal form and report the keys "
                    "written in more than one spelling. Key columns come from the project's code. "
                    "Read-only: nothing is written to the database.")
    audit.add_argument("url", nargs="?", default="", metavar="DATABASE_URL",
                       help="sqlite:///app.db or postgresql://user:password@host/db "
                            "(default: $KEYDRIFT_DATABASE_URL)")
    audit.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                       help="the project's files or directories to read key columns from; default '.'")
    audit.add_argument("--format", choices=("text", "json"), default="text")
    audit.add_argument("--output", metavar="FILE", help="write the report to FILE")
    audit.add_argument("--plan", metavar="FILE", help="write the repair as reviewable SQL to FILE (never run)")
    audit.add_argument("--normalizer", action="append", default=[], metavar="[KIND=]MODULE:FUNCTION",
                       help="normalize keys (of one kind: url, email, ...) with the project's function; "
                            "this imports the project's module, which keydrift otherwise never does")
    audit.add_argument("--url-steps", metavar="STEPS",
                       help="steps of the built-in URL normal form, comma-separated "
                            "(default: scheme,case,port,www,slash)")
    audit.add_argument("--schema", metavar="NAME", help="the database schema to audit (default: the connection's)")
    audit.add_argument("--only", action="append", default=[], metavar="TABLE.COLUMN",
                       help="audit only this key column (repeatable)")
    audit.add_argument("--top", type=int, default=DEFAULT_TOP, metavar="N",
                       help=f"show the N worst keys of each column (default {DEFAULT_TOP})")
    audit.add_argument("--config", metavar="FILE", help="the pyproject.toml to use")
    audit.add_argument("--no-cache", action="store_true",
                       help="do not read or write the analysis cache (.keydrift_cache/ under the project root)")
    audit.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    audit.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from keydrift.audit.command import run

    return run(args)
