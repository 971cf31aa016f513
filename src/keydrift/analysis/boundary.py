"""The boundary: the module(s) where values become records, and where normalization belongs.

Configured: ``[tool.keydrift] boundary`` lists module names or globs (``app.models``,
``app.repositories.*``); a module matches a name when it is that module or inside it.
Zero-config: an entity's boundary is the module that defines it (its model class, found
through the imports), plus methods of model, manager, queryset and repository classes, plus a
normalizer's own module.
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from typing import Iterable, List, Optional, Tuple

from keydrift.frameworks import transforms
from keydrift.patterns import lazy

# Classes whose methods are part of the boundary (they are where records are made).
BOUNDARY_CLASS = lazy(r"(Model|Manager|QuerySet|Queryset|Repository|Repo|Store|DAO|Dao|Mapper|Document)$")


_TEST_PACKAGES = frozenset({"tests", "test", "testing"})


def is_test_module(module_name: str) -> bool:
    """Test code: a module inside a ``tests``/``test``/``testing`` package, or named ``test_*``,
    ``*_tests``, ``tests`` or ``conftest`` (``*_test`` is left out: ``connection_test`` is as
    often a feature as a test). Tests build fixtures and expected values by hand; where they
    normalize, or what schema they declare, is no part of where records are made."""
    parts = module_name.split(".") if module_name else []
    if not parts:
        return False
    return any(p in _TEST_PACKAGES for p in parts[:-1]) or is_test_file(module_name) or parts[-1] == "conftest"


def is_test_file(module_name: str) -> bool:
    """A module of tests itself (``test_*``, ``*_tests``, ``tests``), not a helper of the tests
    (``conftest``, ``tests/factories.py``): what test runners collect, and no module imports
    in practice."""
    last = module_name.rpartition(".")[2]
    return last.startswith("test_") or last.endswith("_tests") or last == "tests"


_MIGRATION_PACKAGES = frozenset({"migrations", "alembic"})


def is_migration_module(module_name: str) -> bool:
    """Schema/data-migration code: a module inside a ``migrations``/``alembic`` package. A data
    migration rewrites keys on purpose, once (renaming duplicates, backfilling a canonical form):
    a read by the old key and a write of the new one is what it is for."""
    parts = module_name.split(".") if module_name else []
    return any(p in _MIGRATION_PACKAGES for p in parts[:-1])


def module_matches(module_name: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        if fnmatchcase(module_name, pattern) or module_name == pattern or module_name.startswith(pattern + "."):
            return True
    return False


def is_known_normalizer(name: str, configured: Iterable[str]) -> bool:
    short = name.rsplit(".", 1)[-1]
    if any(name == c or short == c.rsplit(".", 1)[-1] for c in configured):
        return True
    return bool(transforms.NORMALIZER_NAME.search(short)) or short in transforms.FUNCTIONS and \
        transforms.FUNCTIONS[short] == "normalizer"


def missing_boundaries(config: object) -> List[str]:
    """Configured boundary modules (names, not globs) that no file under the project root is."""
    root = getattr(config, "root", "") or "."
    missing = []
    for name in getattr(config, "boundary", ()):
        if any(ch in name for ch in "*?["):
            continue
        relative = name.replace(".", os.sep)
        candidates = [os.path.join(root, base, relative) for base in ("", "src")]
        if not any(os.path.isfile(c + ".py") or os.path.isfile(os.path.join(c, "__init__.py")) or os.path.isdir(c)
                   for c in candidates):
            missing.append(name)
    return missing


def boundary_warnings(config: object) -> List[str]:
    shown = getattr(config, "config_file", "") or "pyproject.toml"
    return [f"keydrift: warning: {shown}: [tool.keydrift] boundary {name!r} names no module of the project "
            f"(no {name.replace('.', '/')}.py under {getattr(config, 'root', '.')})"
            for name in missing_boundaries(config)]


class Boundary:
    """Answers "is this code inside the boundary for this entity?" for one module."""

    def __init__(self, analysis: object) -> None:
        self.analysis = analysis
        self.config = analysis.config  # type: ignore[attr-defined]
        self.module_name: str = analysis.module_name  # type: ignore[attr-defined]

    @property
    def configured(self) -> bool:
        return bool(self.config.boundary)

    def defining_module(self, entity: str) -> Optional[str]:
        """The module an entity's class comes from, when the project defines it."""
        if entity in self.analysis.classes:  # type: ignore[attr-defined]
            return self.module_name or "this module"
        imported = self.analysis.imports.get(entity)  # type: ignore[attr-defined]
        if imported is None or not imported[1]:
            return None
        module = imported[0]
        project = self.analysis.project  # type: ignore[attr-defined]
        if project is None:
            return None
        path = project.path_for(module, self.analysis.file)  # type: ignore[attr-defined]
        if path is None:
            return None  # a library's model (django.contrib.auth): no project boundary
        if os.path.abspath(path) == os.path.abspath(self.analysis.file):  # type: ignore[attr-defined]
            return self.module_name or "this module"
        return module

    def inside(self, function: str, entity: str = "") -> Optional[bool]:
        """True inside the boundary, False outside, None when it cannot be told (zero-config
        and the entity's home is unknown)."""
        if self.configured:
            return module_matches(self.module_name, self.config.boundary)
        if self._in_boundary_class(function):
            return True
        home = self.defining_module(entity) if entity else None
        if home is None:
            return None
        return home == (self.module_name or "this module")

    def describe(self, entity: str = "") -> str:
        if self.configured:
            return ", ".join(self.config.boundary)
        home = self.defining_module(entity) if entity else None
        return home or "the module that defines the model"

    def _in_boundary_class(self, function: str) -> bool:
        unit = self.analysis.units.get(function)  # type: ignore[attr-defined]
        class_name = unit.class_name if unit is not None else ""
        return bool(class_name) and (bool(BOUNDARY_CLASS.search(class_name)) or class_name in self._model_classes())

    def _model_classes(self) -> Tuple[str, ...]:
        info = self.analysis.info  # type: ignore[attr-defined]
        return tuple(entity for entity, _ in info.rewrites) + tuple(info.primary_keys)
