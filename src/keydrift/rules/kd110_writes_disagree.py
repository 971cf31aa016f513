"""KD110: two entry points store one key in different forms."""

from __future__ import annotations

from typing import Iterator, List, Optional

from keydrift.analysis.registry import (
    Evidence, KeyRecord, ProjectFinding, compared, describe, evidence, form_of, forms_disagree,
)
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd1 import short
from keydrift.rules._registry import finding, project_registry, where


_MODELS = """
    from django.db import models


    class Member(models.Model):
        email = models.EmailField(db_index=True)
    """
_SIGNUP = """
    from app.models import Member


    def signup(request):
        email = request.POST["email"].strip().lower()
        if not Member.objects.filter(email=email).exists():
            Member.objects.create(email=email)
    """


class WritesDisagree(Rule):
    """Two places of the project store the same key in different forms.

    ## What it does
    Compares every write of a key in the project (with the model's own rewriting applied): a
    write that stores the key as given while another entry point stores it canonicalized
    (lowercased, stripped, normalized) is reported at the write that skips the
    canonicalization, naming the other one. The entries of a cache namespace count as one key
    (see KD108).

    ## Why is this bad?
    The web signup lowercases the address, the CSV importer does not: imported users are stored
    as `Bob@Example.com`, and every lookup written for the signup form's rows misses them, or a
    second account is created for the same person.


    ## Known problems
    Writes whose value goes through an unknown function are left out. Writes that bypass the
    model's `save()` (`update()`, `bulk_create()`) are compared as written.
    """

    CODE = "KD110"
    NAME = "writes-disagree"
    SUMMARY = "two entry points store one key in different forms"

    INVALID = (
        Invalid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/signup.py": _SIGNUP,
            "app/importer.py": """
                from app.models import Member


                def import_row(row):
                    Member.objects.create(email=row["email"])  # expect: KD110
                """,
        }),
    )
    VALID = (
        Valid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/signup.py": _SIGNUP,
            "app/importer.py": """
                from app.models import Member


                def import_row(row):
                    Member.objects.create(email=row["email"].strip().lower())
                """,
        }, note="Every entry point stores the key in the same form:"),
    )

    def check(self, facts: object) -> Iterator[ProjectFinding]:
        for registry in project_registry(facts):
            for record in registry.records.values():
                if not record.lookups:
                    continue  # a field nothing looks up by is not a key
                writes = [e for e in evidence(record) if e.use is not None]
                for item in writes:
                    other = _canonical_elsewhere(record, item, writes)
                    if other is None or item.use is None:
                        continue
                    mine = form_of(item.steps, record.absorbs)
                    theirs = form_of(other.steps, record.absorbs)
                    yield finding(self.CODE, item.use, (
                        f"{record.target()} is stored {describe(mine)} here ({short(item.use.value_text)}) but "
                        f"{describe(theirs)} by {where(other.by, other.site, registry)}; "
                        f"lookups written for one form miss the {record.items()} of the other"),
                        (other.site, f"stored {describe(theirs)}"), "stored", registry)


def _canonical_elsewhere(record: KeyRecord, item: Evidence, writes: List[Evidence]) -> Optional[Evidence]:
    """A write elsewhere that applies canonical steps this one does not."""
    mine = form_of(item.steps, record.absorbs)
    if mine is None or item.use is None:
        return None
    for other in writes:
        theirs = form_of(other.steps, record.absorbs)
        if theirs is None or other.use is None or not compared(other.use, theirs, item.use, mine):
            continue
        if len(theirs) > len(mine) and forms_disagree(mine, theirs):
            return other
    return None
