"""Message building shared by the KD1 rules (read-key / write-key mismatch)."""

from __future__ import annotations

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
    return f"{access.entity}.{access.field}"


def differing_steps(m: Mismatch) -> str:
    read, write = m.read.value.steps, m.write.value.steps
    common = 0
    while common < min(len(read), len(write)) and read[common] == write[common]:
        common += 1
    return steps_text(write[common:] or read[common:])


def finding(code: str, m: Mismatch, message: str) -> RawFinding:
    related = ((m.read.node, f"read by {short(m.read.value.text)}"),
               (m.write.node, f"written with {short(m.write.value.text)}"))
    if m.write.assigned_at is not None:
        related += ((m.write.assigned_at, "key field reassigned"),)
    return RawFinding(
        code=code,
        message=f"{code} {message}",
        node=m.write.node,
        related=related,
        fingerprint=(code, m.write.entity, m.write.field, differing_steps(m), m.write.function),
    )


def read_line() -> str:
    return line_ref(0)


def select(facts: object, shape: str) -> Iterator[Mismatch]:
    for m in getattr(facts, "mismatches", ()):
        if m.shape == shape:
            yield m
