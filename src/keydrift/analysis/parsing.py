"""Parsing a module safely: CPython's parser first, then libcst.

CPython's parser bounds nesting with clean errors, where libcst's native parser can overflow its
stack and take the whole process (a user's flake8 run) down; and code CPython rejects is not
Python keydrift should analyze (libcst accepts some of it).
"""

from __future__ import annotations

import ast
import warnings
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, Tuple, Union

import libcst as cst

from keydrift.analysis.newer_syntax import describe, newer_syntax
from keydrift.source import decode_source
from keydrift.timing import stage


# What one file may ask of libcst (~60,000 typical lines; blanked function bodies don't count).
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


def _skip_validation(node: cst.CSTNode) -> None:
    return None


@contextmanager
def _without_node_validation() -> Iterator[None]:
    """libcst validates every node it builds (a regex per whitespace node: about a fifth of a
    parse); nodes built by its parser from source CPython accepted are valid already."""
    original = cst.CSTNode.__dict__.get("__post_init__")
    if original is None:
        yield
        return
    cst.CSTNode.__post_init__ = _skip_validation  # type: ignore[assignment]
    try:
        yield
    finally:
        cst.CSTNode.__post_init__ = original  # type: ignore[assignment]


def _parse_module(text: Union[str, bytes]) -> cst.Module:
    with stage("libcst parse"), _without_node_validation():
        return cst.parse_module(text)


def parse_both(text: Union[str, bytes], filename: str = "<unknown>",
               gate: Optional[Callable[[str, ast.Module], str]] = None) -> Tuple[cst.Module, ast.Module]:
    """Both trees: libcst's for the analysis, CPython's for cheap line numbers. ``gate`` may
    blank out parts of the text libcst parses (keeping every line where it is)."""
    with stage("ast parse"):
        tree = check_with_python(text, filename)
    if gate is not None:
        with stage("gate"):
            decoded = decode_source(text) if isinstance(text, bytes) else text
            reduced = gate(decoded, tree)
        _check_size(reduced)
        if reduced is not decoded:
            try:
                return _parse_module(reduced), tree
            except cst.ParserSyntaxError:
                pass  # the gate must never cost a file its analysis: parse it whole
    else:
        _check_size(text)
    return _parse_module(text), tree


def _check_size(text: Union[str, bytes]) -> None:
    """A generated module of 100,000 lines would take libcst most of a minute, which nothing can
    interrupt: past this size a file is reported as not analyzed instead."""
    if len(text) > MAX_PARSED_CHARACTERS:
        raise SourceRejected(f"it has more than {MAX_PARSED_CHARACTERS:,} characters of code to analyze "
                             "(generated code?)", beyond_limits=True)
