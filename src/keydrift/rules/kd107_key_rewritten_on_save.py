"""KD107: the model rewrites the key when it is saved, but the lookup passes it raw."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd1 import differing_steps, finding, read_line, select, short, target

_MODELS = """
    from django.db import models


    class User(models.Model):
        email = models.EmailField(unique=True)

        def save(self, *args, **kwargs):
            self.email = self.email.lower()
            super().save(*args, **kwargs)
    """


class KeyRewrittenOnSave(Rule):
    """A lookup passes a raw key that the model rewrites whenever it stores it.

    ## What it does
    Finds reads of a key field that a model transforms at write time — a Django `save()` or
    `clean()` override (`self.email = self.email.lower()`), a `pre_save` receiver, a SQLAlchemy
    `@validates` method — where the same function also stores that entity through the save
    path (`create`, `get_or_create`, `save()`, `session.add`) and the lookup value is not
    transformed the same way.

    It also finds a key that `save()` derives from another field (`self.slug =
    slugify(self.title)`) when the function looks records up by that key and writes the source
    field through a path that never calls `save()` (`bulk_create`, `QuerySet.update`, or
    `bulk_update(objs, fields)` listing the source field assigned on records read before).

    ## Why is this bad?
    `User.objects.get_or_create(email="Bob@Example.com")` looks for the mixed-case value, finds
    nothing, and creates a row that `save()` lowercases — which then collides with the existing
    `bob@example.com` on the unique index (`IntegrityError`), or creates a second account.

    ## Known problems
    The rewriting must be visible in the analyzed module (the model defined in the same file
    or, with the project index, in an imported module; a `pre_save` receiver also in a module
    that the model's app imports from its `apps.py`, where `AppConfig.ready()` connects it). `QuerySet.update()`, `bulk_create()`
    and `bulk_update()` bypass `save()` and are not treated as rewritten; `bulk_update()` is read
    only for records the function fetched and assigned (`obj.name = n`) and put in a list
    display or a list it filled. A Django model's
    `clean()` runs only from forms and `full_clean()`, never from `save()`/`create()`/
    `get_or_create()`, so it is not a write-time rewrite there (a mongoengine document's is:
    its `save()` validates). In `__init__`, only a known canonicalizing step (`lower()`,
    `strip()`, `slugify()`, a normalizer...) counts: `self.conn_id = sanitize_conn_id(conn_id)`
    is taken for a validation.
    """

    CODE = "KD107"
    NAME = "key-rewritten-on-save"
    SUMMARY = "lookup passes a raw key the model rewrites when saving"

    INVALID = (
        Invalid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/accounts.py": """
                from app.models import User


                def invite(email):
                    user, created = User.objects.get_or_create(email=email)  # expect: KD107
                    return user
                """,
        }),
    )
    VALID = (
        Valid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/accounts.py": """
                from app.models import User


                def invite(email):
                    user, created = User.objects.get_or_create(email=email.lower())
                    return user


                def find(email):
                    return User.objects.filter(email__iexact=email).first()
                """,
        }, note=("Apply the model's normalization before the lookup (one normalizer, called at the "
                 "boundary), or make the lookup case-insensitive (`email__iexact`, a CITEXT column):")),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for m in select(facts, "rewritten"):
            yield finding(self.CODE, m, (
                f"{target(m.write)} is rewritten by {m.write.rewritten_by} ({differing_steps(m)}) "
                f"when stored, but looked up by {short(m.read.value.text)} (line {read_line()}); "
                f"the lookup will miss the stored row"))
        for m in select(facts, "bypassed"):
            yield finding(self.CODE, m, (
                f"{target(m.write)} is derived from {short(m.write.value.text)} by {m.write.rewritten_by} "
                f"only when a record is saved, but {short(m.write.via)} bypasses save(): the rows it "
                f"writes keep no (or a stale) {m.write.field}, and the lookup by {short(m.read.value.text)} "
                f"(line {read_line()}) misses them"))
