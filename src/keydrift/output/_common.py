"""Helpers shared by the formatters: the run's context, paths relative to the project root, and
fingerprints that survive edits which only move code."""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence, Tuple

from keydrift.records import record
from keydrift.types import Finding


@record
class ReportContext:
    """What a formatter may need beyond the findings: the project root that SARIF and GitLab
    paths are made relative to."""

    root: str = "."


def full_message(finding: Finding) -> str:
    """The message starting with its code (every formatter shows it so, whoever built it)."""
    if finding.message.startswith(finding.code):
        return finding.message
    return f"{finding.code} {finding.message}"


def bare_message(finding: Finding) -> str:
    """The message without its leading code, for formats that show the code apart."""
    message = full_message(finding)
    return message[len(finding.code):].lstrip()


def identity(finding: Finding) -> Tuple[str, ...]:
    """What a finding is about, independent of where it sits in the file."""
    return finding.fingerprint or (finding.code, finding.message)


def short_hash(parts: Sequence[str]) -> str:
    import hashlib  # here: a run that writes no fingerprint need not load OpenSSL (``digests``)

    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def relative_path(path: str, root: str) -> Optional[str]:
    """``path`` relative to ``root`` with ``/`` separators, or None when it lies outside."""
    if path == "-":
        return path
    try:
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:  # another drive on Windows
        return None
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative.replace(os.sep, "/")


def display_path(path: str, root: str) -> str:
    """Relative to the root when below it, else absolute; always with ``/``."""
    relative = relative_path(path, root)
    return relative if relative is not None else os.path.abspath(path).replace(os.sep, "/")


def relative_uri(path: str, root: str) -> Optional[str]:
    from urllib.parse import quote  # SARIF and GitLab only: a text report needs no URI

    relative = relative_path(path, root)
    return None if relative is None else quote(relative, safe="/")


def file_uri(path: str) -> str:
    from pathlib import Path  # SARIF only: a text report needs no URI

    return Path(os.path.abspath(path)).as_uri()


def directory_uri(directory: str) -> str:
    """A ``file:`` URI ending in ``/``, as SARIF requires of a base URI."""
    uri = file_uri(directory)
    return uri if uri.endswith("/") else uri + "/"


def occurrence_fingerprints(findings: Sequence[Finding], root: str) -> List[str]:
    """One fingerprint per finding: its identity and its path below the root, never its line.
    Identical findings in one file are told apart by their order (the first keeps the plain
    fingerprint, so adding a duplicate later does not change it)."""
    seen: Dict[Tuple[str, ...], int] = {}
    out = []
    for finding in findings:
        key = (display_path(finding.path, root),) + identity(finding)
        count = seen.get(key, 0)
        seen[key] = count + 1
        out.append(short_hash(key if count == 0 else key + (str(count),)))
    return out
