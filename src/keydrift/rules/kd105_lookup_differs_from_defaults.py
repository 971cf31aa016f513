"""KD105: an upsert looks up by one key and stores another in its defaults / SET clause."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd1 import differing_steps, finding, select, short, target


class LookupDiffersFromDefaults(Rule):
    """An upsert looks a row up by one key value and stores a different one.

    ## What it does
    Finds `get_or_create` / `update_or_create` whose `defaults` set the lookup field to a
    transformed value, and SQL or SQLAlchemy upserts (`ON CONFLICT ... DO UPDATE SET`,
    `on_conflict_do_update(set_=...)`) whose SET rewrites the conflict key.

    ## Why is this bad?
    The lookup uses `Example.com`, the created row holds `example.com`. The next call looks up
    `Example.com` again, misses, and creates another row or fails on the unique index.

    ## Known problems
    Only literal `defaults` dictionaries and `set_` mappings are understood.
    """

    CODE = "KD105"
    NAME = "lookup-differs-from-defaults"
    SUMMARY = "upsert looks up one key value and stores another"

    INVALID = (
        Invalid("""
            def register(email, name):
                User.objects.update_or_create(email=email, defaults={"email": email.lower()})  # expect: KD105
            """),
    )
    VALID = (
        Valid("""
            def register(email, name):
                email = email.lower()
                User.objects.update_or_create(email=email, defaults={"name": name})
            """, note="Transform the key before the lookup; `defaults` carries the other fields:"),
        Valid("""
            def register(email, name):
                User.objects.update_or_create(email=email, defaults={"name": name.strip()})
            """, note="Not reported: `defaults` transform a field that is not the lookup key."),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for m in select(facts, "defaults"):
            yield finding(self.CODE, m, (
                f"{target(m.write)} is looked up by {short(m.read.value.text)} but stored as "
                f"{short(m.write.value.text)} ({differing_steps(m)}) by the same call; "
                f"the next lookup will miss this row"))
