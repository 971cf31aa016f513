"""Helpers shared by the formatters."""

from __future__ import annotations

from keydrift.types import Finding


def full_message(finding: Finding) -> str:
    """The message starting with its code (every formatter shows it so, whoever built it)."""
    if finding.message.startswith(finding.code):
        return finding.message
    return f"{finding.code} {finding.message}"
