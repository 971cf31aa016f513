"""Finding a project's Python files: shared by the CLI's walk and the project registry (which
the flake8 plugin and the editor server use too, so this module imports no front end)."""

from __future__ import annotations

import os
from typing import Callable, Iterator, Optional

from keydrift.config import is_excluded
from keydrift.types import Config

PYTHON_SUFFIXES = (".py", ".pyi")
# Directories never walked into: tooling state, virtual environments, build output.
# Hidden directories (.git, .tox, .venv, .keydrift_cache) and any holding a pyvenv.cfg are
# skipped too.
SKIPPED_DIRECTORIES = frozenset({"__pycache__", "node_modules", "venv", "build", "dist"})


def is_inside(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or below it (``/x/app2`` is not below ``/x/app``)."""
    base = directory.rstrip(os.sep) or os.sep
    return path == base or path.startswith(base if base.endswith(os.sep) else base + os.sep)


def walk(top: str, config: Config, onerror: Optional[Callable[[OSError], None]] = None) -> Iterator[str]:
    """The Python files under ``top`` (excluded paths and skipped directories left out), sorted."""
    if is_excluded(top, config):
        return
    for directory, subdirectories, names in os.walk(top, onerror=onerror):
        subdirectories[:] = sorted(
            d for d in subdirectories if not skip_directory(os.path.join(directory, d), config))
        for name in sorted(names):
            path = os.path.normpath(os.path.join(directory, name))
            if name.endswith(PYTHON_SUFFIXES) and not is_excluded(path, config):
                yield path


def skip_directory(path: str, config: Config) -> bool:
    name = os.path.basename(path)
    if name.startswith(".") or name in SKIPPED_DIRECTORIES or name.endswith(".egg-info"):
        return True
    return os.path.isfile(os.path.join(path, "pyvenv.cfg")) or is_excluded(path, config)
