"""The audit's queries, read-only, and a scratch store for their results.

A normal form that SQL can express is computed by the database: one query finds the normal
forms written in more than one way, one more lists their spellings. Any other normal form is
computed in Python over the column's distinct values, streamed in batches (a server-side cursor
on PostgreSQL; SQLite's cursor is lazy) into a scratch SQLite file on local disk, which groups
them. Memory stays bounded by the batch size whatever the table's size; the user's database is
only ever read.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple

from keydrift.audit.forms import NormalForm, NotNormalizable
from keydrift.audit.model import Group, Reference, ReferenceCount, Spelling

BATCH = 5000  # rows fetched per round trip
IN_LIST = 500  # values per IN (...) list

Progress = Callable[[int], None]  # called with the number of rows seen so far


class Scratch:
    """A temporary SQLite file on local disk holding (normal form, spelling, rows): the grouping
    of values normalized in Python spills to disk instead of filling memory."""

    def __init__(self) -> None:
        handle, self.path = tempfile.mkstemp(prefix="keydrift-audit-", suffix=".sqlite3")
        os.close(handle)
        self.db = sqlite3.connect(self.path)
        self.db.executescript("""
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
            CREATE TABLE spelling (norm TEXT, raw TEXT, rows INTEGER);
            CREATE TABLE drift (norm TEXT PRIMARY KEY, rows INTEGER, spellings INTEGER);
            CREATE TABLE ref_spelling (ref INTEGER, norm TEXT, raw TEXT, rows INTEGER);
        """)

    def close(self) -> None:
        self.db.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def add(self, rows: Iterable[Tuple[Optional[str], str, int]]) -> None:
        self.db.executemany("INSERT INTO spelling VALUES (?, ?, ?)", rows)

    def group(self) -> None:
        self.db.executescript("""
            CREATE INDEX spelling_norm ON spelling (norm);
            CREATE INDEX spelling_raw ON spelling (raw);
            INSERT INTO drift SELECT norm, sum(rows), count(*) FROM spelling
              WHERE norm IS NOT NULL GROUP BY norm HAVING count(*) > 1;
        """)

    def totals(self) -> Tuple[int, int]:
        groups, rows = self.db.execute("SELECT count(*), coalesce(sum(rows), 0) FROM drift").fetchone()
        return int(groups), int(rows)

    def groups(self, limit: int = -1) -> Iterator[Group]:
        """Drift groups, worst (most rows) first."""
        cursor = self.db.execute("SELECT norm, rows FROM drift ORDER BY rows DESC, norm LIMIT ?", (limit,))
        for norm, rows in cursor.fetchall() if limit >= 0 else cursor:
            yield Group(norm, rows, self.spellings(norm))

    def spellings(self, norm: str) -> Tuple[Spelling, ...]:
        found = self.db.execute("SELECT raw, rows FROM spelling WHERE norm = ? ORDER BY rows DESC, raw", (norm,))
        return tuple(Spelling(raw, rows) for raw, rows in found)

    def normal_form_of(self, raw: str) -> Optional[str]:
        """The normal form of a spelling seen in the column (None: not seen, or none)."""
        found = self.db.execute("SELECT norm FROM spelling WHERE raw = ?", (raw,)).fetchone()
        return found[0] if found else None

    def drift_raws(self) -> Iterator[List[str]]:
        """Every spelling of every drift group, in lists of at most ``IN_LIST``."""
        cursor = self.db.execute("SELECT s.raw FROM spelling s JOIN drift d ON d.norm = s.norm ORDER BY s.raw")
        while True:
            chunk = [r for (r,) in cursor.fetchmany(IN_LIST)]
            if not chunk:
                return
            yield chunk

    def drifting(self, norms: Sequence[str]) -> set:
        marks = ",".join("?" * len(norms))
        return {n for (n,) in self.db.execute(f"SELECT norm FROM drift WHERE norm IN ({marks})", list(norms))}

    def add_references(self, ref: int, rows: Iterable[Tuple[str, str, int]]) -> None:
        self.db.executemany("INSERT INTO ref_spelling VALUES (?, ?, ?, ?)", ((ref, n, r, c) for n, r, c in rows))

    def reference_spellings(self, ref: int, norm: str) -> List[str]:
        found = self.db.execute("SELECT raw FROM ref_spelling WHERE ref = ? AND norm = ? ORDER BY raw", (ref, norm))
        return [raw for (raw,) in found]


class Queries:
    """SQL for one database, with identifiers quoted by its dialect."""

    def __init__(self, engine: Any, schema: Optional[str] = None) -> None:
        import sqlalchemy as sa

        self.sa = sa
        self.engine = engine
        self.preparer = engine.dialect.identifier_preparer
        self.schema = schema

    def quote(self, name: str) -> str:
        return self.preparer.quote(name)

    def table(self, name: str) -> str:
        quoted = self.quote(name)
        return f"{self.preparer.quote_schema(self.schema)}.{quoted}" if self.schema else quoted

    def scalar_row(self, sql: str, **params: Any) -> Tuple[Any, ...]:
        with self.engine.connect() as connection:
            return tuple(connection.execute(self._text(sql, params), params).one())

    def stream(self, sql: str, **params: Any) -> Iterator[Sequence[Any]]:
        """Rows in batches of ``BATCH``, through a server-side cursor where there is one."""
        with self.engine.connect() as connection:
            streaming = connection.execution_options(stream_results=True, yield_per=BATCH)
            result = streaming.execute(self._text(sql, params), params)
            for partition in result.partitions(BATCH):
                yield partition

    def _text(self, sql: str, params: dict) -> Any:
        statement = self.sa.text(sql)
        expanding = [self.sa.bindparam(name, expanding=True) for name, value in params.items() if isinstance(value, list)]
        return statement.bindparams(*expanding) if expanding else statement

    # -- the audit of one column ----------------------------------------------------------------

    def counts(self, table: str, column: str) -> Tuple[int, int]:
        """All rows, and rows whose key is NULL."""
        total, present = self.scalar_row(f"SELECT count(*), count({self.quote(column)}) FROM {self.table(table)}")
        return int(total), int(total) - int(present)

    def spellings_in_sql(self, table: str, column: str, form: NormalForm, scratch: Scratch,
                        progress: Progress) -> None:
        col = self.quote(column)
        norm = (form.sql or "{}").format(col)
        sql = (f"WITH d AS (SELECT {norm} AS n FROM {self.table(table)} WHERE {col} IS NOT NULL "
               f"GROUP BY {norm} HAVING count(DISTINCT {col}) > 1) "
               f"SELECT {norm}, {col}, count(*) FROM {self.table(table)} "
               f"WHERE {col} IS NOT NULL AND {norm} IN (SELECT n FROM d) GROUP BY {norm}, {col}")
        seen = 0
        for batch in self.stream(sql):
            scratch.add((n, _text(raw), int(c)) for n, raw, c in batch)
            seen += sum(int(r[2]) for r in batch)
            progress(seen)

    def spellings_in_python(self, table: str, column: str, form: NormalForm, scratch: Scratch,
                           progress: Progress) -> int:
        """Streams the column's distinct values through ``form``; returns how many values it
        could not normalize (each stays its own key)."""
        col = self.quote(column)
        sql = f"SELECT {col}, count(*) FROM {self.table(table)} WHERE {col} IS NOT NULL GROUP BY {col}"
        invalid = 0
        seen = 0
        for batch in self.stream(sql):
            rows = []
            for raw, count in batch:
                norm = python_norm(form, raw)
                invalid += norm is None
                rows.append((norm, _text(raw), int(count)))
                seen += int(count)
            scratch.add(rows)
            progress(seen)
        return invalid

    # -- referencing tables ----------------------------------------------------------------------

    def reference_count(self, table: str, column: str, reference: Reference, index: int, form: NormalForm,
                        scratch: Scratch) -> ReferenceCount:
        total, _ = self.counts(reference.table, reference.column)
        if reference.via == "foreign key":
            rows = self._foreign_rows(table, column, reference, scratch)
        else:
            rows = self._same_key_rows(reference, index, form, scratch)
        return ReferenceCount(reference, rows, total)

    def _foreign_rows(self, table: str, column: str, reference: Reference, scratch: Scratch) -> int:
        sql = (f"SELECT count(*) FROM {self.table(reference.table)} WHERE {self.quote(reference.column)} IN "
               f"(SELECT {self.quote(reference.referred_column)} FROM {self.table(table)} "
               f"WHERE {self.quote(column)} IN :raws)")
        return sum(int(self.scalar_row(sql, raws=chunk)[0]) for chunk in scratch.drift_raws())

    def _same_key_rows(self, reference: Reference, index: int, form: NormalForm, scratch: Scratch) -> int:
        col = self.quote(reference.column)
        if form.sql:
            norm = form.sql.format(col)
            sql = (f"SELECT {norm}, {col}, count(*) FROM {self.table(reference.table)} "
                   f"WHERE {col} IS NOT NULL GROUP BY {norm}, {col}")
        else:
            sql = f"SELECT NULL, {col}, count(*) FROM {self.table(reference.table)} WHERE {col} IS NOT NULL GROUP BY {col}"
        rows = 0
        for batch in self.stream(sql):
            normalized = [(n if form.sql else python_norm(form, raw), _text(raw), int(c)) for n, raw, c in batch]
            for start in range(0, len(normalized), IN_LIST):
                part = normalized[start:start + IN_LIST]
                drifting = scratch.drifting([n for n, _, _ in part if n is not None])
                matched = [(n, raw, c) for n, raw, c in part if n in drifting]
                scratch.add_references(index, matched)
                rows += sum(c for _, _, c in matched)
        return rows

    # -- for the plan ----------------------------------------------------------------------------

    def rows_of(self, table: str, column: str, primary_key: str, created: Optional[str],
                raws: List[str]) -> List[Tuple[str, Any, Any]]:
        """(key, primary key, creation time) of the rows holding the spellings ``raws``."""
        created_sql = self.quote(created) if created else "NULL"
        sql = (f"SELECT {self.quote(column)}, {self.quote(primary_key)}, {created_sql} FROM {self.table(table)} "
               f"WHERE {self.quote(column)} IN :raws")
        out: List[Tuple[str, Any, Any]] = []
        with self.engine.connect() as connection:
            for start in range(0, len(raws), IN_LIST):
                chunk = raws[start:start + IN_LIST]
                out.extend(tuple(r) for r in connection.execute(self._text(sql, {"raws": chunk}), {"raws": chunk}))
        return out


def python_norm(form: NormalForm, raw: Any) -> Optional[str]:
    """The normal form of one value, or None when it has none (not text, not a URL, rejected
    by the project's normalizer)."""
    if not isinstance(raw, str):
        return None
    try:
        return form.apply(raw)
    except NotNormalizable:
        return None


def _text(raw: Any) -> str:
    return raw if isinstance(raw, str) else str(raw)
