"""Facts of an audit, as typed data shared by its modules (no logic, no database access)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple


class AuditError(Exception):
    """A connection, usage or configuration problem: one line, exit status 2."""


@dataclass(frozen=True)
class KeyColumn:
    """A column the project treats as a key: where it was found and what kind of key it is."""

    entity: str  # model class or table name as the code names it
    attribute: str  # field name as the code names it
    table: str  # table name the code maps the entity to
    column: str  # column name the code maps the field to
    kind: Optional[str]  # natural-key kind (url, email, name, ...); None when the name says nothing
    sources: Tuple[str, ...] = ()  # "app/models.py:12 unique=True", "KD1 key", "configured"

    @property
    def label(self) -> str:
        return f"{self.table}.{self.column}"


@dataclass(frozen=True)
class Skipped:
    """A key column that was not audited, and why."""

    label: str
    reason: str


@dataclass(frozen=True)
class Reference:
    """A table whose rows follow the key's table: through a foreign key, or carrying the key."""

    table: str
    column: str
    via: str  # "foreign key" or "same key"
    referred_column: str = ""  # the key table's column a foreign key points at
    unique: bool = False  # the referencing column itself is unique


@dataclass(frozen=True)
class Spelling:
    """One way a key is written, and how many rows write it so."""

    value: str
    rows: int


@dataclass(frozen=True)
class Group:
    """One normal form written in more than one way."""

    normal: str
    rows: int
    spellings: Tuple[Spelling, ...]


@dataclass(frozen=True)
class ReferenceCount:
    """How many rows of a referencing table point at a key written in another spelling."""

    reference: Reference
    rows: int  # rows attributable to the drift
    total: int  # all rows of the referencing table


@dataclass
class ColumnReport:
    """The audit of one key column."""

    key: KeyColumn
    normal_form: str  # description of the normal form used
    computed_in: str  # "database" or "python"
    rows: int = 0
    null_rows: int = 0
    groups: int = 0
    rows_in_groups: int = 0
    invalid_values: int = 0  # values the normal form could not read (kept as their own key)
    worst: List[Group] = field(default_factory=list)
    references: List[ReferenceCount] = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.rows_in_groups / self.rows if self.rows else 0.0
