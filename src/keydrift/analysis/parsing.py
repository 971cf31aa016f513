"""Parsing a module safely: CPython's parser first, then libcst.

CPython's parser bounds nesting with clean errors, where libcst's native parser can overflow its
stack and take the whole process (a user's flake8 run) down; and code CPython rejects is not
Python keydrift should analyze (libcst accepts some of it).
"""

from __future__ import annotations

import ast
from typing import Tuple, Union

import libcst as cst

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


def parse_both(text: Union[str, bytes], filename: str = "<unknown>") -> Tuple[cst.Module, ast.Module]:
    """Both trees: libcst's for the analysis, CPython's for cheap line numbers."""
    with stage("ast parse"):
        tree = check_with_python(text, filename)
    with stage("libcst parse"):
        return cst.parse_module(text), tree
