"""``--add-noqa``: silence every reported finding with ``# noqa: KDxxx`` on its statement.

For adopting keydrift on a large codebase (next to the baseline): an existing ``# noqa: CODES``
on the statement gets the code appended, a bare ``# noqa`` already silences it, and otherwise
the first line of the statement a comment can end gets ``  # noqa: KDxxx``.
"""

from __future__ import annotations

from typing import List, Sequence, Tuple

from keydrift.fixes._apply import analyzed
from keydrift.fixes.text import decoded, encoded
from keydrift.noqa import noqa_insertion
from keydrift.types import Finding


def add_noqa(source: bytes, findings: Sequence[Finding]) -> Tuple[bytes, int]:
    """The source with a noqa for each finding, and how many were added. A file that was not
    analyzed (KD900/KD901) is left as it is."""
    if not findings or not analyzed(findings):
        return source, 0
    text, encoding = decoded(source)
    added = 0
    for finding in sorted(findings, key=Finding.sort_key):
        insertion = noqa_insertion(text, finding.line, max(finding.line, finding.end_line), finding.code)
        if insertion is not None:
            line, column, new_text = insertion
            offset = line_offsets(text)[line - 1] + column
            text = text[:offset] + new_text + text[offset:]
            added += 1
    return (encoded(text, encoding), added) if added else (source, 0)


def line_offsets(text: str) -> List[int]:
    """The offset in ``text`` where each line starts (line ends as tokenize counts them)."""
    offsets = [0]
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\r" and text[index + 1:index + 2] == "\n":
            index += 1
        if char in "\r\n":
            offsets.append(index + 1)
        index += 1
    return offsets
