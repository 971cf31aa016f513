"""Message building shared by the registry rules (KD108-KD110): the other side named by its
function, file and line; the helper chain a use went through."""

from __future__ import annotations

import os
from typing import Iterator, Optional, Tuple

from keydrift.analysis.registry import KeyUse, ProjectFinding, Registry, Site
from keydrift.rules._kd1 import short
from keydrift.types import FixFacts, Span


def chain_text(use: KeyUse, verb: str, root: str = "") -> str:
    """`` [looked up via get_user() (app/store.py:40) -> _select()]`` for a use made in helpers."""
    if not use.chain:
        return ""
    steps = [f"{what} ({_from_root(where, root)})" if where else what for what, where in use.chain]
    return f" [{verb} via {' -> '.join(steps)}]"


def _from_root(where: str, root: str) -> str:
    """``/abs/app/repo.py:40`` relative to the project root (as every registry message names
    files, whatever the working directory)."""
    path, _, line = where.rpartition(":")
    if root and os.path.isabs(path):
        relative = os.path.relpath(path, root)
        if not relative.startswith(".."):
            path = relative.replace(os.sep, "/")
    return f"{path}:{line}"


def where(function: str, site: Site, registry: Registry) -> str:
    """`` `signup` (app/views.py:12)``, the path relative to the project root."""
    name = "module level" if function == "<module>" else f"`{function}`"
    return f"{name} ({site.text()})"


def finding(code: str, use: KeyUse, message: str, other: Tuple[Site, str], verb: str,
            registry: Registry, fix: Optional[FixFacts] = None) -> ProjectFinding:
    """A finding at ``use`` whose other side is ``other``; SARIF gets both as related locations."""
    related = ((use.site, f"{verb} by {short(use.value_text)}"), other)
    return ProjectFinding(code, f"{code} {message}{chain_text(use, verb, registry.root)}", use.site, related,
                          (code, use.entity, use.field, use.function), fix)


def normalize_here(use: KeyUse, normalizer: str) -> Optional[FixFacts]:
    """For the fix (keydrift.fixes): apply ``normalizer`` (its name) to the value ``use`` passes,
    in the statement of ``use`` (a span ending at column 0 names the statement's lines), when
    the value is passed there and not inside a helper."""
    if use.chain or not use.value_text:
        return None
    site = use.site
    return FixFacts(Span(site.line, site.col, site.end_line or site.line, 0), use.entity, use.field, normalizer,
                    use.value_text)


def project_registry(facts: object) -> Iterator[Registry]:
    """The registry when a rule is given one (the per-module pass gives ModuleFacts: nothing)."""
    if isinstance(facts, Registry):
        yield facts
