"""Message building shared by the registry rules (KD108-KD110): the other side named by its
function, file and line; the helper chain a use went through."""

from __future__ import annotations

import os
from typing import Iterator, Tuple

from keydrift.analysis.registry import KeyUse, ProjectFinding, Registry, Site
from keydrift.rules._kd1 import short, shown_location


def chain_text(use: KeyUse, verb: str) -> str:
    """`` [looked up via get_user() (app/store.py:40) -> _select()]`` for a use made in helpers."""
    if not use.chain:
        return ""
    steps = [f"{what} ({shown_location(where)})" if where else what for what, where in use.chain]
    return f" [{verb} via {' -> '.join(steps)}]"


def where(function: str, site: Site, registry: Registry) -> str:
    """`` `signup` (app/views.py:12)``, the path as the user sees it (from the working directory)."""
    name = "module level" if function == "<module>" else f"`{function}`"
    path = os.path.join(registry.root, site.path) if registry.root else site.path
    return f"{name} ({shown_location(f'{path}:{site.line}')})"


def finding(code: str, use: KeyUse, message: str, other: Tuple[Site, str], verb: str) -> ProjectFinding:
    """A finding at ``use`` whose other side is ``other``; SARIF gets both as related locations."""
    related = ((use.site, f"{verb} by {short(use.value_text)}"), other)
    return ProjectFinding(code, f"{code} {message}{chain_text(use, verb)}", use.site, related,
                          (code, use.entity, use.field, use.function))


def project_registry(facts: object) -> Iterator[Registry]:
    """The registry when a rule is given one (the per-module pass gives ModuleFacts: nothing)."""
    if isinstance(facts, Registry):
        yield facts
