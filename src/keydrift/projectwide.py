"""Project-wide findings: the key registry of every module under the project root, and the
findings of the registry rules (KD108-KD110), per file.

The registry is assembled from each module's registry facts, which the project index keeps
(and caches on disk by content) with its summaries; a module the engine has just checked is
not analyzed again. The findings are kept on disk too, under a key naming the project root,
the working directory, the configuration and keydrift's own code, with the digest of every
file of the project: a run on an unchanged project (another flake8 worker, the next save in
an editor, a warm CI run) reads them instead of assembling the registry, and any change to
any module (an edit, a new or deleted file) rebuilds them. Writes are atomic, so concurrent
flake8 workers can share the entry.
"""

from __future__ import annotations

import json
import os
import stat
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

try:
    import fcntl
except ImportError:  # Windows: claims are files (``_claim``)
    fcntl = None  # type: ignore[assignment]

from keydrift.codes import REGISTRY_CODES, rule_selected
from keydrift.config import is_excluded
from keydrift.deepstack import call_with_deep_stack
from keydrift import early_reading
from keydrift.diskcache import CACHE_DIRECTORY, DiskCache, code_fingerprint, digest, file_digest
from keydrift.files import is_inside, skip_directory, walk
from keydrift.forkhelp import SharedWork, shared_with_a_helper
from keydrift.timing import stage
from keydrift.results import dependencies_hold, fix_from_json, fix_to_json, stale_modules
from keydrift.types import Config, Finding, Location

# the project's files' digests, and the registry's findings (None: not assembled yet)
_MEMO: Dict[str, Tuple[Dict[str, str], Optional[Dict[str, List[Finding]]]]] = {}

# Checks a module (absolute path) as its front end would, through the results cache.
Checker = Callable[[str], None]

# A module's registry contribution, made by the process that has just checked it, for the
# process that assembles the registry: (the registry's memo key, the module's absolute path,
# the record ``_contribution`` stores).
Offer = Tuple[str, str, dict]

# Contributions offered in this run (memo key -> module path -> record): the registry is
# assembled from them without reading, parsing or analyzing those modules a second time.
_OFFERED: Dict[str, Dict[str, dict]] = {}


def findings_for(path: str, config: Config, fresh: bool = True, check: Optional[Checker] = None) -> List[Finding]:
    """The registry findings reported in ``path`` (as the caller names it), selected codes only.
    ``fresh=False`` trusts what this process found for the project already (a CLI run or a
    flake8 worker checks a snapshot: walking and hashing the project for every file would make
    a run quadratic); an editor server asks for a fresh look every time.

    ``check``: for a front end that is about to check every module itself in several processes
    at once (flake8's workers): assembling the registry then checks each module through it (so
    its later check is a cached result) and the processes share the modules between them."""
    if path in ("-", "stdin") or not path.endswith(".py") or not registry_selected(config):
        return []
    absolute = _absolute(path, config)
    if not _regular(absolute):
        return []  # a FIFO named x.py, a vanished file: never opened, never part of the project
    by_file = project_findings(config, fresh, absolute, check)
    return [_as_given(f, path) for f in by_file.get(absolute, ())]


def offer_after_check(path: str, config: Config) -> Optional[Offer]:
    """The registry contribution of ``path``, a module this process has just checked (its
    analysis and its imports' exports are still in memory, so this costs little), for the
    process that will assemble the registry (``accept``). None when no registry is needed or
    the module cannot be read."""
    if path in ("-", "stdin") or not path.endswith(".py") or not registry_selected(config):
        return None
    from keydrift.analysis.project import project_index

    absolute = _absolute(path, config)
    file_hash = file_digest(absolute) if _regular(absolute) else None
    if file_hash is None:
        return None
    project = project_index(config, use_cache=config.cache)
    try:
        record, _ = call_with_deep_stack(
            lambda: _contribution(project, absolute, file_hash, config, _methods_of(project), portable=True))
    except Exception:  # noqa: BLE001 - the assembling process asks the index itself
        return None
    return _memo_key(config), absolute, record


def accept(offer: Optional[Offer]) -> None:
    """Keep a contribution another process (or this one) made while checking a module."""
    if offer is not None:
        key, path, record = offer
        _OFFERED.setdefault(key, {})[path] = record


def check_held_analyses(config: Config, check: Checker) -> None:
    """Check the project's modules this process has analyzed for an importer and not checked
    yet (the index keeps their analyses for their own checks, so a check costs little more than
    the rules), each under a claim: the other processes checking the project at the same time
    (flake8's workers) then find the module's result in the cache instead of analyzing it again
    when flake8 hands the module to one of them."""
    if _HOLDING:
        return  # a check made here adds to the analyses held: the outer loop takes them
    from keydrift.analysis.project import project_index

    project = project_index(config, use_cache=config.cache)
    directory = project.cache.directory
    if directory is None:
        return  # nothing is shared without the cache
    _HOLDING.append(True)
    try:
        while True:
            waiting = [key for key in project.analyses if key not in _HELD_CHECKED]
            if not waiting:
                return
            for path, file_hash in waiting:
                _HELD_CHECKED.add((path, file_hash))
                if is_inside(path, project.root):
                    with _claimed(directory, path, project) as held:
                        if held:  # else another process is at it
                            check(path)
    finally:
        _HOLDING.clear()


# Analyses ``check_held_analyses`` has checked or left to another process: (file, digest).
_HELD_CHECKED: Set[Tuple[str, str]] = set()
_HOLDING: List[bool] = []


def registry_selected(config: Config) -> bool:
    """Whether any registry rule is selected: ``--select KD3`` or ``--ignore KD108,KD109,KD110``
    builds no registry (it costs a look at every module of the project)."""
    return any(rule_selected(code, config) for code in REGISTRY_CODES)


def _may_hold_findings(path: str, config: Config) -> bool:
    """Whether the registry can report a finding in the module: it has a use a registry rule
    may report at (``registry.may_be_reported``; a module of lookups by records' own fields, of
    literals, of parameters passed on as given has none, whatever the other modules hold). Only
    its own analysis and its imports' are needed to know, not the whole project's."""
    from keydrift.analysis.project import project_index
    from keydrift.analysis.registry import may_be_reported

    offered = _offered(_OFFERED.get(_memo_key(config), {}).get(path), file_digest(path) or "")
    if offered is not None:
        keys = offered[1]
    else:
        keys, _ = _module_keys(project_index(config, use_cache=config.cache), path, config)
    return keys is not None and any(may_be_reported(use) for use in keys.uses)  # type: ignore[attr-defined]


def _contributes(keys: object) -> bool:
    return bool(keys.uses or keys.rewrites)  # type: ignore[attr-defined]


def _still_describes(state: Dict[str, str], path: str) -> bool:
    """The cheap check of a trusted result: the file at hand is as it was."""
    return not path or state.get(path) == (file_digest(path) or "")


def _left_out_of_the_walk(path: str, root: str, config: Config) -> bool:
    """Whether the project's walk (``_project_files``) certainly leaves the file out: it is
    outside the root, excluded, or below a directory the walk skips (``.ropeproject``,
    ``build``). A file the walk may yet find (one created since) is not."""
    if not path or not is_inside(path, root) or path == root:
        return bool(path)
    if is_excluded(path, config):
        return True
    directory = root
    for name in os.path.relpath(os.path.dirname(path), root).split(os.sep):
        directory = os.path.join(directory, name)
        if name != os.curdir and skip_directory(directory, config):
            return True
    return False


def _absolute(path: str, config: Config) -> str:
    """A relative path is taken from the working directory, or from the project root when the
    file is there (as the engine does)."""
    if not os.path.isabs(path) and not os.path.exists(path) and config.root:
        rooted = os.path.join(os.path.abspath(config.root), path)
        if os.path.exists(rooted):
            path = rooted
    return os.path.normpath(os.path.abspath(path))


def findings_for_files(paths: Sequence[str], config: Config) -> List[Finding]:
    out: List[Finding] = []
    for path in paths:
        out.extend(findings_for(path, config))
    return out


def project_findings(config: Config, fresh: bool = True, path_hint: str = "",
                     check: Optional[Checker] = None) -> Dict[str, List[Finding]]:
    """Absolute file path -> its registry findings, for the project of ``config``. Without a
    disk cache only the findings of ``path_hint``'s distribution are made (its own registry:
    ``_distribution``); nothing would keep the others for a later run."""
    root, only, memo_key = _scope(config, path_hint)
    memo = _MEMO.get(memo_key)
    # the first file asked about (a one-file check): without a disk cache nothing is stored for
    # another, so a module with no use a registry rule may report at needs the project neither
    # assembled nor walked and hashed
    asked_first = memo is None and bool(path_hint) and not config.cache
    if asked_first and not _may_hold_findings(path_hint, config):
        return {}
    if memo is not None and not fresh and path_hint not in memo[0] and _left_out_of_the_walk(path_hint, root, config):
        # flake8 checks modules the walk leaves out (one in a hidden directory): the registry
        # reports nothing in them, and walking the project again for each would tell nothing new
        return memo[1] or {}
    if memo is not None and not fresh and _still_describes(memo[0], path_hint):
        if memo[1] is not None:
            return memo[1]
        state = memo[0]  # walked already; no module asked about needed the registry yet
    else:
        state = _project_state(root, config, only)
        if memo is not None and memo[0] == state and memo[1] is not None:
            return memo[1]
    cache = DiskCache(os.path.join(root, CACHE_DIRECTORY) if config.cache else None)
    key = _entry_key(config) if config.cache else ""  # (nothing stored: keydrift's code need not be hashed)
    entry = cache.load(key)
    found = _load(entry, state)
    if found is None and path_hint and not asked_first and not _may_hold_findings(path_hint, config):
        # a registry finding sits at a use a rule may report at: this module has none
        _MEMO[memo_key] = (state, None)
        return {}
    if found is None:
        # kept apart from the findings: a warm run reads only those
        stored = _stored_contributions(cache.load("m" + key))
        contributions: Dict[str, dict] = {}
        with stage("registry"):
            try:
                found = call_with_deep_stack(
                    lambda: _build(state, config, check, stored, contributions, _STARTED.pop(memo_key, None)))
            except Exception:  # noqa: BLE001 - a bug in the registry must not stop the run
                found, contributions = {}, {}
        cache.store("m" + key, _stored_form(contributions))
        cache.store(key, {"state": state, "findings": {p: [_to_json(f) for f in fs] for p, fs in found.items()}})
    _MEMO[memo_key] = (state, found)
    return found


def _scope(config: Config, path_hint: str) -> Tuple[str, Optional[str], str]:
    """The project root, the distribution whose registry is assembled for ``path_hint`` (None:
    the whole project's; only a run without a disk cache assembles one distribution's), and
    that registry's key in ``_MEMO``."""
    root = os.path.abspath(config.root or ".")
    only = _distribution(path_hint, root) if path_hint and not config.cache else None
    return root, only, _memo_key(config) if only is None else f"{_memo_key(config)}\0{only}"


def _project_state(root: str, config: Config, only: Optional[str]) -> Dict[str, str]:
    """Each module of the project (of the distribution ``only``), with its digest."""
    return {path: file_digest(path) or "" for path in _in_distribution(_project_files(root, config), root, only)}


def forget() -> None:
    stop_helpers()
    _MEMO.clear()
    _OFFERED.clear()
    _METHODS.clear()
    _HELD_CHECKED.clear()


def _memo_key(config: Config) -> str:
    return repr((os.path.abspath(config.root or "."), os.getcwd(), config.select, config.ignore,
                 config.normalizers, config.boundary, config.readers, config.writers, config.exclude))


def _entry_key(config: Config) -> str:
    return "g-" + digest(repr((_memo_key(config), code_fingerprint())).encode("utf-8", "surrogatepass"))


def _project_files(root: str, config: Config) -> List[str]:
    """The project's modules: regular ``.py`` files (a FIFO named ``x.py`` would block a read)."""
    return [os.path.normpath(os.path.abspath(p)) for p in walk(root, config) if p.endswith(".py") and _regular(p)]


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _build(state: Dict[str, str], config: Config, check: Optional[Checker], stored: Dict[str, dict],
           contributions: Dict[str, dict], started: Optional["_Started"] = None) -> Dict[str, List[Finding]]:
    """The registry's findings; ``contributions`` gets each module's (see ``_contribution``),
    and ``stored`` ones still valid are used instead of asking the index again. ``started``:
    the helper ``start_helper`` started for this registry."""
    from keydrift.analysis.project import project_index

    files = list(state)
    project = project_index(config, use_cache=config.cache)
    keys_of = _keys_of_modules(project, state, config, check, stored, contributions, started)
    partitions: Dict[str, list] = {}
    for path in files:  # in the walk's order, whichever process analyzed which module
        keys = keys_of.get(path)
        if keys is not None and _contributes(keys):
            partitions.setdefault(_distribution(path, project.root), []).append(keys)
    found: Dict[str, List[Finding]] = {}
    for modules in partitions.values():
        for path, items in _registry_findings(modules, project.root, config).items():
            found.setdefault(path, []).extend(items)
    for path, items in found.items():
        found[path] = _one_per_place(items)
    return found


def _keys_of_modules(project: object, state: Dict[str, str], config: Config, check: Optional[Checker],
                     stored: Dict[str, dict], contributions: Dict[str, dict],
                     started: Optional["_Started"] = None) -> Dict[str, object]:
    """Each module's registry facts: its stored contribution while nothing it was decided from
    has changed (a touched file replaces its own, and its importers'), else asked of the index.
    With ``check``, processes assembling the same registry at the same time split the modules:
    each claims a module before analyzing it (a lock in the cache folder's claims file: ``_claim``)
    and leaves the ones another has claimed to the end, when their exports are usually on disk."""
    directory = project.cache.directory if check is not None else None  # type: ignore[attr-defined]
    methods = _methods_of(project)
    offered = _OFFERED.get(_memo_key(config), {})
    if check is None and (_HELPER_ALLOWED or started is not None):
        return _keys_with_a_helper(project, state, config, stored, contributions, offered, methods, started)
    shared = _SharedContributions(project.cache, config, methods) if directory is not None else None  # type: ignore[attr-defined]
    keys_of: Dict[str, object] = {}
    claimed_elsewhere = []
    for path, file_hash in _own_order(list(state.items()), directory is not None):
        kept = _offered(offered.get(path), file_hash) or _still_valid(stored.get(path), file_hash, methods, path, config) \
            or (shared.made(path, file_hash) if shared else None)
        if kept is not None:
            contributions[path], keys_of[path] = kept
            continue
        project.moving_to(path)  # type: ignore[attr-defined]
        with _claimed(directory, path, project) as held:
            if held:
                contributions[path], keys_of[path] = _contribution(project, path, file_hash, config, methods, check)
                if shared:
                    shared.keep(path, contributions[path])
            else:
                claimed_elsewhere.append(path)
    for path in claimed_elsewhere:
        project.moving_to(path)  # type: ignore[attr-defined]
        kept = shared.made(path, state[path]) if shared else None
        contributions[path], keys_of[path] = kept or _contribution(project, path, state[path], config, methods)
    return keys_of


def _keys_with_a_helper(project: object, state: Dict[str, str], config: Config, stored: Dict[str, dict],
                        contributions: Dict[str, dict], offered: Dict[str, dict], methods: "_MethodsFingerprint",
                        started: Optional["_Started"]) -> Dict[str, object]:
    """``_keys_of_modules`` for a process assembling the registry alone (a CLI run of fewer files
    than start its workers, such as one file's check): the modules to analyze are shared with
    a forked helper (``forkhelp.shared_with_a_helper``) that goes through them from the other
    end of the list. ``started``: the helper ``start_helper`` started before the run's files
    were checked (else one is started here, with what this process has analyzed so far). The
    contributions are the same whichever process makes them; a module the helper did not
    send is made here."""
    keys_of: Dict[str, object] = {}
    pending = []
    for path, file_hash in state.items():
        kept = _offered(offered.get(path), file_hash) or _still_valid(stored.get(path), file_hash, methods, path, config)
        if kept is not None:
            contributions[path], keys_of[path] = kept
        else:
            pending.append((path, file_hash))

    def make_here(path: str, file_hash: str) -> None:
        project.moving_to(path)  # type: ignore[attr-defined]
        contributions[path], keys_of[path] = _contribution(project, path, file_hash, config, methods)

    if started is None and len(pending) >= _HELPED_FROM:
        started = _start(project, pending, config, methods)
    if started is None:
        for path, file_hash in pending:
            make_here(path, file_hash)
        return keys_of
    try:
        _share_with(started, pending, make_here, contributions, keys_of)
    finally:
        started.work.cancel()  # a helper never waits on a pipe no one reads (after a failure here)
    return keys_of


def _share_with(started: "_Started", pending: List[Tuple[str, str]], make_here: Callable[[str, str], None],
                contributions: Dict[str, dict], keys_of: Dict[str, object]) -> None:
    """The pending modules' contributions, made here (``make_here``) from the front of the
    helper's list (the ones not on it first: the checked files, whose analyses are kept) or
    sent by the helper."""
    shared = set(started.items)
    for path, file_hash in pending:
        if (path, file_hash) not in shared:
            make_here(path, file_hash)
    wanted = set(pending)
    if not any(item in wanted for item in started.items):
        return  # nothing of the helper's is needed any more (the caller stops it)
    for number, (path, file_hash) in enumerate(started.items):
        if (path, file_hash) in wanted and path not in keys_of:
            if not started.work.take(number):
                break
            make_here(path, file_hash)
    made = started.work.collect()
    for path, file_hash in pending:
        if path not in keys_of:
            sent = _sent(made.get((path, file_hash)))
            if sent is None:
                make_here(path, file_hash)
            else:
                contributions[path], keys_of[path] = sent


def _sent(text: object) -> Optional[Tuple[dict, object]]:
    """(the record, its keys) of a contribution the helper sent as JSON text; None for none or
    a damaged one (made here again)."""
    try:
        return _with_keys(json.loads(text)) if isinstance(text, str) else None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


class _Started:
    """A helper sharing a registry's modules with this process: the modules, in the order the
    two go through them (``forkhelp.SharedWork``)."""

    def __init__(self, items: List[Tuple[str, str]], work: SharedWork) -> None:
        self.items = items
        self.work = work


def _start(project: object, items: List[Tuple[str, str]], config: Config,
           methods: "_MethodsFingerprint") -> Optional[_Started]:
    def made_there(item: Tuple[str, str]) -> Optional[str]:
        """The contribution as JSON text (its terms are ``str`` enums, which marshal refuses)."""
        try:
            return call_with_deep_stack(lambda: _portable(project, item, config, methods))
        except Exception:  # noqa: BLE001 - made again by the parent, where a failure is handled as before
            return None

    work = shared_with_a_helper(items, made_there)
    return None if work is None else _Started(items, work)


def _portable(project: object, item: Tuple[str, str], config: Config, methods: "_MethodsFingerprint") -> str:
    from keydrift.analysis.registry import keys_to_json

    project.moving_to(item[0])  # type: ignore[attr-defined]
    record, keys = _contribution(project, item[0], item[1], config, methods, portable=bool(config.cache))
    return json.dumps(record if config.cache else {"keys": None if keys is None else keys_to_json(keys)})


# Helpers ``start_helper`` started, by the registry's memo key (``project_findings``'s), until
# the registry takes its own or the run stops them (``stop_helpers``).
_STARTED: Dict[str, _Started] = {}


def start_helper(paths: Sequence[str], config: Config) -> None:
    """Before a CLI run checks a few files of one project alone (fewer than start its workers),
    start the helper that will assemble the project's registry with this process: it makes
    the contributions of the project's other modules, from the end of the list, while this
    process checks the files; this one joins it from the front when it needs the registry.
    Nothing is started outside ``registry_with_a_helper``, for a project whose stored findings
    still hold, or for fewer than ``_HELPED_FROM`` modules to analyze. A registry that turns
    out not to be needed (no checked file has a use a registry rule reports at) leaves its
    helper to ``stop_helpers``. What the early reader made is taken right before the helper is
    forked (as late as can be, for the reader to be done): the helper has it too."""
    try:
        work = _helpers_work(paths, config)
    finally:
        _take_early_reading()
    if work is not None:
        project, pending, methods, memo_key = work
        started = _start(project, pending, config, methods)
        if started is not None:
            _STARTED[memo_key] = started


def _helpers_work(paths: Sequence[str], config: Config
                  ) -> Optional[Tuple[object, List[Tuple[str, str]], "_MethodsFingerprint", str]]:
    """What ``start_helper`` would give its helper: (the project's index, the modules to
    analyze, the method index's fingerprint, the registry's key); None for no helper."""
    from keydrift.analysis.project import project_index

    wanted = [p for p in paths if p not in ("-", "stdin") and p.endswith(".py")]
    if not _HELPER_ALLOWED or not wanted or not registry_selected(config):
        return None
    checked = {_absolute(p, config) for p in wanted}
    root, only, memo_key = _scope(config, min(checked))
    if only is not None and any(_distribution(p, root) != only for p in checked):
        return None  # files of several distributions: their registries are assembled one by one
    if memo_key in _MEMO or memo_key in _STARTED:
        return None
    state = _project_state(root, config, only)
    cache = DiskCache(os.path.join(root, CACHE_DIRECTORY) if config.cache else None)
    if config.cache and _load(cache.load(_entry_key(config)), state) is not None:
        return None
    stored = _stored_contributions(cache.load("m" + _entry_key(config))) if config.cache else {}
    project = project_index(config, use_cache=config.cache)
    methods = _methods_of(project)
    # the checked files' contributions are this process's: their analyses are kept from their checks
    pending = [(path, file_hash) for path, file_hash in state.items()
               if path not in checked and _still_valid(stored.get(path), file_hash, methods, path, config) is None]
    return (project, pending, methods, memo_key) if len(pending) >= _HELPED_FROM else None


def _take_early_reading() -> None:
    """What the early reader made of the project's files (``early_reading``), for the method
    index this process and the helper forked next will build."""
    from keydrift.analysis.receivers import take_early_records

    made = early_reading.collect()
    if made is not None:
        take_early_records(made.get("records"))


def stop_helpers() -> None:
    """Stop the helpers whose registries were not needed."""
    while _STARTED:
        _STARTED.popitem()[1].work.cancel()


# A registry assembled alone shares its modules with a helper process from this many modules
# to analyze (fewer cost less than starting it), and only inside ``registry_with_a_helper``.
_HELPED_FROM = 16
_HELPER_ALLOWED: List[bool] = []


@contextmanager
def registry_with_a_helper(allowed: bool = True) -> Iterator[None]:
    """Inside the block (when ``allowed``: the CLI, unless run with one job), a registry this
    process assembles alone shares the modules' analyses with a forked helper; the flake8
    plugin's workers share them between themselves (``_claimed``), and the editor server, a
    long-lived process, forks nothing. Helpers still running at its end are stopped."""
    if allowed:
        _HELPER_ALLOWED.append(True)
    try:
        yield
    finally:
        if allowed:
            _HELPER_ALLOWED.pop()
        if not _HELPER_ALLOWED:
            stop_helpers()


def _own_order(modules: List[Tuple[str, str]], shared: bool) -> List[Tuple[str, str]]:
    """The modules in the order this process asks about them. Processes assembling the same
    registry at the same time (``shared``: flake8's workers, which all start it on their first
    file) go through the list in opposite directions, from spread-out places (``_start_of``):
    in one order they built the exports of the same imported modules in the same second,
    before either had stored them, and a faster one catching up with a slower one walked on
    beside it (on the small corpus 47 modules, 14% of the text parsed, were analyzed by both
    workers; 10 now). Walking towards each other they meet once. The findings do not depend on
    the order."""
    if not shared or not modules:
        return modules
    pair, backwards = divmod(max(_worker_number() - 1, 0), 2)
    start = int(_start_of(pair) * len(modules))
    rotated = modules[start:] + modules[:start]
    return rotated[::-1] if backwards else rotated


def _worker_number() -> int:
    """This process's number among its pool's workers (1, 2, ...), 0 outside a pool."""
    import multiprocessing

    identity = getattr(multiprocessing.current_process(), "_identity", ())
    return identity[-1] if identity and isinstance(identity[-1], int) else 0


def _start_of(pair: int) -> float:
    """Where in the list (0 <= start < 1) the ``pair``-th pair of workers starts: at the start,
    then halfway, then at a quarter and three quarters (the van der Corput sequence), so any
    number of workers start spread out."""
    start, scale = 0.0, 0.5
    while pair:
        pair, bit = divmod(pair, 2)
        start += bit * scale
        scale /= 2
    return start


class _SharedContributions:
    """Each module's contribution, kept on disk by the process that made it as soon as it is
    made, for the other processes assembling the same registry at the same time (flake8's
    workers walk the modules in the same order): a module another has done is read back instead
    of read, prefiltered and its export loaded again. A record is used only while nothing it
    was decided from has changed, as a stored contribution of an earlier run is.

    The records are lines of one log per run (named by the process that started the workers),
    not an entry per module: each entry was a new file, and new files are what costs on some
    file systems (see ``_claim``). A run removes the logs earlier runs left."""

    def __init__(self, cache: DiskCache, config: Config, methods: "_MethodsFingerprint") -> None:
        self.cache = cache
        self.config = config
        self.methods = methods
        self.prefix = "c-" + _entry_key(config)[2:26] + "-"
        # a pool's workers share their parent; a process of its own keeps its own
        self.log = f"{self.prefix}{os.getppid() if _worker_number() else os.getpid()}.log"
        self.read_to = 0
        self.records: Dict[str, dict] = {}
        self.started = False

    def made(self, path: str, file_hash: str) -> Optional[Tuple[dict, object]]:
        items, self.read_to = self.cache.read_log(self.log, self.read_to)
        for item in items:
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], dict):
                self.records[item[0]] = item[1]
        return _still_valid(self.records.get(path), file_hash, self.methods, path, self.config)

    def keep(self, path: str, record: dict) -> None:
        if not record:
            return
        if not self.started:
            self.started = True
            self._remove_earlier_logs()
        self.cache.append(self.log, [path, record])

    def _remove_earlier_logs(self) -> None:
        """The logs of this registry's earlier runs (a run that is still going on loses only
        its head start)."""
        try:
            names = os.listdir(self.cache.directory or "")
        except OSError:
            return
        for name in names:
            if name.startswith(self.prefix) and name.endswith(".log") and name != self.log:
                try:
                    os.unlink(os.path.join(self.cache.directory or "", name))
                except OSError:
                    pass


def _offered(record: Optional[dict], file_hash: str) -> Optional[Tuple[dict, object]]:
    """(the record, its keys) of a contribution made in this run of the module as it still is,
    from files that are all as they were (no export is compared: anything changed since means
    asking again)."""
    if record is None or record.get("digest") != file_hash:
        return None
    try:
        if stale_modules(record["deps"]) != []:
            return None
        return _with_keys(record)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _with_keys(record: dict) -> Tuple[dict, object]:
    """A contribution record and the registry facts it holds."""
    from keydrift.analysis.registry import keys_from_json

    return record, None if record["keys"] is None else keys_from_json(record["keys"])


# The fingerprint of the method index of the project index asked about last (one at a time:
# it holds the index, which a run over many projects lets go when it goes on to the next).
_METHODS: Dict[int, Tuple[object, "_MethodsFingerprint"]] = {}


def _methods_of(project: object) -> "_MethodsFingerprint":
    known = _METHODS.get(id(project))
    if known is None or known[0] is not project:
        _METHODS.clear()
        known = _METHODS[id(project)] = (project, _MethodsFingerprint(project))
    return known[1]


class _MethodsFingerprint:
    """What of the project's method index decides whether a module without database
    vocabulary of its own contributes (``engine._calls_database_methods``); computed once, and
    only when asked (it reads every file)."""

    def __init__(self, project: object) -> None:
        self.project = project
        self.value: Optional[str] = None

    def __call__(self) -> str:
        if self.value is None:
            from keydrift.analysis.receivers import method_index

            index = method_index(self.project.root, self.project.module_name_of, self.project.cache)  # type: ignore[attr-defined]
            self.value = index.database_fingerprint()
        return self.value


def _contribution(project: object, path: str, file_hash: str, config: Config, methods: _MethodsFingerprint,
                  check: Optional[Checker] = None, portable: bool = False) -> Tuple[dict, object]:
    """A module's registry facts, and the stored form of them with what decided them: the
    files and directories the index consulted, and the method index when it took part in
    deciding whether the module can touch a key. ``portable``: the record is for another process, so it
    holds the facts even when nothing is stored."""
    from keydrift.analysis.registry import keys_to_json

    if not config.cache and not portable:  # nothing is stored: no need to know what decided it
        return {}, _module_keys(project, path, config, check)[0]
    with project.recording() as consulted:  # type: ignore[attr-defined]
        keys, by_methods = _module_keys(project, path, config, check)
    record = {"digest": file_hash, "deps": project.resolved(consulted),  # type: ignore[attr-defined]
              "keys": None if keys is None else keys_to_json(keys), "methods": methods() if by_methods else ""}
    return record, keys


def _still_valid(record: Optional[dict], file_hash: str, methods: Callable[[], str], path: str,
                 config: Config) -> Optional[Tuple[dict, object]]:
    """(the record, its keys) of a stored contribution nothing it depends on has changed in
    (a module it read that still exports the same counts as unchanged)."""
    if not isinstance(record, dict) or record.get("digest") != file_hash:
        return None
    try:
        if record["methods"] and record["methods"] != methods():
            return None
        if not dependencies_hold(record["deps"], path, file_hash, config):
            return None
        return _with_keys(record)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None  # a damaged record is asked of the index again


def _stored_form(contributions: Dict[str, dict]) -> dict:
    """The contributions as stored: each distinct recorded dependency (a file, a directory, an
    export or a methods answer, with what it was) once, in a table, and each module's
    dependencies as their numbers in it. Modules that import the same packages consulted the
    same files: on a project of 9,400 modules, 155,000 recorded dependencies were 7,500
    distinct ones, and written out in full they were 92% of a 48 MB entry."""
    numbers: Dict[Tuple[str, str], int] = {}
    modules = {}
    for path, record in contributions.items():
        if "deps" in record:
            record = dict(record, deps=[numbers.setdefault(item, len(numbers)) for item in record["deps"].items()])
        modules[path] = record
    return {"dependencies": [list(item) for item in numbers], "modules": modules}


def _stored_contributions(entry: Optional[dict]) -> Dict[str, dict]:
    """The contributions of a stored entry (``_stored_form``), each with its dependencies as a
    mapping again; a damaged record is left out (its module is asked of the index again)."""
    modules = entry.get("modules") if isinstance(entry, dict) else None
    table = _dependency_table(entry.get("dependencies") if isinstance(entry, dict) else None)
    if not isinstance(modules, dict) or table is None:
        return {}
    contributions = {}
    for path, record in modules.items():
        numbers = record.get("deps") if isinstance(record, dict) else None
        if isinstance(numbers, list) and all(type(n) is int and 0 <= n < len(table) for n in numbers):
            contributions[path] = dict(record, deps=dict(table[n] for n in numbers))
    return contributions


def _dependency_table(table: object) -> Optional[List[Tuple[str, str]]]:
    if not isinstance(table, list):
        return None
    pairs = [(item[0], item[1]) for item in table
             if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], str)]
    return pairs if len(pairs) == len(table) else None


_NO_CLAIM = ""  # no cache folder to claim in: every module is this process's

# The claims file this process holds its claims in, per cache folder (its descriptor stays open:
# closing any descriptor of the file would drop every lock the process holds on it).
_CLAIMS_FILES: Dict[Tuple[int, str], int] = {}
_CLAIMS = "claims"
_HELD_HERE: Set[str] = set()  # the claims this process holds ("descriptor:offset")


def _claim(directory: Optional[str], path: str, project: object) -> Optional[str]:
    """The claim taken for the module (``_NO_CLAIM`` when claims are off or fail), None when
    another process holds it: a lock on one byte of the folder's claims file, at an offset
    the module (its file, its digest, the index's settings) names. A lock makes no file: a
    claim file per module, created and unlinked, cost an inode each, and a file system without
    a journal (ext4's) scans past every recently freed inode for each new one (0.3 ms a
    creation after a run's thousands). A process that dies drops its locks. Without ``fcntl``
    (Windows) a claim is a file created exclusively, as before."""
    if directory is None:
        return _NO_CLAIM
    identity = digest(repr((path, file_digest(path), project.config_key)).encode("utf-8", "surrogatepass"))  # type: ignore[attr-defined]
    if fcntl is None:
        return _claim_by_file(os.path.join(directory, "claim-" + identity))
    try:
        handle = _claims_file(directory)
        offset = int(identity[:15], 16)  # 60 bits: two modules sharing a byte only defer one
        claim = f"{handle}:{offset}"
        if claim in _HELD_HERE:
            return None  # a process's locks never conflict with its own: held by an outer check
        fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
    except (BlockingIOError, PermissionError):
        return None  # EAGAIN or EACCES: held by another process
    except (OSError, ValueError, OverflowError):
        return _NO_CLAIM
    _HELD_HERE.add(claim)
    return claim


def _claims_file(directory: str) -> int:
    """This process's descriptor of the folder's claims file (a forked process opens its own)."""
    key = (os.getpid(), directory)
    handle = _CLAIMS_FILES.get(key)
    if handle is None:
        os.makedirs(directory, exist_ok=True)
        handle = _CLAIMS_FILES[key] = os.open(os.path.join(directory, _CLAIMS), os.O_RDWR | os.O_CREAT, 0o600)
    return handle


def _claim_by_file(claim: str) -> Optional[str]:
    try:
        os.makedirs(os.path.dirname(claim), exist_ok=True)
        os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return None
    except OSError:
        return _NO_CLAIM
    return claim


def _release(claim: str) -> None:
    if not claim:
        return
    try:
        if fcntl is None:
            os.unlink(claim)
        else:
            _HELD_HERE.discard(claim)
            handle, offset = claim.split(":")
            fcntl.lockf(int(handle), fcntl.LOCK_UN, 1, int(offset))
    except OSError:
        pass


@contextmanager
def _claimed(directory: Optional[str], path: str, project: object) -> Iterator[bool]:
    """Whether this process holds the module's claim (``_claim``) for the block; released after it."""
    claim = _claim(directory, path, project)
    try:
        yield claim is not None
    finally:
        if claim is not None:
            _release(claim)


def _module_keys(project: object, path: str, config: Config, check: Optional[Checker] = None) -> Tuple[object, bool]:
    """A module's registry facts (None for modules that take no part: tests, migrations, files
    that cannot touch a key), and whether the project's method index took part in deciding
    that (the answer can then change with another file). ``check`` is run on a module that
    does take part before its facts are read: the check leaves its export with the index."""
    from keydrift.analysis.boundary import is_migration_module, is_test_module
    from keydrift.analysis.project import module_name_for
    from keydrift.engine import relevance

    module_name, _ = module_name_for(path, project.root)  # type: ignore[attr-defined]
    if is_test_module(module_name) or is_migration_module(module_name):
        return None, False  # fixtures and one-off rewrites are not how the application stores keys
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
        if "\x00" in text:
            return None, False
        text = text[1:] if text.startswith("\ufeff") else text  # as the engine reads it
        why = relevance(text, path, config)
        if not why.reason:
            return None, why.methods_consulted
        if check is not None:
            check(path)
        return project.export_for_file(path).keys, why.methods_consulted  # type: ignore[attr-defined]
    except (OSError, RecursionError, ValueError):
        return None, True  # asked again whenever anything it could depend on changes


_DISTRIBUTION_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def _distribution(path: str, root: str, marked: Optional[Dict[str, bool]] = None) -> str:
    """The project a module belongs to: the nearest directory up to the root holding a
    packaging or repository marker. Two applications side by side under one root (a monorepo
    of services, a folder of checkouts) have entities of the same name that are not the same.
    ``marked``: what is known of directories already (whether each holds a marker)."""
    marked = {} if marked is None else marked
    directory = os.path.dirname(path)
    while directory != root and is_inside(directory, root):
        if directory not in marked:
            marked[directory] = any(os.path.exists(os.path.join(directory, m)) for m in _DISTRIBUTION_MARKERS)
        if marked[directory]:
            return directory
        directory = os.path.dirname(directory)
    return root


def _in_distribution(paths: List[str], root: str, only: Optional[str]) -> List[str]:
    """The modules of the distribution ``only`` (all of them for None)."""
    if only is None:
        return paths
    marked: Dict[str, bool] = {}
    return [path for path in paths if _distribution(path, root, marked) == only]


def _registry_findings(modules: list, root: str, config: Config) -> Dict[str, List[Finding]]:
    from keydrift.analysis.registry import Registry
    from keydrift.rules import REGISTRY_RULES

    registry = Registry(modules, root)
    found: Dict[str, List[Finding]] = {}
    for rule in REGISTRY_RULES:
        if not rule_selected(rule.CODE, config):
            continue
        for item in rule().check(registry):
            path = os.path.normpath(os.path.join(root, item.site.path))
            found.setdefault(path, []).append(_finding(item, path, root))
    return found


def _one_per_place(findings: List[Finding]) -> List[Finding]:
    """One registry finding per statement and key (the first code: KD108 before KD109...), and
    one per function, key and rule (a function that looks a key up twice the same way is one
    place to fix)."""
    seen = set()
    out = []
    for finding in sorted(findings, key=Finding.sort_key):
        place = (finding.line, finding.fingerprint[1:3])
        if place not in seen and finding.fingerprint not in seen:
            seen.update((place, finding.fingerprint))
            out.append(finding)
    return out


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative.replace(os.sep, "/")


def _finding(item: object, path: str, root: str) -> Finding:
    site = item.site  # type: ignore[attr-defined]
    related = tuple(Location(_shown(os.path.join(root, s.path)), s.line, s.col, note)
                    for s, note in item.related)  # type: ignore[attr-defined]
    return Finding(item.code, item.message, path, site.line, site.col, site.end_line or site.line,  # type: ignore[attr-defined]
                   related, tuple(item.fingerprint), fix=item.fix)  # type: ignore[attr-defined]


def _as_given(finding: Finding, path: str) -> Finding:
    return Finding(finding.code, finding.message, path, finding.line, finding.col, finding.end_line,
                   finding.related, finding.fingerprint, fix=finding.fix)


def _load(entry: Optional[dict], state: Dict[str, str]) -> Optional[Dict[str, List[Finding]]]:
    if entry is None or entry.get("state") != state:
        return None
    try:
        return {str(p): [_from_json(item, str(p)) for item in items] for p, items in entry["findings"].items()}
    except (KeyError, TypeError, ValueError):
        return None


def _to_json(finding: Finding) -> list:
    return [finding.code, finding.message, finding.line, finding.col, finding.end_line,
            [[r.path, r.line, r.col, r.note] for r in finding.related], list(finding.fingerprint),
            fix_to_json(finding.fix)]


def _from_json(item: list, path: str) -> Finding:
    code, message, line, col, end_line, related, fingerprint, fix = item
    return Finding(str(code), str(message), path, int(line), int(col), int(end_line),
                   tuple(Location(str(p), int(l), int(c), str(n)) for p, l, c, n in related),
                   tuple(str(x) for x in fingerprint), fix=fix_from_json(fix))
