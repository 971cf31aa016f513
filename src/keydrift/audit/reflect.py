"""What the database has: tables, columns and their types, primary keys, unique columns and
foreign keys (SQLAlchemy reflection). Key columns the code names are checked against it; those
that are missing or not text are skipped with the reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from keydrift.audit.connect import driver_message
from keydrift.audit.model import KeyColumn, Reference, Skipped

# columns that say when a row was made: the earliest row of a group is the canonical one
CREATED_COLUMNS: Tuple[str, ...] = ("created_at", "created", "date_created", "created_on", "inserted_at")


@dataclass
class Target:
    """A key column that exists in the database, with what the audit and the plan need."""

    key: KeyColumn
    table: str  # as the database spells it
    column: str
    primary_key: Optional[str]  # a single-column primary key, else None
    created: Optional[str]  # a creation-time column, else None
    unique: bool  # the column alone is unique (constraint, unique index or primary key)
    composite_unique: bool  # the column is part of a multi-column unique constraint
    references: List[Reference] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.table}.{self.column}"


class Schema:
    """Lazy, cached reflection of one database schema."""

    def __init__(self, engine: Any, schema: Optional[str] = None) -> None:
        import sqlalchemy as sa

        self.inspector = sa.inspect(engine)
        self.schema = schema
        self.tables = {name.lower(): name for name in self.inspector.get_table_names(schema=schema)}
        self._columns: Dict[str, Dict[str, Any]] = {}
        self._foreign_keys: Optional[Dict[str, List[Dict[str, Any]]]] = None

    def table(self, name: str) -> Optional[str]:
        return name if name in self.tables.values() else self.tables.get(name.lower())

    def columns(self, table: str) -> Dict[str, Any]:
        if table not in self._columns:
            self._columns[table] = {c["name"]: c["type"] for c in self.inspector.get_columns(table, schema=self.schema)}
        return self._columns[table]

    def column(self, table: str, name: str) -> Optional[str]:
        columns = self.columns(table)
        if name in columns:
            return name
        return next((c for c in columns if c.lower() == name.lower()), None)

    def primary_key(self, table: str) -> List[str]:
        return list(self.inspector.get_pk_constraint(table, schema=self.schema).get("constrained_columns") or [])

    def unique_sets(self, table: str) -> List[Tuple[str, ...]]:
        sets = [tuple(c["column_names"]) for c in self.inspector.get_unique_constraints(table, schema=self.schema)]
        sets += [tuple(i["column_names"]) for i in self._indexes(table)
                 if i.get("unique") and None not in i["column_names"]]
        primary = self.primary_key(table)
        return sets + ([tuple(primary)] if primary else [])

    def _indexes(self, table: str) -> List[Dict[str, Any]]:
        if self.inspector.dialect.name == "sqlite":
            # an inline UNIQUE is an automatic index SQLite does not list by default
            return self.inspector.get_indexes(table, schema=self.schema, include_auto_indexes=True)
        return self.inspector.get_indexes(table, schema=self.schema)

    def foreign_keys(self) -> Dict[str, List[Dict[str, Any]]]:
        """Every table's foreign keys, read once."""
        if self._foreign_keys is None:
            self._foreign_keys = {t: self.inspector.get_foreign_keys(t, schema=self.schema)
                                  for t in sorted(self.tables.values())}
        return self._foreign_keys

    def foreign_keys_to(self, table: str) -> List[Reference]:
        out = []
        for other, foreign_keys in self.foreign_keys().items():
            for fk in foreign_keys:
                if fk.get("referred_table") != table or len(fk.get("constrained_columns") or ()) != 1:
                    continue
                column = fk["constrained_columns"][0]
                out.append(Reference(other, column, "foreign key", fk["referred_columns"][0],
                                     unique=(column,) in self.unique_sets(other)))
        return out


def is_text(column_type: Any) -> bool:
    import sqlalchemy as sa

    if isinstance(column_type, sa.types.NullType):
        return True  # SQLite: a column declared without a type holds what it is given
    return isinstance(column_type, sa.types.String)


def targets(schema: Schema, keys: Sequence[KeyColumn]) -> Tuple[List[Target], List[Skipped]]:
    found: List[Target] = []
    skipped: List[Skipped] = []
    for key in keys:
        try:
            target, reason = _target(schema, key)
        except Exception as exc:  # noqa: BLE001 - a table we may not read is skipped, not fatal
            target, reason = None, f"cannot read its definition: {driver_message(exc)}"
        if target is None:
            skipped.append(Skipped(key.label, reason))
        else:
            found.append(target)
    _add_references(schema, found)
    return found, skipped


def _target(schema: Schema, key: KeyColumn) -> Tuple[Optional[Target], str]:
    table = schema.table(key.table)
    if table is None:
        return None, f"no table {key.table!r} in the database ({_origin(key)})"
    column = schema.column(table, key.column)
    if column is None:
        return None, f"table {table!r} has no column {key.column!r} ({_origin(key)})"
    column_type = schema.columns(table)[column]
    if not is_text(column_type):
        return None, f"not a text column ({column_type})"
    primary = schema.primary_key(table)
    created = next((c for c in CREATED_COLUMNS if schema.column(table, c)), None)
    sets = schema.unique_sets(table)
    unique = (column,) in sets
    composite = any(column in s and len(s) > 1 for s in sets)
    return Target(key, table, column, primary[0] if len(primary) == 1 else None,
                  schema.column(table, created) if created else None, unique, composite), ""


def _origin(key: KeyColumn) -> str:
    named = f"{key.entity}.{key.attribute}" if (key.entity, key.attribute) != (key.table, key.column) else key.label
    return f"{named}: " + "; ".join(key.sources) if key.sources else named


def _add_references(schema: Schema, found: List[Target]) -> None:
    """Foreign keys to each key's table, and other audited tables carrying the same key."""
    for target in found:
        references = schema.foreign_keys_to(target.table)
        for other in found:
            if other.table != target.table and other.column.lower() == target.column.lower():
                references.append(Reference(other.table, other.column, "same key", unique=other.unique))
        target.references = references
