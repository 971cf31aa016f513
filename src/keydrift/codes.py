"""Selecting codes by prefix, as flake8 does. Kept apart from the rule registry so that
configuration and the CLI's warm path do not import the rules (and the analysis)."""

from __future__ import annotations

from typing import Tuple

from keydrift.types import Config

# The code of every rule (``rules.ALL_RULES``, in order; a test keeps the two the same): the
# flake8 plugin decides from them whether flake8's selection lets any through, in flake8's main
# process, which its workers fork from: importing the rules there cost more than a warm
# worker's whole check.
ALL_CODES: Tuple[str, ...] = ("KD101", "KD102", "KD103", "KD104", "KD105", "KD106", "KD107", "KD108", "KD109",
                              "KD110", "KD201", "KD202", "KD203", "KD301", "KD302", "KD401", "KD402", "KD403",
                              "KD404", "KD405", "KD406", "KD407", "KD900", "KD901")

# The codes of ``rules.REGISTRY_RULES`` (a test keeps the two the same): whether a run needs the
# project-wide registry is decided without importing the rules.
REGISTRY_CODES: Tuple[str, ...] = ("KD108", "KD109", "KD110")

# The codes ``fixes.FIXERS`` has a fix for (a test keeps the two the same): the check's "N
# fixable" hint leaves libcst unimported, and the files unparsed, when no finding is one of them.
FIXABLE_CODES: Tuple[str, ...] = ("KD102", "KD103", "KD104", "KD108", "KD201", "KD202", "KD401", "KD402", "KD403",
                                  "KD407")


def code_matches(code: str, prefixes: Tuple[str, ...]) -> bool:
    return any(code.startswith(p) for p in prefixes)


def rule_selected(code: str, config: Config) -> bool:
    """``select``/``ignore`` by prefix, like flake8: the longest matching prefix wins."""
    selected = max((len(p) for p in config.select if code.startswith(p)), default=-1)
    ignored = max((len(p) for p in config.ignore if code.startswith(p)), default=-1)
    if config.select and selected < 0:
        return False
    return ignored < 0 or selected > ignored
