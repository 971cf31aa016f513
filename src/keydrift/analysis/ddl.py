"""SQL DDL text as uniqueness facts (KD3): what ``CREATE TABLE``, ``CREATE UNIQUE INDEX`` and
``ALTER TABLE ... ADD UNIQUE`` declare, read with sqlglot (imported on the first DDL string: most
modules have none). Plain tuples, so the result of one text can be cached."""

from __future__ import annotations

import functools
from typing import Any, Iterator, List, Tuple

from keydrift.frameworks import schema

# What a column holds, as far as uniqueness cares.
TEXT = "text"
OTHER = "other"


DdlItem = Tuple[str, str, Tuple[str, ...], Tuple[str, ...]]


@functools.lru_cache(maxsize=256)
def ddl_items(text: str) -> Tuple[DdlItem, ...]:
    """What DDL text declares, as (kind, table, columns, detail) tuples:
    ("column", t, (c,), (TEXT|OTHER, canonical_by)) for every column of a CREATE TABLE;
    ("unique", t, columns, (via,)) for a unique column, constraint or index;
    ("canonical", t, columns, (why,)) for columns a functional/NOCASE unique index covers or a
    CHECK constraint holds to their canonical form (``CHECK (email = lower(email))``)."""
    items: List[DdlItem] = []
    for statement in _parse_ddl(text):
        try:
            items.extend(_statement_items(statement))
        except Exception:  # noqa: BLE001 - an unexpected tree shape (sqlglot version): skip it
            continue
    return tuple(items)


@functools.lru_cache(maxsize=256)
def canonical_check_columns(condition: str) -> Tuple[str, ...]:
    """The columns a CHECK condition written alone (SQLAlchemy ``CheckConstraint("email =
    lower(email)")``) holds to their canonical form, as ``_check_items`` reads them in DDL."""
    exp = _sqlglot().exp
    columns: List[str] = []
    for parsed in _parse_ddl(condition):
        try:
            columns.extend(_canonical_equalities(parsed, exp))
        except Exception:  # noqa: BLE001 - an unexpected tree shape (sqlglot version): nothing held
            continue
    return tuple(columns)


def mentions_uniqueness(text: str) -> bool:
    """Text that may declare what KD3 reads: a unique key (UNIQUE, PRIMARY KEY) or a CHECK that
    holds a key to its canonical form (an ``ALTER TABLE ... ADD CONSTRAINT ... CHECK`` alone)."""
    upper = text.upper()
    return "UNIQUE" in upper or "PRIMARY" in upper or "CHECK" in upper


def looks_like_ddl(text: str) -> bool:
    """Cheap test before sqlglot: a CREATE/ALTER statement that mentions UNIQUE, PRIMARY or CHECK."""
    return mentions_uniqueness(text) and schema.DDL_START.match(text) is not None


def _sqlglot() -> Any:
    import logging  # with sqlglot, which imports it anyway: a check without SQL needs neither
    import sqlglot  # imported on first DDL: most modules have none

    logging.getLogger("sqlglot").addHandler(logging.NullHandler())
    return sqlglot


def _parse_ddl(text: str) -> List[Any]:
    sqlglot = _sqlglot()
    for dialect in (None, "postgres", "sqlite", "mysql"):
        try:
            return [s for s in sqlglot.parse(text, read=dialect) if s is not None]
        except Exception:  # noqa: BLE001 - any sqlglot failure: try the next dialect
            continue
    return []


def _statement_items(statement: Any) -> Iterator[DdlItem]:
    from sqlglot import exp

    if isinstance(statement, exp.Create):
        kind = str(statement.args.get("kind") or "").upper()
        if kind == "TABLE" and isinstance(statement.this, exp.Schema):
            yield from _create_table_items(statement.this, exp)
            yield from _check_items(_sql_name(statement.this.this), statement.this, exp)
        elif kind == "INDEX" and statement.args.get("unique") and isinstance(statement.this, exp.Index):
            yield from _create_index_items(statement.this, exp)
    elif isinstance(statement, _alter_types(exp)):
        table = _sql_name(statement.this)
        for action in statement.args.get("actions") or ():
            for unique in action.find_all(exp.UniqueColumnConstraint):
                columns = _identifiers(unique.this)
                if columns:
                    yield ("unique", table, columns, ("ALTER TABLE ... ADD UNIQUE",))
            yield from _check_items(table, action, exp)


def _alter_types(exp: Any) -> Tuple[type, ...]:
    """``exp.Alter`` (sqlglot >= 25.x) or ``exp.AlterTable`` (older)."""
    return tuple(t for t in (getattr(exp, "Alter", None), getattr(exp, "AlterTable", None)) if t is not None)


def _create_table_items(schema_node: Any, exp: Any) -> Iterator[DdlItem]:
    table = _sql_name(schema_node.this)
    for item in schema_node.expressions:
        if isinstance(item, exp.ColumnDef):
            yield from _column_def_items(table, item, exp)
        elif isinstance(item, exp.Constraint):
            for unique in item.find_all(exp.UniqueColumnConstraint):
                yield ("unique", table, _identifiers(unique.this), (f"UNIQUE (...) in CREATE TABLE {table}",))
        elif isinstance(item, exp.UniqueColumnConstraint):
            yield ("unique", table, _identifiers(item.this), (f"UNIQUE (...) in CREATE TABLE {table}",))
        elif isinstance(item, exp.PrimaryKey):
            columns = tuple(_sql_name(e) for e in item.expressions)
            yield ("unique", table, columns, (f"PRIMARY KEY (...) in CREATE TABLE {table}",))


def _column_def_items(table: str, column_def: Any, exp: Any) -> Iterator[DdlItem]:
    column = _sql_name(column_def.this)
    type_name = _sql_type_name(column_def.args.get("kind"))
    canonical_by = "a CITEXT column" if type_name.lower() in schema.CASE_INSENSITIVE_SQL_TYPES else ""
    unique = ""
    for constraint in column_def.args.get("constraints") or ():
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.CollateColumnConstraint) and schema.is_case_insensitive_collation(kind.sql()):
            canonical_by = "a case-insensitive collation"
        elif isinstance(kind, exp.UniqueColumnConstraint):
            unique = "UNIQUE"
        elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
            unique = "PRIMARY KEY"
    is_text = type_name.upper() in schema.SQL_TEXT_TYPES or bool(canonical_by)
    yield ("column", table, (column,), (TEXT if is_text else OTHER, canonical_by))
    if unique:
        yield ("unique", table, (column,), (f"{column} {unique} in CREATE TABLE {table}",))


def _create_index_items(index: Any, exp: Any) -> Iterator[DdlItem]:
    table = _sql_name(index.args.get("table"))
    params = index.args.get("params")
    plain: List[str] = []
    for ordered in (params.args.get("columns") if params is not None else None) or ():
        expression = ordered.this if isinstance(ordered, exp.Ordered) else ordered
        columns = tuple(_sql_name(c) for c in expression.find_all(exp.Column))
        if isinstance(expression, exp.Column):
            plain.append(_sql_name(expression))
        elif _canonicalizing_sql(expression, exp):
            yield ("canonical", table, columns, (f"the functional unique index {short(expression.sql())}",))
    if plain:
        yield ("unique", table, tuple(plain), ("CREATE UNIQUE INDEX",))


def _check_items(table: str, node: Any, exp: Any) -> Iterator[DdlItem]:
    """Columns a CHECK constraint (of a column, of the table, or added by ALTER TABLE) holds to
    their canonical form: the condition, or one operand of an AND, is ``col = lower(col)``
    (either side; ``upper``, ``trim``, ``lower(trim(col))``...). Each row then stores the canonical
    spelling, so the unique key over it compares canonical values. An OR, an inequality, another
    column or a function of the column on both sides holds nothing."""
    for check in node.find_all(exp.CheckColumnConstraint):
        for column in _canonical_equalities(check.this, exp):
            yield ("canonical", table, (column,), (f"the CHECK constraint {short(check.this.sql())}",))


def _canonical_equalities(condition: Any, exp: Any) -> Iterator[str]:
    while isinstance(condition, exp.Paren):
        condition = condition.this
    if isinstance(condition, exp.And):
        yield from _canonical_equalities(condition.this, exp)
        yield from _canonical_equalities(condition.expression, exp)
    elif isinstance(condition, exp.EQ):
        for plain, other in ((condition.this, condition.expression), (condition.expression, condition.this)):
            if isinstance(plain, exp.Column) and _canonical_form_of(other, _sql_name(plain), exp):
                yield _sql_name(plain)


def _canonical_form_of(expression: Any, column: str, exp: Any) -> bool:
    """``lower(col)``, ``LOWER(TRIM(col))``: canonicalizing calls around the column itself."""
    while isinstance(expression, exp.Paren):
        expression = expression.this
    if not _canonicalizing_sql(expression, exp) or isinstance(expression, exp.Collate):
        return False
    inner = expression.this
    if isinstance(expression, exp.Anonymous):  # lcase(col) where sqlglot has no class for it
        inner = expression.expressions[0] if len(expression.expressions) == 1 else None
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if isinstance(inner, exp.Column):
        return _sql_name(inner) == column
    return _canonical_form_of(inner, column, exp)


def _canonicalizing_sql(expression: Any, exp: Any) -> bool:
    if isinstance(expression, exp.Collate):
        return schema.is_case_insensitive_collation(expression.sql())
    if isinstance(expression, exp.Anonymous):
        name = str(expression.this)
    elif isinstance(expression, exp.Func):
        name = expression.sql_name()
    else:
        return False
    return name.lower() in schema.CANONICALIZING_SQL_FUNCTIONS


def _sql_name(node: Any) -> str:
    if node is None:
        return ""
    name = getattr(node, "name", "") or ""
    return str(name)


def _sql_type_name(datatype: Any) -> str:
    if datatype is None:
        return ""
    text = datatype.sql()
    return text.split("(", 1)[0].strip()


def _identifiers(node: Any) -> Tuple[str, ...]:
    if node is None:
        return ()
    return tuple(_sql_name(e) for e in getattr(node, "expressions", ()) or ())


def short(text: str, limit: int = 40) -> str:
    """An expression on one line, cut to ``limit`` characters, for messages."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
