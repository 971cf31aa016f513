"""Module names and imports: the one place that turns a path into a module name, resolves a
relative import, and lists what a module's top-level imports bind.

A bound name is ``(local, module, symbol)``: ``import a.b as c`` binds ``("c", "a.b", "")``,
``import a.b`` binds ``("a.b", "a.b", "")``, ``from ..c import d as e`` in package ``app.x``
binds ``("e", "app.c", "d")``. A relative import that climbs above the top package keeps its
dotted spelling (``"..c"``), which names no module.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Dict, Iterator, Optional, Tuple

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


def bindings(module: ast.Module, module_name: str = "", is_package: bool = False) -> Iterator[Bound]:
    """What the top-level imports of a module bind (``from x import *`` binds nothing)."""
    for statement in module.body:
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


