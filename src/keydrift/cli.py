"""The ``keydrift`` command: ``check``, ``rules``, ``explain``, ``lsp``, ``audit-db`` (``audit/``).

Exit status: 0 no findings, 1 findings, 2 a usage or configuration error. A file that cannot
be read or parsed is reported as a KD900 finding and the run goes on.

The files named on the command line are what is *reported*; the analysis of each still knows
the whole project (imports are resolved from disk under the project root), so checking only the
files pre-commit passes, or only those ``--changed-since`` a revision, finds what checking
everything would find in them.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
import os
import stat
import sys
from typing import Dict, Iterator, List, NoReturn, Optional, Sequence, Set, Tuple

from keydrift import __version__, early_reading
from keydrift.audit.arguments import add_parser as add_audit_parser
from keydrift.codes import FIXABLE_CODES
from keydrift.collector import between_files, collect_less_often, collecting_by_growth, ending_after_run
from keydrift.deepstack import call_with_deep_stack
from keydrift.diskcache import CACHE_DIRECTORY, remember_digest
from keydrift.baseline import BaselineError, new_findings, write_baseline
from keydrift.config import (
    ConfigError, fallback_note, finding_allowed, is_excluded, load_config, load_config_file, load_config_or_parent,
    parse_code_list,
    root_without_pyproject, with_overrides,
)
from keydrift.source import PARSE_ERROR
from keydrift.noqa import apply_noqa
from keydrift.output import FORMATTERS, ReportContext
from keydrift.output.progress import Progress
from keydrift.projectwide import Offer, accept, check_held_analyses, offer_after_check
from keydrift.results import cached_findings, check_cached, may_hold_results, one_look, remembered_fix_counts
from keydrift.timing import counters
from keydrift.types import Config, Finding
from keydrift.files import walk as _walk_files

STDIN = "-"


class UsageError(Exception):
    """A mistake on the command line; reported as one line, exit status 2."""


def main(argv: Optional[Sequence[str]] = None) -> int:
    _tolerate_unencodable_output()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, argparse's own usage errors
        return exc.code if isinstance(exc.code, int) else 2
    collect_less_often()  # the analysis keeps the project in memory: full collections traverse it
    try:
        return args.handler(args)
    except (ConfigError, UsageError, BaselineError) as exc:
        print(f"keydrift: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `keydrift check | head`: the reader left, nothing to report
        _silence_stdout()
        return 1
    except KeyboardInterrupt:
        return 130


def run() -> NoReturn:
    """The ``keydrift`` process: ``main()``, then an exit that skips the interpreter's teardown.
    The analysis keeps the project's trees, summaries and exports in memory to the end, and
    freeing them object by object at exit cost a quarter of a one-file check (0.3 of 1.4 s
    CPU); nothing is lost by skipping it: the report is written and every file the run wrote
    is closed by then, so only the standard streams are left to flush (and the collector is left
    off after the run: ``collector.ending_after_run``)."""
    ending_after_run()
    try:
        code = main()
    finally:
        early_reading.discard()  # a reader the run did not ask for
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:  # the editor server closes its own
                stream.flush()
        except (OSError, ValueError):
            code = 120  # what CPython exits with when it cannot flush a stream at exit
    os._exit(code)


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's, given the terminal's width as ``shutil.get_terminal_size`` reads it: argparse
    makes a formatter for every argument added, and its own reading imports ``shutil`` (with
    ``bz2`` and ``lzma``), about 3 ms of every run's start (a one-file check takes 0.2 s)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: Optional[int] = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else the terminal of standard
    output, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns if columns > 0 else 80


class _Parser(argparse.ArgumentParser):
    """An argument parser with ``_HelpFormatter``; its subcommands' parsers are of this class too."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="keydrift",
        description="Find code that reads a record by one key and writes it by another.")
    parser.add_argument("--version", action="version", version=f"keydrift {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    check = commands.add_parser("check", help="analyze files and directories")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                       help="files or directories to check ('-' reads standard input); default '.'")
    check.add_argument("--select", metavar="CODES", help="comma-separated code prefixes to report")
    check.add_argument("--ignore", metavar="CODES", help="comma-separated code prefixes to skip")
    check.add_argument("--format", choices=sorted(FORMATTERS), default="text")
    check.add_argument("--output", metavar="FILE", help="write the report to FILE")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    check.add_argument("--config", metavar="FILE", help="the pyproject.toml to use")
    check.add_argument("--stdin-filename", metavar="NAME",
                       help="the name of the file read from '-', for output and configuration")
    check.add_argument("--quiet", "-q", action="store_true",
                       help="print findings only: no summary, no progress line")
    check.add_argument("--jobs", "-j", type=_positive_int, default=0, metavar="N",
                       help="check files in N processes (default: all cores; a check of a few files shares "
                            "the project-wide registry with one helper process, none with -j 1); the output "
                            "is the same for any N")
    check.add_argument("--no-cache", action="store_true",
                       help=f"do not read or write the cache of summaries and results "
                            f"({CACHE_DIRECTORY}/ under the project root)")
    baseline = check.add_mutually_exclusive_group()
    baseline.add_argument("--baseline", metavar="FILE",
                          help="report only findings that FILE (from --write-baseline) does not record")
    baseline.add_argument("--write-baseline", metavar="FILE",
                          help="record the current findings in FILE and exit 0")
    check.add_argument("--changed-since", metavar="REV",
                       help="report only files changed since the git revision REV (committed, "
                            "staged, unstaged or untracked); the whole project is still analyzed")
    _add_fix_options(check)
    check.set_defaults(handler=run_check)

    rules = commands.add_parser("rules", help="list the rules")
    rules.set_defaults(handler=run_rules)

    explain = commands.add_parser("explain", help="show a rule's documentation")
    explain.add_argument("code", metavar="CODE")
    explain.set_defaults(handler=run_explain)

    lsp = commands.add_parser("lsp", help="run the language server on stdin/stdout (needs keydrift[lsp])")
    lsp.set_defaults(handler=run_lsp)

    add_audit_parser(commands)
    return parser


# --- check --------------------------------------------------------------------------------

def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("the number of processes must be at least 1")
    return value


def run_check(args: argparse.Namespace) -> int:
    with collecting_by_growth():  # this process and its workers are keydrift's alone
        return _run_check(args)


def _run_check(args: argparse.Namespace) -> int:
    _DIRECTORY_CONFIGS.clear()  # a new run reads the configuration files afresh
    config = _run_config(args)
    files, missing = collect_files(args.paths, config)
    for path in missing:
        print(f"keydrift: error: {path}: no such file or directory", file=sys.stderr)
    if not args.config:
        _report_broken_subtrees(files + ([args.stdin_filename] if args.stdin_filename else []))
    if args.changed_since:
        files = only_changed_files(files, args.changed_since)
    if _fixing(args):
        return run_fix_modes(files, missing, config, args)
    findings = check_files(files, config, args)
    if args.write_baseline:
        write_baseline(args.write_baseline, findings)
        if not args.quiet:
            print(f"keydrift: recorded {_plural(len(findings), 'finding')} in {args.write_baseline}",
                  file=sys.stderr)
        return 2 if missing else 0
    baselined = 0
    if args.baseline:
        findings, baselined = new_findings(findings, args.baseline)
    report = FORMATTERS[args.format](findings, ReportContext(root=config.root))
    _write_report(report, args.output)
    if _summary_shown(args):
        print(_summary(findings, files, baselined), file=sys.stderr)
        _print_fixable(findings, config, args)
    if missing:
        return 2
    return 1 if findings and not args.exit_zero else 0


# Below this many files to analyze a process pool costs more than it saves.
_PARALLEL_THRESHOLD = 16


def check_files(files: Sequence[str], run_config: Config, args: argparse.Namespace) -> List[Finding]:
    """Every file's findings, sorted (so the output is the same for any --jobs); a progress
    line on a terminal for long runs. What the results cache holds is read here, so an
    unchanged run, or one with a few edits, starts no process pool."""
    from keydrift.projectwide import registry_with_a_helper

    findings: List[Finding] = []
    # the tree as it is now: each file many results depend on is looked at once; a registry
    # assembled by this process alone is shared with a helper unless one job was asked for
    with one_look(), registry_with_a_helper(_jobs_asked(args) > 1):
        pending = _check_cached_files(files, run_config, args, findings)
        progress = Progress(None if args.quiet else sys.stderr, len(pending))
        jobs = _jobs(args, pending)
        if jobs == 1:
            _start_registry_helper(pending, run_config, args)
        try:
            if jobs > 1:
                findings.extend(_check_in_parallel(pending, run_config, args, jobs, progress))
            else:
                for number, path in enumerate(pending, start=1):
                    progress.show(number, path)
                    findings.extend(_check_one(path, run_config, args))
        finally:
            progress.clear()
        findings.extend(_project_findings(files, run_config, args))
    findings.sort(key=Finding.sort_key)
    return findings


def _check_cached_files(files: Sequence[str], run_config: Config, args: argparse.Namespace,
                        findings: List[Finding]) -> List[str]:
    """The files the results cache cannot answer for (their findings go to ``findings``). A
    result whose imported modules changed is confirmed here (their exports compared) when
    the changes are few; else it is left to the checks, in parallel."""
    pending: List[str] = []
    undecided: Dict[str, Tuple[bytes, Config]] = {}
    changed: Set[str] = set()
    holding: Dict[str, bool] = {}  # by project root: whether its cache may hold results
    for path in files:
        if path == STDIN:
            pending.append(path)
            continue
        config = _checked_config(path, run_config, args)
        if config is None:
            continue
        if config.root not in holding:
            holding[config.root] = may_hold_results(config)
        if not holding[config.root]:
            pending.append(path)  # a first run: the files are read where they are checked
            continue
        try:
            data, status = _read_regular_file(path)
        except OSError:
            pending.append(path)
            continue
        # the registry's look at the project's files needs this file's digest too
        found = cached_findings(data, path, config, source_digest=remember_digest(path, status, data))
        if found.findings is not None:
            findings.extend(_reported(found.findings, data, config))
            continue
        pending.append(path)
        if found.changed:
            undecided[path] = (data, config)
            changed.update(found.changed)
    if len(pending) - len(undecided) + len(changed) >= _PARALLEL_THRESHOLD:
        return pending
    confirmed = _confirmed(undecided, findings)
    return [path for path in pending if path not in confirmed]


def _confirmed(undecided: Dict[str, Tuple[bytes, Config]], findings: List[Finding]) -> Set[str]:
    """The files whose cached results stand because every export they read is the same (their
    findings go to ``findings``). The first comparison with a changed module analyzes it; the
    others reuse that."""
    confirmed = set()
    for path, (data, config) in undecided.items():
        found = cached_findings(data, path, config, confirm=True)
        if found.findings is not None:
            confirmed.add(path)
            findings.extend(_reported(found.findings, data, config))
    return confirmed


def _start_registry_helper(files: Sequence[str], run_config: Config, args: argparse.Namespace) -> None:
    """Files checked one after the other, of one project: the helper that shares the project's
    registry with this process starts on it now, while they are checked."""
    from keydrift.projectwide import start_helper

    config = _one_project(files, run_config, args)
    if config is not None:
        start_helper(files, config)


def _one_project(files: Sequence[str], run_config: Config, args: argparse.Namespace) -> Optional[Config]:
    """The configuration of the run's files when they are all of one project, else None."""
    configs = {config.root: config for config in (_checked_config(path, run_config, args)
                                                  for path in files if path != STDIN) if config is not None}
    return next(iter(configs.values())) if len(configs) == 1 else None


def _project_findings(files: Sequence[str], run_config: Config, args: argparse.Namespace) -> List[Finding]:
    """The registry's findings (keys stored and looked up across modules) in the files checked."""
    from keydrift.projectwide import findings_for

    out: List[Finding] = []
    looked_at: Set[str] = set()  # one fresh look at each project per run
    for path in files:
        if path == STDIN:
            continue
        config = run_config if args.config else _file_config(path, run_config, args)
        if is_excluded(path, config):
            continue
        fresh = config.root not in looked_at
        looked_at.add(config.root)
        found = [f for f in findings_for(path, config, fresh) if finding_allowed(f, config)]
        if found:
            out.extend(apply_noqa(found, read_source(path)))
    return out


def _jobs_asked(args: argparse.Namespace) -> int:
    """The processes the run may use: ``--jobs``, else every core."""
    return args.jobs if args.jobs else (os.cpu_count() or 1)


def _jobs(args: argparse.Namespace, files: Sequence[str]) -> int:
    jobs = _jobs_asked(args)
    count = len(files)
    if count < _PARALLEL_THRESHOLD or STDIN in files:
        return 1
    return max(1, min(jobs, count))


def _check_in_parallel(files: Sequence[str], run_config: Config, args: argparse.Namespace, jobs: int,
                       progress: Progress) -> List[Finding]:
    """Files are checked in worker processes; they share the on-disk project index."""
    import concurrent.futures
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    if "fork" in methods:
        _make_before_forking(files, run_config, args)
    findings: List[Finding] = []
    # the workers check ahead the files of this run they have analyzed for an importer
    _RUN_FILES.clear()
    _RUN_FILES.update((os.path.normpath(os.path.abspath(path)), path) for path in files if path != STDIN)
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
        chunks = _chunks(files, jobs)
        results = (result for chunk in pool.map(_check_chunk, chunks, [run_config] * len(chunks), [args] * len(chunks))
                   for result in chunk)
        for number, (path, (found, offers)) in enumerate(zip(files, results), start=1):
            progress.show(number, path)
            findings.extend(found)
            for offer in offers:
                accept(offer)
    return findings


def _make_before_forking(files: Sequence[str], run_config: Config, args: argparse.Namespace) -> None:
    """What every worker would make for itself, made once here for the workers forked after it
    to inherit: the project's method index (a read of every file of the project, which every
    parse asks), when the run's files are of one project (the index of
    one of several would be held by every worker, through all the projects)."""
    config = _one_project(files, run_config, args)
    if config is None:
        return
    from keydrift.analysis.project import make_methods_before_forking

    try:
        make_methods_before_forking(config)
    except Exception:  # noqa: BLE001 - each worker then builds it as before
        pass


_SMALLEST_CHUNK = 8


def _chunks(files: Sequence[str], jobs: int) -> List[Sequence[str]]:
    """The run's files in chunks of neighbours, in order, for the workers to take one at a time:
    large at first (the files over four times the workers), so a worker sees whole packages and
    the modules they import are summarized by one worker, not both, while their trees are still
    in memory; then shrinking with what is left (over twice the workers, down to
    ``_SMALLEST_CHUNK``), so the workers finish together instead of one checking a large last
    chunk alone (a tenth of a cold run's wall time on two cores)."""
    largest = max(1, len(files) // (jobs * 4))
    chunks: List[Sequence[str]] = []
    start = 0
    while start < len(files):
        size = max(_SMALLEST_CHUNK, min(largest, (len(files) - start) // (jobs * 2)))
        chunks.append(files[start:start + size])
        start += size
    return chunks


def _check_chunk(chunk: Sequence[str], run_config: Config,
                 args: argparse.Namespace) -> List[Tuple[List[Finding], List[Offer]]]:
    return [_check_and_offer(path, run_config, args) for path in chunk]


# The files of the parallel run, by absolute path, as the run spells them (a worker's checks
# ahead are of these files only, under the spelling their own turn would use).
_RUN_FILES: Dict[str, str] = {}


def _check_and_offer(path: str, run_config: Config, args: argparse.Namespace) -> Tuple[List[Finding], List[Offer]]:
    """A worker's check of one file, and the file's registry contribution made while its
    analysis is still in the worker's memory: the parent assembles the registry from these
    instead of reading and analyzing every module again on one core. Then the files of the run
    this worker has analyzed for an importer are checked ahead (their results cached, their
    contributions offered with this file's), so the worker whose turn they come to finds the
    result instead of analyzing the module again."""
    def check_and_offer() -> Tuple[List[Finding], List[Offer]]:
        offers: List[Offer] = []
        found = _check_offering(path, run_config, args, offers)
        _check_held(path, run_config, args, offers)
        return found, offers
    return call_with_deep_stack(check_and_offer)  # one analysis thread for all (see deepstack.py)


def _check_offering(path: str, run_config: Config, args: argparse.Namespace, offers: List[Offer]) -> List[Finding]:
    """``_check_one``; the file's registry contribution goes to ``offers`` when it was analyzed
    (a result from the cache: the stored contribution is still good)."""
    seen = counters().get("files", 0)
    found = _check_one(path, run_config, args)
    if path != STDIN and counters().get("files", 0) != seen:
        config = _checked_config(path, run_config, args)
        offer = None if config is None else offer_after_check(path, config)
        if offer is not None:
            offers.append(offer)
        _count_fixes_ahead(path, found, run_config, args)
    return found


def _count_fixes_ahead(path: str, found: List[Finding], run_config: Config, args: argparse.Namespace) -> None:
    """Count the fixes of a file a worker has just checked, for the summary's hint, when it has
    a finding some fix handles: the counts are remembered (``remembered_fix_counts``) and the
    parent, counting after the workers end, reads them instead of parsing the file with libcst
    on one core (on the full corpus five such files cost the parent 4 s after the run). A file
    whose findings then differ (a registry finding, a baseline) is counted by the parent."""
    fixable = sorted((f for f in found if f.code in FIXABLE_CODES), key=Finding.sort_key)
    if not fixable or not _summary_shown(args):
        return
    try:
        source = _fix_input(path, run_config, args)
        if source is not None and source[1].cache:  # else nothing remembers them for the parent
            remembered_fix_counts(path, *source, fixable, _count_fixes)
    except Exception:  # noqa: BLE001 - only a head start: the parent counts what is not remembered
        pass


def _check_held(path: str, run_config: Config, args: argparse.Namespace, offers: List[Offer]) -> None:
    """Check ahead the files of the run this worker has analyzed for an importer (only with
    the cache: a result is how the other worker learns of it)."""
    config = _checked_config(path, run_config, args) if path != STDIN else None
    if config is None or not config.cache or "keydrift.analysis.project" not in sys.modules:
        return  # no index, so nothing analyzed: a warm worker need not load the analysis to know
    try:
        check_held_analyses(config, lambda absolute: _check_ahead(absolute, run_config, args, offers))
    except Exception:  # noqa: BLE001 - only a head start: the file's own turn checks it as usual
        pass


def _check_ahead(absolute: str, run_config: Config, args: argparse.Namespace, offers: List[Offer]) -> None:
    """Check a file of the run before its turn (``projectwide.check_held_analyses``)."""
    path = _RUN_FILES.get(absolute)
    if path is not None:
        _check_offering(path, run_config, args, offers)


def _check_one(path: str, run_config: Config, args: argparse.Namespace) -> List[Finding]:
    if path == STDIN:
        return _check_stdin(args)
    config = _checked_config(path, run_config, args)
    return [] if config is None else check_file(path, config)


def _checked_config(path: str, run_config: Config, args: argparse.Namespace) -> Optional[Config]:
    """The configuration a file is checked under, None when it excludes the file: ``--config``
    for every file, else each file's own project's (the nearest pyproject.toml)."""
    if args.config:
        return run_config
    config = _file_config(path, run_config, args)
    return None if is_excluded(path, config) else config


_WARNED: Set[str] = set()


def _warn_about(config: Config) -> None:
    """Say once per configuration file what in it points nowhere."""
    if config.config_file in _WARNED:
        return
    _WARNED.add(config.config_file)
    from keydrift.analysis.boundary import boundary_warnings  # the analysis: not on a warm run's path

    for warning in boundary_warnings(config):
        print(warning, file=sys.stderr)


def _report_broken_subtrees(files: Sequence[str]) -> None:
    """Say once per file which subtree configurations are broken (the files under them are
    checked with the configuration above: see ``_file_config``)."""
    said: Set[str] = set()
    for directory in sorted({os.path.dirname(os.path.abspath(f)) for f in files if f != STDIN}):
        config, broken = load_config_or_parent(directory)
        if broken is not None and broken.path not in said:
            said.add(broken.path)
            print(fallback_note(broken, config), file=sys.stderr)


# Each directory's configuration in this run (``run_check`` empties it): the cache, the check
# and the registry each ask for every file's.
_DIRECTORY_CONFIGS: Dict[Tuple[str, ...], Config] = {}


def _file_config(path: str, run_config: Config, args: argparse.Namespace) -> Config:
    """The nearest pyproject.toml's configuration, for the file's own project; a broken one
    below the run's gives way to the configuration above it. The same for every file of a
    directory."""
    key = (os.path.dirname(os.path.abspath(path)), run_config.root, repr(
        (args.select, args.ignore, getattr(args, "no_cache", False))))
    if key not in _DIRECTORY_CONFIGS:
        _DIRECTORY_CONFIGS[key] = _directory_config(path, run_config, args)
    return _DIRECTORY_CONFIGS[key]


def _directory_config(path: str, run_config: Config, args: argparse.Namespace) -> Config:
    config = _with_command_line_codes(load_config_or_parent(path)[0], args)
    if config.config_file and not args.quiet:
        _warn_about(config)
    if not config.config_file:
        root = root_without_pyproject(path, run_config.root)
        if root:
            config = replace(config, root=root)
    return config


def _run_config(args: argparse.Namespace) -> Config:
    config = load_config_file(args.config) if args.config else load_config(os.getcwd())
    return _with_command_line_codes(config, args)


def _with_command_line_codes(config: Config, args: argparse.Namespace) -> Config:
    select = parse_code_list(args.select, "--select") if args.select is not None else None
    ignore = parse_code_list(args.ignore, "--ignore") if args.ignore is not None else None
    config = with_overrides(config, select=select, ignore=ignore)
    return replace(config, cache=False) if getattr(args, "no_cache", False) else config


def _check_stdin(args: argparse.Namespace) -> List[Finding]:
    name = args.stdin_filename or STDIN
    config = _run_config(args)
    if args.stdin_filename and not args.config:
        config = _file_config(args.stdin_filename, config, args)
    return check_data(sys.stdin.buffer.read(), name, config)


def check_file(path: str, config: Config) -> List[Finding]:
    try:
        data = read_source(path)
    except OSError as exc:
        return [_unreadable(path, exc)]
    return check_data(data, path, config)


def check_data(data: bytes, path: str, config: Config) -> List[Finding]:
    between_files()
    return _reported(check_cached(data, path, config), data, config)


def _reported(findings: List[Finding], data: bytes, config: Config) -> List[Finding]:
    """What is reported of a file's findings: its configuration's codes, no ``# noqa`` line."""
    return apply_noqa([f for f in findings if finding_allowed(f, config)], data)


def read_source(path: str) -> bytes:
    return _read_regular_file(path)[0]


def _read_regular_file(path: str) -> Tuple[bytes, os.stat_result]:
    """The file's bytes, and its status before they were read."""
    # A FIFO or device named *.py would block or never end: only regular files are read.
    status = os.stat(path)
    if not stat.S_ISREG(status.st_mode):
        raise OSError("not a regular file")
    with open(path, "rb") as handle:
        return handle.read(), status


def _unreadable(path: str, exc: OSError) -> Finding:
    reason = exc.strerror or str(exc)
    if os.path.islink(path) and not os.path.exists(path):
        reason = "broken symbolic link"
    message = f"{PARSE_ERROR} cannot read the file: {reason}"
    return Finding(code=PARSE_ERROR, message=message, path=path, line=1, col=0, end_line=1,
                   fingerprint=(PARSE_ERROR, "cannot read the file"))


def _write_report(report: str, output: Optional[str]) -> None:
    if not output:
        sys.stdout.write(report)
        sys.stdout.flush()
        return
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(report)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None


def _summary(findings: Sequence[Finding], files: Sequence[str], baselined: int = 0) -> str:
    checked = _plural(len(files), "file")
    if not files:
        return "keydrift: no Python files found"
    new = "new " if baselined else ""
    if not findings:
        summary = f"keydrift: no {new}findings in {checked}"
    else:
        with_findings = len({f.path for f in findings})
        summary = f"keydrift: {_plural(len(findings), new + 'finding')} in {with_findings} of {checked}"
    if baselined:
        summary += f" ({baselined} in the baseline, not shown)"
    return summary


def _plural(count: int, noun: str, plural: str = "") -> str:
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


# --- --fix, --unsafe-fixes, --diff, --fix-only, --add-noqa (keydrift.fixes) ------------------

def _add_fix_options(check: argparse.ArgumentParser) -> None:
    group = check.add_argument_group("fixes")
    group.add_argument("--fix", action="store_true", help="apply the safe fixes")
    group.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix, --diff or --fix-only: apply the unsafe fixes too")
    group.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff and change nothing (implies --fix-only)")
    group.add_argument("--fix-only", action="store_true",
                       help="apply fixes and report nothing of what remains")
    group.add_argument("--add-noqa", action="store_true",
                       help="add '# noqa: KDxxx' to every reported statement")


def _fixing(args: argparse.Namespace) -> bool:
    return bool(args.fix or args.diff or args.fix_only or args.add_noqa)


def run_fix_modes(files: Sequence[str], missing: Sequence[str], config: Config, args: argparse.Namespace) -> int:
    from keydrift.fixes.run import run_fixes

    if args.add_noqa and (args.fix or args.diff or args.fix_only):
        raise UsageError("--add-noqa cannot be combined with --fix, --diff or --fix-only")
    if args.write_baseline:
        raise UsageError("--write-baseline cannot be combined with fixing")
    from keydrift.rules import REGISTRY_RULES

    checked = files
    registry_codes = {rule.CODE for rule in REGISTRY_RULES}
    registry: Dict[str, List[Finding]] = {}
    if STDIN not in files:
        # the whole run's check first, in parallel (it fills the results cache): only files with
        # findings are fixed, each re-read and re-checked (a cache hit when it did not change)
        found = check_files(files, config, args)
        registry = _by_path([finding for finding in found if finding.code in registry_codes])
        files = [path for path in files if path in {f.path for f in found}]
    report = run_fixes(files, lambda path: _fix_input(path, config, args),
                       lambda data, path, file_config: _fix_check(data, path, file_config, registry),
                       unsafe=args.unsafe_fixes, diff=args.diff, noqa=args.add_noqa)
    only_fixes = args.diff or args.fix_only or args.add_noqa or STDIN in files
    findings = [] if only_fixes else _with_project_findings(report.findings, registry_codes, checked, config, args)
    if findings and args.baseline:
        findings, _ = new_findings(findings, args.baseline)
    if not only_fixes:
        _write_report(FORMATTERS[args.format](findings, ReportContext(root=config.root)), args.output)
    if not args.quiet:
        print(_fix_summary(report, files, args), file=sys.stderr)
    if missing:
        return 2
    if args.diff:
        return 1 if report.changed_files else 0
    return 1 if findings and not args.exit_zero else 0


def _fix_check(data: bytes, path: str, config: Config, registry: Dict[str, List[Finding]]) -> List[Finding]:
    """A version of a file's findings while it is fixed: the project registry's findings of the
    run's check too while it is still the file on disk (their positions hold for it only)."""
    findings = check_data(data, path, config)
    if registry.get(path) and _unchanged_on_disk(path, data):
        findings += registry[path]
    return findings


def _unchanged_on_disk(path: str, data: bytes) -> bool:
    try:
        return read_source(path) == data
    except OSError:
        return False


def _with_project_findings(findings: List[Finding], registry_codes: Set[str], files: Sequence[str], config: Config,
                           args: argparse.Namespace) -> List[Finding]:
    """What remains after fixing: each file's own findings, and the registry's, computed again
    from the files as they are now."""
    own = [f for f in findings if f.code not in registry_codes]
    return sorted(own + _project_findings(files, config, args), key=Finding.sort_key)


def _summary_shown(args: argparse.Namespace) -> bool:
    """Whether the run ends with the summary lines (the findings' count and the fixable hint)."""
    return not args.quiet and (args.format == "text" or bool(args.output))


def _print_fixable(findings: Sequence[Finding], config: Config, args: argparse.Namespace) -> None:
    """Say how many findings ``--fix`` (and ``--unsafe-fixes``) would repair, as ruff does.
    Only the files with a finding some fix handles are looked at, and a file's counts come from
    the results cache while it and its findings are unchanged (counting parses it with libcst)."""
    fixable = [f for f in findings if f.code in FIXABLE_CODES]
    if not fixable or STDIN in {f.path for f in findings}:
        return
    safe = unsafe = 0
    for path, group in sorted(_by_path(fixable).items()):
        try:
            found = _fix_input(path, config, args)
        except OSError:
            continue
        if found is not None:
            counts = remembered_fix_counts(path, *found, group, _count_fixes)
            safe, unsafe = safe + counts[0], unsafe + counts[1]
    if safe:
        print(f"keydrift: {safe} fixable with --fix" + (f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""),
              file=sys.stderr)
    elif unsafe:
        print(f"keydrift: {unsafe} fixable with --fix --unsafe-fixes", file=sys.stderr)


def _by_path(findings: Sequence[Finding]) -> Dict[str, List[Finding]]:
    grouped: Dict[str, List[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.path, []).append(finding)
    return grouped


def _count_fixes(source: bytes, findings: Sequence[Finding], config: Config) -> Tuple[int, int]:
    from keydrift.fixes.run import fix_counts  # libcst: only when the counts are not cached

    return fix_counts(source, findings, config)


def _fix_input(path: str, run_config: Config, args: argparse.Namespace) -> Optional[Tuple[bytes, Config]]:
    """A file's source and configuration, None when it is excluded (raises OSError)."""
    if path == STDIN:
        config = _run_config(args)
        if args.stdin_filename and not args.config:
            config = _file_config(args.stdin_filename, config, args)
        return sys.stdin.buffer.read(), config
    config = run_config if args.config else _file_config(path, run_config, args)
    if not args.config and is_excluded(path, config):
        return None
    return read_source(path), config


def _fix_summary(report: object, files: Sequence[str], args: argparse.Namespace) -> str:
    fixed, changed = report.fixed, report.changed_files  # type: ignore[attr-defined]
    if args.add_noqa:
        return f"keydrift: added {_plural(fixed, 'noqa comment')} in {_plural(changed, 'file')}"
    verb = "would fix" if args.diff else "fixed"
    summary = f"keydrift: {verb} {_plural(fixed, 'finding')} in {_plural(changed, 'file')}"
    summary += f", {len(report.findings)} remaining"  # type: ignore[attr-defined]
    hidden = report.hidden  # type: ignore[attr-defined]
    if hidden and not args.unsafe_fixes:
        summary += f" ({_plural(hidden, 'more fix', 'more fixes')} with --unsafe-fixes)"
    return summary


# --- --changed-since -------------------------------------------------------------------------

def only_changed_files(files: Sequence[str], revision: str) -> List[str]:
    """The files changed since ``revision``: committed since, staged, unstaged or untracked."""
    if revision.startswith("-"):
        raise UsageError(f"--changed-since: {revision!r} is not a revision")
    changed = changed_paths(revision)
    return [path for path in files if path == STDIN or os.path.realpath(path) in changed]


def changed_paths(revision: str) -> Set[str]:
    """Real paths of the files that differ from ``revision`` in the working tree, and of the
    untracked files (not ignored) of the repository holding the working directory."""
    top = _git("rev-parse", "--show-toplevel").strip()
    if not top:
        raise UsageError("--changed-since: not inside a git work tree")
    differing = _git("-C", top, "diff", "--name-only", "--no-renames", "-z", revision, "--",
                     revision=revision)
    untracked = _git("-C", top, "ls-files", "--others", "--exclude-standard", "-z")
    names = [n for n in (differing + untracked).split("\0") if n]
    return {os.path.realpath(os.path.join(top, name)) for name in names}


def _git(*arguments: str, revision: str = "") -> str:
    import subprocess  # only for --changed-since

    try:
        done = subprocess.run(["git", *arguments], capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--changed-since: cannot run git: {exc}") from None
    if done.returncode != 0:
        reason = _first_line(done.stderr.decode("utf-8", "replace")) or f"git exited with {done.returncode}"
        subject = f"--changed-since {revision}" if revision else "--changed-since"
        raise UsageError(f"{subject}: {reason}")
    return done.stdout.decode("utf-8", "surrogateescape")


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else ""


# --- finding the files ----------------------------------------------------------------------

def collect_files(paths: Sequence[str], config: Config) -> Tuple[List[str], List[str]]:
    """The files to check, each once, in a deterministic order, and the paths that do not
    exist. Directories are walked for *.py and *.pyi; ``exclude`` applies to every path."""
    files: List[str] = []
    missing: List[str] = []
    for given in paths:
        if given == STDIN:
            files.append(STDIN)
        elif not os.path.lexists(given):
            missing.append(given)
        elif os.path.isdir(given):
            files.extend(walk(given, config))
        elif not is_excluded(given, config):
            files.append(clean_path(given))
    return _unique(files), missing


def walk(top: str, config: Config) -> Iterator[str]:
    return _walk_files(top, config, _report_walk_error)


def _report_walk_error(exc: OSError) -> None:
    print(f"keydrift: cannot list {exc.filename}: {exc.strerror or exc}", file=sys.stderr)


def clean_path(path: str) -> str:
    """The path as the user would write it: ``./app/models.py`` -> ``app/models.py``."""
    return os.path.normpath(path)


def _unique(paths: List[str]) -> List[str]:
    seen = set()
    out = []
    for path in paths:
        key = path if path == STDIN else os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


# --- rules, explain -------------------------------------------------------------------------

def run_rules(args: argparse.Namespace) -> int:
    from keydrift.rules import ALL_RULES  # the registry loads the analysis: only for these commands

    name_width = max(len(rule.NAME) for rule in ALL_RULES)
    for rule in ALL_RULES:
        print(f"{rule.CODE}  {rule.NAME:<{name_width}}  {rule.SUMMARY}")
    return 0


def run_explain(args: argparse.Namespace) -> int:
    from keydrift.rules import find_rule
    from keydrift.testing import report_example

    rule = find_rule(args.code.strip())
    if rule is None:
        raise UsageError(f"unknown rule {args.code!r}; `keydrift rules` lists them")
    from keydrift.fixes import fix_documentation

    fix = fix_documentation(rule.CODE)
    documentation = rule.documentation(report_example) + (f"\n{fix}" if fix else "")
    sys.stdout.write(f"{rule.CODE} ({rule.NAME})\n\n{documentation}")
    return 0


# --- lsp ----------------------------------------------------------------------------------

def run_lsp(args: argparse.Namespace) -> int:
    from keydrift.lsp import build_server

    try:
        server = build_server()  # imports pygls, an optional dependency
    except ImportError as exc:
        raise UsageError(f"`keydrift lsp` needs pygls ({exc}); install it with: "
                         "pip install 'keydrift[lsp]'") from None
    server.start_io()
    return 0


# --- terminal plumbing ----------------------------------------------------------------------

def _tolerate_unencodable_output() -> None:
    # Messages quote source text; a terminal that cannot encode it must not crash the run.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
