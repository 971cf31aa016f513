"""Plain data shared by every layer: findings, locations, configuration. No logic."""

from __future__ import annotations

from dataclasses import field
from typing import Dict, Optional, Tuple

from keydrift.records import record


@record
class Location:
    """One step of a finding's path: a read, a transformation or a write."""

    path: str
    line: int  # 1-based
    col: int  # 0-based, like ast's col_offset
    note: str = ""  # what happens here, e.g. "read by domain.url"


@record
class Span:
    """An exact source range: 1-based lines, 0-based columns, the end column exclusive."""

    line: int
    col: int
    end_line: int
    end_col: int


@record
class FixFacts:
    """What a fix needs to know beyond the finding's position and the source text (see
    keydrift.fixes): the expression to rewrite and, for key fixes, the key, its normalizer and
    the value to apply it to."""

    target: Span
    entity: str = ""
    field: str = ""
    normalizer: str = ""  # the normalizer to apply, as called in the module (``normalize_email``)
    value: str = ""  # the key's expression inside ``target`` that lacks it, as written


@record
class Finding:
    """One diagnostic. ``line``/``col`` is where it is reported; ``end_line`` is the last line
    of the reported statement, so a ``# noqa`` on any of its lines suppresses it."""

    code: str
    message: str
    path: str
    line: int
    col: int
    end_line: int = 0
    related: Tuple[Location, ...] = ()
    # Stable identity for baselines: entity, field, transformation, enclosing function.
    fingerprint: Tuple[str, ...] = ()
    # Where the reported node ends on ``end_line`` (0-based, exclusive); 0 when unknown.
    end_col: int = 0
    fix: Optional[FixFacts] = None

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.code, self.message)


@record
class TableWrapper:
    """A configured in-house table helper (``[tool.keydrift] tables``): which argument is the
    table, which the dict of key columns, which the dict of stored values. Each is a parameter
    name, a position among the positional arguments at the call (``int``), or ``None``;
    ``fixed_table`` names the table of a helper bound to one."""

    function: str  # qualified name, or "*.method" for a method of any receiver
    operation: str  # select | insert | upsert | update | delete
    table: object = None
    keys: object = None
    values: object = None
    fixed_table: str = ""


@record
class Config:
    """The ``[tool.keydrift]`` table, validated. ``root`` is the project root (where the
    pyproject.toml was found, or the working directory)."""

    root: str = "."
    config_file: str = ""
    boundary: Tuple[str, ...] = ()
    normalizers: Tuple[str, ...] = ()
    # in-house wrappers that read or write by a key: "app.db.fetch_by_url:url[=Entity.field]"
    readers: Tuple[str, ...] = ()
    writers: Tuple[str, ...] = ()
    # in-house table helpers: "app.db.upsert: upsert table=table keys=keyvalues values=values"
    tables: Tuple[TableWrapper, ...] = ()
    exclude: Tuple[str, ...] = ()
    per_file_ignores: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    cache: bool = True  # the on-disk project index cache (--no-cache turns it off)
