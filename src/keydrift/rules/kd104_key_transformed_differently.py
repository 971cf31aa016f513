"""KD104: the read key and the write key go through different transformations."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd1 import finding, read_line, select, short, steps_text, target


class KeyTransformedDifferently(Rule):
    """The read and the write transform one key in two different ways.

    ## What it does
    Finds a read and a write of the same entity and field whose values come from one origin
    through different transformations: `lower()` on one side and `casefold()` on the other,
    `strip()` for the read and `normalize_url()` for the write.

    ## Why is this bad?
    Two normalizations agree on most inputs and disagree on some (`ß`, a trailing `/`,
    whitespace inside). For those the read misses the stored row, silently.

    ## Known problems
    Two transformations that are equivalent for every input the program sees are still
    reported; use one normalizer for both sides. A field of an object built by a class
    constructor with the key (`ClusterNode(host, port).name`) is not compared with a
    transformed key: the constructor may compute it with that very transformation, which the
    analysis does not see (against a raw key it is KD101).
    """

    CODE = "KD104"
    NAME = "key-transformed-differently"
    SUMMARY = "read and write keys transformed differently"

    INVALID = (
        Invalid("""
            def sync(name):
                team = Team.objects.filter(slug=name.lower()).first()
                if team is None:
                    Team.objects.create(slug=slugify(name))  # expect: KD104
            """),
    )
    VALID = (
        Valid("""
            def sync(name):
                slug = slugify(name)
                team = Team.objects.filter(slug=slug).first()
                if team is None:
                    Team.objects.create(slug=slug)
            """, note="Derive the key once:"),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for m in select(facts, "both"):
            yield finding(self.CODE, m, (
                f"{target(m.write)} is written with {short(m.write.value.text)} "
                f"({steps_text(m.write.value.steps)}) but read by {short(m.read.value.text)} "
                f"({steps_text(m.read.value.steps)}, line {read_line()}); the two keys differ"))
