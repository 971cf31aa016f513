"""KD201: a normalizer is called outside the boundary where values become records."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Set, Tuple

from keydrift.analysis.tree import walk

from keydrift.analysis.boundary import Boundary
from keydrift.analysis.facts import RawFinding, RawFix
from keydrift.analysis.values import dotted_name
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd2 import (
    NORMALIZER_CALLS, callee_name, derived_beside_source, in_test_code, is_function_call, normalization_sites,
    reported_by_kd1, steps_in_mismatches,
)


class NormalizerOutsideBoundary(Rule):
    """A key normalizer is called outside the boundary module(s).

    ## What it does
    Reports calls of a normalizer outside the modules where values become records. A
    normalizer is a function listed in `[tool.keydrift] normalizers` (every call counts), or,
    without configuration, a function whose name says so (`normalize*`, `canonical*`,
    `canonicalize*`, `clean_*url*`, `sanitize_*url|email|key|name*`) or a well-known library
    normalizer (`normalize_email`, `canonicalize_url`, `url_normalize`, `unicodedata.normalize`,
    `idna.encode`, `slugify`) whose result reaches a database key.

    The boundary is `[tool.keydrift] boundary`; without it, the module that defines the
    entity's model, methods of model/manager/queryset/repository classes, and the
    normalizer's own module.

    ## Why is this bad?
    Normalizer calls scattered across jobs, views and audits are key drift waiting to happen:
    the next code path that reads or writes the same records forgets the call, or calls
    another normalizer, and the keys no longer match.

    ## Known problems
    Without configuration the rule only speaks when it can tell the boundary (the entity's model
    is defined in the project) and the normalized value reaches a key. The policy with KD1:
    zero-config, a call that is part of a KD1 finding on the same entity is reported there
    (one finding per root cause; the same call reaching another entity's key is still KD201);
    with a configured `boundary` every call outside it is KD201, also at a KD1 site, since the
    user declared where normalization lives. Zero-config, a normalized value stored next to the
    value it was made from, in another field of the same write (`create(title=t,
    slug=slugify(t))`), is a derived column computed where the record is made, not reported;
    so is one whose source is kept formatted for display in a field that is no key
    (`full_name=n.strip().title(), handle=slugify(n)`), but not one whose source is kept in a key
    field normalized by hand (`name=n.strip().lower(), slug=slugify(n)`).
    Zero-config, a lookup of a field the database computes (`mapped_column(server_default=
    FetchedValue(), server_onupdate=FetchedValue())` filled by a trigger, `Computed(...)`,
    `column_property(func.f(name))`, Django `GeneratedField`) is not reported: the code never
    writes it, and a lookup can only put its argument through the database's function
    (`Package.normalized_name == func.normalize_name(n)`). A trigger declared only in a
    migration's SQL is not seen.
    Test code (a `tests`/`test`/`testing` package,
    `test_*.py`, `*_tests.py`, `tests.py`, `conftest.py`) is not inspected: tests normalize by
    hand to build fixtures and expected values.

    ## Configuration
    `boundary` (module names or globs) and `normalizers` (qualified names) in `[tool.keydrift]`.
    """

    CODE = "KD201"
    NAME = "normalizer-outside-boundary"
    SUMMARY = "normalizer called outside the boundary modules"

    INVALID = (
        Invalid({
            "app/__init__.py": "",
            "app/models.py": """
                from django.db import models


                class Page(models.Model):
                    url = models.URLField(db_index=True)
                    title = models.CharField(max_length=200)
                """,
            "app/tasks.py": """
                from app.models import Page
                from app.urls import normalize_url


                def refresh(url, title):
                    key = normalize_url(url)  # expect: KD201
                    Page.objects.filter(url=key).update(title=title)
                """,
        }, note=("A job normalizes the key itself; the model (the boundary, without configuration) "
                 "is in `app/models.py`:")),
    )
    VALID = (
        Valid({
            "app/__init__.py": "",
            "app/models.py": """
                from django.db import models

                from app.urls import normalize_url


                class PageQuerySet(models.QuerySet):
                    def for_url(self, url):
                        return self.filter(url=normalize_url(url))


                class Page(models.Model):
                    url = models.URLField(db_index=True)
                    title = models.CharField(max_length=200)

                    objects = PageQuerySet.as_manager()
                """,
            "app/tasks.py": """
                from app.models import Page


                def refresh(url, title):
                    Page.objects.for_url(url).update(title=title)
                """,
        }, note=("Normalize once where the value becomes a record (a model `save()`, a manager or "
                 "queryset method, the repository), and pass raw values everywhere else:")),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        analysis = getattr(facts, "analysis", None)
        if analysis is None or in_test_code(facts):
            return
        boundary = Boundary(analysis)
        in_kd1 = steps_in_mismatches(facts)
        reported: Set[int] = set()
        for access, step in normalization_sites(facts):
            if step.kind not in NORMALIZER_CALLS or not is_function_call(step) or id(step.node) in reported \
                    or reported_by_kd1(in_kd1, access, step) \
                    or (not boundary.configured and derived_beside_source(access, facts)) \
                    or (not boundary.configured and analysis.is_database_computed((access.entity, access.field))):
                continue
            name = callee_name(step)
            if not name or self._own_module(analysis, name):
                continue
            if boundary.inside(access.function, access.entity) is False:
                reported.add(id(step.node))
                yield self._finding(facts, step.node, name, boundary.describe(access.entity),
                                    f"{access.entity}.{access.field}" if access.field != "*" else access.entity,
                                    RawFix(step.node, access.entity, access.field))
        if analysis.config.normalizers and boundary.configured and not boundary.inside("", ""):
            for node, name in configured_calls(analysis):
                if id(node) not in reported:
                    reported.add(id(node))
                    yield self._finding(facts, node, name, boundary.describe(), "the value")

    @staticmethod
    def _own_module(analysis: object, name: str) -> bool:
        return name in analysis.units  # type: ignore[attr-defined]

    def _finding(self, facts: object, node: ast.AST, name: str, where: str, what: str,
                 fix: Optional[RawFix] = None) -> RawFinding:
        path = getattr(facts, "path", "")
        return RawFinding(
            code=self.CODE,
            message=(f"{self.CODE} {name}() is called in {path}, outside the boundary ({where}): "
                     f"normalize where {what} becomes a record, once"),
            node=node,
            fingerprint=(self.CODE, name, what),
            fix=fix,
        )


def configured_calls(analysis: object) -> List[Tuple[ast.Call, str]]:
    """Calls, anywhere in the module, of a normalizer named in the configuration."""
    configured = tuple(analysis.config.normalizers)  # type: ignore[attr-defined]
    imports: Dict[str, Tuple[str, str]] = analysis.imports  # type: ignore[attr-defined]
    found: List[Tuple[ast.Call, str]] = []
    for node in walk(analysis.module):  # type: ignore[attr-defined]
        if isinstance(node, ast.Call):
            qualified = _qualified(dotted_name(node.func), imports)
            if qualified and qualified in configured:
                found.append((node, qualified.rsplit(".", 1)[-1]))
    return found


def _qualified(name: str, imports: Dict[str, Tuple[str, str]]) -> Optional[str]:
    if not name:
        return None
    head, _, rest = name.partition(".")
    if head in imports:
        module, symbol = imports[head]
        base = f"{module}.{symbol}" if symbol else module
        return f"{base}.{rest}" if rest else base
    return name
