"""Baselines: adopt keydrift on a codebase with known findings, and report only new ones.

``keydrift check --write-baseline FILE`` records the current findings; ``--baseline FILE``
drops the findings the file records. A finding is recorded by its code, its path (relative to
the baseline file's directory, so the run's working directory does not matter) and the hash of
its identity: entity, field, transformation and enclosing function, never a line number. Edits
that only move code keep a finding suppressed. Identical findings in one file are counted: a
baseline of two lets two through silently and reports the third.

The file is JSON, sorted, one entry per (path, code, fingerprint) with its count and, for the
reader, the message of the first occurrence.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any, Dict, List, Sequence, Tuple

from keydrift import __version__
from keydrift.output._common import display_path
from keydrift.output.json import fingerprint
from keydrift.types import Finding

FORMAT_VERSION = 1

Key = Tuple[str, str, str]  # path, code, fingerprint


class BaselineError(Exception):
    """A baseline file that cannot be read or is not one; the message names the file."""


def finding_key(finding: Finding, base_directory: str) -> Key:
    return (display_path(finding.path, base_directory), finding.code, fingerprint(finding))


def baseline_document(findings: Sequence[Finding], base_directory: str) -> Dict[str, Any]:
    counts: Counter = Counter()
    messages: Dict[Key, str] = {}
    for finding in findings:
        key = finding_key(finding, base_directory)
        counts[key] += 1
        messages.setdefault(key, finding.message)
    entries = [
        {"path": path, "code": code, "fingerprint": digest, "count": counts[(path, code, digest)],
         "message": messages[(path, code, digest)]}
        for path, code, digest in sorted(counts)
    ]
    return {"keydrift_baseline": FORMAT_VERSION, "keydrift": __version__, "findings": entries}


def write_baseline(path: str, findings: Sequence[Finding]) -> None:
    document = baseline_document(findings, _directory_of(path))
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
    except OSError as exc:
        raise BaselineError(f"cannot write {path}: {exc.strerror or exc}") from None


def read_baseline(path: str) -> Counter:
    """The recorded findings: (path, code, fingerprint) -> how many."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as exc:
        raise BaselineError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise BaselineError(f"{path}: not a keydrift baseline (invalid JSON: {exc})") from None
    return _recorded_counts(document, path)


def _recorded_counts(document: Any, path: str) -> Counter:
    if not isinstance(document, dict) or document.get("keydrift_baseline") != FORMAT_VERSION:
        raise BaselineError(f"{path}: not a keydrift baseline (version {FORMAT_VERSION} expected)")
    counts: Counter = Counter()
    try:
        for entry in document["findings"]:
            counts[(str(entry["path"]), str(entry["code"]), str(entry["fingerprint"]))] += int(entry["count"])
    except (KeyError, TypeError, ValueError):
        raise BaselineError(f"{path}: a baseline entry lacks path, code, fingerprint or count") from None
    return counts


def new_findings(findings: Sequence[Finding], baseline_path: str) -> Tuple[List[Finding], int]:
    """The findings the baseline does not cover, and how many it covered."""
    remaining = read_baseline(baseline_path)
    base_directory = _directory_of(baseline_path)
    new = []
    for finding in findings:
        key = finding_key(finding, base_directory)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            new.append(finding)
    return new, len(findings) - len(new)


def _directory_of(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))
