"""KD900/KD901: a file keydrift could not parse or analyze (reported by the CLI only)."""

from __future__ import annotations

from typing import Iterator

from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid


class FileNotParsed(Rule):
    """A file could not be decoded or parsed, so it was not analyzed.

    ## What it does
    Reports, once per file, a file that is not valid Python keydrift can parse: a syntax error
    (on its line), an undecodable encoding or NUL bytes (on line 1). A file without any database
    or normalizer vocabulary is not parsed and not reported, nor is test code that defines no
    normalizer (no other rule reports in test code). Code written for a newer Python
    than the one keydrift runs on (a `match` statement on 3.9, `except*` before 3.11, `type X =`
    and `def f[T]()` or f-strings nesting quotes before 3.12, type parameter defaults before
    3.13, template strings before 3.14) says so: "uses syntax of Python 3.12 (type parameters);
    keydrift runs on Python 3.11".

    ## Why is this bad?
    Keys read or written in that file are invisible to every other rule.

    ## Known problems
    The flake8 plugin does not report it: flake8 already reports E999 for such files.
    """

    CODE = "KD900"
    NAME = "file-not-parsed"
    SUMMARY = "file could not be decoded or parsed"

    INVALID = (
        Invalid("""
            def visit(url):
                print "visiting", url  # expect: KD900
                return Page.objects.get(url=url)
            """, note="Python 2 code:"),
    )
    VALID = (
        Valid("""
            def visit(url):
                print("visiting", url)
                return Page.objects.get(url=url)
            """, note="Fix the file, or list it under `exclude` in `[tool.keydrift]`:"),
    )

    def check(self, facts: object) -> Iterator[object]:
        return iter(())  # produced by the engine, not from facts


class FileNotAnalyzed(Rule):
    """A file was parsed but could not be analyzed within keydrift's limits.

    ## What it does
    Reports, once per file and on line 1, a file whose analysis exceeded a limit (more than
    2,000,000 characters of code, nesting deeper than the recursion budget, 30 s of processor
    time for one file), or hit an internal error.

    ## Why is this bad?
    Keys read or written in that file are invisible to every other rule.

    ## Known problems
    The flake8 plugin does not report it.
    """

    CODE = "KD901"
    NAME = "file-not-analyzed"
    SUMMARY = "file could not be analyzed"

    INVALID = (
        Invalid(lambda: "def visit(url):  # expect: KD901\n    return Page.objects.get(url=url)\n\n\n"
                        "BLOB = '" + "x" * 2_000_000 + "'\n",
                shown="A generated module of more than 2,000,000 characters (here a function that "
                      "reads a record and a large string literal)."),
    )
    VALID = (
        Valid(lambda: "def visit(url):\n    return Page.objects.get(url=url)\n\n\nBLOB = '" + "x" * 1000 + "'\n",
              shown="The same module with a string literal of 1,000 characters is analyzed. Exclude "
                    "generated files under `exclude` in `[tool.keydrift]`; report an internal error."),
    )

    def check(self, facts: object) -> Iterator[object]:
        return iter(())
