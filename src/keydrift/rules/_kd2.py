"""Shared by the KD2 rules: which normalization steps reach keys, and where."""

from __future__ import annotations

import ast
from typing import Iterator, List, Set, Tuple

from keydrift.analysis.facts import (
    CASE, FETCH, IDNA, LOOKUP, NORMALIZER, PART, READ, REDERIVED, REMOTE, SLASH, SLUG, STORE, UNICODE, URL, WHITESPACE, WRITE,
    KeyAccess, Step,
)
from keydrift.analysis.boundary import is_test_module
from keydrift.analysis.imports import module_name_of
from keydrift.frameworks.schema import natural_key_kind
from keydrift.frameworks.transforms import SPLIT_METHODS
from keydrift.types import Config

# Step kinds that normalize a key (as opposed to re-deriving or formatting it).
NORMALIZING = frozenset({CASE, WHITESPACE, SLASH, URL, UNICODE, IDNA, SLUG, NORMALIZER})
# Of those, the ones a library or project *function* performs (KD201); the rest are ad hoc.
NORMALIZER_CALLS = frozenset({NORMALIZER, UNICODE, IDNA, SLUG})
# A step before one of these shaped a request, not the key that was stored.
_RESETTING = frozenset({REDERIVED, FETCH, REMOTE})
# Steps that trim the ends of a text (``strip``, ``rstrip("/")``), and the string surgery that
# cuts a key out of a longer text, after which a trim of the text no longer shapes the key.
_TRIMMING = frozenset({WHITESPACE, SLASH})
_SPLITTING_LABELS = tuple(f".{method}(" for method in sorted(SPLIT_METHODS))


def in_test_code(facts: object) -> bool:
    """KD2 is about where a project normalizes its keys; tests normalize by hand to build
    fixtures and expected values (``Redirect.objects.create(old_path=Redirect.normalise_path(u))``)
    and are no part of that."""
    config = getattr(facts, "config", None) or Config()
    return is_test_module(module_name_of(getattr(facts, "path", ""), config))


def steps_in_mismatches(facts: object) -> Set[Tuple[str, int]]:
    """(entity, step node) pairs that a KD1 finding already reports.

    The KD2 policy: zero-config, a normalization that is part of a KD1 finding on the same
    entity is KD1's (one finding per root cause), while the same normalization reaching another
    entity's key is still KD2's. With a configured boundary the user has declared where
    normalization lives: every normalization outside it is KD2, also at a KD1 site, so nothing
    is left to KD1."""
    config = getattr(facts, "config", None)
    if config is not None and getattr(config, "boundary", ()):
        return set()
    seen: Set[Tuple[str, int]] = set()
    for m in getattr(facts, "mismatches", ()):
        for access in (m.read, m.write):
            seen.update((access.entity, id(s.node)) for s in access.value.steps if s.node is not None)
    return seen


def reported_by_kd1(in_kd1: Set[Tuple[str, int]], access: KeyAccess, step: Step) -> bool:
    return (access.entity, id(step.node)) in in_kd1


def key_fields(facts: object) -> Set[Tuple[str, str]]:
    """(entity, field) pairs that are keys: looked up somewhere in the module (a read, or the
    identity of a write), or named like a natural key (url, email, slug, username...)."""
    keys = {(a.entity, a.field) for a in getattr(facts, "accesses", ())
            if a.kind == READ or a.role == LOOKUP}
    keys |= {(a.entity, a.field) for a in getattr(facts, "accesses", ())
             if a.field == "*" or natural_key_kind(a.field)}
    return keys


def reaching_steps(access: KeyAccess) -> List[Step]:
    """The normalizing steps of this module that shape the stored or looked-up value."""
    steps: List[Step] = []
    for step in access.value.steps:
        if step.kind in _RESETTING:
            steps = []
        elif _cut_by_splitting(step):
            # ``handle.lstrip("@").split("@", 1)[1]``: the strip trimmed the text the key is
            # cut out of (parsing it), not the key; a case step applies to every part alike
            steps = [s for s in steps if s.kind not in _TRIMMING]
        elif step.kind in NORMALIZING and step.node is not None and step.kind not in access.absorbs:
            steps.append(step)
    return steps


def _cut_by_splitting(step: Step) -> bool:
    return step.kind == PART and step.label.startswith(_SPLITTING_LABELS)


def normalization_sites(facts: object) -> Iterator[Tuple[KeyAccess, Step]]:
    """Each (access, step) where a normalizing step of this module reaches a key."""
    keys = key_fields(facts)
    for access in getattr(facts, "accesses", ()):
        if (access.entity, access.field) in keys:
            for step in reaching_steps(access):
                yield access, step


def derived_beside_source(access: KeyAccess, facts: object) -> bool:
    """The normalized value is stored next to the value it was made from, in another field of
    the same write (``create(title=t, slug=slugify(t))``): a derived column (a slug for URLs, a
    sort key) is computed where the record is made, and the source is kept on purpose. The
    source may be kept formatted for display (``full_name=n.strip().title()``) when its field
    is no key: that formatting is presentation, not a key's normalization. A source kept in a
    key field normalized by hand (``create(name=n.strip().lower(), slug=slugify(n))``) is not
    kept raw: both are keys normalized outside the boundary."""
    if access.kind != WRITE or access.role != STORE:
        return False
    keys = key_fields(facts)
    for other in getattr(facts, "accesses", ()):
        if other.node is access.node and other.call_id == access.call_id and other.field != access.field \
                and other.kind == WRITE and other.value.origins & access.value.origins \
                and ((other.entity, other.field) not in keys or not reaching_steps(other)):
            return True
    return False


def is_function_call(step: Step) -> bool:
    """``normalize_url(u)`` rather than ``u.lower()``: a normalizer, not ad-hoc normalization."""
    return isinstance(step.node, ast.Call) and not step.label.startswith(".")


def callee_name(step: Step) -> str:
    return step.label[:-2] if step.label.endswith("()") else step.label
