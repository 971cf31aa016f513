"""What the name of a callee says it does, for in-house data-access helpers: the operation of a
table helper (``simple_select_one`` selects) and whether it runs a function it is given
(``run_in_transaction``). Pure name logic (no parser), for the recognizers."""

from __future__ import annotations

from functools import lru_cache
from typing import Tuple

from keydrift.frameworks import data_access as da
from keydrift.patterns import lazy

_CAMEL = lazy(r"(?<=[a-z0-9])(?=[A-Z])")


# The walker asks about every call's name, and a project calls few names many times:
# the answers are remembered (pure functions of the name).
_REMEMBERED_NAMES = 8192


@lru_cache(maxsize=_REMEMBERED_NAMES)
def name_tokens(name: str) -> Tuple[str, ...]:
    """``simple_selectOne`` -> ("simple", "select", "one")."""
    return tuple(t.lower() for t in _CAMEL.sub("_", name).split("_") if t)


@lru_cache(maxsize=_REMEMBERED_NAMES)
def helper_operation(name: str) -> str:
    """The operation a helper's name announces, or "" (the last verb token wins:
    ``select_or_insert`` inserts). Bare common verbs (``get``, ``update``) are not helpers."""
    if name in da.BARE_NAMES_NOT_HELPERS or name.startswith("__"):
        return ""
    found = ""
    for token in name_tokens(name):
        found = da.VERB_TOKENS.get(token, found)
    return found


@lru_cache(maxsize=_REMEMBERED_NAMES)
def is_runner_name(name: str) -> bool:
    """A callee that calls the function it is given with the arguments that follow it."""
    return name in da.RUNNER_NAMES or (
        "run" in name_tokens(name) and not da.RUNNER_TOKENS.isdisjoint(name_tokens(name)))
