"""``# noqa`` comments, as flake8 reads them.

``# noqa`` silences every finding, ``# noqa: KD101,KD102`` (or ``# noqa:KD1``) those whose
code starts with one of the listed codes. A comment counts anywhere in the reported
statement, from ``Finding.line`` to ``Finding.end_line``. Only real comments count: the
source is tokenized, so ``"# noqa"`` inside a string does nothing; when the file cannot be
tokenized (it then usually cannot be parsed either) a per-line search is the fallback.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple, Union

from keydrift.patterns import lazy
from keydrift.source import SourceError, decode_source
from keydrift.types import Finding

# flake8's pattern: codes are letters then digits, so ``# noqa: see issue 12`` is a bare noqa.
NOQA = lazy(r"# noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)

NOQA_WORD = lazy(r"noqa", re.IGNORECASE)
ALL_CODES: FrozenSet[str] = frozenset({""})  # the empty prefix matches every code

NoqaMap = Dict[int, FrozenSet[str]]  # line -> code prefixes silenced on it
_LINE_BREAK = lazy(r"\r\n|\r|\n")  # the line ends LSP and tokenize count


def noqa_lines(source: Union[str, bytes]) -> NoqaMap:
    """The ``# noqa`` comments of a module: line number -> silenced code prefixes."""
    text = _as_text(source)
    if not NOQA_WORD.search(text):
        return {}  # most files: no need to tokenize them
    try:
        comments = list(_comments(text))
    except (tokenize.TokenError, SyntaxError):
        comments = list(enumerate(text.splitlines(), start=1))
    out: NoqaMap = {}
    for line, comment in comments:
        codes = _parse_comment(comment)
        if codes is not None:
            out[line] = out.get(line, frozenset()) | codes
    return out


def is_suppressed(finding: Finding, noqa: NoqaMap) -> bool:
    last = max(finding.line, finding.end_line)
    for line in range(finding.line, last + 1):
        codes = noqa.get(line)
        if codes and any(finding.code.startswith(prefix) for prefix in codes):
            return True
    return False


def apply_noqa(findings: Iterable[Finding], source: Union[str, bytes]) -> List[Finding]:
    """The findings not silenced by a ``# noqa`` comment in ``source``."""
    findings = list(findings)
    if not findings:
        return findings
    text = _as_text(source)
    if not _noqa_within(findings, text):
        return findings  # no need to tokenize the file
    noqa = noqa_lines(text)
    return [f for f in findings if not is_suppressed(f, noqa)]


def _noqa_within(findings: List[Finding], text: str) -> bool:
    """Whether the word noqa is on a line some finding spans: by the line numbers of
    ``tokenize`` (lines end at "\n") or of the fallback (``splitlines``), whichever is larger."""
    spans = [(f.line, max(f.line, f.end_line)) for f in findings]
    for match in NOQA_WORD.finditer(text):
        first = text.count("\n", 0, match.start()) + 1
        last = len((text[:match.start()] + "x").splitlines())
        if any(start <= last and first <= end for start, end in spans):
            return True
    return False


def _as_text(source: Union[str, bytes]) -> str:
    try:
        return decode_source(source)
    except SourceError:
        # Undecodable: still look for comments in what can be read.
        return source.decode("utf-8", errors="replace") if isinstance(source, bytes) else source


def _comments(text: str) -> Iterable[tuple]:
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def _parse_comment(comment: str) -> Union[FrozenSet[str], None]:
    match = NOQA.search(comment)
    if match is None:
        return None
    if not match.group("codes"):
        return ALL_CODES
    return frozenset(c.upper() for c in re.split(r"[,\s]+", match.group("codes")) if c)


# --- adding a code to a statement's # noqa (the editor's quick fix, --add-noqa) -------------

Insertion = Tuple[int, int, str]  # 1-based line, code-point column, text to insert


def source_lines(text: str) -> List[str]:
    return _LINE_BREAK.split(text)


def noqa_insertion(text: str, first_line: int, last_line: int, code: str) -> Optional[Insertion]:
    """Where to add ``code`` to a ``# noqa`` so that the statement spanning ``first_line`` to
    ``last_line`` is silenced for it: an existing ``# noqa: CODES`` in the statement gets
    ``,CODE``; otherwise the first line a comment can end gets ``  # noqa: CODE``. None when
    the statement is already silenced for ``code``."""
    lines = source_lines(text)
    last_line = min(max(first_line, last_line), len(lines))
    comments = _comment_positions(text)
    statement = range(first_line, last_line + 1)
    noqas = {n: m for n in statement if n in comments for m in [NOQA.search(comments[n][1])] if m}
    for match in noqas.values():
        if not match.group("codes") or any(code.startswith(c) for c in _codes(match)):
            return None
    if noqas:
        number = min(noqas)
        return number, comments[number][0] + noqas[number].end(), f",{code}"
    number = _line_for_comment(text, lines, first_line, last_line)
    return number, len(lines[number - 1].rstrip()), f"  # noqa: {code}"


def _codes(match: "re.Match[str]") -> List[str]:
    return [c.upper() for c in re.split(r"[,\s]+", match.group("codes")) if c]


def _comment_positions(text: str) -> Dict[int, Tuple[int, str]]:
    """line -> (column, text) of its comment; empty when the text does not tokenize."""
    out: Dict[int, Tuple[int, str]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                out[token.start[0]] = (token.start[1], token.string)
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


def _line_for_comment(text: str, lines: List[str], first: int, last: int) -> int:
    """The first line of the statement whose end is not inside a multi-line string and not a
    backslash continuation; the statement's last line otherwise (a comment may always end it)."""
    inside = _lines_inside_tokens(text)
    for number in range(first, last + 1):
        if number not in inside and not lines[number - 1].rstrip().endswith("\\"):
            return number
    return last


def _lines_inside_tokens(text: str) -> Set[int]:
    inside: Set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] < token.end[0] and token.type not in (tokenize.NL, tokenize.NEWLINE):
                inside.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return inside
