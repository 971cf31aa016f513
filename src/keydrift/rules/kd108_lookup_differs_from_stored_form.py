"""KD108: a key is looked up in another form than the one the project stores it in."""

from __future__ import annotations

from typing import Callable, Dict, Iterator, Optional, Tuple

from keydrift.analysis.facts import CASE, NORMALIZER, SLUG, WHITESPACE
from keydrift.analysis.registry import (
    Form, KeyRecord, KeyUse, Origin, ProjectFinding, Registry, compared, describe, entry_candidate, form_of,
    forms_disagree, reportable_lookup, same_function, stored_form,
)
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd1 import short
from keydrift.rules._registry import finding, normalize_here, project_registry, where
from keydrift.types import FixFacts


_MODELS = """
    from django.db import models


    class Account(models.Model):
        email = models.EmailField(db_index=True)
    """


class LookupDiffersFromStoredForm(Rule):
    """A lookup passes the key in another form than every write of the project stores it in.

    ## What it does
    Builds a registry of every read and write of every key in the project (all modules, not
    only those one function reaches) and the form each write stores the key in: the
    transformations the writing code applies, plus what the model does on its own (a `save()`
    override, a `pre_save` receiver, a `@validates` method). A lookup whose key is transformed
    differently — anywhere in the project, also in a function that never writes — is reported
    at the outermost call where the value has a concrete origin (request or form data, a
    configuration value, a parsed file, or the parameter of a function nothing in the project
    calls: a handler a framework or another program calls, which passes it to the data layer),
    naming the write that decides the stored form (the helper that transforms the key, when
    every caller stores through it). When
    every write stores a constant (a literal, or a literal table of its module walked by a
    loop), the stored keys are those strings: a lookup that lowercases or strips is reported
    only if one of them is not already lowercase or stripped (that row is never found). A key
    taken by loops from a table the function is given is its callers' to decide, like any
    parameter. A slug stored `slugify()`d and looked up as given is not reported: the slug is
    the identifier the project made and shows in its URLs and API answers, and clients pass it
    back as they got it (a lookup that lowercases or strips it is still compared). A lookup
    that differs from the stored form only by trimming whitespace off its input
    (`filter(user=request.form["user"].strip())` against usernames stored as given) is not
    reported: trimming typed input is a repair of the input, it misses only rows whose key was
    stored with edge whitespace, and a store that leaves it is a write of its own to compare
    (KD110 reports writes that trim against writes that do not). A cache or key-value store's
    entries under one namespace are a key too (`cache.set(f"login-failures:{name.lower()}")` in
    one module, `cache.get(f"login-failures:{name}")` in another; a key function's namespace,
    `failures_key(name)`; a redis hash's members); keys with no constant word, built by a
    string method or held in a mapping are not compared.

    ## Why is this bad?
    The signup handler stores `alice@example.com`; the password-reset view looks up
    `Alice@Example.com` as the user typed it and answers "no such account". Nothing fails: the
    row is simply never found by that path, and an "is it taken?" check that misses lets a
    second account be created for the same person.


    ## Known problems
    The stored form is known only from writes and model code in the project; a library that
    normalizes on its own (an authentication backend, a column type outside the project) is
    not seen. A lookup of a value read back from the database (`user.email`) is taken to be in
    stored form already. Lookups and writes whose value goes through an unknown function are
    left out: their form cannot be told. A function is taken for an entry point when its
    name appears nowhere else in the project: one whose only callers are outside it (a library's
    users, another service) is reported even if they pass the stored form.
    """

    CODE = "KD108"
    NAME = "lookup-differs-from-stored-form"
    SUMMARY = "key looked up in another form than the project stores it"

    INVALID = (
        Invalid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/accounts.py": """
                from app.models import Account


                def register(request):
                    Account.objects.create(email=request.POST["email"].lower())
                """,
            "app/reset.py": """
                from app.models import Account


                def request_reset(request):
                    return Account.objects.filter(email=request.POST["email"]).first()  # expect: KD108
                """,
        }),
        Invalid({
            "app/__init__.py": "",
            "app/throttle.py": """
                from django.core.cache import cache


                def record_failure(username):
                    cache.set(f"login-failures:{username.lower()}", 1, timeout=900)
                """,
            "app/views.py": """
                from django.core.cache import cache


                def login(request):
                    return cache.get(f"login-failures:{request.POST['username']}")  # expect: KD108
                """,
        }, note="A cache's entries under one namespace are a key too:"),
    )
    VALID = (
        Valid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/accounts.py": """
                from app.models import Account


                def register(request):
                    Account.objects.create(email=request.POST["email"].lower())
                """,
            "app/reset.py": """
                from app.models import Account


                def request_reset(request):
                    return Account.objects.filter(email=request.POST["email"].lower()).first()


                def profile(request):
                    return Account.objects.get(email=request.user.email)
                """,
        }, note=("Look the key up in the form it is stored in (better: one normalizer every entry point "
                 "calls, or a model field that canonicalizes). A value read back from a record is "
                 "already in stored form:")),
    )

    def check(self, facts: object) -> Iterator[ProjectFinding]:
        for registry in project_registry(facts):
            for record in registry.records.values():
                for lookup in record.lookups:
                    entry = entry_candidate(lookup)
                    if not (entry or reportable_lookup(lookup)):
                        continue
                    absorbs = lookup.absorbs | record.absorbs
                    stored = stored_form(record, absorbs, lookup)
                    looked_up = form_of(lookup.steps, absorbs)
                    if stored is None and looked_up:
                        yield from self._constants_missed(record, lookup, looked_up, registry)
                    if stored is None or looked_up is None or not forms_disagree(looked_up, stored[0]):
                        continue
                    form, evidence = stored
                    if not looked_up and _slug_only(form):
                        continue  # a slug is the identifier the project made and handed out: looked up as given
                    if _trims_only(looked_up, form):
                        continue  # typed input trimmed before an exact lookup: see the docstring
                    if not form and lookup.origin is Origin.PARAMETER:
                        continue  # a helper that canonicalizes its argument, rows stored as given: its callers decide
                    if any(same_function(w, lookup) and w.origin_text == lookup.origin_text for w in record.writes):
                        continue  # one function reads and writes the key: the KD101-KD107 pairing owns it
                    if entry and not registry.uncalled(lookup):
                        continue  # its callers pass the value: theirs is the form that counts
                    yield finding(self.CODE, lookup, (
                        f"{record.target()} is stored {describe(form)} by {where(evidence.by, evidence.site, registry)} "
                        f"but looked up {describe(looked_up)} here by {short(lookup.value_text)}{_entered(lookup, entry)}; "
                        f"the lookup misses {record.items()} stored the other way"),
                        (evidence.site, f"stored {describe(form)}"), "looked up", registry,
                        _fix(lookup, looked_up, form))


    def _constants_missed(self, record: KeyRecord, lookup: KeyUse, looked_up: Form,
                          registry: Registry) -> Iterator[ProjectFinding]:
        """Every write stores a constant (a literal, a literal table of its module): the stored
        keys are those strings. A lookup that lowercases or strips its key finds them only if
        each one is already lowercase or stripped; one that is not is never found."""
        writes = record.writes
        if not writes or not all(w.constants for w in writes) \
                or not any(compared(w, form_of(w.steps), lookup, looked_up) for w in writes):
            return
        for write in writes:
            missed = [c for c in write.constants if _transformed(looked_up, c) not in (None, c)]
            if missed:
                shown = ", ".join(repr(c) for c in missed[:3]) + (", ..." if len(missed) > 3 else "")
                yield finding(self.CODE, lookup, (
                    f"{record.target()} is stored only as constants, {shown} among them, by "
                    f"{where(write.function, write.site, registry)} but looked up {describe(looked_up)} here by "
                    f"{short(lookup.value_text)}; the lookup never finds {missed[0]!r}"),
                    (write.site, f"stored as {missed[0]!r}"), "looked up", registry)
                return


# What the built-in steps of a form do to a string, by their canonical label.
_STRING_STEPS: Dict[Tuple[str, str], Callable[[str], str]] = {
    (CASE, "lower"): str.lower, (CASE, "casefold"): str.casefold, (CASE, "upper"): str.upper,
    (WHITESPACE, ".strip()"): str.strip, (WHITESPACE, ".lstrip()"): str.lstrip, (WHITESPACE, ".rstrip()"): str.rstrip,
}


def _transformed(form: Form, value: str) -> Optional[str]:
    """``value`` through the steps of ``form``; None when one of them is not a known string method."""
    for step in sorted(form):
        method = _STRING_STEPS.get(step)
        if method is None:
            return None
        value = method(value)
    return value


def _entered(lookup: KeyUse, entry: bool) -> str:
    """Where a parameter's value comes from when nothing in the project calls its function."""
    if not entry:
        return ""
    return f", a parameter of `{lookup.function}` (nothing in the project calls it: the value comes from outside)"


def _fix(lookup: KeyUse, looked_up: Form, stored: Form) -> Optional[FixFacts]:
    """A raw lookup of a key stored through one normalizer: the fix applies it to the lookup
    (when that normalizer is a configured one; keydrift.fixes decides)."""
    if looked_up or len(stored) != 1:
        return None
    [(kind, name)] = stored
    return normalize_here(lookup, name) if kind == NORMALIZER else None


# Trims of whitespace off both or one end of a value, as canonical step labels.
_WHITESPACE_TRIMS = frozenset({(WHITESPACE, ".strip()"), (WHITESPACE, ".lstrip()"), (WHITESPACE, ".rstrip()")})


def _trims_only(looked_up: Form, stored: Form) -> bool:
    """The lookup applies every step of the stored form, and beyond them only whitespace
    trims (``.strip()`` of typed input against keys stored as given, or lowercased)."""
    extra = looked_up - stored
    return bool(extra) and stored <= looked_up and extra <= _WHITESPACE_TRIMS


def _slug_only(form: Form) -> bool:
    """The key is stored slugified and nothing else: a slug is the key's own canonical form,
    which the project shows in its URLs and API answers, and clients pass it back as they got it
    (``filter(slug=request.GET["channel"])``). A lookup that respells it otherwise (lowercases
    it, strips it) is still compared with the stored form."""
    return bool(form) and all(kind == SLUG for kind, _ in form)
