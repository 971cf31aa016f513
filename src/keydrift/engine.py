"""The core: source text in, sorted findings out. Knows nothing of flake8, the CLI or output.

Pipeline: decode -> textual prefilter -> CPython's parse (or the tree flake8 has) -> key-flow
analysis (one pass per function) -> rules filter the facts -> positions are
resolved only for the nodes that appear in a finding.
"""

from __future__ import annotations

import ast
import os
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from keydrift.analysis.facts import RawFinding
from keydrift.analysis.keyflow import ModuleFacts
from keydrift.analysis.module import analyze
from keydrift.analysis.parsing import SourceRejected
from keydrift import budget as time_budget
from keydrift.deepstack import call_with_deep_stack
from keydrift.diskcache import EXPORT_DEPENDENCY, current_look, digest, exported_module
from keydrift.analysis.imports import (
    FromImport, dynamic_imports, from_import_base, from_imports, import_name_for, plain_imports,
)
from keydrift.analysis.test_code import holds_no_finding
from keydrift.analysis.text_relevance import relevant_by_text
from keydrift.source import physical_lines
from keydrift.analysis.project import ProjectIndex, moving_to, project_index
from keydrift.analysis.tree import source_lines
from keydrift.config import called_name, import_root
from keydrift.analysis.positions import resolve_positions
from keydrift.analysis.receivers import called_database_methods, calls_resolvable_methods
from keydrift.source import ANALYSIS_ERROR, PARSE_ERROR, SourceError, decode_source  # noqa: F401 - engine API
from keydrift.timing import count, stage
from keydrift.vocabulary import NORMALIZER_VOCABULARY
from keydrift.types import Config, Finding



def check_source(source: Union[str, bytes], path: str, config: Optional[Config] = None,
                 tree: Optional[ast.Module] = None) -> List[Finding]:
    """Analyze one module's source. Never raises for bad input: a file that cannot be decoded
    or parsed yields one KD900 finding, an analysis failure one KD901 finding. ``tree``:
    CPython's tree of the source when the caller has one (flake8's), so it is not parsed again."""
    config = config or Config()
    try:
        with stage("decode"):
            text = decode_source(source)
    except SourceError as exc:
        return [_file_error(PARSE_ERROR, path, str(exc))]
    if "\x00" in text:
        return [_file_error(PARSE_ERROR, path, "cannot parse the file: it contains NUL bytes")]
    lines = text.count("\n") + 1
    count("files")
    count("lines", lines)
    try:
        moving_to(_absolute_path(path, config), config)
        # the prefilter may summarize the modules the file imports: a failure there is the analysis's
        with stage("prefilter"):
            if holds_no_finding(text, path, config):
                return []  # test code without a normalizer (``analysis/test_code``)
            has_database = _checked_relevance(text, path, config)
            if not has_database and not NORMALIZER_VOCABULARY.search(text) and not _mentions_normalizer(text, config):
                return []
        count("files analyzed")
        count("lines analyzed", lines)
        source_digest = digest(source if isinstance(source, bytes) else source.encode("utf-8", "surrogatepass"))
        with time_budget.budget():
            return call_with_deep_stack(lambda: _check_text(text, source_digest, path, config, has_database, tree))
    except time_budget.BudgetExceeded:
        seconds = time_budget.SECONDS_PER_FILE
        return [_file_error(ANALYSIS_ERROR, path, f"could not analyze the file: it needed more than {seconds:g} s of processor time")]
    except RecursionError:
        return [_file_error(ANALYSIS_ERROR, path, "could not analyze the file: it is nested too deeply")]
    except Exception as exc:  # noqa: BLE001 - a bug in keydrift must not stop the run
        return [_file_error(ANALYSIS_ERROR, path, f"internal error while analyzing: {type(exc).__name__}: {exc}")]


def check_source_recorded(source: Union[str, bytes], path: str, config: Config,
                          tree: Optional[ast.Module] = None) -> Tuple[List[Finding], Dict[str, str]]:
    """``check_source``, and what its result depends on besides the source (for the results cache)."""
    project = project_index(config, use_cache=config.cache)
    with project.recording() as deps:
        findings = check_source(source, path, config, tree)
    return findings, project.resolved(deps)


def exports_unchanged(deps: Dict[str, str], path: str, source_digest: str, config: Config) -> bool:
    """Whether every module export recorded in ``deps`` (a result for ``path``) is still what
    ``path``'s analysis would read now. Every module file a result depends on is one it read
    (its export recorded) or a dependency of one it read, so when these are the same, the
    result is, whichever of their files changed."""
    read = [(exported_module(dependency), recorded) for dependency, recorded in deps.items()
            if dependency.startswith(EXPORT_DEPENDENCY)]
    if not read:
        return False  # files changed, and none was read as an export: nothing to compare
    try:
        project, file, module_name, _ = _locate(path, config)
        return call_with_deep_stack(lambda: all(
            project.export_holds(name, exported, file, module_name, source_digest, recorded)
            for (name, exported), recorded in read))
    except Exception:  # noqa: BLE001 - a failure here only means analyzing the file again
        return False


def _absolute_path(path: str, config: Config) -> str:
    """Where the analyzed file is: relative paths are taken from the working directory, or from
    the project root when that is where the file is."""
    if os.path.isabs(path):
        return path
    here = os.path.abspath(path)
    if not os.path.exists(here) and config.root:
        rooted = os.path.join(os.path.abspath(config.root), path)
        if os.path.exists(rooted):
            return rooted
    return here


class Relevance(NamedTuple):
    """Why a module may read or write keys: ``reason`` is "text" (database vocabulary or a
    configured wrapper), "imports" (it imports a project module whose functions do), "methods"
    (it calls a method the project defines next to database code), or "" (it cannot);
    ``methods_consulted``: the project's method index took part in the answer (so the answer
    can change when another file does)."""

    reason: str
    methods_consulted: bool


# The answer of the last check, by file, configuration and text, and the look it was made in
# (``diskcache.one_look``): the registry asks about a module right after its check
# (``projectwide.offer_after_check``). One answer only, and only inside that look: whether an
# import makes a module relevant can change with another file (an editor server checks a file
# again, its text unchanged, after a module it imports through others was edited).
_LAST_RELEVANCE: List[Tuple[str, str, object, Relevance]] = []


def database_relevant(text: str, path: str, config: Config) -> bool:
    """Whether a module may read or write keys: database vocabulary, a configured wrapper, or
    an import of a project module whose functions do (a caller that reads and writes only
    through project helpers has no vocabulary of its own)."""
    return bool(relevance(text, path, config).reason)


def relevance(text: str, path: str, config: Config) -> Relevance:
    """``database_relevant``, with the reason (see ``Relevance``)."""
    look = current_look()
    if _LAST_RELEVANCE and look is not None and _LAST_RELEVANCE[0][2] is look \
            and _LAST_RELEVANCE[0][:2] == (_relevance_key(path, config), text):
        return _LAST_RELEVANCE[0][3]
    if relevant_by_text(text, config):
        return Relevance("text", False)
    # the imported modules are summarized through chains of imports as deep as the analysis's
    return call_with_deep_stack(lambda: _relevance_by_project(text, path, config))


def _relevance_by_project(text: str, path: str, config: Config) -> Relevance:
    """``relevance`` of a module without vocabulary of its own: by what it imports or calls."""
    if _imports_database_helpers(text, path, config):
        return Relevance("imports", False)
    consulted = calls_resolvable_methods(text)
    if consulted:  # the index's answer for these names decides whether the module is analyzed
        project, file, _, _ = _locate(path, config)
        project.record_method_answers(file, text)
    return Relevance("methods" if consulted and _calls_database_methods(text, path, config) else "", consulted)


def _checked_relevance(text: str, path: str, config: Config) -> bool:
    """The prefilter's answer for a module being checked, kept for the registry's question."""
    answer = relevance(text, path, config)
    _LAST_RELEVANCE[:] = [(_relevance_key(path, config), text, current_look(), answer)]
    return bool(answer.reason)


def _relevance_key(path: str, config: Config) -> str:
    """The file, and what of the configuration the answer depends on."""
    return repr((os.path.abspath(path), config.root, config.readers, config.writers, config.tables,
                 config.normalizers))


def _mentions_normalizer(text: str, config: Config) -> bool:
    return any(called_name(name) in text for name in config.normalizers)


def _check_text(text: str, source_digest: str, path: str, config: Config, has_database: bool,
                tree: Optional[ast.Module] = None) -> List[Finding]:
    project, file, module_name, is_package = _locate(path, config)
    try:
        module = project.parse(file, source_digest, text, module_name, tree)
    except SourceRejected as exc:
        if exc.beyond_limits:
            return [_file_error(ANALYSIS_ERROR, path, f"could not analyze the file: {exc}")]
        return [_file_error(PARSE_ERROR, path, f"cannot parse the file: {exc}", exc.line)]
    lines = physical_lines(text)
    with source_lines(lines):
        return _analyze(module, lines, project, file, module_name, is_package, source_digest, path, config,
                        has_database)


def _analyze(module: ast.Module, lines: Sequence[str], project: ProjectIndex, file: str, module_name: str,
             is_package: bool, source_digest: str, path: str, config: Config, has_database: bool) -> List[Finding]:
    """Facts, rules and positions of a parsed module (inside ``source_lines`` of its ``lines``)."""
    raw: List[RawFinding] = []
    with project.module_frame(module_name, file, source_digest) as deps:
        project.record_method_answers(file, "".join(lines))
        with stage("analysis"):
            # a module summarized for an importer earlier in this process is not walked again
            analysis = project.take_analysis(file, source_digest, module, module_name, is_package, config) \
                or analyze(module, path, config, project, module_name, is_package, file)
            facts = analysis.facts(path) if has_database else ModuleFacts(module, path, config, analysis.info,
                                                                         analysis=analysis)
        with stage("rules"):
            # imported here: a process that only asks ``relevance`` and the registry's facts (the
            # registry's helper, ``projectwide.start_helper``) never runs a rule, and the rules and
            # what they import took 5 ms of its start
            from keydrift.rules import ALL_RULES, rule_selected

            for rule in ALL_RULES:
                if rule_selected(rule.CODE, config):
                    raw.extend(rule().check(facts))
    with stage("index"):
        # the project registry and importers reuse this analysis instead of repeating it
        project.adopt(module_name, file, source_digest, deps, analysis, module)
    if not raw:
        return []
    with stage("positions"):
        findings = resolve_positions(module, lines, raw, path)
    return sorted(set(findings), key=Finding.sort_key)


def _locate(path: str, config: Config) -> Tuple[ProjectIndex, str, str, bool]:
    """The project index, the file's absolute path, its module name and whether it is a package."""
    project = project_index(config, use_cache=config.cache)
    file = _absolute_path(path, config)
    module_name, is_package = import_name_for(file, project.root)
    if not module_name:
        module_name, is_package = import_name_for(file, import_root(os.path.dirname(file)))
    return project, file, module_name, is_package


def _imports_database_helpers(text: str, path: str, config: Config) -> bool:
    """Whether the file imports a project module whose functions read or write keys: its import
    statements in the order of the text, each read whole (``imports.from_imports``: names in
    parentheses over several lines too), and modules imported by name (``importlib.import_module
    ("app.auth")``, ``imports.dynamic_imports``). A plain import that could not be read
    (``import a; ...``) counts as one that may bring such a function."""
    if "import" not in text:
        return False
    project, file, module_name, is_package = _locate(path, config)
    statements = [(span, statement) for statement, span in from_imports(text)]
    statements += [(span, modules) for modules, span in plain_imports(text)]
    statements += [(span, [module]) for module, span in dynamic_imports(text)]
    for _, statement in sorted(statements, key=lambda item: item[0]):
        if isinstance(statement, FromImport):
            base = from_import_base(statement.relative, module_name, is_package)
            if _taken_names_touch_keys(project, file, base, statement.names or [], statement.names is not None):
                return True
        elif statement is None or any(_module_touches_keys(project, name, file) for name in statement):
            return True
    return False


def _module_touches_keys(project: ProjectIndex, module_name: str, file: str) -> bool:
    """Whether a function of the module reads or writes a key: no, without making its export,
    when neither it nor anything it imports says a word that may (``quiet_closure``)."""
    return not project.quiet_closure(module_name, file) and project.module_export(module_name, file).reads_or_writes_keys()


def _taken_names_touch_keys(project: ProjectIndex, file: str, base: str, names: List[str], complete: bool) -> bool:
    """Whether what ``from base import names`` brings in reads or writes a key: a submodule by
    any of its functions; a function or class of ``base`` by its own summaries (the module can
    call nothing else of ``base`` through the names it took); any other name, or the names of
    an import that goes on past its line (``complete`` False), by any function of ``base``."""
    if not base:
        return any(_module_touches_keys(project, name, file) for name in names)
    if any(_module_touches_keys(project, f"{base}.{name}", file) for name in names):
        return True
    if project.quiet_closure(base, file):
        return False
    export = project.module_export(base, file)
    return export.reads_or_writes_keys_of(names) if complete else export.reads_or_writes_keys()


def _calls_database_methods(text: str, path: str, config: Config) -> bool:
    """Whether the file calls a method the project defines once, next to database code
    (``self.store.add_threepid(...)``): a read or a write through a receiver."""
    project, file, _, _ = _locate(path, config)
    for module, qualified in called_database_methods(text, project.root, project.module_name_of, project.cache):
        summary = project.summary(module, qualified, file)
        if summary is not None and summary.accesses:
            return True
    return False


def _file_error(code: str, path: str, message: str, line: int = 1) -> Finding:
    return Finding(code=code, message=f"{code} {message}", path=path, line=line, col=0, end_line=line,
                   fingerprint=(code, message))


def check_sources(items: Sequence[tuple], config: Optional[Config] = None) -> List[Finding]:
    """Analyze several (source, path) pairs; findings sorted deterministically."""
    out: List[Finding] = []
    for source, path in items:
        out.extend(check_source(source, path, config))
    return sorted(out, key=Finding.sort_key)
