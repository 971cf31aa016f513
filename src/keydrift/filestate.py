"""The project's Python files as the method index reads them, and their state (a digest of
their paths and contents): a result that asked the index records that state, and holds while it
is the same. This module loads none of the analysis, so a warm run checks the state without
importing the index's module (and the parser-side modules it pulls in).

Looking again is cheap (the editor server looks once per check): the walk lists each directory
once (``os.scandir``) and takes each file's status from its listing, and a file is read again
only when its stamp changed (``diskcache.stamped_digest``: modification and change times, size,
inode); an edit, a new, deleted or moved file changes a stamp or a listing.
"""

from __future__ import annotations

import os
import stat
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from keydrift.diskcache import digest, looked_once, stamped_digest

_MAX_INDEXED_FILES = 20_000
_MAX_INDEXED_DIRECTORIES = 5_000
_SKIPPED_DIRECTORIES = frozenset({"__pycache__", "node_modules", "venv", "build", "dist", "site-packages"})

# A Python file of the project and its status (None: it could not be read with ``stat``).
_Listed = Tuple[str, Optional[os.stat_result]]


def python_files(root: str) -> Iterator[str]:
    """Python files under the root, within bounds: a root that is not a project (``/``, a home
    directory) must not make the index walk the whole disk."""
    return (path for path, _ in _listed(root))


def python_file_digests(root: str) -> List[Tuple[str, Optional[str]]]:
    """Each of the project's Python files and its digest (None: not a regular file), looked at
    once per look: the project's state and the index it is compared with see the same files."""
    return looked_once("py:" + root, _digests_now, root)


def _digests_now(root: str) -> List[Tuple[str, Optional[str]]]:
    return [(path, stamped_digest(path, status) if status is not None and stat.S_ISREG(status.st_mode) else None)
            for path, status in _listed(root)]


def _listed(root: str) -> Iterator[_Listed]:
    """The walk: directories in name order, each one's files before its subdirectories; hidden
    directories, tooling and build output, virtual environments and symbolic links to
    directories are not entered."""
    visited = -1
    files = 0
    pending = [root]
    while pending:
        directory = pending.pop()
        visited += 1
        if visited > _MAX_INDEXED_DIRECTORIES:
            return
        found, subdirectories = _listing(directory)
        for name, entry in found:
            files += 1
            if files > _MAX_INDEXED_FILES:
                return
            yield entry.path, _status(entry)
        pending.extend(reversed(subdirectories))


def _listing(directory: str) -> Tuple[List[Tuple[str, "os.DirEntry[str]"]], List[str]]:
    """The directory's Python files (by name) and the subdirectories the walk enters (sorted)."""
    files = []
    subdirectories = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                name = entry.name
                if name.endswith(".py") and not _is_directory(entry):
                    files.append((name, entry))
                elif _entered(entry):
                    subdirectories.append(entry.path)
    except OSError:
        return [], []  # gone or unreadable: as ``os.walk`` without ``onerror``
    files.sort()
    subdirectories.sort()
    return files, subdirectories


def _is_directory(entry: "os.DirEntry[str]") -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _entered(entry: "os.DirEntry[str]") -> bool:
    name = entry.name
    if name.startswith(".") or name in _SKIPPED_DIRECTORIES or name.endswith(".egg-info"):
        return False
    if not _is_directory(entry) or entry.is_symlink():
        return False
    return not os.path.isfile(os.path.join(entry.path, "pyvenv.cfg"))


def _status(entry: "os.DirEntry[str]") -> Optional[os.stat_result]:
    try:
        return entry.stat()
    except OSError:
        return None


def state_of(files: Iterable[Tuple[str, Optional[str]]]) -> str:
    return digest("\n".join(f"{path}\0{content}" for path, content in files if content is not None).encode(
        "utf-8", "surrogatepass"))


def files_state(root: str) -> str:
    """The state of the project's Python files as they are now (``state_of``)."""
    return state_of(python_file_digests(root))


_STATES: Dict[str, str] = {}


def files_state_once(root: str) -> str:
    """``files_state``, once per process (until ``forget_state``)."""
    if root not in _STATES:
        _STATES[root] = files_state(root)
    return _STATES[root]


def forget_state(root: Optional[str] = None) -> None:
    if root is None:
        _STATES.clear()
    else:
        _STATES.pop(root, None)
