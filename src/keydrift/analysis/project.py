"""The project index: function summaries of the project's modules, resolved through imports,
computed from each module's source alone and cached on disk by content hash.

Cache entries live in ``<project root>/.keydrift_cache/`` (safe to delete; it ignores itself in
git). An entry records the content hashes of the modules its summaries were built from, so a
change in any of them invalidates it: a stale cache never yields a stale finding. Writes are
atomic (a temporary file renamed into place), so several flake8 workers can share the cache.
"""

from __future__ import annotations

import ast
import json
import os
from dataclasses import field, replace
from collections import OrderedDict
from collections.abc import Mapping
from contextlib import contextmanager
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, TypeVar, Union

from keydrift.diskcache import (
    CACHE_DIRECTORY, EXPORT_DEPENDENCY, METHODS_DEPENDENCY, export_dependency, exported_module, DiskCache,
    code_fingerprint, current_look, digest as _digest, directory_state, file_digest, importable_names,
    methods_dependency,
)
from keydrift.analysis.imports import (  # noqa: F401 - module_name_for: the index's API
    SOURCE_ROOTS, forget_packages, import_name_for, imported_modules, module_name_for,
)
from keydrift.analysis.boundary import is_test_file
from keydrift.analysis.facts import step_kinds, steps_from_json, steps_to_json
from keydrift.records import record
from keydrift.source import physical_lines
from keydrift.analysis.models import Constructor, Constructors, Derivation, Derivations, Rewrite
from keydrift.analysis.inert_names import InertNames, inert_names
from keydrift.analysis.parsing import SourceRejected, parse
from keydrift.analysis.receivers import (
    USER_MODEL_ANSWER, answers_hold, called_method_names, method_index, recorded_answers,
)
from keydrift.analysis.registry import EMPTY_KEYS, ModuleKeys, keys_from_json, keys_to_json, module_keys
from keydrift.analysis.summaries import FunctionSummary, SummaryAccess, from_json, to_json
from keydrift.analysis.text_relevance import may_touch_keys_by_text
from keydrift.analysis.tree import current_source_lines, source_lines
from keydrift.deepstack import call_with_deep_stack
from keydrift.source import SourceError, decode_source
from keydrift.timing import count, stage
from keydrift.types import Config

# Parsed modules kept in memory, by their lines: a checked file is often imported by the next
# ones, and the other way round. The tree of a kept analysis is found through the analysis
# (its module's check must be given that very tree to take the analysis over), so these are
# only the trees no analysis holds (about 1.4 KiB of memory per line).
_TREE_LINES_KEPT = 10_000
# Analyses of modules summarized for an importer, kept for the modules' own checks.
_ANALYSIS_LINES_KEPT = 40_000
# Without a disk cache they also serve an export made on demand that was closed and is asked
# for more (``reopen``): one let go is walked again, function by function. synapse checked whole
# with --no-cache: 35.0 -> 27.2 s CPU, peak RSS 149 -> 218 MiB against 40,000 lines; one file
# of it (handlers/register.py) 16.5 -> 11.2 s, 134 -> 208 MiB. With a cache the exports are
# whole and stored: nothing is walked again, so the budget above holds there.
_ANALYSIS_LINES_KEPT_WITHOUT_CACHE = 120_000
# Analyses of modules made on demand kept open for more of their summaries; a closed one keeps
# what it made, and takes up its analysis again if more is asked of it (``reopen``: the one kept
# for its module's own check while it is, else a fresh one).
_OPEN_LINES_KEPT = 10_000
# A run over several projects under one root (a folder of checkouts without packaging markers)
# checks them one top-level directory after the other, and imports seldom cross from one to the
# next: when the next file lies in another top-level directory and the index holds more exports
# than this, what it learned of modules is let go (``let_go_of_modules``). Kept, a corpus's 22
# projects took a process to 380 MiB; a project of a few hundred modules is never affected.
_MODULES_KEPT_ACROSS_DIRECTORIES = 500


class ProjectIndex:
    """Summaries of the modules under one project root, computed on demand."""

    def __init__(self, root: str, config: Config, use_cache: bool = True) -> None:
        self.root = os.path.abspath(root)
        self.config = config
        self.cache = DiskCache(os.path.join(self.root, CACHE_DIRECTORY) if use_cache else None)
        # module file -> (its deps' hashes, summaries); revalidated on use, so a long-lived process
        # (an editor server) never serves summaries of a file edited since
        self.modules: Dict[str, Tuple[Dict[str, str], Dict[str, FunctionSummary]]] = {}
        # (module, importing directory) -> its file, and the directories whose listing decided it
        self.paths: Dict[Tuple[str, str], Tuple[Optional[str], List[str]]] = {}
        # (directory, module) -> its file there and the directories that decided it (for ``path_for``)
        self.lookups: Dict[Tuple[str, str], Tuple[Optional[str], List[str]]] = {}
        # (directory, top-level name) -> the entry in ``lookups`` of every module under that name
        # there, when the directory holds nothing of that name (``_look_in``)
        self.absent: Dict[Tuple[str, str], Tuple[Optional[str], List[str]]] = {}
        # made once per look (``_once_per_look``): whether a module's dependencies are unchanged,
        # and the states of the directories a lookup in ``paths`` listed
        self.unchanged: Dict[int, Tuple[Any, int, object, Any]] = {}
        self.looked_in: Dict[int, Tuple[Any, int, object, Any]] = {}
        # (module, importing file) -> its entry in ``paths``
        self.near_paths: Dict[Tuple[str, str], Tuple[Optional[str], List[str]]] = {}
        # the directories the lookups above listed -> their state then (``directory_state``), and
        # the look in which all of them were last found unchanged (``_keep_lookups_current``)
        self.listed: Dict[str, str] = {}
        self.lookups_look: Optional[object] = None
        # an importing directory -> where its imports are looked up (``_search_bases``, for ``path_for``)
        self.bases: Dict[str, List[str]] = {}
        self.importers: Dict[str, Tuple[str, str]] = {}  # an importing file -> ``_directories_of`` it
        self.building: List[Tuple[str, Dict[str, str]]] = []  # modules being summarized, with their deps
        # ids of the frames in ``building`` of exports being made (``_built``): an import cycle
        # back to one of these is cut short (its export does not exist yet); any other module
        # being analyzed is read through its export made on demand, function by function, so
        # what a module reads of another does not depend on which was analyzed first
        self.constructing: Set[int] = set()
        # stored exports whose entries are being revalidated (``_stored_export``), by file: an
        # import cycle back to one of them reads it as stored, on the assumption it holds
        # (``_assumed``); what was made on that assumption is kept in ``journal`` until the
        # outermost revalidation is over, and undone if the assumption fails
        self.revalidating: Dict[str, Tuple[Dict[str, str], "ModuleExport"]] = {}
        self.assumed: Set[str] = set()
        self.journal: List[Tuple[str, Any, Any]] = []
        # what the files being checked depend on (per-file results cache): file -> digest, and
        # "dir:" + directory -> its state (``directory_state``) for the directories where an import was looked up
        self.recordings: List[Dict[str, str]] = []
        self.trees: "OrderedDict[Tuple[str, str], Tuple[ast.Module, int]]" = OrderedDict()
        self.tree_lines = 0
        # modules analyzed for an importer, until their own check takes the analysis over:
        # (file, digest) -> (analysis, is_package, what the analysis consulted, lines)
        self.analyses: "OrderedDict[Tuple[str, str], Tuple[Any, bool, Dict[str, str], int]]" = OrderedDict()
        self.analysis_lines = 0
        self.open_exports: "OrderedDict[int, DemandedExport]" = OrderedDict()
        self.open_lines = 0
        # ids of the dependency maps of frames in ``building`` whose analysis saw an import
        # cycle cut short (an importer still being built exports nothing yet), with the names of
        # the modules cut short
        self.cut_frames: Dict[int, Set[str]] = {}
        # export fingerprints handed out (each kept with its export, so its id stays its own)
        self.fingerprints: Dict[int, Tuple["ModuleExport", str]] = {}
        # what readers read of exports made on demand (``_read_fingerprint``), by export: the
        # export, how many of its functions had been asked for then, the value
        self.partials: Dict[int, Tuple["DemandedExport", int, str]] = {}
        self.names: Dict[str, str] = {}  # file -> its module name
        # (file, digest) -> what ``quiet_closure`` reads of its text: its record's value and the
        # modules it imports, None when it may touch a key itself; and the modules reached from
        # a module's file (name, file, value, imports), None when one may, within one look
        self.quiet_texts: Dict[Tuple[str, str], Optional[Tuple[str, Tuple[str, ...]]]] = {}
        self.quiet_closures: Dict[str, Tuple[object, Optional[List[Tuple[str, str, str, Tuple[str, ...]]]]]] = {}
        self.analyzed_with: Optional[FrozenSet[str]] = None  # the database methods the kept analyses resolved by
        self.directory = ""  # the top-level directory (under the root) of the file being worked on
        self._config_key = ""

    @property
    def config_key(self) -> str:
        """What of the configuration and of keydrift its exports depend on: keydrift's own code
        is part of the key (summaries change when the analysis does). Made when first asked: a
        run that stores nothing (``--no-cache``) never hashes keydrift's sources."""
        if not self._config_key:
            self._config_key = _digest(repr((self.config.normalizers, self.config.boundary,
                                             code_fingerprint())).encode())
        return self._config_key

    def module_name_of(self, path: str) -> str:
        name = self.names.get(path)
        if name is None:  # asked for every import resolved and every file of the method index
            name = self.names[path] = import_name_for(path, self.root)[0]
        return name

    def database_methods(self) -> FrozenSet[str]:
        """Methods the project defines once, next to database code (``analysis/receivers.py``):
        a receiver nothing types resolves by them. When they change (a long-lived process, a
        method defined in another file since), the trees and analyses kept are let go: an
        analysis kept for its module's own check resolved receivers by the old ones."""
        methods = method_index(self.root, self.module_name_of, self.cache).database
        if methods is not self.analyzed_with:
            if self.analyzed_with is not None and methods != self.analyzed_with:
                self._let_go_of_trees()
            self.analyzed_with = methods
        return methods

    def user_model(self) -> str:
        """The model the project's ``AUTH_USER_MODEL`` setting names ("" if none), recorded as
        a dependency of the analysis that asks."""
        self._record_answers("", (USER_MODEL_ANSWER,))
        return method_index(self.root, self.module_name_of, self.cache).user_model

    def record_method_answers(self, path: str, text: str) -> None:
        """Record what the method index answers for the methods a module's text calls, as a
        dependency of its analysis (and of the results and exports made from it): a receiver
        nothing types resolves by the index, which decides too whether a module without
        database vocabulary is analyzed."""
        names = called_method_names(text)
        if names:
            self._record_answers(os.path.normpath(os.path.abspath(path)), names)

    def _record_answers(self, path: str, names: Iterable[str]) -> None:
        if not (self.recordings or self.building):
            return
        dependency = methods_dependency(self.root, path)
        answers = {dependency: recorded_answers(method_index(self.root, self.module_name_of, self.cache), names)}
        if self.building:
            self.building[-1][1].update(answers)
        self._record(answers)

    def moving_to(self, path: str) -> None:
        """The next file to check or summarize is ``path`` (absolute): on its way into another
        top-level directory, a large index lets go of what it learned of modules (see
        ``_MODULES_KEPT_ACROSS_DIRECTORIES``); never while a module is being analyzed."""
        inside = path[len(self.root) + 1:] if path.startswith(self.root + os.sep) else ""
        directory = inside.split(os.sep, 1)[0] if os.sep in inside else ""
        if directory == self.directory or self.building:
            return
        if len(self.modules) > _MODULES_KEPT_ACROSS_DIRECTORIES:
            self.let_go_of_modules()
        self.directory = directory

    def let_go_of_modules(self) -> None:
        """Forget every module's export, import lookup, kept tree and analysis: each is made
        again, the same, if asked for (the stored ones read back with a disk cache). The method
        index stays: it is the whole project's."""
        for memo in (self.modules, self.paths, self.lookups, self.absent, self.near_paths, self.listed,
                     self.bases, self.importers, self.names, self.fingerprints, self.partials, self.unchanged, self.looked_in,
                     self.quiet_texts, self.quiet_closures):
            memo.clear()
        self._let_go_of_trees()
        count("indexes let go")

    def _let_go_of_trees(self) -> None:
        """Forget the kept trees, the analyses kept for their modules' own checks and the open ones."""
        for kept in (self.trees, self.analyses, self.open_exports):
            kept.clear()
        self.tree_lines = self.analysis_lines = self.open_lines = 0

    def summary(self, module_name: str, qualified: str, near: str = "") -> Optional[FunctionSummary]:
        export = self.module_export(module_name, near)
        # (asked of a demanded export itself: its mapping view tells a missing name by a KeyError)
        return export.summary(qualified) if isinstance(export, DemandedExport) else export.summaries.get(qualified)

    def path_for(self, module_name: str, near: str = "") -> Optional[str]:
        """The file of a module, looked up as Python would from the importing file: in the
        directories above it (nearest first, up to the repository root), then the project root."""
        look = current_look()
        if look is None or look is not self.lookups_look:
            self._keep_lookups_current(look, module_name, near)
        found = self.near_paths.get((module_name, near))
        if found is None:  # asked for every name an analysis resolves: by the importer's file first
            key = (module_name, self._directories_of(near)[0])
            found = self.paths.get(key)
            if found is None:
                looked_in: List[str] = []
                found = self.paths[key] = (self._find_module(module_name, near, looked_in), looked_in)
            self.near_paths[(module_name, near)] = found
        if self.recordings:  # the states of the directories the lookup listed, as results record them
            self._record(_once_per_look(self.looked_in, found, lambda: {
                "dir:" + directory: directory_state(directory) for directory in found[1]}))
        return found[0]

    def _keep_lookups_current(self, look: Optional[object], module_name: str, near: str) -> None:
        """Lookups outlive a check in a long-lived process (the editor server, where each check
        is one look): a file or package created or removed in a directory they listed may change
        any of them, so they are all made again once one such directory changed. Checked for all
        directories once per look; outside a look, for the directories of the lookup asked."""
        if look is None:
            entry = self.near_paths.get((module_name, near))
            listed = entry[1] if entry is not None else ()
        else:
            self.lookups_look = look
            listed = list(self.listed)
        if any(directory_state(directory) != self.listed.get(directory) for directory in listed):
            for lookups in (self.paths, self.lookups, self.absent, self.near_paths, self.listed):
                lookups.clear()

    def _find_module(self, module_name: str, near: str, looked_in: List[str]) -> Optional[str]:
        """The module's file; ``looked_in`` gets every directory whose listing decided it (a file
        created there later could shadow or supply the module)."""
        parts = module_name.split(".")
        listable = "__pycache__" not in parts and all(map(str.isidentifier, parts))  # (the same under every base)
        top = parts[0] if listable and current_look() is not None else None
        for base in self._search_bases(near):
            found, chain = self._look_in(base, module_name, parts, listable, top)
            looked_in.extend(chain)
            if found is not None:
                return found
        return None

    def _look_in(self, base: str, module_name: str, parts: List[str], listable: bool, top: Optional[str]
                 ) -> Tuple[Optional[str], List[str]]:
        """The module's file under ``base`` (None if there is none), and the directories whose
        listing decided it; asked once per directory, whichever importer's search reached it.
        ``parts``: the name's, and whether a listing can hold it (identifiers, no ``__pycache__``);
        ``top``: its first, within a look (else None)."""
        key = (base, module_name)
        if key not in self.lookups:
            # within a look, what ``base`` told of another module of the same top-level name
            # when it holds nothing of that name (most imports a project makes are of others)
            shared = (base, top) if top is not None else None
            listed = self.absent.get(shared) if shared is not None else None
            if listed is None:
                listed = _listed_module(base, parts) if listable else None
                if listed is None:  # a name no listing holds, or a directory that cannot be listed
                    path = os.path.join(base, *parts)
                    found = next((c for c in (path + ".py", os.path.join(path, "__init__.py")) if os.path.isfile(c)), None)
                    listed = (found, _existing_chain(base, parts))
                elif shared is not None and listed[0] is None and listed[1] and _holds_nothing_named(base, parts[0]):
                    self.absent[shared] = listed
            self.lookups[key] = listed
            for directory in listed[1]:
                if directory not in self.listed:  # a state once per directory, not per look-up
                    self.listed[directory] = directory_state(directory)
        return self.lookups[key]

    def parse(self, path: str, digest: str, source: Union[str, bytes], module_name: str = "",
              tree: Optional[ast.Module] = None) -> ast.Module:
        """The tree the analysis reads, shared between checking a file and summarizing it for its
        importers; the last few are kept, by content. ``tree``: CPython's tree of ``source`` when
        the caller has it (flake8's), which is then not parsed again (and not changed)."""
        self.database_methods()  # what is kept was analyzed with the methods of now
        key = (os.path.normpath(os.path.abspath(path)), digest)
        if key in self.trees:
            self.trees.move_to_end(key)
            return self.trees[key][0]
        kept = self.analyses.get(key)
        if kept is not None and kept[0].module_name == module_name:
            return kept[0].module  # the tree its own check must be given to take it over
        module = parse(source, path, tree=tree)
        lines = (source.count(b"\n") if isinstance(source, bytes) else source.count("\n")) + 1
        count("files parsed")
        count("lines parsed", lines)
        self.trees[key] = (module, lines)
        self.tree_lines += lines
        while self.tree_lines > _TREE_LINES_KEPT and len(self.trees) > 1:
            self.tree_lines -= self.trees.popitem(last=False)[1][1]
        return module

    @contextmanager
    def recording(self) -> Iterator[Dict[str, str]]:
        """Collect what the analysis inside the block consults: module files (by digest) and
        the directories imports were looked up in (by the modules and packages they hold)."""
        deps: Dict[str, str] = {}
        self.recordings.append(deps)
        try:
            yield deps
        finally:  # by identity: nested recordings may hold equal maps
            del self.recordings[max(i for i, r in enumerate(self.recordings) if r is deps)]

    def _record(self, deps: Dict[str, str]) -> None:
        for recording in self.recordings:
            recording.update(deps)

    def _directories_of(self, near: str) -> Tuple[str, str]:
        """The directory of the importing file ``near`` as named, and as the absolute path its
        search roots start from ("" for no file): made once per importer, not per module new to it."""
        known = self.importers.get(near)
        if known is None:
            known = self.importers[near] = (os.path.dirname(near), os.path.dirname(os.path.abspath(near)) if near else "")
        return known

    def _search_bases(self, near: str) -> List[str]:
        """Where an import from ``near`` is looked up: each of its search roots
        (``_roots_from``) with each source root under it, nearest first."""
        start = self._directories_of(near)[1]
        bases = self.bases.get(start)
        if bases is None:  # (joined once: every lookup of a module new to the importer's directory goes through them)
            bases = self.bases[start] = [os.path.join(root, source_root)
                                         for root in self._roots_from(start) for source_root in SOURCE_ROOTS]
        return bases

    def _roots_from(self, current: str) -> List[str]:
        """The directories an import is looked up in from a file in ``current``: it and those
        above it (nearest first, up to the repository root), then the project root."""
        roots: List[str] = []
        while current:
            roots.append(current)
            parent = os.path.dirname(current)
            if parent == current or current == self.root or any(
                    os.path.exists(os.path.join(current, marker)) for marker in (".git", ".hg")):
                break
            current = parent
        if self.root not in roots:
            roots.append(self.root)
        return roots

    def file_hash(self, path: str) -> Optional[str]:
        return file_digest(path)

    def quiet_closure(self, module_name: str, near: str = "") -> bool:
        """Whether no function of the module can read or write a key, told from texts alone: the
        module and every module it imports, and they in turn, say nothing ``may_touch_keys_by_text``
        looks for (database vocabulary, a configured wrapper, a chain a layer's route admits, a
        method the index may resolve). The engine's prefilter asks it of a module's imports
        before it reads their exports: deciding that a module without vocabulary of its own takes
        none from its imports made the summaries of their functions, and of their imports'
        functions, to find no access (a `check -j 1 --no-cache` of the small corpus, which asks
        every module again for the registry: 6.1 -> 3.9 s). A "yes" is recorded as what it rests on: each module's file,
        the directories its imports were looked up in, and an export record (``_QUIET``) that
        holds while the module says none of those things and imports the same modules
        (``_quiet_record_holds``); each module reached has its own. Outside a disk cache, as
        for exports, only the files."""
        start = self.path_for(module_name, near) if module_name else None
        if start is None:
            return True  # no module of the project: nothing is read, as of ``module_export``
        nodes = self._quiet_nodes(start, self.module_name_of(start) or module_name)
        if nodes is None:
            return False
        if self.recordings or self.building:  # (nothing records the answer otherwise)
            for name, path, value, imported in nodes:
                self._record_quiet(name, path, value)
                for target in imported:
                    self.path_for(target, path)  # the directories of its lookups, recorded again
        return True

    def _quiet_nodes(self, start: str, name: str) -> Optional[List[Tuple[str, str, str, Tuple[str, ...]]]]:
        """The modules ``quiet_closure`` reaches from the file ``start``, None when one may touch
        a key; found once per look."""
        look = current_look()
        known = self.quiet_closures.get(start)
        if known is not None and look is not None and known[0] is look:
            return known[1]
        nodes: Optional[List[Tuple[str, str, str, Tuple[str, ...]]]] = []
        seen = {start}
        pending = [(name, start)]
        while pending and nodes is not None:
            name, path = pending.pop()
            facts = self._quiet_text(path)
            if facts is None:
                nodes = None
                break
            nodes.append((name, path, *facts))
            for target in facts[1]:
                found = self.path_for(target, path)
                if found is not None and found not in seen:
                    seen.add(found)
                    pending.append((self.module_name_of(found) or target, found))
        if look is not None:
            self.quiet_closures[start] = (look, nodes)
        return nodes

    def _quiet_text(self, path: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """(its record's value, the modules it imports) of a module whose text says nothing that
        may touch a key and whose imports are all read (``imports.imported_modules``); None
        otherwise, or for a file that cannot be read. Kept by the file's digest."""
        digest = file_digest(path)
        if digest is None:
            return None
        key = (path, digest)
        if key not in self.quiet_texts:
            self.quiet_texts[key] = self._read_quiet_text(path)
        return self.quiet_texts[key]

    def _read_quiet_text(self, path: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
        try:
            with open(path, "rb") as handle:
                text = decode_source(handle.read())
        except (OSError, SourceError):
            return None
        if "\x00" in text or may_touch_keys_by_text(text, self.config):
            return None
        module_name, is_package = import_name_for(path, self.root)
        imported = imported_modules(text, module_name, is_package)
        if imported is None:
            return None
        return _QUIET + _digest("\n".join(imported).encode("utf-8", "surrogatepass")), imported

    def _record_quiet(self, name: str, path: str, value: str) -> None:
        """What a "yes" of ``quiet_closure`` rests on for one module: its file, and (with a disk
        cache) its record, which never replaces one of its export read in the same frame."""
        files = {path: file_digest(path) or ""}
        self._record(files)
        if self.building:
            self.building[-1][1].update(files)
        if self.cache.directory is None:
            return
        dependency = export_dependency(name, path)
        for frame in [*self.recordings, *([self.building[-1][1]] if self.building else [])]:
            frame.setdefault(dependency, value)

    def _quiet_record_holds(self, module_name: str, path: str, recorded: str) -> bool:
        """Whether a module ``quiet_closure`` recorded still says nothing that may touch a key and
        imports the same modules; recorded again, in the frame that asks."""
        path = os.path.normpath(os.path.abspath(path))
        facts = self._quiet_text(path)
        if facts is None or facts[0] != recorded:
            return False
        self._record_quiet(module_name, path, recorded)
        return True

    def module_summaries(self, module_name: str, near: str = "") -> Dict[str, FunctionSummary]:
        return self.module_export(module_name, near).summaries

    def module_export(self, module_name: str, near: str = "") -> "ModuleExport":
        """What other modules may use of a module: its summaries and its models' key facts."""
        path = self.path_for(module_name, near) if module_name else None
        if path is None:
            return EMPTY_EXPORT
        # by the file's own name, however the importer spelled it: the module's check names it so
        return self._export_at(self.module_name_of(path) or module_name, path)

    def export_for_file(self, path: str) -> "ModuleExport":
        """The export of the module in ``path`` (a file under the project root), by its own name."""
        path = os.path.normpath(os.path.abspath(path))
        return self._export_at(self.module_name_of(path), path)

    @contextmanager
    def module_frame(self, module_name: str, path: str, digest: str) -> Iterator[Dict[str, str]]:
        """Analyzing a checked module in the block: the modules it consults are recorded as its
        dependencies, as when the index builds it (see ``adopt``)."""
        path = os.path.normpath(os.path.abspath(path))
        self.building.append((module_name, {path: digest}))
        try:
            yield self.building[-1][1]
        finally:
            self.building.pop()

    def adopt(self, module_name: str, path: str, digest: str, deps: Dict[str, str], analysis: Any,
              tree: ast.Module) -> None:
        """Keep the export of a module the engine has just checked: the registry and importers
        reuse it instead of analyzing the module a second time. One the index holds already is
        kept (one made on demand is completed from this check's walk) while everything it was
        made from is as it was; one made before a file it read changed, or before the method
        index answered otherwise (the module's own file the same), is replaced by this check's."""
        path = os.path.normpath(os.path.abspath(path))
        known = self.modules.get(path)
        if known is not None and known[0].get(path) == digest and self._dependencies_unchanged(known[0]):
            if isinstance(known[1], DemandedExport):
                known[1].complete(analysis)
                self._store_demanded(known[1], deps)
            return
        if self.file_hash(path) != digest:
            return  # the text checked is not the file on disk (an editor buffer, stdin)
        try:
            export = _export_of(analysis, tree, path, os.path.relpath(path, self.root).replace(os.sep, "/"))
        except RecursionError:
            return
        files, reads = _split(self.resolved(deps))
        self.modules[path] = (files, export)
        self._store_export(module_name, digest, files, reads, export)

    def _store_demanded(self, export: "DemandedExport", checked: Optional[Dict[str, str]] = None) -> None:
        """Keep on disk the export of a module made on demand, once made whole outside any
        frame (its fingerprint taken, or its module checked): what this process's importers
        read of it, for the other processes and the next run."""
        if self.cache.directory is None or self.building or (export.stored and not checked):
            return
        export.stored = True
        files, reads = _split(self.resolved({**export.deps, **(checked or {})}))
        self._store_export(export.module_name, export.digest, files, reads, export)

    def _store_export(self, module_name: str, digest: str, files: Dict[str, str], reads: Dict[str, str],
                      export: "ModuleExport") -> None:
        """A module's export entry: the files and the exports of others it was made from, and
        what it tells (made whole here: nothing is asked of it without a disk cache). Not for a
        test file (``test_*.py``, ``tests.py``), which no module imports in practice: on the
        small corpus they were a third of the entries a cold run wrote and 45% of their bytes
        (a test's many functions, each summarized). The rare importer makes it itself."""
        if self.cache.directory is not None and not is_test_file(module_name):
            self.cache.store(self._export_key(digest, module_name),
                             {"module": module_name, "deps": files, "reads": reads, **export.to_json()})

    def _export_key(self, digest: str, module_name: str) -> str:
        return _digest(f"{digest}:{self.config_key}:{module_name}".encode())

    def _export_at(self, module_name: str, path: str) -> "ModuleExport":
        digest = file_digest(path)  # (``file_hash``, without its call: asked for every export read)
        if self.building:
            self.building[-1][1][path] = digest or ""
        if self.recordings:
            self._record({path: digest or ""})
        known = self.modules.get(path)
        if known is not None and self._dependencies_unchanged(known[0]):
            if self.building:
                self.building[-1][1].update(known[0])
            self._record(known[0])
            return self._consulted(module_name, path, known[1])
        if digest is None:
            return self._consulted(module_name, path, EMPTY_EXPORT)  # an unreadable file
        cycle = [index for index, (name, deps) in enumerate(self.building) if name == module_name
                 and id(deps) in self.constructing]
        if cycle:
            return self._cut(module_name, path, cycle)
        if path in self.revalidating:
            return self._assumed(module_name, path)
        deps, export = self._load_or_build(module_name, path, digest)
        if self.revalidating:
            self.journal.append(("module", path, self.modules.get(path)))
        self.modules[path] = (deps, export)
        self._record(deps)
        return self._consulted(module_name, path, export)

    def _assumed(self, module_name: str, path: str) -> "ModuleExport":
        """An import cycle back to a module whose stored entry is being revalidated: read as
        stored, with its files as they are now, on the assumption that it holds (it does if
        everything else the cycle's modules read is the same; if it does not, what was made
        on the assumption is undone, ``_undo``)."""
        deps, export = self.revalidating[path]
        self.assumed.add(path)
        files = {name: self.file_hash(name) or "" for name in deps
                 if not name.startswith((METHODS_DEPENDENCY, EXPORT_DEPENDENCY))}
        if self.building:
            self.building[-1][1].update(files)
        self._record(files)
        return self._consulted(module_name, path, export)

    def _cut(self, module_name: str, path: str, cycle: List[int]) -> "ModuleExport":
        """An import cycle back to a module whose export is being constructed (its frames in
        ``building``): the modules analyzed above it see it export nothing."""
        for _, deps in self.building[cycle[0] + 1 if cycle else len(self.building):]:
            self.cut_frames.setdefault(id(deps), set()).add(module_name)
        return self._consulted(module_name, path, EMPTY_EXPORT)

    def _consulted(self, module_name: str, path: str, export: "ModuleExport") -> "ModuleExport":
        """Record what was read of the module, by content. Every module the analysis reads is
        read here, and every other file it records is a dependency of one of these exports: a
        cached result whose files changed while every export it read is the same still holds
        (an edit that changes no summary). The module being built keeps it too ("reads"), for
        the same reason."""
        if self.cache.directory is None:
            return export  # nothing stored: no result or entry will compare fingerprints
        if self.recordings or self.building:
            read = {export_dependency(module_name, path): self._fingerprint_now_or_later(export)}
            self._record(read)
            if self.building:
                self.building[-1][1].update(read)
        return export

    def _fingerprint_now_or_later(self, export: "ModuleExport") -> str:
        """The export's fingerprint, or for one made on demand a placeholder that ``resolved``
        turns into it once the walk that read it is over: taken now, every summary of the
        module would be made inside the reader's frame, with an import cycle back to the reader
        cut short, and what it tells would depend on who read it first."""
        if not isinstance(export, DemandedExport):
            return self.fingerprint(export)
        return _Unresolved(export)

    def resolved(self, deps: Dict[str, str]) -> Dict[str, str]:
        """``deps`` with every placeholder of ``_fingerprint_now_or_later`` made what the readers
        read of the export (``_read_fingerprint``); asked before anything is stored."""
        if not any(isinstance(value, _Unresolved) for value in deps.values()):
            return dict(deps)
        return call_with_deep_stack(lambda: {name: self._resolve(value) for name, value in deps.items()})

    def _resolve(self, value: str) -> str:
        if not isinstance(value, _Unresolved):
            return value
        try:
            return self._read_fingerprint(value.export)
        except RecursionError:
            return ""  # matches no export: what read it is analyzed again

    def _read_fingerprint(self, export: "DemandedExport") -> str:
        """What the readers of an export made on demand read of it, once their walks are over:
        its whole fingerprint when its functions were listed (every function read, also those
        a later edit adds) or its registry facts made (every function walked for them: the
        export is then made whole, and stored, for little more), else a fingerprint of its
        models' facts and of the summaries asked for (``_PARTIAL``), none of the others made
        for it (a module without database vocabulary whose helpers an importer calls); after
        the prefilter's question answered "no", the same, and that answer (``_NONE_READ``)."""
        if export.listed or export.keys_made():
            return self.fingerprint(export)
        read = (len(export.asked), export.none_read)
        known = self.partials.get(id(export))
        if known is None or known[0] is not export or known[1] != read:
            names = sorted(export.asked)
            kind = _NONE_READ if export.none_read else _PARTIAL
            value = kind + json.dumps([self._partial_digest(export, names), names])
            known = self.partials[id(export)] = (export, read, value)
        return known[2]

    def _partial_digest(self, export: "ModuleExport", names: List[str]) -> str:
        """A digest of the export's models' facts and of the summaries of ``names`` (absent
        ones too): the same for a stored export and one made on demand that tell the same."""
        facts = export.to_json(summaries=False)
        facts["summaries"] = [[name, _summary_json(export, name)] for name in names]
        return _digest(json.dumps(facts, sort_keys=True).encode("utf-8", "surrogatepass"))

    def holds(self, export: "ModuleExport", recorded: str) -> bool:
        """Whether the export tells what a reader read of it (``recorded``, as ``resolved``
        recorded it: a whole fingerprint or a partial one, which after a "no" holds while the
        module's functions still read and write no key)."""
        kind = next((k for k in (_PARTIAL, _NONE_READ) if recorded.startswith(k)), None)
        if kind is None:
            return self.fingerprint(export) == recorded
        try:
            digest, names = json.loads(recorded[len(kind):])
            same = self._partial_digest(export, [str(name) for name in names]) == digest
        except (ValueError, TypeError):
            return False  # a damaged record: what read it is analyzed again
        return same and (kind is _PARTIAL or not export.reads_or_writes_keys())

    def fingerprint(self, export: "ModuleExport") -> str:
        """A digest of everything the export tells its importers."""
        known = self.fingerprints.get(id(export))
        if known is None or known[0] is not export:
            text = json.dumps(export.to_json(), sort_keys=True)
            known = self.fingerprints[id(export)] = (export, _digest(text.encode("utf-8", "surrogatepass")))
            if isinstance(export, DemandedExport):
                self._store_demanded(export)  # made whole now: kept for the next process
        return known[1]

    def export_holds(self, module_name: str, path: str, importer: str, importer_name: str,
                     importer_digest: str, recorded: str) -> bool:
        """Whether the module's export, as the importer's analysis would now read it (in the
        importer's frame: an import cycle back to it is cut short as it would be), tells what
        the importer read of it (``recorded``)."""
        if recorded.startswith(_QUIET):
            with self.module_frame(importer_name, importer, importer_digest):
                return self._quiet_record_holds(module_name, path, recorded)
        with self.module_frame(importer_name, importer, importer_digest):
            export = self._export_at(module_name, os.path.normpath(os.path.abspath(path)))
        return self.holds(export, recorded)  # (one made on demand: made outside the importer's frame)

    def _load_or_build(self, module_name: str, path: str, digest: str) -> Tuple[Dict[str, str], "ModuleExport"]:
        """(its files, the export): the stored one while it holds, else one made on demand."""
        key = self._export_key(digest, module_name) if self.cache.directory is not None else ""
        cached = self.cache.load(key) if key else None
        found = self._stored_export(key, cached, module_name, path, digest) if cached is not None else None
        if found is None:
            found = self._built(module_name, path, digest)
        if self.building:
            self.building[-1][1].update(found[0])
        return found

    def _built(self, module_name: str, path: str, digest: str) -> Tuple[Dict[str, str], "ModuleExport"]:
        """``_load_or_build`` of a module made now: on demand (stored once made whole,
        ``_store_demanded``), or empty for a file that cannot be read or parsed (stored now)."""
        self.building.append((module_name, {path: digest}))
        self.constructing.add(id(self.building[-1][1]))
        try:
            export = self._build(module_name, path)
        finally:
            _, frame = self.building.pop()
            self.constructing.discard(id(frame))
            self.cut_frames.pop(id(frame), None)
        deps, reads = _split(frame)
        if isinstance(export, DemandedExport):
            export.deps = deps  # what its summaries are made from, as they are made (each in a frame of its own)
        else:
            self._store_export(module_name, digest, deps, self.resolved(reads), export)
        return deps, export

    def _stored_export(self, key: str, cached: Dict[str, Any], module_name: str, path: str,
                       digest: str) -> Optional[Tuple[Dict[str, str], "ModuleExport"]]:
        """(its files, the export) of a stored entry that still holds: none of its files
        changed, or every export the module read is the same (early cutoff: the entry is then
        stored again with the files as they are)."""
        try:
            deps = cached["deps"]
            export = ModuleExport.from_json(cached)
            if not self._dependencies_unchanged(deps):
                if not self._answers_unchanged(deps):
                    return None
                reread = self._revalidated(module_name, path, digest, deps, export, cached.get("reads"))
                if reread is None:
                    return None
                asked = {name: value for name, value in deps.items() if name.startswith(METHODS_DEPENDENCY)}
                deps, reads = {**reread[0], **asked}, self.resolved(reread[1])
                self._store_when_sure(key, {**{name: value for name, value in cached.items() if name not in (
                    "keydrift", "format")}, "deps": deps, "reads": reads})
            return dict(deps), export
        except (KeyError, TypeError, ValueError, AttributeError):
            return None  # a damaged entry is rebuilt

    def _revalidated(self, module_name: str, path: str, digest: str, deps: Dict[str, str], export: "ModuleExport",
                     reads: object) -> Optional[Tuple[Dict[str, str], Dict[str, str]]]:
        """``_reads_unchanged`` of a stored entry, which an import cycle back to the module
        reads as stored meanwhile (``_assumed``). If the entry does not hold after all, whatever
        was made or revalidated on that assumption is undone (``_undo``)."""
        mark = len(self.journal)
        self.revalidating[path] = (deps, export)
        reread = None
        try:
            reread = self._reads_unchanged(module_name, path, digest, reads)
        finally:
            del self.revalidating[path]
            if path in self.assumed and reread is None:
                self._undo(mark)
            self.assumed.discard(path)
            if not self.revalidating:
                self._settle()
        return reread

    def _store_when_sure(self, key: str, entry: Dict[str, Any]) -> None:
        """Store an entry, or while a revalidation rests on an assumption, once it is over."""
        if self.revalidating:
            self.journal.append(("store", key, entry))
        else:
            self.cache.store(key, entry)

    def _settle(self) -> None:
        """Every revalidation is over and every assumption held: store what waited for it."""
        for kind, key, entry in self.journal:
            if kind == "store":
                self.cache.store(key, entry)
        self.journal.clear()

    def _undo(self, mark: int) -> None:
        """A stored entry read on the assumption that it holds does not: forget every export
        kept, made or extended since its revalidation began, and the stores waiting."""
        count("revalidations undone")
        undone = self.journal[mark:]
        del self.journal[mark:]
        for kind, key, entry in reversed(undone):
            if kind == "module":
                if entry is None:
                    self.modules.pop(key, None)
                else:
                    self.modules[key] = entry
            elif kind == "export":
                self._discard(entry)

    def _discard(self, export: "DemandedExport") -> None:
        """An export made on demand that read an assumption which failed: made afresh if asked for."""
        for path, (_, known) in list(self.modules.items()):
            if known is export:
                del self.modules[path]
        self.fingerprints.pop(id(export), None)
        self.partials.pop(id(export), None)
        self._forget_analysis(export.analysis)
        if not export.active:
            self.close(export)

    def _reads_unchanged(self, module_name: str, path: str, digest: str,
                         reads: object) -> Optional[Tuple[Dict[str, str], Dict[str, str]]]:
        """What a module depends on now (its files, the exports it reads) when every export it
        read when it was built is the same; None otherwise. They are read in a frame of the
        module's own, so an import cycle is cut short where it was when the module was built."""
        if not isinstance(reads, dict) or not reads:
            return None
        self.building.append((module_name, {path: digest}))
        try:
            same = all(self._quiet_record_holds(*exported_module(dependency), recorded)
                       if isinstance(recorded, str) and recorded.startswith(_QUIET)
                       else self.holds(self._export_at(*exported_module(dependency)), recorded)
                       for dependency, recorded in reads.items())
        finally:
            _, frame = self.building.pop()
            self.cut_frames.pop(id(frame), None)
        return _split(frame) if same else None

    def _dependencies_unchanged(self, deps: object) -> bool:
        if not isinstance(deps, dict):
            return False
        return _once_per_look(self.unchanged, deps, lambda: all(
            answers_hold(dependency, recorded) if dependency.startswith(METHODS_DEPENDENCY)
            else self.file_hash(dependency) == recorded for dependency, recorded in deps.items()
            if not dependency.startswith(EXPORT_DEPENDENCY)))  # (what a module made on demand read)

    def _answers_unchanged(self, deps: Dict[str, str]) -> bool:
        """Whether every answer of the method index recorded in ``deps`` is the same: no
        export compared can vouch for one that is not."""
        return all(answers_hold(dependency, recorded) for dependency, recorded in deps.items()
                   if dependency.startswith(METHODS_DEPENDENCY))

    def _build(self, module_name: str, path: str) -> "ModuleExport":
        with stage("index"):
            return self._build_export(module_name, path)

    def _build_export(self, module_name: str, path: str) -> "ModuleExport":
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            digest = _digest(data)
            text = decode_source(data)
            module = self.parse(path, digest, text, module_name)
        except (OSError, SourceRejected, SourceError, RecursionError, UnicodeDecodeError, ValueError):
            return EMPTY_EXPORT
        relative = os.path.relpath(path, self.root).replace(os.sep, "/")
        is_package = os.path.basename(path) == "__init__.py"
        if self.cache.directory is not None:
            self.record_method_answers(path, text)
        return self._demanded(module, module_name, path, relative, digest, text, is_package)

    def _demanded(self, module: ast.Module, module_name: str, path: str, relative: str, digest: str, text: str,
                  is_package: bool) -> "DemandedExport":
        """The export of a module whose summaries are made as importers ask for them: with no
        disk cache nothing else will read the rest (a one-file check reads a few functions of
        each module it imports)."""
        from keydrift.analysis.module import ModuleAnalysis

        lines = physical_lines(text)
        with source_lines(lines):  # the models' facts keep source text
            analysis = ModuleAnalysis(module, relative, self.config, self, module_name, is_package, path)
            export = DemandedExport(self, analysis, is_package, digest, lines)
        self._keep_analysis((path, digest), analysis, is_package, export.consulted, len(lines))
        self._keep_open(export)
        return export

    def reopen(self, export: "DemandedExport") -> Any:
        """The analysis of a closed export's module (None if its file is no longer the one the
        export was made from): the export's own while it is still kept for the module's own check
        (``analyses``), so nothing it walked is walked again, else a fresh one."""
        from keydrift.analysis.module import ModuleAnalysis

        path = export.where
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            if _digest(data) != export.digest:
                return None
            text = decode_source(data)
            analysis = self._kept_analysis_of(export)
            module = self.parse(path, export.digest, text, export.module_name) if analysis is None else None
        except (OSError, SourceRejected, SourceError, RecursionError, UnicodeDecodeError, ValueError):
            return None
        export.lines = physical_lines(text)
        if analysis is None:
            with source_lines(export.lines):
                analysis = ModuleAnalysis(module, export.relative, self.config, self, export.module_name,
                                          export.is_package, path)
        self._keep_open(export)
        return analysis

    def _kept_analysis_of(self, export: "DemandedExport") -> Any:
        """The analysis kept for the export's module, made from the same file, name and configuration."""
        key = (os.path.normpath(export.where), export.digest)
        kept = self.analyses.get(key)
        if kept is None:
            return None
        analysis, is_package = kept[0], kept[1]
        if analysis.module_name != export.module_name or is_package != export.is_package or analysis.config != self.config:
            return None
        self.analyses.move_to_end(key)  # in use again: the last to let go of
        return analysis

    def _keep_open(self, export: "DemandedExport") -> None:
        """The last few exports made on demand stay open (by their lines); the oldest idle ones close."""
        key = id(export)
        if key in self.open_exports:
            self.open_exports.move_to_end(key)
            return
        self.open_exports[key] = export
        self.open_lines += len(export.lines)
        for old in list(self.open_exports.values()):
            if self.open_lines <= _OPEN_LINES_KEPT:
                break
            if old is not export and not old.active:
                self.close(old)

    def close(self, export: "DemandedExport") -> None:
        if self.open_exports.pop(id(export), None) is not None:
            self.open_lines -= len(export.lines)
        export.close()

    @contextmanager
    def demand_frame(self, export: "DemandedExport") -> Iterator[None]:
        """Where part of a module is analyzed for an importer: in a frame of the module's own, as
        building it whole would be (its dependencies recorded with it, an import cycle back to a
        module being analyzed cut short), with its lines. The importer then depends on every
        file the module's export depends on (with no disk cache, nothing asks which directories
        were looked in, unless a recording around it does)."""
        frame = export.deps
        if self.revalidating:  # it may read an assumption (``_assumed``)
            self.journal.append(("export", "", export))
        self.building.append((export.module_name, frame))
        export.active += 1
        try:
            with stage("index"), source_lines(export.lines):
                yield
        finally:
            export.active -= 1
            self.building.pop()
            export.consulted.update(frame)
            if self.cut_frames.pop(id(frame), None) is not None:
                self._forget_analysis(export.analysis)  # its own check analyzes the module afresh
        if self.building:
            self.building[-1][1].update(frame)
        self._record(frame)
        if export.analysis is not None:
            self._keep_open(export)

    def _forget_analysis(self, analysis: Any) -> None:
        """Not to be taken over by the module's own check: built where an import cycle was cut."""
        for kept_key, kept in list(self.analyses.items()):
            if kept[0] is analysis:
                self.analysis_lines -= kept[3]
                del self.analyses[kept_key]

    def replace_analysis(self, old: Any, new: Any) -> None:
        """The module walked whole in place of ``old`` is the one its own check takes over."""
        for kept_key, kept in self.analyses.items():
            if kept[0] is old:
                self.analyses[kept_key] = (new, *kept[1:])

    def _keep_analysis(self, key: Tuple[str, str], analysis: Any, is_package: bool, consulted: Dict[str, str],
                       lines: int) -> None:
        self.analyses[key] = (analysis, is_package, consulted, lines)
        self.analysis_lines += lines
        kept = _ANALYSIS_LINES_KEPT if self.cache.directory is not None else _ANALYSIS_LINES_KEPT_WITHOUT_CACHE
        while self.analysis_lines > kept and self.analyses:
            self.analysis_lines -= self.analyses.popitem(last=False)[1][3]

    def take_analysis(self, path: str, digest: str, tree: ast.Module, module_name: str, is_package: bool,
                      config: Config) -> Any:
        """The analysis of a module built for an importer, if the module's check may use it in
        place of its own: the same tree, name and configuration, and built where no import
        cycle was cut short. What that analysis consulted counts as consulted now."""
        kept = self.analyses.pop((os.path.normpath(os.path.abspath(path)), digest), None)
        if kept is None:
            return None
        analysis, kept_package, consulted, lines = kept
        self.analysis_lines -= lines
        if analysis.module is not tree or analysis.module_name != module_name or kept_package != is_package \
                or analysis.config != config:
            return None
        if self.building:
            self.building[-1][1].update((p, d) for p, d in consulted.items() if not p.startswith(("dir:", EXPORT_DEPENDENCY)))
        self._record(consulted)
        count("analyses reused")
        return analysis


_Made = TypeVar("_Made")


def _taken(functions: Sequence[str], names: Sequence[str], inert: Union[FrozenSet[str], InertNames]) -> Optional[List[str]]:
    """The functions of a module (qualified names) an importer takes by ``names``: a function
    so named and the methods of a class so named (``Store`` takes ``Store.add``), none for an
    inert variable (``inert_names``: a setting). None when a name is none of these: the
    importer may reach any of them through it."""
    taken = []
    for name in names:
        if name in inert:
            continue
        found = [f for f in functions if f == name or f.startswith(name + ".")]
        if not found:
            return None
        taken.extend(found)
    return taken


# A reader's record of an export made on demand that it read only part of (``_read_fingerprint``),
# and the same after the prefilter's question of it was answered "no" (``reads_or_writes_keys``)
_PARTIAL = "partial:"
_NONE_READ = "none:"
_QUIET = "quiet:"  # an export never read: ``quiet_closure`` found it could touch no key


def _summary_json(export: "ModuleExport", name: str) -> Optional[Dict[str, Any]]:
    """The summary of ``name`` as stored (None for a function the export has no summary of)."""
    summary = export.summary(name) if isinstance(export, DemandedExport) else export.summaries.get(name)
    return None if summary is None else to_json(summary)


class _Unresolved(str):
    """The fingerprint of an export made on demand, taken later (``ProjectIndex.resolved``)."""

    def __new__(cls, export: "DemandedExport") -> "_Unresolved":
        made = super().__new__(cls, f"unresolved:{id(export)}")
        made.export = export
        return made


def _once_per_look(memo: Dict[int, Tuple[Any, int, object, Any]], owner: Any, make: Callable[[], _Made]) -> _Made:
    """``make()`` about ``owner`` (a dependency map, a lookup's entry), made once inside one look
    while ``owner`` has as many entries (one look, one digest per file and one state per
    directory: what held holds); every time outside a look (the editor server)."""
    look = current_look()
    if look is None:
        return make()
    held = memo.get(id(owner))
    if held is None or held[0] is not owner or held[1] != len(owner) or held[2] is not look:
        held = memo[id(owner)] = (owner, len(owner), look, make())
    return held[3]


def _split(deps: Dict[str, str]) -> Tuple[Dict[str, str], Dict[str, str]]:
    """A frame's dependencies: (the files, by digest; the exports read, by fingerprint)."""
    files = {name: value for name, value in deps.items() if not name.startswith(EXPORT_DEPENDENCY)}
    return files, {name: value for name, value in deps.items() if name.startswith(EXPORT_DEPENDENCY)}


def _export_of(analysis: Any, tree: ast.Module, path: str, relative: str) -> "ModuleExport":
    """What a module exports, from its analysis: summaries of every function, the models' key
    facts, and its registry facts."""
    summaries = {}
    for name in analysis.units:
        try:
            summary = analysis.summary(name)
        except RecursionError:
            summary = None
        if summary is not None:  # even an empty one: callers need its parameters
            summaries[name] = summary
    try:
        keys = module_keys(analysis, tree, relative)
    except RecursionError:
        keys = EMPTY_KEYS
    return ModuleExport(_with_locations(analysis.statement_of, os.path.abspath(path), summaries),
                        dict(analysis.info.rewrites), dict(analysis.info.field_absorbs),
                        dict(analysis.info.primary_keys), set(analysis.info.validation_models), keys,
                        dict(analysis.info.derivations), dict(analysis.info.constructors),
                        analysis.info.relations, analysis.info.computed,
                        inert_names(tree, current_source_lines() or ()), analysis.exported_instances(),
                        analysis.exported_reexports())


@record
class ModuleExport:
    """What other modules may use of a module: its functions' summaries, its models' key facts
    and its contribution to the project registry (plain data: cached as JSON)."""

    summaries: Dict[str, FunctionSummary] = field(default_factory=dict)
    rewrites: Dict[Tuple[str, str], Rewrite] = field(default_factory=dict)
    absorbs: Dict[Tuple[str, str], FrozenSet[str]] = field(default_factory=dict)
    # model class -> its declared primary key field; classes that validate and coerce (pydantic)
    primary_keys: Dict[str, str] = field(default_factory=dict)
    validation_models: Set[str] = field(default_factory=set)
    keys: ModuleKeys = EMPTY_KEYS  # what the module contributes to the project registry
    derivations: Derivations = field(default_factory=dict)  # keys save() derives from a field
    constructors: Constructors = field(default_factory=dict)  # how calling a class fills its fields
    relations: FrozenSet[Tuple[str, str]] = frozenset()  # relation fields: a record's id, no key
    computed: FrozenSet[Tuple[str, str]] = frozenset()  # fields the database computes
    # variables through which an importer reaches none of its functions (``inert_names``)
    inert: FrozenSet[str] = frozenset()
    # variables bound to an instance of a class: variable -> (module, class) (``ModuleAnalysis.exported_instances``)
    instances: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    # what a package hands on of its modules: name -> (module, name there) (``exported_reexports``)
    reexports: Dict[str, Tuple[str, str]] = field(default_factory=dict)

    def reads_or_writes_keys(self) -> bool:
        """Whether a function of the module reads or writes a key."""
        return any(summary.accesses for summary in self.summaries.values())

    def reads_or_writes_keys_of(self, names: Sequence[str]) -> bool:
        """Whether what an importer takes by these names reads or writes a key: the functions so
        named and the methods of the classes so named (``_taken``); where a name is none of the
        module's functions or classes (one it imports itself, a variable that is not inert), any
        of its functions."""
        taken = _taken(list(self.summaries), names, self.inert)
        if taken is None:
            return self.reads_or_writes_keys()
        return any(self.summaries[name].accesses for name in taken)

    def to_json(self, summaries: bool = True) -> Dict[str, Any]:
        """The export as stored; without ``summaries``, its models' facts only (no summaries,
        no registry facts)."""
        facts = self._facts_json()
        if summaries:
            facts.update(keys=keys_to_json(self.keys), summaries={name: to_json(s) for name, s in self.summaries.items()})
        return facts

    def _facts_json(self) -> Dict[str, Any]:
        return {
            "derivations": [[entity, source, d.field, steps_to_json(d.steps), d.by]
                            for (entity, source), items in self.derivations.items() for d in items],
            "constructors": {name: [list(c.positional), [[f, steps_to_json(steps)]
                                                          for f, steps in c.rewrites], c.by]
                             for name, c in self.constructors.items()},
            "primary_keys": self.primary_keys,
            "validation_models": sorted(self.validation_models),
            "rewrites": [[entity, name, steps_to_json(r.steps), r.by]
                         for (entity, name), r in self.rewrites.items()],
            "absorbs": [[entity, name, sorted(kinds)] for (entity, name), kinds in self.absorbs.items()],
            "relations": sorted([entity, name] for entity, name in self.relations),
            "computed": sorted([entity, name] for entity, name in self.computed),
            "inert": sorted(self.inert),
            "instances": sorted([name, module, cls] for name, (module, cls) in self.instances.items()),
            "reexports": sorted([name, module, there] for name, (module, there) in self.reexports.items()),
        }

    @staticmethod
    def from_json(data: Dict[str, Any]) -> "ModuleExport":
        return ModuleExport(
            {name: from_json(item) for name, item in data["summaries"].items()},
            {(str(e), str(f)): Rewrite(steps_from_json(steps), str(by))
             for e, f, steps, by in data["rewrites"]},
            {(str(e), str(f)): step_kinds(kinds) for e, f, kinds in data["absorbs"]},
            {str(k): str(v) for k, v in data.get("primary_keys", {}).items()},
            {str(n) for n in data.get("validation_models", ())},
            keys_from_json(data["keys"]),
            _derivations_from(data.get("derivations", ())),
            {str(name): Constructor(tuple(map(str, positional)),
                                    tuple((str(f), steps_from_json(steps))
                                          for f, steps in rewrites), str(by))
             for name, (positional, rewrites, by) in data.get("constructors", {}).items()},
            frozenset((str(e), str(f)) for e, f in data.get("relations", ())),
            frozenset((str(e), str(f)) for e, f in data.get("computed", ())),
            frozenset(str(name) for name in data.get("inert", ())),
            {str(name): (str(module), str(cls)) for name, module, cls in data.get("instances", ())},
            {str(name): (str(module), str(there)) for name, module, there in data.get("reexports", ())},
        )


class DemandedExport:
    """A module's export made on demand (``ProjectIndex._demanded``): the models' facts at once
    (no function is walked for them), a function's summary when an importer asks for it (that
    function and the functions it calls are walked, not the whole module), the registry facts
    when the registry asks. What it tells is what building the whole module tells: a function
    is walked alone only while no recursion is met on the way (a summary made then depends on
    where the cycle was entered); when one is, the module is walked whole, in the order its own
    check walks it. Reads as a ``ModuleExport``."""

    def __init__(self, index: ProjectIndex, analysis: Any, is_package: bool, digest: str, lines: List[str]) -> None:
        self.index = index
        self.analysis: Any = analysis  # None once closed (``ProjectIndex._keep_open``)
        self.module_name = analysis.module_name
        self.relative = analysis.path
        self.units = list(analysis.units)
        self.unit_names = frozenset(self.units)  # (asked of every name a reader looks up, made or not)
        # functions a caller passes nothing to: their summaries hold no access (``reads_or_writes_keys``)
        self.silent = {name for name, unit in analysis.units.items() if not unit.params and unit.node.args.kwarg is None}
        self.is_package = is_package
        self.digest = digest
        self.lines = lines
        self.deps: Dict[str, str] = {}  # the files its summaries were made from (the index's entry)
        self.consulted: Dict[str, str] = {}  # the files its analysis consulted, for its own check
        self.made: Dict[str, Optional[FunctionSummary]] = {}
        # what its readers asked of it (``ProjectIndex._read_fingerprint``): the functions asked
        # for by name (also those it has none of), whether its functions were listed, and whether
        # the prefilter's question of it was answered "no"
        self.asked: Set[str] = set()
        self.listed = False
        self.none_read = False
        self.whole = False
        self.stored = False  # kept on disk (``ProjectIndex._store_demanded``)
        self.active = 0  # demand frames of it open: it is not closed, nor completed by its check, meanwhile
        self._keys: Optional[ModuleKeys] = None
        info = analysis.info
        self.rewrites = dict(info.rewrites)
        self.absorbs = dict(info.field_absorbs)
        self.primary_keys = dict(info.primary_keys)
        self.validation_models = set(info.validation_models)
        self.derivations = dict(info.derivations)
        self.constructors = dict(info.constructors)
        self.relations = info.relations
        self.computed = info.computed
        self.inert = InertNames(analysis.module, lines)
        self.instances = analysis.exported_instances()
        self.reexports = analysis.exported_reexports()
        self.where = os.path.abspath(analysis.file)

    @property
    def summaries(self) -> Mapping[str, FunctionSummary]:
        # a view made when asked, not kept: kept, it and the export would hold each other, a
        # cycle only a full collection frees (with the summaries and trees it reaches)
        return _DemandedSummaries(self)

    def summary(self, name: str) -> Optional[FunctionSummary]:
        self.asked.add(name)
        if name not in self.made:
            if name not in self.unit_names or not self._open():
                return None
            with self.index.demand_frame(self):
                self._make(name)
        return self.made[name]

    def _open(self) -> bool:
        if self.analysis is None:
            self.analysis = self.index.reopen(self)
        return self.analysis is not None

    def close(self) -> None:
        """Let the analysis go: what was made stays, the rest is made afresh if asked for."""
        self.analysis = None
        self.lines = []

    def complete(self, checked: Any) -> None:
        """The module's own check has walked it whole (``checked``, the analysis it took over or
        made): what is not made yet is made from that walk, and the analysis is let go. Kept
        as it is when another analysis of the module is open (walked whole afresh here)."""
        if self.active or self.analysis is not None and self.analysis is not checked \
                or checked.module_name != self.module_name:
            return
        if self.analysis is None:
            self.lines = list(current_source_lines() or ())  # the check's: the same text, by digest
        self.analysis = checked
        try:
            for _ in self.names():
                pass
            self.keys  # noqa: B018 - made now, while the walk is at hand
        except RecursionError:
            pass
        self.index.close(self)

    def _make(self, name: str) -> None:
        analysis = self.analysis
        recursions = analysis.recursions
        summary = analysis.summary(name)
        if analysis is not self.analysis:
            return  # walked whole meanwhile (a recursion through another module): made there
        if analysis.recursions != recursions and not self.whole:
            self._walk_whole()
        else:
            self.made[name] = self._located(summary)

    def _walk_whole(self) -> None:
        """Walk the module afresh as its own check would, every summary made from that walk."""
        from keydrift.analysis.module import ModuleAnalysis

        old = self.analysis
        fresh = ModuleAnalysis(old.module, old.path, old.config, old.project, old.module_name,
                               self.is_package, old.file)
        # the export answers from this walk from now on: an import cycle back into the module
        # while it is walked meets the walk's own guard against recursion (as the module's own
        # check would), instead of walking the module whole again, and again
        self.analysis, self.whole, self.made = fresh, True, {}
        self.index.replace_analysis(old, fresh)
        fresh.facts()
        for name in fresh.units:
            try:
                self.made[name] = self._located(fresh.summary(name))
            except RecursionError:
                self.made[name] = None

    def _located(self, summary: Optional[FunctionSummary]) -> Optional[FunctionSummary]:
        if summary is None or not summary.accesses:
            return summary
        return _with_locations(self.analysis.statement_of, self.where, {summary.name: summary})[summary.name]

    def names(self) -> Iterator[str]:
        """The functions with a summary, each made as it comes."""
        self.listed = True
        for name in self.units:
            if self.summary(name) is not None:
                yield name

    @property
    def keys(self) -> ModuleKeys:
        if self._keys is None:
            if not self._open():
                return EMPTY_KEYS
            with self.index.demand_frame(self):
                try:
                    self._keys = module_keys(self.analysis, self.analysis.module, self.analysis.path)
                except RecursionError:
                    self._keys = EMPTY_KEYS
        return self._keys

    def keys_made(self) -> bool:
        return self._keys is not None

    def reads_or_writes_keys(self) -> bool:
        """Whether a function of the module reads or writes a key (``ModuleExport``'s), its
        summaries made until one does: the first that does is all a reader of the answer
        read. Only functions with parameters are asked (a summary's accesses are by its
        parameters); when none does, a reader read that answer (``ProjectIndex.holds`` asks
        it again), not every function: none of the others is made for it, nor its registry
        facts, as a whole fingerprint would."""
        for name in self.units:
            if name in self.silent:
                continue
            summary = self.summary(name)
            if summary is not None and summary.accesses:
                return True
        self.none_read = True
        return False

    def reads_or_writes_keys_of(self, names: Sequence[str]) -> bool:
        """``ModuleExport.reads_or_writes_keys_of``: only the functions taken are made (a reader
        of the answer read their summaries, nothing else of the module's functions)."""
        taken = _taken(self.units, names, self.inert)
        if taken is None:
            return self.reads_or_writes_keys()
        for name in taken:
            if name not in self.silent:
                summary = self.summary(name)
                if summary is not None and summary.accesses:
                    return True
        return False

    def to_json(self, summaries: bool = True) -> Dict[str, Any]:
        if not summaries:  # the models' facts only: nothing is made
            return self._with({}, EMPTY_KEYS).to_json(summaries=False)
        return self.materialized().to_json()

    def __eq__(self, other: object) -> bool:
        """Equal to the export that tells the same (every summary made)."""
        if isinstance(other, DemandedExport):
            other = other.materialized()
        return isinstance(other, ModuleExport) and self.materialized() == other

    __hash__ = None  # type: ignore[assignment]

    def materialized(self) -> ModuleExport:
        return self._with(dict(self.summaries), self.keys)

    def _with(self, summaries: Dict[str, FunctionSummary], keys: ModuleKeys) -> ModuleExport:
        return ModuleExport(summaries, self.rewrites, self.absorbs, self.primary_keys, self.validation_models, keys,
                            self.derivations, self.constructors, self.relations, self.computed, self.inert.all(),
                            self.instances, self.reexports)


class _DemandedSummaries(Mapping):
    """A demanded export's summaries: each made when it is looked up."""

    __slots__ = ("export",)

    def __init__(self, export: DemandedExport) -> None:
        self.export = export

    def __getitem__(self, name: str) -> FunctionSummary:
        summary = self.export.summary(name) if isinstance(name, str) else None
        if summary is None:
            raise KeyError(name)
        return summary

    def __iter__(self) -> Iterator[str]:
        return self.export.names()

    def __len__(self) -> int:
        return sum(1 for _ in self.export.names())


def _derivations_from(rows: Any) -> Derivations:
    found: Derivations = {}
    for entity, source, derived, steps, by in rows:
        item = Derivation(str(derived), steps_from_json(steps), str(by))
        found[(str(entity), str(source))] = found.get((str(entity), str(source)), ()) + (item,)
    return found


EMPTY_EXPORT = ModuleExport()


def _with_locations(statement_of: Dict[int, ast.AST], where: str,
                    summaries: Dict[str, FunctionSummary]) -> Dict[str, FunctionSummary]:
    """Give each exported access a ``path:line``: the line of its statement."""
    if not any(s.accesses for s in summaries.values()):
        return summaries
    out = {}
    for name, summary in summaries.items():
        accesses = tuple(_located(a, where, statement_of) for a in summary.accesses)
        out[name] = replace(summary, accesses=accesses)
    return out


def _located(access: SummaryAccess, where: str, statement_of: Dict[int, ast.AST]) -> SummaryAccess:
    if access.where or access.node is None:
        return replace(access, node=None)
    statement = statement_of.get(id(access.node))
    line = statement.lineno if isinstance(statement, ast.stmt) else None
    return replace(access, where=f"{where}:{line}" if line else where, node=None)


def _listed_module(base: str, parts: List[str]) -> Optional[Tuple[Optional[str], List[str]]]:
    """``ProjectIndex._look_in`` read from directory listings (``diskcache.importable_names``,
    one per directory, not a ``stat`` per candidate file): the module's file under ``base``
    (``parts/….py`` or ``parts/…/__init__.py``) and the directories along ``parts`` that exist,
    as ``_existing_chain`` gives them; None when a directory on the way cannot be listed."""
    is_directory, names = importable_names(base)
    if not is_directory:  # (a source root such as ``src``: its parent's listing says when it appears)
        return None, [os.path.dirname(base)] if os.path.isdir(os.path.dirname(base)) else []
    chain = []
    directory = base
    for part in parts[:-1]:
        if names is None:
            return None
        chain.append(os.path.normpath(directory))
        if part + "/" not in names:
            return None, chain
        directory = os.path.join(directory, part)
        names = importable_names(directory)[1]
    if names is None:
        return None
    chain.append(os.path.normpath(directory))
    last = parts[-1]
    if last + ".py" in names:
        return os.path.join(directory, last + ".py"), chain
    if last + "/" in names:
        package = importable_names(os.path.join(directory, last))[1]
        if package is None:
            return None
        chain.append(os.path.normpath(os.path.join(directory, last)))  # (its __init__.py decides)
        if "__init__.py" in package:
            return os.path.join(directory, last, "__init__.py"), chain
    return None, chain


def _holds_nothing_named(base: str, name: str) -> bool:
    """Whether ``base`` is no directory, or one whose listing holds no module or package
    ``name``: ``_listed_module`` then tells the same of every module under that name."""
    is_directory, names = importable_names(base)
    return not is_directory or names is not None and name + ".py" not in names and name + "/" not in names


def _existing_chain(base: str, parts: List[str]) -> List[str]:
    """``base`` and its subdirectories along ``parts`` (a module's package path), as far as they exist."""
    chain = []
    directory = base
    for part in [""] + parts[:-1]:
        directory = os.path.join(directory, part) if part else directory
        if not os.path.isdir(directory):
            break
        chain.append(os.path.normpath(directory))
    return chain


_INDEXES: Dict[Tuple[str, str], ProjectIndex] = {}
_RECENT_ROOTS: List[str] = []  # the roots of the indexes asked for, the last first
# how many projects' indexes a process keeps: one for a run that goes project by project (the
# CLI, a flake8 worker); more for an editor server, which goes back and forth (``keep_projects``)
_PROJECTS_KEPT = [1]


def keep_projects(count: int) -> None:
    """Keep the indexes of the ``count`` projects asked about last (an editor server with a
    monorepo's services open, each with its own configuration, switches between them: each
    switch would otherwise rebuild the index, a cold check of the file)."""
    _PROJECTS_KEPT[0] = max(1, count)


def make_methods_before_forking(config: Config) -> None:
    """The project's method index (a read of every file of the project), made now for worker
    processes about to be forked to inherit, by this process and a forked helper when the files
    to read are many (``receivers.made_with_a_helper``: the second core is idle until the
    workers start). For the CLI and the flake8 plugin alike."""
    from keydrift.analysis.receivers import made_with_a_helper

    with made_with_a_helper():
        project_index(config, use_cache=config.cache).database_methods()


def project_index(config: Config, use_cache: bool = True) -> ProjectIndex:
    """One index per project root and configuration per process (CLI run, flake8 worker, LSP)."""
    key = _index_key(config, use_cache)
    root = key[0]
    if _RECENT_ROOTS[:1] != [root]:
        if root in _RECENT_ROOTS:
            _RECENT_ROOTS.remove(root)
        _RECENT_ROOTS.insert(0, root)
        del _RECENT_ROOTS[_PROJECTS_KEPT[0]:]
        _forget_other_projects(_RECENT_ROOTS)
    if key not in _INDEXES:
        _INDEXES[key] = ProjectIndex(root, config, use_cache)
    return _INDEXES[key]


def moving_to(path: str, config: Config) -> None:
    """Tell the project's index, if there is one, that ``path`` is the next file worked on
    (``ProjectIndex.moving_to``)."""
    index = _INDEXES.get(_index_key(config, config.cache))
    if index is not None:
        index.moving_to(os.path.normpath(os.path.abspath(path)))


def _index_key(config: Config, use_cache: bool) -> Tuple[str, str]:
    return os.path.abspath(config.root or "."), repr((config.normalizers, config.boundary, use_cache))


def _forget_other_projects(kept: List[str]) -> None:
    """A run over many projects (a monorepo's, a corpus) goes project by project: the other
    projects' indexes (their trees, analyses, exports, import lookups and method index, tens of
    megabytes for a large project) are let go. Asked for again, each is made again, the same."""
    from keydrift.analysis import receivers

    for key, index in list(_INDEXES.items()):
        if index.root not in kept and not index.building:  # (one being built is in use)
            del _INDEXES[key]
            receivers.forget_root(index.root)


def forget_indexes() -> None:
    from keydrift.analysis import receivers

    _INDEXES.clear()
    _RECENT_ROOTS.clear()
    receivers.forget()
    forget_packages()
