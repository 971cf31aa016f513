"""Parsing a module safely: CPython's parser first, then libcst.

CPython's parser bounds nesting with clean errors, where libcst's native parser can overflow its
stack and take the whole process (a user's flake8 run) down; and code CPython rejects is not
Python keydrift should analyze (libcst accepts some of it).
"""

from __future__ import annotations

import ast
import warnings
from typing import Callable, Optional, Tuple, Union

import libcst as cst

from keydrift.source import decode_source
from keydrift.timing import stage


class SourceRejected(Exception):
    """CPython does not accept the source. ``nested`` when it gave up on its depth."""

    def __init__(self, message: str, line: int = 1, nested: bool = False) -> None:
        super().__init__(message)
        self.line = line
        self.nested = nested


def check_with_python(text: Union[str, bytes], filename: str = "<unknown>") -> ast.Module:
    """CPython's tree of the source; ``SourceRejected`` when CPython does not accept it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the analyzed code's invalid escapes are not ours to report
            return ast.parse(text, filename=filename)
    except SyntaxError as exc:
        line = max(1, exc.lineno or 1)
        raise SourceRejected(f"{exc.msg} (line {line})", line) from None
    except (RecursionError, MemoryError):
        raise SourceRejected("it is nested too deeply", nested=True) from None
    except ValueError as exc:
        raise SourceRejected(str(exc)) from None


def parse_python(text: Union[str, bytes], filename: str = "<unknown>") -> cst.Module:
    """The libcst tree of a module CPython accepts; ``SourceRejected`` otherwise."""
    return parse_both(text, filename)[0]


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
        if reduced is not decoded:
            try:
                with stage("libcst parse"):
                    return cst.parse_module(reduced), tree
            except cst.ParserSyntaxError:
                pass  # the gate must never cost a file its analysis: parse it whole
    with stage("libcst parse"):
        return cst.parse_module(text), tree
