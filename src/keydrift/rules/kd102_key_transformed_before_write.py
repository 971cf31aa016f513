"""KD102: the key is transformed between the read and the write."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd1 import differing_steps, finding, read_line, select, short, target


class KeyTransformedBeforeWrite(Rule):
    """A record is read by a raw key and written by the same key after a transformation.

    ## What it does
    Finds a read and a write of the same entity and key field whose values come from one origin,
    where only the written value was lowercased, stripped, `rstrip("/")`-ed, normalized,
    slugified, IDNA-encoded, rebuilt by an f-string or passed through another function.

    ## Why is this bad?
    The read asks for `Example.com/`, the write stores `example.com`. The next read misses the
    stored row: a job repeats work forever, a `get_or_create` creates a duplicate, a unique
    index raises `IntegrityError` for a row the read said did not exist.

    ## Known problems
    An unknown function applied to the key counts as a transformation unless it is a plain
    conversion (`str`, `int`, `UUID`). Values are followed inside one function.
    A case-insensitive read (`__iexact`, `lower(col) = lower(?)`) absorbs a case change only.
    Not reported: a rename that replaces one variable part of the key by another
    (`fqdn.replace(f".{old_zone}", f".{new_zone}")`): the new key is meant to differ. Nor a
    relation field (`ForeignKey`, `OneToOneField`, SQLAlchemy `relationship()` or a column
    referencing `users.id`) set to a record a helper hands back: a record's id has one spelling.
    """

    CODE = "KD102"
    NAME = "key-transformed-before-write"
    SUMMARY = "write key transformed, read key raw"

    INVALID = (
        Invalid("""
            def record_visit(url):
                if not Page.objects.filter(url=url).exists():
                    Page.objects.create(url=url.rstrip("/"))  # expect: KD102
            """),
    )
    VALID = (
        Valid("""
            def record_visit(url):
                url = normalize_url(url)
                if not Page.objects.filter(url=url).exists():
                    Page.objects.create(url=url)
            """, note="Transform once, before the read, and use the same value on both sides:"),
        Valid("""
            def record_visit(url, title):
                if not Page.objects.filter(url=url).exists():
                    Page.objects.create(url=url, title=title.strip())
            """, note="Not reported: only a field that is not the key is transformed."),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for m in select(facts, "write-transform"):
            yield finding(self.CODE, m, (
                f"{target(m.write)} is written with {short(m.write.value.text)} "
                f"({differing_steps(m)}) but read by {short(m.read.value.text)} "
                f"(line {read_line()}); the next read will miss this row"))
