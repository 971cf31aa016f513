"""The command line's fixing modes: ``--fix``, ``--unsafe-fixes``, ``--diff``, ``--fix-only``
and ``--add-noqa``, over the files of one run.

A file is written only when a fix applied, and only if it is still what was read at the start
(a file changed on disk during the run is left alone and said so). Standard input's fixed text
goes to standard output.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, TextIO, Tuple

from keydrift.fixes import fix_for
import libcst as cst

from keydrift.fixes._apply import analyzed, candidate_fixes, fix_source
from keydrift.fixes._base import Fix
from keydrift.fixes._document import Document
from keydrift.fixes.noqa import add_noqa
from keydrift.fixes.text import unified_diff
from keydrift.types import Config, Finding

STDIN = "-"

# path -> (its source, its configuration), None when the path is excluded; raises OSError
Reader = Callable[[str], Optional[Tuple[bytes, Config]]]
# (source, path, configuration) -> the findings to report
Checker = Callable[[bytes, str, Config], List[Finding]]


@dataclass
class FixReport:
    """What a run of the fixes did: findings left, fixes applied, files changed, unsafe fixes
    left out."""

    findings: List[Finding] = field(default_factory=list)  # what remains to report
    fixed: int = 0  # fixes applied (or, with --diff, that would be), noqa comments added
    changed_files: int = 0
    hidden: int = 0  # unsafe fixes left out without --unsafe-fixes


def run_fixes(files: Sequence[str], read: Reader, check: Checker, *, unsafe: bool, diff: bool,
              noqa: bool, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> FixReport:
    out, err = out or sys.stdout, err or sys.stderr
    report = FixReport()
    for path in files:
        try:
            found = read(path)
        except OSError as exc:
            print(f"keydrift: cannot read {path}: {exc.strerror or exc}", file=err)
            continue
        if found is None:
            continue
        source, config = found
        _fix_file(path, source, config, check, report, unsafe=unsafe, diff=diff, noqa=noqa, out=out, err=err)
    report.findings.sort(key=Finding.sort_key)
    return report


def _fix_file(path: str, source: bytes, config: Config, check: Checker, report: FixReport, *,
              unsafe: bool, diff: bool, noqa: bool, out: TextIO, err: TextIO) -> None:
    findings = check(source, path, config)
    if noqa:
        fixed, applied = add_noqa(source, findings)
        findings = check(fixed, path, config) if applied else findings
    else:
        outcome = fix_source(source, findings, lambda data: check(data, path, config), fix_for, config, unsafe)
        if not outcome.converged:
            print(f"keydrift: warning: the fixes of {path} did not settle after repeated rounds", file=err)
        fixed, applied, findings = outcome.source, outcome.applied, outcome.findings
        if not unsafe:
            report.hidden += _unsafe_fixes_available(fixed, findings, config)
    if path == STDIN and not diff:
        _to_stdout(out, fixed)  # the filter's output, changed or not
    if fixed != source:
        if diff:
            out.write(unified_diff(source, fixed, path))
        elif not _write(path, source, fixed, out, err):
            report.findings.extend(check(source, path, config))
            return
        report.changed_files += 1
        report.fixed += applied
    report.findings.extend(findings)


def _to_stdout(out: TextIO, source: bytes) -> None:
    out.flush()
    stream = getattr(out, "buffer", None)
    if stream is not None:
        stream.write(source)
        stream.flush()
    else:
        out.write(source.decode("utf-8", "surrogateescape"))


def _write(path: str, original: bytes, fixed: bytes, out: TextIO, err: TextIO) -> bool:
    if path == STDIN:
        return True
    try:
        with open(path, "rb") as handle:
            now = handle.read()
        if now != original:
            print(f"keydrift: {path} changed during the run; not fixed", file=err)
            return False
        with open(path, "wb") as handle:
            handle.write(fixed)
    except OSError as exc:
        print(f"keydrift: cannot write {path}: {exc.strerror or exc}", file=err)
        return False
    return True


def _unsafe_fixes_available(source: bytes, findings: Sequence[Finding], config: Config) -> int:
    """How many of the remaining findings an unsafe fix would repair (for the summary's hint)."""
    return sum(1 for fix in _fixes_of(source, findings, config) if not fix.safe)


def fix_counts(source: bytes, findings: Sequence[Finding], config: Config) -> Tuple[int, int]:
    """How many of one file's ``findings`` have a safe fix, and how many an unsafe one (a hint
    for the summary: the file is parsed once more, with libcst)."""
    fixes = _fixes_of(source, findings, config)
    safe = sum(1 for fix in fixes if fix.safe)
    return safe, len(fixes) - safe


def _fixes_of(source: bytes, findings: Sequence[Finding], config: Config) -> List[Fix]:
    if not analyzed(findings):
        return []
    try:
        document = Document(source)
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return []
    return candidate_fixes(document, findings, fix_for, config)
