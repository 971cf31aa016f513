"""KD302: a unique constraint or index covers a natural key that nothing canonicalizes."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.analysis.uniqueness import CONSTRAINT, describe, uncanonical_keys
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.types import Config


class UniqueConstraintNotCanonicalized(Rule):
    """A unique constraint or index covers a natural key that is never canonicalized.

    ## What it does
    Finds uniqueness declared apart from a model field — Django `UniqueConstraint(fields=[...])`
    and `unique_together`, SQLAlchemy `UniqueConstraint("email")` and
    `Index("ix", "email", unique=True)` (in `__table_args__`, a `Table(...)` or at module level),
    peewee `Meta.indexes` entries marked unique, SQL DDL in string literals (`CREATE UNIQUE
    INDEX ... ON t (col)`, `col TEXT UNIQUE`, `col TEXT PRIMARY KEY`, `UNIQUE (col)` and
    `PRIMARY KEY (col)` in `CREATE TABLE`, `ALTER TABLE ... ADD ... UNIQUE (col)`; read with
    sqlglot), and MongoDB `create_index("email", unique=True)` /
    `create_index([("email", 1)], unique=True)` / `IndexModel(..., unique=True)` — when one of
    the covered columns is a natural key (same names as KD301) that nothing in the module
    canonicalizes. A composite constraint is reported for its natural-key columns:
    `UniqueConstraint("user_id", "url")` still lets one user save a URL twice.

    Silent for functional constraints (`UniqueConstraint(Lower("email"), name=...)`,
    `Index("ix", func.lower(User.email), unique=True)`, `CREATE UNIQUE INDEX ... (lower(email))`,
    `COLLATE NOCASE`), a column a DDL `CHECK` holds to its canonical form (`CHECK (email =
    lower(email))` in the `CREATE TABLE` or an `ALTER TABLE ... ADD CONSTRAINT`), CITEXT and
    case-insensitive columns, MongoDB indexes with a collation of
    strength 1 or 2, and every other reason listed under KD301 (a bare `name` of a model that
    is not a tag, team, group..., `choices=` fields, relations such as a `ForeignKey` named
    `email`, test and migration code). Columns of unknown type (the table is declared
    elsewhere) are judged by their name.

    ## Why is this bad?
    The index compares bytes: `"Bob@Example.com"` and `"bob@example.com"`, `"/about"` and
    `"/about/"` are distinct, so the constraint lets duplicates in and lookups by the other
    spelling miss.

    ## Known problems
    DDL is reported at the start of its string literal, not at the column's line inside it.
    Strings are read where they are written as an assignment value or a call argument (two
    levels deep: `conn.execute(text("..."))`); SQL assembled at run time is not. Only the
    declaring module is inspected (see KD301). A CHECK that holds the column to its canonical
    form canonicalizes it: in DDL text, a Django `CheckConstraint(check=Q(email=Lower("email")))`
    (or `condition=`), a SQLAlchemy `CheckConstraint("email = lower(email)")`.

    ## Configuration
    Same as KD301: a configured normalizer whose qualified name names the key's kind covers
    it; one that names no kind covers keys declared in `boundary` modules.
    """

    CODE = "KD302"
    NAME = "unique-constraint-not-canonicalized"
    SUMMARY = "unique constraint or index on a natural key that is never canonicalized"

    INVALID = (
        Invalid("""
            def create_schema(conn):
                conn.execute("CREATE UNIQUE INDEX ix_users_email ON users (email)")  # expect: KD302
            """),
    )
    VALID = (
        Valid("""
            def create_schema(conn):
                conn.execute("CREATE UNIQUE INDEX ix_users_email ON users (lower(email))")
            """, note="Canonicalize at the boundary before the insert, or index the canonical form:"),
        Valid("""
            def create_schema(conn):
                conn.execute("CREATE UNIQUE INDEX ix_users_token ON users (api_token)")
            """, note="Not reported: a unique opaque identifier."),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        config: Config = getattr(facts, "config", None) or Config()
        for key in uncanonical_keys(facts):
            if key.declaration.kind != CONSTRAINT:
                continue
            target, detail = describe(key, config)
            yield RawFinding(
                code=self.CODE,
                message=(f"{self.CODE} {key.declaration.via} makes {target} unique, but it is never "
                         f"canonicalized {detail}"),
                node=key.declaration.node,
                fingerprint=(self.CODE, key.declaration.entity, key.declaration.via, *(c for c, _ in key.columns)),
            )
