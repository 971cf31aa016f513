"""KD103: the key is transformed for the read but written raw."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd1 import differing_steps, finding, read_line, select, short, target


class KeyTransformedOnlyOnRead(Rule):
    """A record is read by a normalized key and written by the raw one.

    ## What it does
    Finds a read by a transformed key (lowercased, stripped, normalized, ...) and a write of the
    same entity and field by the untransformed value from the same origin.

    ## Why is this bad?
    The row is stored as `Alice@Example.com` but looked up as `alice@example.com`: the read
    never finds what the write stored, so the code creates it again or fails on a unique index.

    ## Known problems
    Values are followed inside one function. A case-insensitive read of a case-only change is
    not reported.
    """

    CODE = "KD103"
    NAME = "key-transformed-only-on-read"
    SUMMARY = "read key transformed, write key raw"

    INVALID = (
        Invalid("""
            def subscribe(email):
                if Subscriber.objects.filter(email=email.lower()).exists():
                    return
                Subscriber.objects.create(email=email)  # expect: KD103
            """),
    )
    VALID = (
        Valid("""
            def subscribe(email):
                email = email.lower()
                if Subscriber.objects.filter(email=email).exists():
                    return
                Subscriber.objects.create(email=email)
            """, note="Transform once, before both:"),
        Valid("""
            def subscribe(email):
                if Subscriber.objects.filter(email__iexact=email).exists():
                    return
                Subscriber.objects.create(email=email)
            """, note="Not reported: a case-insensitive lookup transforms nothing."),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for m in select(facts, "read-transform"):
            yield finding(self.CODE, m, (
                f"{target(m.write)} is written with {short(m.write.value.text)} but read by "
                f"{short(m.read.value.text)} ({differing_steps(m)}, line {read_line()}); "
                f"the read will never find this row"))
