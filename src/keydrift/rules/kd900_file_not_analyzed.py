"""KD900/KD901: a file keydrift could not parse or analyze (reported by the CLI only)."""

from __future__ import annotations

from typing import Iterator

from keydrift.rules._base import Rule


class FileNotParsed(Rule):
    """A file could not be decoded or parsed, so it was not analyzed.

    ## What it does
    Reports, once per file and on line 1, a file that is not valid Python keydrift can parse:
    a syntax error, an undecodable encoding, NUL bytes.

    ## Why is this bad?
    Keys read or written in that file are invisible to every other rule.

    ## Example
    A file with a syntax error, or Python 2 code such as `print "x"`.

    ## Use instead
    Fix the file, or list it under `exclude` in `[tool.keydrift]`.

    ## Known problems
    The flake8 plugin does not report it: flake8 already reports E999 for such files.
    """

    CODE = "KD900"
    NAME = "file-not-parsed"
    SUMMARY = "file could not be decoded or parsed"

    def check(self, facts: object) -> Iterator[object]:
        return iter(())  # produced by the engine, not from facts


class FileNotAnalyzed(Rule):
    """A file was parsed but could not be analyzed within keydrift's limits.

    ## What it does
    Reports, once per file and on line 1, a file whose analysis exceeded a limit (nesting
    deeper than the recursion budget) or hit an internal error.

    ## Why is this bad?
    Keys read or written in that file are invisible to every other rule.

    ## Example
    A generated module with thousands of nested expressions.

    ## Use instead
    Exclude generated files under `exclude` in `[tool.keydrift]`; report an internal error.

    ## Known problems
    The flake8 plugin does not report it.
    """

    CODE = "KD901"
    NAME = "file-not-analyzed"
    SUMMARY = "file could not be analyzed"

    def check(self, facts: object) -> Iterator[object]:
        return iter(())
