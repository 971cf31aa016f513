"""KD106: a record is fetched by a key, its key field reassigned to a derived value, and saved."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd1 import differing_steps, finding, read_line, select, short, target


class KeyReassignedAfterLookup(Rule):
    """A record fetched by a key has that key field rewritten and saved.

    ## What it does
    Finds `obj = Model.objects.get(url=u)` (or a SQLAlchemy query) followed by
    `obj.url = <value derived from u>` and `obj.save()` / a session flush.

    ## Why is this bad?
    Every later lookup by the original key misses the record it just saved: the caller that
    fetched by `u` creates a duplicate or loops.

    ## Known problems
    Only assignments in the same function as the lookup are followed.
    """

    CODE = "KD106"
    NAME = "key-reassigned-after-lookup"
    SUMMARY = "key field reassigned to a derived value after lookup and saved"

    INVALID = (
        Invalid("""
            def follow(url):
                page = Page.objects.get(url=url)
                page.url = resolve_redirects(url)
                page.save()  # expect: KD106
            """),
    )
    VALID = (
        Valid("""
            def follow(url):
                page = Page.objects.get(url=url)
                page.final_url = resolve_redirects(url)
                page.save()
            """, note=("Keep the lookup key stable and store the derived value in a field of its own "
                       "(or canonicalize the key where the record is created):")),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for m in select(facts, "reassigned"):
            yield finding(self.CODE, m, (
                f"{target(m.write)} is read by {short(m.read.value.text)} (line {read_line()}) "
                f"then reassigned to {short(m.write.value.text)} ({differing_steps(m)}) and saved; "
                f"the next read will miss this row"))
