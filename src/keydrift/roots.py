"""Where a project's root is, found from a file's directory: the nearest ``pyproject.toml``
above it (not past a repository root), else the first directory above its packages. Kept apart
from the configuration (``config``), which reads that file: the early reader
(``early_reading``) finds the root before anything else of keydrift's is imported."""

from __future__ import annotations

import os
from typing import Optional

PYPROJECT = "pyproject.toml"
# A repository root ends the upward search: a pyproject.toml above it belongs to someone else.
REPOSITORY_MARKERS = (".git", ".hg")


def find_pyproject(directory: str) -> Optional[str]:
    current = os.path.abspath(directory)
    while True:
        candidate = os.path.join(current, PYPROJECT)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(current)
        if parent == current or any(
                os.path.exists(os.path.join(current, m)) for m in REPOSITORY_MARKERS):
            return None
        current = parent


def import_root(directory: str) -> str:
    """Without a pyproject.toml, the project root is the first directory above the file's
    packages (the one without ``__init__.py``), so ``app/tasks.py`` is module ``app.tasks``."""
    current = os.path.abspath(directory)
    while os.path.isfile(os.path.join(current, "__init__.py")):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current
