"""KD203: one key field is normalized in two different ways in different places."""

from __future__ import annotations

from typing import Dict, Iterator, List, Set, Tuple

from keydrift.analysis.facts import CASE, WHITESPACE, KeyAccess, RawFinding, Step
from keydrift.analysis.boundary import Boundary
from keydrift.analysis.pairing import canonical_step, collapse_repeats
from keydrift.analysis.positions import line_ref
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd2 import (
    in_test_code, normalization_sites, reaching_steps, reported_by_kd1, steps_in_mismatches,
)

Signature = Tuple[Tuple[str, str], ...]


class DivergentNormalizations(Rule):
    """The same key field is normalized differently in different functions.

    ## What it does
    Collects, for each entity and key field, the normalizations applied to the values that
    reach it (`lower()` here, `casefold()` there; `normalize_url()` in one function, a
    hand-written `rstrip("/")` in another) and reports each divergent site, naming the other.

    ## Why is this bad?
    Two normalizations agree on most inputs and disagree on some. The records written through
    one path are then invisible to lookups through the other.

    ## Known problems
    Sites are compared within one module (a normalization against a value passed as given, in
    one module or across modules, is KD108-KD110's). Steps that give the same key in any order
    are one normalization: `.strip().lower()` and `.lower().strip()` agree. Two normalizations
    inside one function are KD104;
    zero-config, a normalization that is part of a KD1 finding on the same entity is reported
    there. With a configured boundary, a module outside it gets KD201/KD202 at each site
    instead (one finding per root cause). Test code (a
    `tests`/`test`/`testing` package, `test_*.py`, `*_tests.py`, `tests.py`, `conftest.py`) is
    not inspected: tests normalize by hand to build fixtures and expected values. A step
    repeated on one path (lowercased under one setting, again under another) counts once:
    `.lower()` twice is `.lower()`.
    """

    CODE = "KD203"
    NAME = "divergent-normalizations"
    SUMMARY = "one key field normalized in two different ways"

    INVALID = (
        Invalid("""
            def signup(email):
                User.objects.create(email=email.lower())  # expect: KD203

            def login(email):
                return User.objects.filter(email=email.casefold()).first()  # expect: KD203
            """),
    )
    VALID = (
        Valid("""
            def signup(email):
                User.objects.create(email=normalize_email(email))

            def login(email):
                return User.objects.filter(email=normalize_email(email)).first()
            """, note="One normalizer, called at the boundary, used by every path:"),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        if in_test_code(facts) or _outside_configured_boundary(facts):
            return
        sites: Dict[Tuple[str, str], Dict[Signature, List[Tuple[KeyAccess, Step]]]] = {}
        in_kd1 = steps_in_mismatches(facts)
        seen: Set[int] = set()
        for access, step in normalization_sites(facts):
            if reported_by_kd1(in_kd1, access, step) or id(access.value) in seen:
                continue  # KD1 reports this normalization already; one site per value
            signature = _signature(access)
            if signature:
                seen.add(id(access.value))
                sites.setdefault((access.entity, access.field), {}).setdefault(_same_key(signature), []).append(
                    (access, step, signature))
        for (entity, field), by_key in sites.items():
            # each group's sites, under the steps its first site applies in their order
            by_signature = {found[0][2]: [(a, s) for a, s, _ in found] for found in by_key.values()}
            functions = {a.function for found in by_signature.values() for a, _ in found}
            if len(by_signature) < 2 or len(functions) < 2:
                continue
            signatures = list(by_signature)
            for index, signature in enumerate(signatures):
                other_signature = signatures[index - 1] if index else signatures[1]
                other, other_step = by_signature[other_signature][0]
                for access, step in by_signature[signature]:
                    yield self._finding(entity, field, signature, access, step, other_signature, other, other_step)

    def _finding(self, entity: str, field: str, signature: Signature, access: KeyAccess, step: Step,
                 other_signature: Signature, other: KeyAccess, other_step: Step) -> RawFinding:
        target = entity if field == "*" else f"{entity}.{field}"
        return RawFinding(
            code=self.CODE,
            message=(f"{self.CODE} {target} is normalized with {_text(signature)} here but with "
                     f"{_text(other_signature)} in {other.function}() (line {line_ref(0)}): "
                     f"use one normalizer for every path"),
            node=step.node,
            related=((other_step.node, f"normalized with {_text(other_signature)}"),),
            fingerprint=(self.CODE, entity, field, _text(signature), access.function),
        )


def _outside_configured_boundary(facts: object) -> bool:
    """With a configured boundary, each normalization of a module outside it is already KD201
    or KD202: their divergence is the same root cause, reported once."""
    analysis = getattr(facts, "analysis", None)
    if analysis is None or not analysis.config.boundary:
        return False
    return Boundary(analysis).inside("") is False


def _signature(access: KeyAccess) -> Signature:
    # A value lowercased again on its way (two settings that each lowercase it) has the form
    # of a value lowercased once: repeats of an idempotent step are one step.
    return tuple(canonical_step(s) for s in collapse_repeats(tuple(reaching_steps(access))))


# Steps that give the same key in any order: lowercasing a string neither makes nor removes
# whitespace at its ends, so `.strip().lower()` and `.lower().strip()` store the same key.
_COMMUTING = frozenset((CASE, WHITESPACE))


def _same_key(signature: Signature) -> Signature:
    """The signature two normalizations share when they give every value the same key."""
    if all(kind in _COMMUTING for kind, _ in signature):
        return tuple(sorted(signature))
    return signature


def _text(signature: Signature) -> str:
    return " then ".join(_step_text(kind, label) for kind, label in signature)


def _step_text(kind: str, label: str) -> str:
    if label.endswith(")"):
        return label
    return f"{label}()" if kind == "normalizer" else f".{label}()"
