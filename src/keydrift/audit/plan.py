"""``--plan FILE``: the repair as SQL for a person to review and run; keydrift never runs it.

One transaction. Per drifting key of a column that is unique on its own (a key table):

1. the canonical row is kept — the earliest by its creation column (``created_at``, ...) when
   the table has one, else the lowest primary key;
2. rows of referencing tables are re-pointed at it: foreign keys to the others are set to it,
   and tables carrying the key as a value (``same key``) get the normal form;
3. the other rows are deleted (nothing points at them any more);
4. the kept row's key is rewritten to the normal form.

A column that is not unique on its own (a table of results keyed by URL) loses no row: its
spellings are rewritten to the normal form. Every statement names the spellings and primary
keys read during the audit, so running the plan twice is harmless. Then the post's advice: a
unique index on the normalized form, where SQL can express it.
"""

from __future__ import annotations

import datetime
import shutil
import tempfile
from typing import Any, Iterator, List, Sequence, TextIO, Tuple

from keydrift import __version__
from keydrift.audit.forms import NormalForm
from keydrift.audit.model import Group, Reference
from keydrift.audit.queries import Queries, Scratch
from keydrift.audit.reflect import Target


# groups whose rows are read in one query (their spellings go in IN lists of IN_LIST values)
_GROUPS_PER_QUERY = 200
_SPOOL_BYTES = 8 << 20  # a column's plan is kept in memory up to this size, then on disk


def literal(value: Any) -> str:
    """A SQL literal: integers as they are, anything else as a quoted string."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def in_list(values: Sequence[Any]) -> str:
    return "(" + ", ".join(literal(v) for v in values) + ")"


def header(out: TextIO, database: str, dialect: str) -> None:
    out.write(f"-- Repair plan written by keydrift {__version__} audit-db for {database}\n"
              f"-- on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. keydrift never runs it: "
              "review it, run it on a copy, then here.\n"
              "-- One transaction; running it twice is harmless; no row of a referencing table is deleted.\n"
              "BEGIN;\n")
    if dialect == "postgresql":  # the literals below double quotes and leave backslashes alone
        out.write("SET LOCAL standard_conforming_strings = on;\n")


def footer(out: TextIO) -> None:
    out.write("\nCOMMIT;\n")


class PlanWriter:
    def __init__(self, out: TextIO, queries: Queries) -> None:
        self.out = out
        self.q = queries

    def column(self, target: Target, form: NormalForm, scratch: Scratch) -> None:
        """One column's part of the plan, written only once all of it could be made: a column
        whose rows cannot be read half-way leaves nothing behind (spooled to disk when large)."""
        final = self.out
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES, mode="w+", encoding="utf-8") as part:
            self.out = part  # type: ignore[assignment]
            try:
                self._column(target, form, scratch)
            finally:
                self.out = final
            part.seek(0)
            shutil.copyfileobj(part, final)

    def _column(self, target: Target, form: NormalForm, scratch: Scratch) -> None:
        groups, rows = scratch.totals()
        self.out.write(f"\n-- {target.label}: {_count(groups, 'key')} in more than one spelling, {_count(rows, 'row')} "
                       f"(normal form: {form.description})\n")
        if not groups:
            return
        if target.unique:
            self._merge_all(target, scratch)
        else:
            if target.composite_unique:
                self._comment("part of a multi-column unique constraint: a rewrite that collides fails "
                              "and rolls the whole plan back; decide those rows by hand")
            for group in scratch.groups():
                self._rewrite(target.table, target.column, group.normal, [s.value for s in group.spellings])
        self._index_advice(target, form)

    # -- a key table: merge each group into its canonical row -----------------------------------

    def _merge_all(self, target: Target, scratch: Scratch) -> None:
        blocker = self._merge_blocker(target)
        if blocker:
            self._comment(f"not merged: {blocker}; the spellings are listed for a decision by hand")
            for group in scratch.groups():
                self._comment(f"{group.normal!r}: " + ", ".join(repr(s.value) for s in group.spellings))
            return
        rewrite_key = not any(r.via == "foreign key" and r.referred_column == target.column for r in target.references)
        if not rewrite_key:
            self._comment(f"foreign keys point at {target.column} itself: the kept spelling is left as it is")
        ordering = f"the earliest {target.created}, then the lowest {target.primary_key}" if target.created \
            else f"the lowest {target.primary_key}"
        self._comment(f"each key keeps one row: {ordering}")
        for groups in _chunks(scratch.groups(), _GROUPS_PER_QUERY):
            raws = [s.value for group in groups for s in group.spellings]
            found = self.q.rows_of(target.table, target.column, target.primary_key or "", target.created, raws)
            by_raw = {row[0]: row for row in found}
            for group in groups:
                rows = [by_raw[s.value] for s in group.spellings if s.value in by_raw]
                self._merge(target, group, rows, scratch, rewrite_key)

    def _merge_blocker(self, target: Target) -> str:
        if target.primary_key is None:
            return f"{target.table} has no single-column primary key to name the kept row by"
        unique_fk = [r for r in target.references if r.via == "foreign key" and r.unique]
        if unique_fk:
            return (f"{unique_fk[0].table}.{unique_fk[0].column} is unique: two of its rows cannot point "
                    "at one kept row")
        return ""

    def _merge(self, target: Target, group: Group, rows: List[Tuple[str, Any, Any]], scratch: Scratch,
               rewrite_key: bool) -> None:
        if len(rows) < 2:
            return  # the table changed since the audit: nothing to merge any more
        kept = _canonical(rows)
        others = sorted({raw for raw, pk, _ in rows if pk != kept[1]})
        table, column, pk = self.q.table(target.table), self.q.quote(target.column), self.q.quote(target.primary_key or "")
        self.out.write(f"-- {group.normal!r}: keep {target.primary_key} {kept[1]!r} ({kept[0]!r})\n")
        for index, reference in enumerate(target.references):
            if reference.via == "foreign key":
                self._repoint(target, reference, kept[1], others)
            elif not reference.unique:  # a unique one is a key table of its own, merged as such
                spellings = scratch.reference_spellings(index, group.normal)
                self._rewrite(reference.table, reference.column, group.normal, spellings)
        self.out.write(f"DELETE FROM {table} WHERE {column} IN {in_list(others)} AND {pk} <> {literal(kept[1])};\n")
        if rewrite_key and kept[0] != group.normal and _taken(scratch, group.normal):
            self._comment(f"{group.normal!r} is already the key of another row, whose own normal form differs: "
                          "the normal form is not idempotent; the kept spelling is left as it is")
        elif rewrite_key and kept[0] != group.normal:
            self.out.write(f"UPDATE {table} SET {column} = {literal(group.normal)} WHERE {pk} = {literal(kept[1])};\n")

    def _repoint(self, target: Target, reference: Reference, kept: Any, others: List[str]) -> None:
        table, pk = self.q.table(target.table), self.q.quote(target.primary_key or "")
        referred = self.q.quote(reference.referred_column)
        column = self.q.quote(reference.column)
        new = literal(kept) if reference.referred_column == target.primary_key \
            else f"(SELECT {referred} FROM {table} WHERE {pk} = {literal(kept)})"
        self.out.write(f"UPDATE {self.q.table(reference.table)} SET {column} = {new} WHERE {column} IN "
                       f"(SELECT {referred} FROM {table} WHERE {self.q.quote(target.column)} IN {in_list(others)} "
                       f"AND {pk} <> {literal(kept)});\n")

    # -- rewriting spellings to the normal form -------------------------------------------------

    def _rewrite(self, table: str, column: str, normal: str, spellings: Sequence[str]) -> None:
        changed = [s for s in spellings if s != normal]
        if changed:
            self.out.write(f"UPDATE {self.q.table(table)} SET {self.q.quote(column)} = {literal(normal)} "
                           f"WHERE {self.q.quote(column)} IN {in_list(changed)};\n")

    def _index_advice(self, target: Target, form: NormalForm) -> None:
        if not target.unique:
            return
        if form.sql:
            name = self.q.quote(f"{target.table}_{target.column}_normal_key"[:63])
            expression = form.sql.format(self.q.quote(target.column))
            self._comment("from now on one row per key, enforced by the database:")
            self.out.write(f"CREATE UNIQUE INDEX IF NOT EXISTS {name} ON {self.q.table(target.table)} (({expression}));\n")
        else:
            self._comment(f"the normal form ({form.description}) is not expressible in SQL: the unique "
                          f"constraint on {target.column} now sees one spelling per key; keep it so by writing "
                          "keys through one normalizer (keydrift check finds the writes that do not)")

    def _comment(self, text: str) -> None:
        self.out.write(f"-- {text}\n")


def _taken(scratch: Scratch, normal: str) -> bool:
    """Whether the normal form is the spelling of a row of another group (a normalizer that is
    not idempotent: rewriting to it would break the unique constraint)."""
    owner = scratch.normal_form_of(normal)
    return owner is not None and owner != normal


def _chunks(items: Iterator[Group], size: int) -> Iterator[List[Group]]:
    chunk: List[Group] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _canonical(rows: List[Tuple[str, Any, Any]]) -> Tuple[str, Any, Any]:
    """The earliest row when creation times are known and comparable, else the lowest key."""
    try:
        return min(rows, key=lambda r: (r[2] is None, r[2] if r[2] is not None else 0, r[1]))
    except TypeError:
        return min(rows, key=lambda r: str(r[1]) if not isinstance(r[1], int) else r[1])


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"
