"""Parsing a module safely with CPython's parser: it bounds nesting with clean errors, and code
it rejects is not Python keydrift should analyze."""

from __future__ import annotations

import ast
import warnings
from typing import Optional, Union

from keydrift.analysis.newer_syntax import describe, newer_syntax
from keydrift.source import decode_source
from keydrift.timing import stage


# What one file may ask of the analysis (~60,000 typical lines).
MAX_PARSED_CHARACTERS = 2_000_000


class SourceRejected(Exception):
    """CPython does not accept the source; ``beyond_limits`` when it is Python but too deep or too
    large to analyze (a could-not-analyze finding, not a could-not-parse one)."""

    def __init__(self, message: str, line: int = 1, beyond_limits: bool = False) -> None:
        super().__init__(message)
        self.line = line
        self.beyond_limits = beyond_limits


def check_with_python(text: Union[str, bytes], filename: str = "<unknown>") -> ast.Module:
    """CPython's tree of the source; ``SourceRejected`` when CPython does not accept it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the analyzed code's invalid escapes are not ours to report
            return ast.parse(text, filename=filename)
    except SyntaxError as exc:
        line = max(1, exc.lineno or 1)
        raise SourceRejected(_syntax_error_message(text, exc.msg, line), line) from None
    except (RecursionError, MemoryError):
        raise SourceRejected("it is nested too deeply", beyond_limits=True) from None
    except ValueError as exc:
        raise SourceRejected(str(exc)) from None


def _syntax_error_message(text: Union[str, bytes], message: str, line: int) -> str:
    """CPython's message, and the Python version the file needs when it is newer syntax."""
    decoded = decode_source(text) if isinstance(text, bytes) else text
    newer = newer_syntax(decoded.splitlines(), line, message)
    said = f"{message} (line {line})"
    return f"{said}: it {describe(*newer)}" if newer else said


def parse(text: Union[str, bytes], filename: str = "<unknown>", tree: Optional[ast.Module] = None) -> ast.Module:
    """The tree the analysis reads: CPython's (``tree`` when the caller parsed already, as
    flake8 does), when the file is within the size limit."""
    if tree is None:
        with stage("ast parse"):
            tree = check_with_python(text, filename)
    _check_size(len(text))
    return tree


def _check_size(characters: int) -> None:
    """A generated module of 100,000 lines would take the analysis most of a minute, which
    nothing can interrupt: past this size a file is reported as not analyzed instead."""
    if characters > MAX_PARSED_CHARACTERS:
        raise SourceRejected(f"it has more than {MAX_PARSED_CHARACTERS:,} characters of code to analyze "
                             "(generated code?)", beyond_limits=True)
