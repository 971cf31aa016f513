"""Module names and imports: the one place that turns a path into a module name, resolves a
relative import, and lists what a module's imports bind: at its top level (``bindings``), inside
its functions and blocks or by ``importlib.import_module("a.b")`` (``inner_bindings``), and, read
from its text without parsing it, every module it imports (``imported_modules``).

A bound name is ``(local, module, symbol)``: ``import a.b as c`` binds ``("c", "a.b", "")``,
``import a.b`` binds ``("a.b", "a.b", "")``, ``from ..c import d as e`` in package ``app.x``
binds ``("e", "app.c", "d")``. A relative import that climbs above the top package keeps its
dotted spelling (``"..c"``), which names no module.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

from keydrift.patterns import lazy
from keydrift.types import Config

Bound = Tuple[str, str, str]  # local name, module, symbol ("" when the name is the module)

# Directories that hold a project's packages without being one ("src" layout).
SOURCE_ROOTS = ("", "src")


# (path, root, the working directory when either is relative) -> ``module_name_for``'s answer:
# asked for every file by several rules and the index, and read from the names alone
_MODULE_NAMES: Dict[Tuple[str, str, str], Tuple[str, bool]] = {}


def module_name_for(path: str, root: str) -> Tuple[str, bool]:
    """``app/repo.py`` under ``root`` -> ("app.repo", False); a package's ``__init__`` -> True;
    ("", False) outside ``root`` or for a file that is not Python."""
    key = (path, root, "" if os.path.isabs(path) and os.path.isabs(root) else os.getcwd())
    found = _MODULE_NAMES.get(key)
    if found is None:
        found = _MODULE_NAMES[key] = _module_name_from_names(path, root)
    return found


def _module_name_from_names(path: str, root: str) -> Tuple[str, bool]:
    try:
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:
        return "", False
    if relative.startswith(".."):
        return "", False
    parts = relative.replace(os.sep, "/").split("/")
    if parts and parts[0] in SOURCE_ROOTS[1:]:
        parts = parts[1:]
    if not parts or not parts[-1].endswith((".py", ".pyi")):
        return "", False
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def import_name_for(path: str, root: str) -> Tuple[str, bool]:
    """The name Python imports a file under ``root`` by: a module inside a package is named from
    the top of its chain of packages (directories with ``__init__.py``), so
    ``svc/app/repo.py`` with ``svc/app/__init__.py`` and no ``svc/__init__.py`` is ``app.repo``,
    whatever folder above it the project is checked from; a module outside any package keeps
    its name from ``root`` (``module_name_for``). The project index and a module's own check
    name it the same way, so an analysis made for an importer serves the module's check."""
    name, is_package = module_name_for(path, root)
    if not name:
        return name, is_package
    absolute = os.path.abspath(path)
    top = _package_top(os.path.dirname(absolute), os.path.abspath(root))
    if top is None:
        return name, is_package
    relative = os.path.relpath(absolute, os.path.dirname(top)).replace(os.sep, "/")
    parts = relative.rsplit(".", 1)[0].split("/")
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


# directory -> the top package directory above it (None: not a package, or the root itself)
_PACKAGE_TOPS: Dict[Tuple[str, str], Optional[str]] = {}


def _package_top(directory: str, root: str) -> Optional[str]:
    """The outermost directory of ``directory``'s chain of packages, strictly below ``root``
    (a root that is itself a package names its modules from the root, as before)."""
    key = (directory, root)
    if key not in _PACKAGE_TOPS:
        top = None
        current = directory
        while current != root and os.path.isfile(os.path.join(current, "__init__.py")):
            top = current
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        _PACKAGE_TOPS[key] = top
    return _PACKAGE_TOPS[key]


def forget_packages() -> None:
    """Forget the package layout seen (a long-lived process whose files changed)."""
    _PACKAGE_TOPS.clear()


def module_name_of(path: str, config: Config) -> str:
    """The module name of a file under the project root (``app/models.py`` -> ``app.models``);
    outside it, the dotted path as given, so that test and migration packages are still told
    by their directories."""
    if not path:
        return ""
    name, _ = module_name_for(path, config.root or ".")
    if name:
        return name
    relative = re.sub(r"\.pyi?$", "", path)
    parts = [p for p in re.split(r"[\\/]+", relative) if p and p != "."]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def absolute_module(target: str, level: int, module_name: str, is_package: bool) -> Optional[str]:
    """The module ``from <level dots><target> import ...`` names inside ``module_name``;
    None when the dots climb above the top package."""
    if level == 0:
        return target
    parts = module_name.split(".") if module_name else []
    if not is_package:
        parts = parts[:-1]
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def from_import_base(relative: str, module_name: str, is_package: bool) -> str:
    """The module ``from <relative> import ...`` names inside ``module_name`` (``relative`` as
    written, its leading dots included), kept as written when the dots climb above the top
    package; "" for ``from . import x`` at the top."""
    target = relative.lstrip(".")
    base = absolute_module(target, len(relative) - len(target), module_name, is_package)
    return target if base is None else base


def bindings(module: ast.Module, module_name: str = "", is_package: bool = False) -> Iterator[Bound]:
    """What the top-level imports of a module bind (``from x import *`` binds nothing)."""
    for statement in module.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            yield from _statement_bindings(statement, module_name, is_package)


def inner_bindings(module: ast.Module, module_name: str = "", is_package: bool = False) -> Iterator[Bound]:
    """What the imports ``bindings`` does not read bind: import statements inside functions and
    methods (``from app.store import save_user`` to break an import cycle) and inside
    module-level blocks (``try``, ``if TYPE_CHECKING``), and a module imported by a literal name
    (``auth = importlib.import_module("app.auth")`` binds ``("auth", "app.auth", "")``). An
    import in a class's own body is left out: what it binds is an attribute of the class. Only
    the statements are gone through, by the fields that hold them (it is asked of every module
    analyzed)."""
    pending: List[Tuple[List[ast.stmt], str]] = [(module.body, _TOP)]
    while pending:
        body, place = pending.pop()
        for statement in body:
            kind = type(statement)
            if kind in _IMPORT_STATEMENTS:
                if place == _INNER:
                    yield from _statement_bindings(statement, module_name, is_package)
            elif kind is ast.Assign:
                named = module_named(statement) if place != _CLASS_BODY else None  # type: ignore[arg-type]
                if named is not None:
                    yield named
            elif kind is ast.ClassDef:
                pending.append((statement.body, _CLASS_BODY))  # type: ignore[attr-defined]
            elif kind in _COMPOUND_STATEMENTS:
                inner = _INNER if place != _CLASS_BODY or kind in _FUNCTIONS else _CLASS_BODY
                for field in _STATEMENT_FIELDS:
                    held = getattr(statement, field, None)
                    if held:
                        pending.append((held, inner))
                for part in getattr(statement, "handlers", ()) or getattr(statement, "cases", ()):
                    pending.append((part.body, inner))


# Where ``inner_bindings`` meets a statement: the module's top level, inside a function or a
# block, directly in a class's body
_TOP, _INNER, _CLASS_BODY = "top", "inner", "class"
_FUNCTIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
_IMPORT_STATEMENTS = frozenset({ast.Import, ast.ImportFrom})
# The fields of a compound statement that hold statements (``handlers`` and ``cases`` hold parts
# that do)
_STATEMENT_FIELDS = ("body", "orelse", "finalbody")
# Statements that hold statements (other than a class)
_COMPOUND_STATEMENTS = frozenset(getattr(ast, name) for name in (
    "FunctionDef", "AsyncFunctionDef", "If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar",
    "Match") if hasattr(ast, name))
# The functions that import a module by its name
_IMPORTING_FUNCTIONS = ("import_module", "importlib.import_module")


def _statement_bindings(statement: ast.stmt, module_name: str, is_package: bool) -> Iterator[Bound]:
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            yield (alias.asname if alias.asname is not None else alias.name), alias.name, ""
    elif isinstance(statement, ast.ImportFrom) and not any(alias.name == "*" for alias in statement.names):
        target = statement.module or ""
        base = absolute_module(target, statement.level, module_name, is_package)
        if base is None:  # above the top package: kept as written, never a real module
            base = "." * statement.level + target
        for alias in statement.names:
            yield (alias.asname if alias.asname is not None else alias.name), base, alias.name


def module_named(statement: ast.Assign) -> Optional[Bound]:
    """``name = importlib.import_module("a.b")`` (or ``import_module(...)``): the name bound to
    module ``a.b``; None for any other assignment, a relative or computed name."""
    value = statement.value
    if len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name) \
            or not isinstance(value, ast.Call) or len(value.args) != 1 or value.keywords:
        return None
    func = value.func
    called = func.id if isinstance(func, ast.Name) else \
        f"{func.value.id}.{func.attr}" if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
    argument = value.args[0]
    if called not in _IMPORTING_FUNCTIONS or not isinstance(argument, ast.Constant) \
            or not isinstance(argument.value, str) or not _DOTTED.fullmatch(argument.value):
        return None
    return statement.targets[0].id, argument.value, ""


# Import statements read from a module's text, without parsing it (``imported_modules``): a
# ``from`` import with its names on one line, continued with backslashes, or in parentheses
# over several lines; a plain ``import`` with its modules on one line or continued.
_FROM_STATEMENT = lazy(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|(?:[^\n\\]|\\\n)*)", re.M)
_PLAIN_STATEMENT = lazy(r"^[ \t]*import[ \t]+((?:[^\n\\]|\\\n)*)", re.M)
_IMPORT_WORD = lazy(r"\bimport\b")
# A call importing a module by its name (``importlib.import_module(...)``, ``__import__(...)``),
# and its first argument when it is a module's absolute name written as a literal
_IMPORTING_CALL = lazy(r"\b(?:import_module|__import__)[ \t]*\(")
_LITERAL_MODULE = lazy(r"""[ \t]*(?:"([A-Za-z_][\w.]*)"|'([A-Za-z_][\w.]*)')[ \t]*[,)]""")
_DOTTED = lazy(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_NAME = lazy(r"[A-Za-z_]\w*|\*")


class FromImport(NamedTuple):
    """``from <relative> import <names>`` as read from a text: the module as written (its
    leading dots included) and the names taken, None when they could not all be read (a comment
    inside the parentheses, a continuation that stops short)."""

    relative: str
    names: Optional[List[str]]


def from_imports(text: str) -> Iterator[Tuple[FromImport, Tuple[int, int]]]:
    """Every ``from`` import statement of the text (a function's, a ``TYPE_CHECKING`` block's),
    with its span: names on one line, continued with backslashes, or in parentheses over
    several lines."""
    for match in _FROM_STATEMENT.finditer(text):
        yield FromImport(match.group(1), _names_taken(match.group(2), text, match.end())), match.span()


def plain_imports(text: str) -> Iterator[Tuple[Optional[List[str]], Tuple[int, int]]]:
    """Every plain ``import a.b, c`` statement of the text, with its span: the modules listed
    (None when they could not all be read)."""
    for match in _PLAIN_STATEMENT.finditer(text):
        yield _modules_listed(match.group(1), text, match.end()), match.span()


def dynamic_imports(text: str) -> Iterator[Tuple[str, Tuple[int, int]]]:
    """Every call of the text that imports a module by its absolute name written as a literal
    (``importlib.import_module("app.auth")``, ``__import__("app.auth")``), with its span. A
    relative or computed name (``import_module(f".{name}", __package__)``) is left out: what a
    module so imported does is never reached from the importer (``inner_bindings`` binds no
    name to it either), so it cannot make the importer read or write a key."""
    if "import_module" not in text and "__import__" not in text:
        return
    for match in _IMPORTING_CALL.finditer(text):
        literal = _LITERAL_MODULE.match(text, match.end())
        name = (literal.group(1) or literal.group(2)) if literal is not None else None
        if name and _DOTTED.fullmatch(name):
            yield name, (match.start(), literal.end())  # type: ignore[union-attr]


def imported_modules(text: str, module_name: str, is_package: bool) -> Optional[Tuple[str, ...]]:
    """Every module an import statement anywhere in the text (a function's, a ``TYPE_CHECKING``
    block's) may bring a function from: ``import a.b`` -> a, a.b; ``from .c import d`` in
    package ``app.x`` -> app.c, app.c.d (``d`` may be a submodule). None when the text says
    ``import`` outside a statement read here (a ``;`` or ``if x: import y`` line, a string, an
    unusual spelling): what the module imports is then not known from its text. A module
    imported by a literal name (``importlib.import_module("app.auth")``) is imported."""
    found: Dict[str, None] = {}
    spans = []
    for statement, span in from_imports(text):
        if statement.names is None:
            return None
        base = from_import_base(statement.relative, module_name, is_package)
        for name in ([base] if base else []) + [f"{base}.{n}" if base else n for n in statement.names if n != "*"]:
            found[name] = None
        spans.append(span)
    for modules, span in plain_imports(text):
        if modules is None:
            return None
        for dotted in modules:
            parts = dotted.split(".")
            for end in range(1, len(parts) + 1):
                found[".".join(parts[:end])] = None
        spans.append(span)
    for dynamic, _ in dynamic_imports(text):
        parts = dynamic.split(".")
        for end in range(1, len(parts) + 1):
            found[".".join(parts[:end])] = None
    if not _every_import_read(text, spans):
        return None
    return tuple(found)


def _names_taken(written: str, text: str, end: int) -> Optional[List[str]]:
    """The names of ``from x import <written>`` (``a``, ``b as c``, ``*``); None when the
    statement goes on past what was read or holds something else (a comment in parentheses)."""
    if written.startswith("("):
        if "#" in written or not _line_ends(text, end, comment=True):
            return None
        written = written[1:-1]
    elif not _line_ends(text, end):
        return None
    return _items(written, _NAME)


def _modules_listed(written: str, text: str, end: int) -> Optional[List[str]]:
    """The modules of ``import <written>`` (``a.b``, ``a.b as c``); None as ``_names_taken``."""
    return _items(written, _DOTTED) if _line_ends(text, end) else None


def _items(written: str, form: "re.Pattern[str]") -> Optional[List[str]]:
    """The names of an import's comma-separated items (``name`` or ``name as alias``), a
    trailing comment left out; None when one is not of ``form``."""
    found = []
    for item in written.split("#", 1)[0].replace("\\\n", " ").split(","):
        item = item.strip()
        if not item:
            continue
        name = item.split(" as ")[0].strip()
        if not form.fullmatch(name):
            return None
        found.append(name)
    return found or None


def _line_ends(text: str, end: int, comment: bool = False) -> bool:
    """Whether the statement read up to ``end`` ends its line there (after a closing
    parenthesis, a comment may follow); a backslash that continues nothing stops a read short."""
    if not comment:
        return end >= len(text) or text[end] == "\n"
    line_end = text.find("\n", end)
    rest = (text[end:] if line_end < 0 else text[end:line_end]).strip()
    return not rest or rest.startswith("#")


def _every_import_read(text: str, spans: list) -> bool:
    """Whether every ``import`` word of the text is inside a statement read, or on a line that is
    a comment."""
    for match in _IMPORT_WORD.finditer(text):
        where = match.start()
        if any(start <= where < end for start, end in spans):
            continue
        line_start = text.rfind("\n", 0, where) + 1
        if not text[line_start:where].lstrip().startswith("#"):
            return False
    return True
