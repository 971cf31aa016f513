"""KD202: a key is normalized by hand (``.lower()``, ``.strip()``...) outside the boundary."""

from __future__ import annotations

from typing import Dict, Iterator, List, Set, Tuple

from keydrift.analysis.boundary import Boundary
from keydrift.analysis.facts import KeyAccess, RawFinding, RawFix, Step
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd2 import (
    NORMALIZER_CALLS, in_test_code, is_function_call, normalization_sites, reported_by_kd1, steps_in_mismatches,
)

_MODELS = """
    from django.db import models


    class MemberQuerySet(models.QuerySet):
        def by_handle(self, handle):
            return self.filter(handle=handle.strip().lower())


    class Member(models.Model):
        handle = models.CharField(max_length=30)

        objects = MemberQuerySet.as_manager()
    """


class AdHocKeyNormalization(Rule):
    """A key is normalized by hand outside the configured boundary.

    ## What it does
    With `[tool.keydrift] boundary` configured, reports `.lower()`, `.casefold()`,
    `.strip()`, `.rstrip("/")`, `removeprefix("www.")`, `urljoin`/`urlunsplit` rebuilding or IDNA
    encoding applied to a value that reaches a read or write key of a database entity, in a
    module outside the boundary. `.lower()` for display, logging, comparisons or HTTP requests
    never reaches a key and is not reported.

    ## Why is this bad?
    A hand-written normalization is a second normalizer: it will differ from the boundary's in
    some input (`ß`, a trailing `/`, `www.`), and the keys drift apart.

    ## Known problems
    Only reported when a boundary is configured: without one, normalizing a key once before both
    its read and its write is a reasonable local choice — unless another entry point of the
    project stores or looks up that key in another form, which the registry reports (KD108,
    KD110). With a boundary configured, every normalization outside it is KD202, also one that
    is part of a KD1 finding (the user declared where normalization lives). Test code (a `tests`/`test`/`testing` package,
    `test_*.py`, `*_tests.py`, `tests.py`, `conftest.py`) is not inspected: tests normalize by
    hand to build fixtures and expected values.

    ## Configuration
    `boundary` in `[tool.keydrift]`.
    """

    CODE = "KD202"
    NAME = "adhoc-key-normalization"
    SUMMARY = "key normalized by hand outside the boundary"

    INVALID = (
        Invalid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/views.py": """
                from app.models import Member


                def profile(request, handle):
                    member = Member.objects.get(handle=handle.lower())  # expect: KD202
                    return member.handle
                """,
        }, config='boundary = ["app.models"]'),
    )
    VALID = (
        Valid({
            "app/__init__.py": "",
            "app/models.py": _MODELS,
            "app/views.py": """
                from app.models import Member


                def profile(request, handle):
                    member = Member.objects.by_handle(handle).get()
                    return member.handle.lower()
                """,
        }, config='boundary = ["app.models"]',
           note=("Call the boundary's normalizer, or a manager method that applies it; `.lower()` "
                 "on a value that reaches no key is not reported:")),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        analysis = getattr(facts, "analysis", None)
        if analysis is None or not analysis.config.boundary or in_test_code(facts):
            return
        boundary = Boundary(analysis)
        if boundary.inside(""):
            return
        in_kd1 = steps_in_mismatches(facts)
        reported: Set[int] = set()
        by_value: Dict[int, Tuple[KeyAccess, List[Step]]] = {}
        for access, step in normalization_sites(facts):
            if (step.kind in NORMALIZER_CALLS and is_function_call(step)) or reported_by_kd1(in_kd1, access, step):
                continue
            by_value.setdefault(id(access.value), (access, []))[1].append(step)
        for access, steps in by_value.values():
            fresh = [s for s in steps if id(s.node) not in reported]
            if not fresh:
                continue
            reported.update(id(s.node) for s in fresh)
            target = access.entity if access.field == "*" else f"{access.entity}.{access.field}"
            labels = " then ".join(s.label for s in fresh)
            yield RawFinding(
                code=self.CODE,
                message=(f"{self.CODE} {labels} normalizes the key {target} in "
                         f"{getattr(facts, 'path', '')}, outside the boundary ({boundary.describe()}): "
                         f"normalize it there, once"),
                node=fresh[-1].node,  # the outermost call of the chain: one finding per value
                fingerprint=(self.CODE, access.entity, access.field, labels, access.function),
                fix=RawFix(fresh[-1].node, access.entity, access.field),
            )
