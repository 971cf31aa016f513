"""Message building shared by the KD1 rules (read-key / write-key mismatch)."""

from __future__ import annotations

import os
from typing import Iterable, Iterator

from keydrift.analysis.facts import KeyAccess, Mismatch, RawFinding, Step
from keydrift.analysis.positions import line_ref

MAX_TEXT = 60


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def steps_text(steps: Iterable[Step]) -> str:
    labels = [s.label for s in steps]
    return " then ".join(labels) if labels else "nothing"


def target(access: KeyAccess) -> str:
    return access.entity if access.field == "*" else f"{access.entity}.{access.field}"


def differing_steps(m: Mismatch) -> str:
    read, write = m.read.value.steps, m.write.value.steps
    common = 0
    while common < min(len(read), len(write)) and read[common] == write[common]:
        common += 1
    return steps_text(write[common:] or read[common:])


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
    )


def read_line() -> str:
    return line_ref(0)


def select(facts: object, shape: str) -> Iterator[Mismatch]:
    for m in getattr(facts, "mismatches", ()):
        if m.shape == shape:
            yield m
