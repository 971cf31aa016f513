"""Shared by the KD2 rules: which normalization steps reach keys, and where."""

from __future__ import annotations

from typing import Iterator, Set, Tuple

import libcst as cst

from keydrift.analysis.facts import CASE, IDNA, NORMALIZER, SLASH, SLUG, UNICODE, URL, WHITESPACE, KeyAccess, Step

# Step kinds that normalize a key (as opposed to re-deriving or formatting it).
NORMALIZING = frozenset({CASE, WHITESPACE, SLASH, URL, UNICODE, IDNA, SLUG, NORMALIZER})
# Of those, the ones a library or project *function* performs (KD201); the rest are ad hoc.
NORMALIZER_CALLS = frozenset({NORMALIZER, UNICODE, IDNA, SLUG})


def steps_in_mismatches(facts: object) -> Set[int]:
    """Step nodes that a KD1 finding already reports: KD2 stays silent about them."""
    seen: Set[int] = set()
    for m in getattr(facts, "mismatches", ()):
        for access in (m.read, m.write):
            seen.update(id(s.node) for s in access.value.steps if s.node is not None)
    return seen


def normalization_sites(facts: object) -> Iterator[Tuple[KeyAccess, Step]]:
    """Each (access, step) where a normalizing step of this module reaches a key."""
    for access in getattr(facts, "accesses", ()):
        for step in access.value.steps:
            if step.kind in NORMALIZING and step.node is not None and step.kind not in access.absorbs:
                yield access, step


def callee_name(step: Step) -> str:
    node = step.node
    if isinstance(node, cst.Call):
        return step.label[:-2] if step.label.endswith("()") else step.label
    return ""
