"""``[tool.keydrift.audit]`` in pyproject.toml: what the code alone cannot tell the audit.

    [tool.keydrift.audit]
    columns = ["accounts.login=email", "pages.path"]   # table.column, optionally =kind
    references = { "audit_log.page_url" = "pages.url" }  # a table carrying another's key
    ignore = ["legacy_users.email"]                     # key columns not to audit
    url-steps = ["case", "port", "slash"]                # the URL normal form's steps
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from keydrift.audit.forms import URL_STEPS, parse_url_steps
from keydrift.audit.model import AuditError

KINDS = ("url", "email", "host", "username", "slug", "path", "name")
_COLUMN = re.compile(r"^([\w$]+)\.([\w$]+)(?:=(\w+))?$")
KNOWN_KEYS = ("columns", "references", "ignore", "url-steps")


@dataclass
class AuditSettings:
    """The audit's settings from ``[tool.keydrift.audit]``: extra key columns, references,
    columns ignored and the URL normal form's steps."""

    columns: List[Tuple[str, str, Optional[str]]] = field(default_factory=list)
    references: Dict[Tuple[str, str], Tuple[str, str]] = field(default_factory=dict)
    ignore: FrozenSet[str] = frozenset()
    url_steps: FrozenSet[str] = frozenset(URL_STEPS)


def load_settings(pyproject: str) -> AuditSettings:
    if not pyproject:
        return AuditSettings()
    table = _audit_table(pyproject)
    shown = f"{pyproject}: [tool.keydrift.audit]"
    for key in table:
        if key not in KNOWN_KEYS:
            raise AuditError(f"{shown} unknown key {key!r} (keys: {', '.join(KNOWN_KEYS)})")
    settings = AuditSettings()
    settings.columns = [_column(entry, shown, "columns") for entry in _strings(table, "columns", shown)]
    settings.ignore = frozenset(_strings(table, "ignore", shown))
    references = table.get("references", {})
    if not isinstance(references, dict):
        raise AuditError(f"{shown} 'references' must be a table of \"table.column\" = \"table.column\"")
    for source, target in references.items():
        src = _column(str(source), shown, "references")
        dst = _column(str(target), shown, "references")
        settings.references[src[:2]] = dst[:2]
    if "url-steps" in table:
        settings.url_steps = parse_url_steps(",".join(_strings(table, "url-steps", shown)))
    return settings


def _audit_table(pyproject: str) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        with open(pyproject, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, ValueError) as exc:
        raise AuditError(f"{pyproject}: {exc}") from None
    table = data.get("tool", {}).get("keydrift", {}).get("audit", {})
    if not isinstance(table, dict):
        raise AuditError(f"{pyproject}: [tool.keydrift.audit] must be a table")
    return table


def _strings(table: Dict[str, Any], key: str, shown: str) -> List[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AuditError(f"{shown} {key!r} must be a list of strings")
    return value


def _column(entry: str, shown: str, key: str) -> Tuple[str, str, Optional[str]]:
    match = _COLUMN.match(entry.strip())
    if not match:
        raise AuditError(f"{shown} {key!r} entry {entry!r} is not like 'table.column' or 'table.column=kind'")
    table, column, kind = match.groups()
    if kind and kind not in KINDS:
        raise AuditError(f"{shown} {key!r} entry {entry!r}: unknown kind {kind!r} (kinds: {', '.join(KINDS)})")
    return table, column, kind
