"""Message building shared by the KD1 rules (read-key / write-key mismatch)."""

from __future__ import annotations

import os
import ast
from typing import Iterable, Iterator, Optional, Tuple

from keydrift.analysis.boundary import is_migration_module, is_test_module
from keydrift.analysis.facts import CASE, NORMALIZER, SLASH, WHITESPACE, KeyAccess, Mismatch, RawFinding, RawFix, Step
from keydrift.analysis.imports import module_name_of
from keydrift.analysis.positions import line_ref
from keydrift.analysis.values import dotted_name
from keydrift.types import Config

MAX_TEXT = 60
# Steps a normalizer call replaces (the KD104 fix): case, whitespace and slashes done by hand.
HAND_NORMALIZATION = frozenset({CASE, WHITESPACE, SLASH})


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def steps_text(steps: Iterable[Step]) -> str:
    labels = [s.label for s in steps]
    return " then ".join(labels) if labels else "nothing"


def target(access: KeyAccess) -> str:
    return access.entity if access.field == "*" else f"{access.entity}.{access.field}"


def differing_steps(m: Mismatch) -> str:
    read, write = _after_common_steps(m)
    return steps_text(write or read)


def _after_common_steps(m: Mismatch) -> Tuple[Tuple[Step, ...], Tuple[Step, ...]]:
    """The read's and the write's steps after those they share."""
    read, write = m.read.value.steps, m.write.value.steps
    common = 0
    while common < min(len(read), len(write)) and read[common] == write[common]:
        common += 1
    return read[common:], write[common:]


def shown_location(where: str) -> str:
    """``/abs/app/repo.py:40`` as the user sees paths: relative to the working directory."""
    path, _, line = where.rpartition(":")
    if os.path.isabs(path):
        relative = os.path.relpath(path)
        if not relative.startswith(".."):
            path = relative.replace(os.sep, "/")
    return f"{path}:{line}"


def _path(access: KeyAccess, index: int) -> str:
    """`` via save_result() (line 40)`` for an access made inside called functions."""
    if not access.trace:
        return ""
    steps = []
    for position, (what, where) in enumerate(access.trace):
        if where:
            steps.append(f"{what} ({shown_location(where)})")
        elif position == 0 and access.inner_node is not None:
            steps.append(f"{what} (line {line_ref(index)})")
        else:
            steps.append(what)
    verb = "read" if access.kind == "read" else "written"
    return f" [{verb} via {' -> '.join(steps)}]"


def finding(code: str, m: Mismatch, message: str) -> RawFinding:
    related = [(m.read.node, f"read by {short(m.read.value.text)}"),
               (m.write.node, f"written with {short(m.write.value.text)}")]
    suffix = ""
    for access in (m.read, m.write):
        if access.trace:
            suffix += _path(access, len(related))
            if access.inner_node is not None:
                related.append((access.inner_node, f"{access.kind} inside {access.trace[0][0]}"))
    if m.write.assigned_at is not None:
        related.append((m.write.assigned_at, "key field reassigned"))
    return RawFinding(
        code=code,
        message=f"{code} {message}{suffix}",
        node=m.write.node,
        related=tuple(related),
        fingerprint=(code, m.write.entity, m.write.field, differing_steps(m), m.write.function),
        fix=_normalize_other_side(m),
    )


def _normalize_other_side(m: Mismatch) -> Optional[RawFix]:
    """For the fix (keydrift.fixes): when one side's value differs from the other's by one
    normalizer call, and the other side's by nothing or by hand normalization only (KD104:
    ``.lower()`` against ``normalize_email()``), the access of the other side, to apply the
    normalizer there too."""
    extra_read, extra_write = _after_common_steps(m)
    if _one_call(extra_write) and _by_hand(extra_read):
        lacking, step = m.read, extra_write[0]
    elif _one_call(extra_read) and _by_hand(extra_write):
        lacking, step = m.write, extra_read[0]
    else:
        return None
    callee = dotted_name(step.node.func) if isinstance(step.node, ast.Call) else ""
    if not callee or lacking.trace:
        return None
    return RawFix(lacking.node, lacking.entity, lacking.field, callee, lacking.value.text)


def _one_call(steps: Tuple[Step, ...]) -> bool:
    return len(steps) == 1 and steps[0].kind == NORMALIZER


def _by_hand(steps: Tuple[Step, ...]) -> bool:
    return all(step.kind in HAND_NORMALIZATION for step in steps)


def read_line() -> str:
    return line_ref(0)


def _not_an_entry_point(facts: object) -> bool:
    """Data migrations rename and backfill keys on purpose; tests store fixtures in whatever
    form a test needs (often to check that the code under test normalizes) and then call that
    code. Neither is a path by which the application reads and writes its records; the
    project-wide registry leaves them out for the same reason."""
    config = getattr(facts, "config", None) or Config()
    module = module_name_of(getattr(facts, "path", ""), config)
    return is_migration_module(module) or is_test_module(module)


def select(facts: object, shape: str) -> Iterator[Mismatch]:
    if _not_an_entry_point(facts):
        return
    for m in getattr(facts, "mismatches", ()):
        if m.shape == shape:
            yield m
