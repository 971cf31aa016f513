"""Module-level names through which an importer can reach none of the module's functions.

``from app.config import (OUTPUT_DIR, TIMEOUT, fetch)`` takes two settings and a function. The
prefilter asks whether what a module takes from a project module reads or writes a key
(``engine._taken_names_touch_keys``): a function by its own summary, a class by its methods'. A
name that is neither used to mean "any function of the module" (a variable may hold one, an
instance of one of its classes, or what one of its functions returned), so one setting taken
from a module of settings summarized every function it has. A variable is **inert** when the
module binds it only by assignments whose values name none of its functions or classes, nor a
lambda, nor another of its variables that is not inert: a literal, a path, a value read from the
environment, a call of what it imports. Through an inert name the importer holds data, never a
way into the module's code.

What keeps a name from being inert, by construction (the answer only ever narrows the old one):
it is a function or a class, it is bound another way (an import, a loop or ``with`` target, a
walrus, ``global`` in a function), or the module defines ``__getattr__`` (PEP 562: any name may
be computed). The names a value names are read from its source text, every identifier in it
(those inside its strings too, and a ``lambda`` or ``:=`` anywhere in it makes it not inert):
more than it names, never less, and a regular expression over a settings module's big literal
costs a fraction of walking its nodes. Each name is judged when an importer takes it.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Set

from keydrift.analysis.tree import segment, source_lines
from keydrift.patterns import lazy

_ASSIGNMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign)
_TRY = tuple(getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name))
_BLOCKS = (ast.If, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, *_TRY)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_IDENTIFIER = lazy(r"(?!\d)\w+")
# a string (triple-quoted first) or a comment, whichever starts first: the text left is the code
_STRING_OR_COMMENT = lazy(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\[\s\S])*"'
                          r"|'(?:[^'\\\n]|\\[\s\S])*'|#[^\n]*")
_F_STRING = lazy(r"(?<![\w.])[rRbBuU]?[fF][rR]?['\"]")
_BEFORE_A_QUOTE = ("f'", 'f"', "F'", 'F"', "r'", 'r"', "R'", 'R"')  # how ``_F_STRING``'s matches end
_GLOBAL = lazy(r"\bglobal\b")


class InertNames:
    """The inert variables of a module (see above), each judged when asked (``name in inert``).
    What it keeps of the module is the identifiers of each variable's values, not its tree or
    text: an export made on demand lets those go when it is closed."""

    def __init__(self, module: ast.Module, lines: Sequence[str]) -> None:
        values: Dict[str, List[ast.expr]] = {}
        self.imported: Set[str] = set()  # other modules' names: a value made from them is not this module's code
        self.bound_otherwise: Set[str] = set()  # its functions and classes, loop targets...: never inert
        for statement in _module_level(module.body):
            if isinstance(statement, _ASSIGNMENTS):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for name in [name for target in targets for name in _target_names(target, self.bound_otherwise)]:
                    values.setdefault(name, []).append(statement.value)  # (None: annotated, no value)
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                self.imported.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
            else:
                self.bound_otherwise.update(_other_bindings(statement))
        text = "".join(lines)
        if "global" in text and _GLOBAL.search(text):  # (the word looked for first: the pattern is slow)
            self.bound_otherwise.update(_declared_global(module))
        with source_lines(lines):
            self.named = {name: _names_in(items) for name, items in values.items()}
        self.judged: Dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._inert(name)

    def all(self) -> FrozenSet[str]:
        """Every inert variable of the module (what its export keeps)."""
        return frozenset(name for name in self.named if self._inert(name))

    def _inert(self, name: str) -> bool:
        known = self.judged.get(name)
        if known is not None:
            return known
        named = self.named.get(name)
        self.judged[name] = False  # while judged: a variable made from itself, through others, is not inert
        inert = named is not None and name not in self.bound_otherwise and name not in self.imported \
            and "__getattr__" not in self.bound_otherwise \
            and not any(other in self.bound_otherwise or (other in self.named and not self._inert(other))
                        for other in named)
        self.judged[name] = inert
        return inert


def inert_names(module: ast.Module, lines: Sequence[str]) -> FrozenSet[str]:
    """The module-level variables of ``module`` (of source ``lines``) that are inert."""
    return InertNames(module, lines).all()


def _module_level(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at module level: the body, and the bodies of its blocks (not those of
    functions and classes, which are bindings themselves)."""
    for statement in body:
        yield statement
        if isinstance(statement, _BLOCKS):
            yield from _module_level(statement.body)
            yield from _module_level(statement.orelse if hasattr(statement, "orelse") else [])
            if isinstance(statement, _TRY):
                for handler in statement.handlers:
                    yield from _module_level(handler.body)
                yield from _module_level(statement.finalbody)


def _target_names(target: ast.AST, excluded: Set[str]) -> Iterator[str]:
    """The names an assignment target binds as a whole value; the names of a target written
    into (``X[k] = f``, ``X.attr = f``) are excluded: what they hold is no longer one value."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element, excluded)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value, excluded)
    else:
        root = target
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if isinstance(root, ast.Name):
            excluded.add(root.id)


def _other_bindings(statement: ast.stmt) -> Iterator[str]:
    """Names a module-level statement other than an assignment or an import binds: a
    definition's name; loop and ``with`` targets, handlers' names, walrus targets. Of a block
    whose bodies ``_module_level`` goes through, only its own parts; of any other statement
    (a ``match``), every name stored anywhere in it."""
    if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
        yield statement.name
        return
    if isinstance(statement, _TRY):
        parts: List[ast.AST] = [handler.type for handler in statement.handlers if handler.type is not None]
        yield from (handler.name for handler in statement.handlers if handler.name)
    elif isinstance(statement, (ast.For, ast.AsyncFor)):
        parts = [statement.target, statement.iter]
    elif isinstance(statement, (ast.If, ast.While)):
        parts = [statement.test]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        parts = list(statement.items)
    else:
        parts = [statement]
    for part in parts:
        for node in ast.walk(part):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                yield node.id
            elif isinstance(node, ast.ExceptHandler) and node.name:
                yield node.name
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                yield node.name


def _declared_global(module: ast.Module) -> Iterator[str]:
    """Names a function or class body declares ``global``: it may bind them to anything. A
    ``global`` is a statement, so only statements are gone through, not the expressions in them
    (most of a tree's nodes: walking them all cost more than the rest of this module)."""
    pending: List[ast.stmt] = list(module.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, ast.Global):
            yield from statement.names
        for field in ("body", "orelse", "finalbody"):
            pending.extend(getattr(statement, field, None) or ())
        for handler in getattr(statement, "handlers", None) or ():
            pending.extend(handler.body)
        for case in getattr(statement, "cases", None) or ():
            pending.extend(case.body)


def _names_in(values: List[Optional[ast.expr]]) -> Optional[FrozenSet[str]]:
    """The names the values load: every identifier of their source text outside strings and
    comments (inside ``source_lines``), of an f-string's value those its tree loads; None when
    one holds a lambda or a walrus (a function made there, or a name bound in passing), or its
    text cannot be read."""
    found: Set[str] = set()
    for value in values:
        if value is None:
            continue
        text = segment(value)
        if text is None:
            return None
        if _may_hold_an_f_string(text):
            words = _loaded_names(value)
        else:
            words = _IDENTIFIER.findall(_STRING_OR_COMMENT.sub(" ", text))
            if ":=" in text:
                words = None
        if words is None or "lambda" in words:
            return None
        found.update(words)
    return frozenset(found)


def _may_hold_an_f_string(text: str) -> bool:
    """``_F_STRING`` finds a prefix: the character before its quote is f or r, looked for first
    (the pattern itself is tried at every position of a settings module's big literal)."""
    return any(quoted in text for quoted in _BEFORE_A_QUOTE) and _F_STRING.search(text) is not None


def _loaded_names(value: ast.expr) -> Optional[List[str]]:
    names = []
    for node in ast.walk(value):
        if isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, (ast.Lambda, ast.NamedExpr)):
            return None
    return names
