"""flake8 plugin: ``flake8 --select KD``. A thin adapter over ``engine.check_source``, given the
tree flake8 has parsed (the plugin parses nothing itself; the tree is read, never changed).

flake8 applies its own select/ignore and ``# noqa``, but its noqa only covers the reported line
(a multi-line call is not one line to it), so the plugin also drops findings with a ``# noqa``
on any line of the reported statement, as the CLI does, unless ``--disable-noqa``. The
``[tool.keydrift]`` table adds its select/ignore, per-file-ignores and exclude. KD9xx findings
are dropped: flake8 reports E999 for a file it cannot parse. Nothing may escape ``run()``: a
plugin exception aborts the user's whole flake8 run, so failures become one message on stderr.
"""

from __future__ import annotations

import ast
import os
from dataclasses import replace
import sys
from typing import Any, ContextManager, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from keydrift import __version__
from keydrift.analysis.boundary import boundary_warnings
from keydrift.codes import ALL_CODES
from keydrift.collector import between_files, collect_less_often, collecting_by_growth_from_now
from keydrift.config import (
    ConfigError, derived_memo, fallback_note, finding_allowed, is_excluded, load_config, load_config_or_parent,
    root_without_pyproject,
)
from keydrift.noqa import apply_noqa
from keydrift.output._common import full_message
from keydrift.projectwide import check_held_analyses, findings_for
from keydrift.results import check_cached, keep_file_digests, may_hold_results, new_look, one_look
from keydrift.types import Config

_STDIN_NAMES = ("stdin", "-")
_already_said: Set[str] = set()  # one message per problem per process, not per file


class KeydriftChecker:
    name = "keydrift"
    version = __version__
    disable_noqa = False

    reports_any = True  # whether flake8's selection reports one of keydrift's codes

    @classmethod
    def parse_options(cls, options: object) -> None:
        cls.disable_noqa = bool(getattr(options, "disable_noqa", False))
        cls.reports_any = _reports_a_keydrift_code(options)
        if cls.reports_any:
            # once per flake8 process (a forked worker inherits it): keydrift's index stays in
            # memory for the run, and every full collection would traverse it
            collect_less_often()
            _import_the_analysis_before_forking()

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        # flake8 parsed ``"".join(lines)``: the analysis reads that tree (shared with other plugins)
        self.tree = tree if isinstance(tree, ast.Module) else None
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        if not self.reports_any:  # ``flake8 --select F`` with keydrift installed: nothing to do
            return
        try:
            _look_once_in_a_worker()
            with _look_for_this_check():
                results = self._results()
            _pace_the_collector_in_a_worker()
        except ConfigError as exc:
            _say_once(f"keydrift: {exc}; keydrift checks are skipped")
            return
        except Exception as exc:  # noqa: BLE001 - see module docstring
            _say_once(f"keydrift: internal error on {self.filename}: {type(exc).__name__}: {exc}")
            return
        yield from results

    def _results(self) -> List[Tuple[int, int, str, type]]:
        stdin = self.filename in _STDIN_NAMES
        config, broken = _configuration(None if stdin else self.filename)
        if broken is not None:  # a subtree's: checked with the configuration above it, as the CLI does
            _say_once(fallback_note(broken, config))
        for warning in boundary_warnings(config) if config.config_file else ():
            _say_once(warning)
        if not stdin and is_excluded(self.filename, config):
            return []
        source = "".join(self.lines)
        found = check_cached(source, self.filename, config, self.tree)
        if not stdin:
            # the project registry's findings; one look at the project per flake8 process
            found = found + findings_for(self.filename, config, fresh=False,
                                         check=self._check_module if config.cache else None)
            _keep_digests_once(config)
        self._check_held(config)
        findings = [f for f in found if not f.code.startswith("KD9") and finding_allowed(f, config)]
        if not self.disable_noqa:
            findings = apply_noqa(findings, source)
        return [(f.line, f.col, full_message(f), type(self)) for f in findings]


    def _check_module(self, path: str) -> None:
        """Check a module of the project as this plugin will when flake8 hands it over (its
        result is then in the cache), its path spelled as flake8 spells this one."""
        spelled = path if os.path.isabs(self.filename) else os.path.relpath(path)
        try:
            config, _ = _file_config(spelled)
            if is_excluded(spelled, config):
                return
            with open(path, "rb") as handle:
                data = handle.read()
            check_cached(data, spelled, config)
        except (OSError, ConfigError):
            return  # only a head start: the module's own turn checks it as usual
        self._check_held(config)

    def _check_held(self, config: Config) -> None:
        """In a flake8 worker, check the modules this process has analyzed for an importer (see
        ``projectwide.check_held_analyses``)."""
        if not config.cache or not _in_a_worker() or "keydrift.analysis.project" not in sys.modules:
            return  # no index, so nothing analyzed: a warm run need not load the analysis to know
        try:
            check_held_analyses(config, self._check_module)
        except Exception:  # noqa: BLE001 - only a head start for the other workers
            pass


_DIGESTS_KEPT: Set[str] = set()  # the project roots whose files' digests this process has kept


def _keep_digests_once(config: Config) -> None:
    """After a process's first check in a project (it has looked at every file of the project
    by then, for the registry and the method index), keep the files' digests for the next run's
    processes (``results.keep_file_digests``)."""
    if config.root not in _DIGESTS_KEPT:
        _DIGESTS_KEPT.add(config.root)
        keep_file_digests(config)


def _reports_a_keydrift_code(options: object) -> bool:
    """Whether flake8's selection (``--select``, ``--ignore``, their ``--extend-`` forms and
    the defaults) lets any of keydrift's codes through. flake8 runs every installed plugin
    whatever is selected and drops what is not, so without this a run that selects none of
    them would still pay for keydrift's whole analysis. Per-file ignores are not looked at (a
    code ignored in some files is still reported in others)."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        decide = DecisionEngine(options)  # type: ignore[arg-type]
        return any(decide.decision_for(code) is Decision.Selected for code in ALL_CODES)
    except Exception:  # noqa: BLE001 - another flake8 (or a namespace without its options): run as before
        return True


# (working directory, a checked file's directory or None for standard input) -> ``_configuration``
_CONFIGURATIONS: Dict[Tuple[str, Optional[str]], Tuple[Config, Optional[ConfigError]]] = derived_memo()


def _configuration(filename: Optional[str]) -> Tuple[Config, Optional[ConfigError]]:
    """The configuration a file (None: standard input) is checked with, and the error of a
    broken one it stands in for (``_file_config``); raises when the run's own configuration,
    the working directory's, is broken (the run is skipped). Kept per directory: a run's files
    share a few hundred, and each file's configuration asked the disk again and again."""
    key = (os.getcwd(), None if filename is None else os.path.dirname(filename))
    found = _CONFIGURATIONS.get(key)
    if found is None:
        run_config = load_config(key[0])
        found = _CONFIGURATIONS[key] = (run_config, None) if filename is None else _file_config(filename)
    return found


def _file_config(filename: str) -> Tuple[Config, Optional[ConfigError]]:
    """The file's configuration, and the error of a broken one it stands in for."""
    config, broken = load_config_or_parent(filename)
    if not config.config_file:
        # no pyproject.toml: the same project root as `keydrift check` run from here
        root = root_without_pyproject(filename, os.getcwd())
        if root:
            config = replace(config, root=root)
    return config, broken


_FORK_HOOK: List[bool] = []  # whether ``_before_forking`` is registered, and whether it has run


def _import_the_analysis_before_forking() -> None:
    """Have the analysis and sqlglot imported in this process just before flake8 forks its
    first worker (``-j``), for the workers to inherit, in a run from an empty cache. Each worker
    imported them for itself on its first check, 0.75G instructions apiece (0.29G the analysis,
    0.46G sqlglot; a ``-j 1`` run imports them once). A run whose cache folder exists imports
    nothing more here: its workers mostly read results, and the warm path loads no analysis."""
    if not _FORK_HOOK and hasattr(os, "register_at_fork"):
        _FORK_HOOK.append(False)
        os.register_at_fork(before=_before_forking)


def _before_forking() -> None:
    """The ``os.fork`` hook: once, and only when the fork is flake8 starting its workers."""
    if _FORK_HOOK != [False]:
        return
    files = _parallel_run()
    if files is None:
        return
    _FORK_HOOK[0] = True
    try:
        config, _ = _configuration(None)
        if config.cache and may_hold_results(config):
            return
        import keydrift.engine  # noqa: F401 - imported for the workers to inherit
        import keydrift.rules  # noqa: F401 - (the engine imports them on its first analysis)
        from keydrift.analysis.sql import import_sqlglot

        import_sqlglot()
        _method_index_before_forking(files)
    except Exception:  # noqa: BLE001 - only a head start: each worker imports what it needs
        pass


def _method_index_before_forking(files: object) -> None:
    """The project's method index (the methods every file defines, which nearly every check and
    the registry ask), made once here for the workers to inherit, as the CLI makes it before
    forking its workers (``project.make_methods_before_forking``). Each worker made its own,
    both at the same moment (0.21 s apiece on the small corpus). Only when every file is of
    one project: the index of one of several would be made for workers that may never check
    that project."""
    from keydrift.analysis.project import make_methods_before_forking

    if not isinstance(files, (list, tuple)) or not files or not all(isinstance(f, str) for f in files):
        return
    configs: Dict[str, Config] = {}
    for filename in files:
        if filename in _STDIN_NAMES:
            return
        config, _ = _configuration(filename)
        configs.setdefault(config.root or "", config)
        if len(configs) > 1:
            return
    make_methods_before_forking(next(iter(configs.values())))


def _in_a_worker() -> bool:
    """Whether this is one of flake8's worker processes (``-j``): the modules this process
    analyzed for an importer are then checked here at once, as the next file may go to another."""
    import multiprocessing

    return multiprocessing.parent_process() is not None


_LOOK: List[object] = []  # the worker's ``one_look``, entered once and never left


def _look_once_in_a_worker() -> None:
    """In a flake8 worker, each file and directory is looked at once for the rest of the run
    (``diskcache.one_look``, as in the CLI's run): a run checks the tree as it is when it
    starts, and most files are dependencies of many results and exports."""
    if not _LOOK and _in_a_worker():
        look = one_look()
        look.__enter__()
        _LOOK.append(look)


_PACED: List[bool] = []  # whether this worker's collector runs at a check run's pace


def _pace_the_collector_in_a_worker() -> None:
    """A flake8 worker that analyzes (the analysis loaded: a run from an empty cache, a changed
    file) keeps the project's index in memory until the run ends, and every full collection
    traverses it: from then on its collector runs at a check run's pace
    (``collector.collecting_by_growth_from_now``; a worker ends with the run). One that only
    reads stored results keeps the raised threshold: its heap is small, and without collection
    its files' trees took a warm run's workers from 60 to 160 MiB."""
    if not _PACED and _LOOK and "keydrift.analysis.project" in sys.modules:
        _PACED.append(True)
        collecting_by_growth_from_now()
    between_files()


# The serial flake8 run this process checks files for: (its files, its look), taken up again
# for each of the run's files (``_look_for_this_check``).
_RUN_LOOK: List[Tuple[object, Any]] = []


def _look_for_this_check() -> ContextManager[None]:
    """The look a file's check is made in. A worker's goes on (``_look_once_in_a_worker``); the
    checks of one serial run (``-j 1``, a one-CPU machine, a few files) share one look, as the
    CLI's run and a worker's do: the project's method index is checked against every file of
    the project once per look, so a look per file made a serial run quadratic (12 ms per file on
    1,100 files, 110 ms on 9,400). Between two checks no look is in force (the process may
    outlive the run: flake8's API, an editor extension running flake8 in its own process), and
    a check outside a run flake8 is seen driving is its own look, as each of the editor
    server's is."""
    run = _serial_run()
    if run is None:
        return one_look()
    if not _RUN_LOOK or _RUN_LOOK[0][0] is not run:
        _RUN_LOOK[:] = [(run, new_look())]
    return one_look(resumed=_RUN_LOOK[0][1])


def _serial_run() -> Optional[object]:
    """What identifies the serial flake8 run checking this file: its checker manager's file
    list, made anew for each run (flake8 6+: ``Manager.filenames``, a tuple; flake8 5:
    ``Manager.checkers``), found on the stack below ``run_serial``. None elsewhere (a worker,
    flake8 driven some other way): each check is then its own look."""
    return _run_on_the_stack("run_serial")


def _parallel_run() -> Optional[object]:
    """The file list of the parallel flake8 run starting its workers, found as ``_serial_run``
    finds a serial run's (below ``run_parallel``); None elsewhere."""
    return _run_on_the_stack("run_parallel")


def _run_on_the_stack(method: str) -> Optional[object]:
    """The file list of the flake8 checker manager whose ``method`` is on the stack, if any."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == method and frame.f_globals.get("__name__", "").startswith("flake8."):
            manager = frame.f_locals.get("self")
            for attribute in ("filenames", "checkers"):
                files = getattr(manager, attribute, None)
                if isinstance(files, (tuple, list)):
                    return files
            return None
        frame = frame.f_back
    return None


def _say_once(message: str) -> None:
    if message not in _already_said:
        _already_said.add(message)
        print(message, file=sys.stderr)
