"""Applying fixes to a module: disjoint fixes at once, the result checked, until stable.

Every round parses the current source, computes the fixes of its findings, applies those whose
edits do not overlap, checks that the result compiles (a fix whose result does not is dropped)
and re-checks the result. It stops when no fix applies, when a result was seen before, or after
``MAX_ROUNDS``. Fixes and their order depend only on the source and the findings, so the same
input always gives the same output, and a second run changes nothing.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from keydrift.fixes._base import Fix, Replacement
from keydrift.fixes._document import Document
from keydrift.types import Config, Finding, Span

MAX_ROUNDS = 10
# Findings that say the file was not analyzed: such a file is never touched.
NOT_ANALYZED = ("KD900", "KD901")

FixFinder = Callable[[Finding, Document, Config], Optional[Fix]]


@dataclass
class Outcome:
    """A file's fixes applied: the new source, what is left to report, and whether applying
    the fixes again changed nothing more."""

    source: bytes  # the fixed source; the input itself when nothing was applied
    findings: List[Finding]  # what remains to report in ``source``
    applied: int = 0  # fixes applied
    converged: bool = True
    fixes: List[Fix] = field(default_factory=list)


def analyzed(findings: Sequence[Finding]) -> bool:
    return not any(f.code in NOT_ANALYZED for f in findings)


def fix_source(source: bytes, findings: List[Finding], check: Callable[[bytes], List[Finding]],
               find_fix: FixFinder, config: Config, unsafe: bool) -> Outcome:
    """Apply fixes to ``source`` until it is stable; ``check`` gives a source's findings."""
    outcome = Outcome(source, findings)
    if not analyzed(findings):
        return outcome
    seen: Set[bytes] = {source}
    for _ in range(MAX_ROUNDS):
        fixed, applied = fix_once(outcome.source, outcome.findings, find_fix, config, unsafe)
        if not applied:
            return outcome
        found = check(fixed)
        if not analyzed(found) or fixed in seen:
            return outcome  # a fix that breaks the analysis, or goes round in circles, is dropped
        seen.add(fixed)
        outcome.source, outcome.findings = fixed, found
        outcome.applied += len(applied)
        outcome.fixes.extend(applied)
    outcome.converged = False
    return outcome


def fix_once(source: bytes, findings: Sequence[Finding], find_fix: FixFinder, config: Config,
             unsafe: bool) -> Tuple[bytes, List[Fix]]:
    """One round: the source with every applicable, non-overlapping fix applied."""
    try:
        document = Document(source)
    except Exception:  # noqa: BLE001 - what libcst cannot parse is not fixed
        return source, []
    fixes = disjoint(document, [f for f in candidate_fixes(document, findings, find_fix, config)
                                if f.safe or unsafe])
    if not fixes:
        return source, []
    together = render(document, fixes)
    if together is not None:
        return together, fixes
    for fix in fixes:  # one of them breaks the code: apply the first one that does not
        alone = render(document, [fix])
        if alone is not None:
            return alone, [fix]
    return source, []


def candidate_fixes(document: Document, findings: Sequence[Finding], find_fix: FixFinder,
                    config: Config) -> List[Fix]:
    out: List[Fix] = []
    for finding in sorted(findings, key=Finding.sort_key):
        try:
            fix = find_fix(finding, document, config)
        except Exception:  # noqa: BLE001 - a bug in one fix must not stop the run
            fix = None
        if fix is not None and fix not in out:
            out.append(fix)
    return out


def disjoint(document: Document, fixes: Sequence[Fix]) -> List[Fix]:
    """The fixes, in order, leaving out any whose edits overlap an earlier one's."""
    taken: List[Span] = []
    out: List[Fix] = []
    for fix in fixes:
        spans = [document.span(node) for node, _ in fix.edits]
        if not spans or any(s is None for s in spans):
            continue
        if any(_overlap(s, t) for s in spans for t in taken):  # type: ignore[arg-type]
            continue
        taken.extend(spans)  # type: ignore[arg-type]
        out.append(fix)
    return out


def _overlap(a: Span, b: Span) -> bool:
    return (a.line, a.col) < (b.end_line, b.end_col) and (b.line, b.col) < (a.end_line, a.end_col)


def render(document: Document, fixes: Sequence[Fix]) -> Optional[bytes]:
    """The module with ``fixes`` applied, or None if the result does not compile (or a fix's
    edit is one libcst cannot apply: a bug in a fix drops the fix, never stops the run)."""
    replacements: Dict[cst.CSTNode, Replacement] = {node: new for fix in fixes for node, new in fix.edits}
    try:
        module = _with_imports(document.module.visit(_Replace(replacements)), fixes)
        out = module.bytes
    except Exception:  # noqa: BLE001 - see above
        return None
    return out if compiles(out) else None


def _with_imports(module: cst.Module, fixes: Sequence[Fix]) -> cst.Module:
    added = [i for fix in fixes for i in fix.imports]
    unused = [i for fix in fixes for i in fix.unused_imports]
    if added:
        context = CodemodContext()
        for module_name, name in added:
            AddImportsVisitor.add_needed_import(context, module_name, name)
        module = AddImportsVisitor(context).transform_module(module)
    if unused:
        context = CodemodContext()
        for module_name, name in unused:
            RemoveImportsVisitor.remove_unused_import(context, module_name, name)
        module = _no_blank_start(RemoveImportsVisitor(context).transform_module(module))
    return module


def _no_blank_start(module: cst.Module) -> cst.Module:
    """A removed first import leaves the blank lines that followed it at the top: drop them."""
    if module.header or not module.body:
        return module
    first = module.body[0]
    lines = list(getattr(first, "leading_lines", ()))
    while lines and lines[0].comment is None:
        lines.pop(0)
    return module.with_changes(body=[first.with_changes(leading_lines=lines), *module.body[1:]])


def compiles(source: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes and the like are the user's business
        try:
            compile(source, "<fixed>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: Dict[cst.CSTNode, Replacement]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Replacement:  # type: ignore[override]
        return self.replacements.get(original_node, updated_node)
