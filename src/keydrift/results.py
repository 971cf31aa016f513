"""Per-file results on disk: an unchanged project is re-checked in the time it takes to read it.

An entry is found by the file's path, the working directory (messages name other files relative
to it) and the configuration; it holds the digest of the source it was computed from and every
dependency the analysis consulted: the digests of imported project modules and the module and
package names in the directories imports were looked up in (a module created there later changes
the answer; a swap file or a ``__pycache__`` does not).
It is used only when all of them are unchanged, so a cached result is never stale. keydrift's
own code is part of the key: an upgrade, or an edit while developing keydrift, starts afresh.

This module imports no parser: a warm run never loads the analysis.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from keydrift.diskcache import (  # noqa: F401 - one_look, new_look: the results cache's API
    CACHE_DIRECTORY, EXPORT_DEPENDENCY, METHODS_DEPENDENCY, DiskCache, MethodsAnswer, code_fingerprint, digest,
    directory_state, file_digest, keep_digests, methods_asked, new_look, one_look, read_kept_digests,
)
from keydrift.filestate import files_state_once
from keydrift.source import SourceError, decode_source
from keydrift.types import Config, Finding, FixFacts, Location, Span

if TYPE_CHECKING:
    import ast

# Results that depend on the machine's load or on a keydrift bug are not worth keeping.
_UNCACHED_CODES = ("KD901",)


def check_cached(source: Union[str, bytes], path: str, config: Config, tree: "Optional[ast.Module]" = None) -> List[Finding]:
    """``engine.check_source`` through the results cache (when ``config.cache``). The file is
    analyzed under one spelling of its path (``./app/x.py`` is ``app/x.py``), so the CLI and the
    flake8 plugin share entries; findings come back under the caller's spelling. ``tree``:
    CPython's tree of ``source`` when the caller has one (flake8's), used on a miss."""
    spelled, path = path, _canonical(path)
    if not config.cache:
        from keydrift.engine import check_source

        return _respelled(check_source(source, path, config, tree), path, spelled)
    if _holds_no_finding(source, path, config):
        return []
    data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    cache = _cache_for(config)
    key = _entry_key(path, config, cache)
    source_digest = digest(data)
    found = _lookup(cache, key, source_digest, path, config, confirm=True).findings
    if found is not None:
        return _respelled(found, path, spelled)
    from keydrift.engine import check_source_recorded

    findings, deps = check_source_recorded(source, path, config, tree)
    if not any(f.code in _UNCACHED_CODES for f in findings):
        cache.store(key, {"digest": source_digest, "deps": deps,
                          "findings": [_finding_to_json(f) for f in findings]})
    return _respelled(findings, path, spelled)


class CacheLookup(NamedTuple):
    """What the results cache holds for a file: its findings when they stand, else None, and
    then the module files that changed when the result may still stand (their exports decide),
    None for a plain miss."""

    findings: Optional[List[Finding]]
    changed: Optional[List[str]] = None


_MISS = CacheLookup(None)


def cached_findings(data: bytes, path: str, config: Config, confirm: bool = False,
                    source_digest: str = "") -> CacheLookup:
    """The findings the cache holds for ``path`` (holding ``data``, of digest ``source_digest``
    when the caller knows it), for a front end that decides which files it must check. Without
    ``confirm`` nothing of the analysis is loaded: a result whose module files changed comes
    back undecided (``changed``); with it, their exports are compared, as ``check_cached`` does."""
    if not config.cache:
        return _MISS
    spelled, path = path, _canonical(path)
    if _holds_no_finding(data, path, config):
        return CacheLookup([])
    cache = _cache_for(config)
    found = _lookup(cache, _entry_key(path, config, cache), source_digest or digest(data), path, config, confirm)
    return found if found.findings is None else found._replace(findings=_respelled(found.findings, path, spelled))


def may_hold_results(config: Config) -> bool:
    """Whether the results cache may hold an entry for a file of ``config``'s project: it is on
    and its folder exists (a first run's does not: every file is a miss, known without reading it)."""
    return bool(config.cache) and os.path.isdir(_cache_for(config).directory or "")


def _lookup(cache: DiskCache, key: str, source_digest: str, path: str, config: Config, confirm: bool) -> CacheLookup:
    entry = cache.load(key)
    if entry is None or entry.get("digest") != source_digest:
        return _MISS
    try:
        deps = entry["deps"]
        changed = stale_modules(deps)
        if changed and confirm:
            if not _exports_hold(deps, changed, path, source_digest, config):
                return _MISS
            # a dependency's new digest, its export unchanged: the next run need not compare again
            cache.store(key, {"digest": source_digest, "deps": deps, "findings": entry["findings"]})
            changed = []
        if changed is None or changed:
            return CacheLookup(None, changed)
        return CacheLookup([_finding_from_json(item) for item in entry["findings"]])
    except (KeyError, TypeError, ValueError, AttributeError):
        return _MISS  # a damaged entry is a miss


def _holds_no_finding(source: Union[str, bytes], path: str, config: Config) -> bool:
    """Test code that defines no normalizer (``analysis/test_code``): the engine would return no
    finding before analyzing it, so no entry is kept for it (the cache folder of a project
    with many tests held an entry per test module, each a new file), and the answer is given
    again instead of read. A text that cannot be decoded or holds NUL bytes is the engine's to
    report (KD900)."""
    from keydrift.analysis.test_code import defines_a_normalizer, is_test_code  # no parser: see the module

    if not is_test_code(path, config):
        return False
    try:
        text = decode_source(source) if isinstance(source, bytes) else source
    except SourceError:
        return False
    return "\x00" not in text and not defines_a_normalizer(text, config)


def _canonical(path: str) -> str:
    """``./app/x.py`` and ``app//x.py`` as ``app/x.py``; standard input's name as it is."""
    return os.path.normpath(path) if path not in ("", "-", "stdin") else path


def _respelled(findings: List[Finding], canonical: str, spelled: str) -> List[Finding]:
    if canonical == spelled:
        return findings

    def own(where: str) -> str:
        return spelled if where == canonical else where
    return [replace(f, path=own(f.path), related=tuple(replace(r, path=own(r.path)) for r in f.related))
            for f in findings]


_CACHES: Dict[str, DiskCache] = {}


def _cache_for(config: Config) -> DiskCache:
    root = os.path.abspath(config.root or ".")
    if root not in _CACHES:
        _CACHES[root] = cache = DiskCache(os.path.join(root, CACHE_DIRECTORY))
        read_kept_digests(cache)
    return _CACHES[root]


def keep_file_digests(config: Config) -> None:
    """Keep what this process learned of the project's files' digests for the next process
    (``diskcache.keep_digests``)."""
    if config.cache:
        keep_digests(_cache_for(config))


def _entry_key(path: str, config: Config, cache: DiskCache, kind: str = "r-") -> str:
    """By the file (however the front end spells its path: ``./app/x.py`` from flake8 and
    ``app/x.py`` from the CLI share an entry), the working directory (messages name other files
    relative to it), the settings and keydrift's code; ``kind``: the results (``r-``) or what
    else is kept of the file under the same identity."""
    settings = (config.root, config.config_file, config.boundary, config.normalizers, config.readers,
                config.writers, config.tables, config.select, config.ignore)
    identity = repr((os.getcwd(), os.path.abspath(path), settings, code_fingerprint(cache)))
    return kind + digest(identity.encode("utf-8", "surrogatepass"))


# (source, its findings, configuration) -> (safe fixes, unsafe fixes)
FixCounter = Callable[[bytes, Sequence[Finding], Config], Tuple[int, int]]


def remembered_fix_counts(path: str, source: bytes, config: Config, findings: Sequence[Finding],
                          count: FixCounter) -> Tuple[int, int]:
    """``count(source, findings, config)`` through the results cache: the summary's "N fixable"
    hint parses each file with a fixable finding with libcst, which on an unchanged project
    cost more than the rest of the run. One entry per file, under its results' identity (an edit
    replaces it, as it replaces the results), used while the file's source and findings are
    those the counts were made from."""
    if not config.cache:
        return count(source, findings, config)
    cache = _cache_for(config)
    key = _entry_key(_canonical(path), config, cache, kind="x-")
    made_from = digest(repr((digest(source), [_finding_to_json(f) for f in findings])).encode("utf-8", "surrogatepass"))
    entry = cache.load(key)
    try:
        if entry is not None and entry["from"] == made_from:
            return int(entry["safe"]), int(entry["unsafe"])
    except (KeyError, TypeError, ValueError):
        pass  # a damaged entry is a miss
    safe, unsafe = count(source, findings, config)
    cache.store(key, {"from": made_from, "safe": safe, "unsafe": unsafe})
    return safe, unsafe


def dependencies_hold(deps: Dict[str, str], path: str, source_digest: str, config: Config) -> bool:
    """Whether a result computed for ``path`` with these dependencies still holds: every one is
    unchanged, or module files changed but every module export the result read is the same
    (an edit that changes no summary: its importers' results stand). The changed files are
    brought up to date in ``deps``, so the next run does not ask again."""
    changed = stale_modules(deps)
    if changed is None:
        return False
    return not changed or _exports_hold(deps, changed, path, source_digest, config)


def _exports_hold(deps: Dict[str, str], changed: List[str], path: str, source_digest: str, config: Config) -> bool:
    """Whether every export the result read is the same although ``changed`` files are not
    (they are then brought up to date in ``deps``)."""
    from keydrift.engine import exports_unchanged  # loads the analysis: only when something changed

    if not exports_unchanged(deps, path, source_digest, config):
        return False
    deps.update((dependency, current_dependency(dependency)) for dependency in changed)
    return True


def stale_modules(deps: Dict[str, str]) -> Optional[List[str]]:
    """The module files among ``deps`` that changed since; None when a directory changed."""
    changed = []
    for dependency, expected in deps.items():
        if dependency.startswith(METHODS_DEPENDENCY):
            if not _answers_hold(dependency, expected):
                return None  # another answer of the method index: analyzed again
            continue
        if dependency.startswith(EXPORT_DEPENDENCY) or current_dependency(dependency) == expected:
            continue
        if dependency.startswith("dir:"):
            return None
        changed.append(dependency)
    return changed


def current_dependency(dependency: str) -> str:
    """A dependency's digest (a file) or state (a ``dir:`` entry) now; "" if it is gone (looked
    at once inside ``one_look``)."""
    if dependency.startswith("dir:"):
        return directory_state(dependency[4:])
    return file_digest(dependency) or ""


def _answers_hold(dependency: str, recorded: str) -> bool:
    """Whether the project's method index answers what a result recorded (``receivers.answers_hold``).
    Before the index's module is loaded, the project's files found as they were (the first part
    of the value) are enough, and known without loading it: a warm run of an unchanged project."""
    if "keydrift.analysis.receivers" not in sys.modules:
        answer = MethodsAnswer.read(recorded)
        # (a value without a name asked is damaged: never holds)
        if answer.names and answer.state == files_state_once(methods_asked(dependency)[0]):
            return True
    from keydrift.analysis.receivers import answers_hold  # only a result that asked loads it

    return answers_hold(dependency, recorded)


def _finding_to_json(finding: Finding) -> Dict[str, Any]:
    return {"code": finding.code, "message": finding.message, "path": finding.path, "line": finding.line,
            "col": finding.col, "end_line": finding.end_line, "fingerprint": list(finding.fingerprint),
            "related": [[r.path, r.line, r.col, r.note] for r in finding.related],
            "end_col": finding.end_col, "fix": fix_to_json(finding.fix)}


def fix_to_json(fix: Optional[FixFacts]) -> Optional[List[Any]]:
    if fix is None:
        return None
    t = fix.target
    return [[t.line, t.col, t.end_line, t.end_col], fix.entity, fix.field, fix.normalizer, fix.value]


def fix_from_json(item: Optional[Sequence[Any]]) -> Optional[FixFacts]:
    if item is None:
        return None
    (line, col, end_line, end_col), entity, field, normalizer, value = item
    return FixFacts(Span(int(line), int(col), int(end_line), int(end_col)), str(entity), str(field),
                    str(normalizer), str(value))


def _finding_from_json(item: Dict[str, Any]) -> Finding:
    related: Sequence[Sequence[Any]] = item["related"]
    return Finding(code=str(item["code"]), message=str(item["message"]), path=str(item["path"]),
                   line=int(item["line"]), col=int(item["col"]), end_line=int(item["end_line"]),
                   related=tuple(Location(str(p), int(l), int(c), str(n)) for p, l, c, n in related),
                   fingerprint=tuple(str(part) for part in item["fingerprint"]),
                   end_col=int(item.get("end_col", 0)), fix=fix_from_json(item.get("fix")))
