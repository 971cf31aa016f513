"""KD109: two lookups of one key, in different places of the project, transform it differently."""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

from keydrift.analysis.facts import CASE, SLUG
from keydrift.analysis.registry import (
    Form, KeyRecord, KeyUse, ProjectFinding, compared, compares_outside_values, describe, elsewhere, form_of,
    forms_disagree, reportable_lookup, stored_form,
)
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd1 import short
from keydrift.rules._registry import finding, project_registry, where


_MODELS = """
    from django.db import models


    class Person(models.Model):
        email = models.EmailField(db_index=True)
    """

# called by the framework's authenticate() with what the user typed: nothing in the project calls it
_EMAIL_BACKEND = """
    from app.models import Person


    class EmailBackend:
        def authenticate(self, request, email=None, password=None):
            return Person.objects.filter(email__iexact=email).first()
    """


class LookupsDisagree(Rule):
    """Two lookups of the same key transform it differently, so at most one of them matches.

    ## What it does
    Where the project's writes do not tell how a key is stored, compares the lookups of the key
    across the whole project: a lookup that canonicalizes the key (lowercases, strips,
    normalizes) while another lookup of the same field, in another function, passes it as
    given is reported at the canonicalizing lookup, naming the other one — unless the
    canonicalizing lookups outnumber those as given: then the project's convention is plain and
    each lookup as given is reported once, where the fix belongs; an exact lookup of a
    value as given, where another module compares the key case-insensitively (`__iexact`,
    `lower(column) = lower(?)`), is reported at the exact one. A raw lookup with no evidence
    of the stored form stays quiet on its own.

    ## Why is this bad?
    The login backend looks the user up by `email.lower()`, the profile form by the address as
    typed. Whatever form the rows are in, one of the two paths misses some of them: a user who
    saved a capitalized address can no longer log in, or the "address taken" check lets a
    duplicate through.


    ## Known problems
    When writes show the stored form, KD108 reports the lookups that differ from it instead.
    Two lookups that canonicalize differently inside one module are KD203's, and a
    case-insensitive lookup counts only against exact ones in other modules: a data module
    that keeps one deliberate `__iexact` finder beside its exact lookups says nothing of them.
    A lookup that slugifies its value (`filter(slug=slugify(name))`) makes the slug a name would
    get, to find that row: it is not compared with lookups of slugs passed as given.
    Two different named normalizers are not compared (they may do the same thing inside).
    """

    CODE = "KD109"
    NAME = "lookups-disagree"
    SUMMARY = "two lookups of one key transform it differently"

    INVALID = (
        Invalid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/backends.py": """
                from app.models import Person


                def authenticate(request, **credentials):
                    return Person.objects.filter(email=credentials["email"].lower()).first()  # expect: KD109
                """,
            "app/profile.py": """
                from app.models import Person


                def email_taken(form):
                    return Person.objects.filter(email=form.cleaned_data["email"]).exists()
                """,
        }),
        Invalid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/backends.py": _EMAIL_BACKEND,
            "app/lockout.py": """
                from app.models import Person


                def notify_locked_out(email):
                    return Person.objects.filter(email=email).first()
                """,
            "app/views.py": """
                from app.lockout import notify_locked_out


                def lock_out(request):
                    return notify_locked_out(request.POST["email"])  # expect: KD109
                """,
        }, note="The framework calls the backend with what the user typed, and it ignores case; the lockout does not:"),
    )
    VALID = (
        Valid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/backends.py": """
                from app.models import Person


                def authenticate(request, **credentials):
                    return Person.objects.filter(email=credentials["email"].lower()).first()
                """,
            "app/profile.py": """
                from app.models import Person


                def email_taken(form):
                    return Person.objects.filter(email=form.cleaned_data["email"].lower()).exists()
                """,
        }, note="Every lookup passes the key through the same normalization:"),
        Valid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/backends.py": _EMAIL_BACKEND,
            "app/lockout.py": """
                from app.models import Person


                def stored_email(email):
                    person = Person.objects.filter(email__iexact=email).first()
                    return person.email if person else email


                def notify_locked_out(email):
                    return Person.objects.filter(email=email).first()
                """,
            "app/views.py": """
                from app.lockout import notify_locked_out, stored_email


                def lock_out(request):
                    return notify_locked_out(stored_email(request.POST["email"]))
                """,
        }, note="The address is first resolved to the one stored, found as the backend finds it:"),
    )

    def check(self, facts: object) -> Iterator[ProjectFinding]:
        for registry in project_registry(facts):
            for record in registry.records.values():
                if stored_form(record, record.absorbs) is not None:
                    continue  # the stored form is known: KD108 judges each lookup against it
                reported = set()
                for lookup, other in _outliers(record):
                    reported.add(id(lookup))
                    mine = form_of(lookup.steps, lookup.absorbs | record.absorbs)
                    theirs = form_of(other.steps, other.absorbs | record.absorbs)
                    yield finding(self.CODE, lookup, (
                        f"{record.target()} is looked up {describe(mine)} here ({short(lookup.value_text)}) but "
                        f"{describe(theirs)} by {where(other.function, other.site, registry)}; "
                        f"whatever form the {record.items()} are stored in, one of the two misses them"),
                        (other.site, f"looked up {describe(theirs)}"), "looked up", registry)
                for lookup in record.lookups:
                    found = None if id(lookup) in reported else _exact_against_insensitive(record, lookup)
                    if found is not None:
                        yield finding(self.CODE, lookup, (
                            f"{record.target()} is compared exactly here ({short(lookup.value_text)}) but "
                            f"case-insensitively by {where(found.function, found.site, registry)}; "
                            f"{record.items()} whose case differs from the value given are found there and missed here"),
                            (found.site, "compared case-insensitively"), "looked up", registry)


def _outliers(record: KeyRecord) -> List[Tuple[KeyUse, KeyUse]]:
    """The lookups to report, each with one lookup of the other form: the canonicalizing ones
    (paired with a lookup as given in another module; with none, in another function of its
    own), unless the canonicalizing lookups outnumber the ones as given they were paired with;
    then the project's convention is plain and the lookups as given are the outliers (one
    finding where the fix belongs, not one at every place that is right)."""
    for across in (True, False):
        canonical = [(lookup, other) for lookup in record.lookups
                     for other in [_disagreeing(record, lookup, across)] if other is not None]
        if canonical:
            break
    else:
        return []
    given = {id(other): other for _, other in canonical}
    agreeing = {id(lookup) for lookup, _ in canonical}
    if len(agreeing) <= len(given):
        return canonical
    outliers = []
    for raw in given.values():
        partner = next(lookup for lookup, other in canonical if other is raw)
        outliers.append((raw, partner))
    return outliers


def _disagreeing(record: KeyRecord, lookup: KeyUse, across: bool) -> Optional[KeyUse]:
    """Another lookup that passes the key as given where ``lookup`` canonicalizes it: in another
    module (``across``), else one the rules compare with it (``compared``)."""
    if not lookup.steps or not reportable_lookup(lookup):
        return None
    for other in record.lookups:
        if other.steps or not reportable_lookup(other):
            continue
        absorbs = lookup.absorbs | other.absorbs | record.absorbs
        mine, theirs = form_of(lookup.steps, absorbs), form_of(other.steps, absorbs)
        if not (elsewhere(other.site, lookup.site) if across else compared(lookup, mine, other, theirs)):
            continue
        if mine is not None and _makes_a_slug(mine):
            return None  # a slug made of a name to find the row, where others pass slugs as given
        if mine is not None and theirs is not None and forms_disagree(mine, theirs):
            return other
    return None


def _exact_against_insensitive(record: KeyRecord, lookup: KeyUse) -> Optional[KeyUse]:
    """Another lookup that compares the key case-insensitively (``__iexact``, ``lower(col) =
    lower(?)``) where ``lookup`` compares the value as given, exactly: the project treats the
    key as case-insensitive, and this lookup does not."""
    if lookup.steps or CASE in lookup.absorbs | record.absorbs or not reportable_lookup(lookup):
        return None
    for other in record.lookups:
        # a lookup by a plain parameter counts: one still in the registry has no caller in the
        # project (a caller's use replaces it: ``registry._outermost``), so a framework calls it
        # with what it was given (``ModelBackend.authenticate(request, username)``), and comparing
        # that case-insensitively says how the project means the key to match
        if CASE in other.absorbs and elsewhere(other.site, lookup.site) and compares_outside_values(other):
            return other
    return None


def _makes_a_slug(form: Form) -> bool:
    """The lookup slugifies its value (``slug__in=[slugify(unidecode(d.name)) for d in data]``):
    it makes the slug a name would get, to find that row; it is another value than the slug a
    client passes back as given elsewhere, not that slug spelled another way. Slugifying
    subsumes lowercasing and stripping, so the other steps of the form do not matter."""
    return any(kind == SLUG for kind, _ in form)
