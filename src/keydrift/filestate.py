"""The project's Python files as the method index reads them, and their state (a digest of
their paths and contents): a result that asked the index records that state, and holds while it
is the same. This module loads none of the analysis, so a warm run checks the state without
importing the index's module (and the parser-side modules it pulls in).

Looking again is cheap (the editor server looks once per check): a directory is listed again
only when its modification time changed (a file or directory created, deleted or renamed in
it), each file's status is asked once (one ``stat``), and a file is read again only when its
stamp changed (``diskcache.stamped_digest``: modification and change times, size, inode): an
edit, a new, deleted or moved file changes a stamp or a listing. A listing or digest made
within two seconds of its directory's or file's last change is not kept (a change in the
same tick of the file system's clock would leave the time as it was).
"""

from __future__ import annotations

import os
import stat
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple

from keydrift.diskcache import digest, looked_once, settled, stamped_digest

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
    directories, tooling and build output, virtual environments (a directory holding a
    ``pyvenv.cfg``) and symbolic links to directories are not entered."""
    visited = -1
    files = 0
    pending = [(root, True)]
    while pending:
        directory, top = pending.pop()
        listing = _listing(directory)
        if listing is None or (not top and listing.pyvenv and os.path.isfile(os.path.join(directory, "pyvenv.cfg"))):
            continue
        visited += 1
        if visited > _MAX_INDEXED_DIRECTORIES:
            return
        prefix = directory if directory.endswith(os.sep) else directory + os.sep  # as os.path.join
        for name in listing.files:
            files += 1
            if files > _MAX_INDEXED_FILES:
                return
            yield prefix + name, _status(prefix + name)
        pending.extend((subdirectory, False) for subdirectory in reversed(listing.subdirectories))


class _Listing(NamedTuple):
    """What the walk takes of a directory's entries: its Python files (names) and the
    subdirectories it may enter (paths), both sorted, and whether one is named ``pyvenv.cfg``."""

    files: List[str]
    subdirectories: List[str]
    pyvenv: bool


# A directory's listing (``_Listing``) by the directory's modification time and inode.
_LISTINGS: Dict[str, Tuple[Tuple[int, int], _Listing]] = {}


def _listing(directory: str) -> Optional[_Listing]:
    """The directory's ``_Listing``, made again when its modification time (or inode) changed; None when it
    cannot be listed (gone or unreadable: as ``os.walk`` without ``onerror``)."""
    try:
        status = os.stat(directory)
    except OSError:
        return None
    stamp = (status.st_mtime_ns, status.st_ino)
    known = _LISTINGS.get(directory)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        listing = _listing_now(directory)
    except OSError:
        return None
    if settled(status):
        _LISTINGS[directory] = (stamp, listing)
    return listing


def _listing_now(directory: str) -> _Listing:
    files = []
    subdirectories = []
    pyvenv = False
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            if name.endswith(".py") and not _is_directory(entry):
                files.append(name)
            elif _entered(entry):
                subdirectories.append(entry.path)
            pyvenv = pyvenv or name == "pyvenv.cfg"
    return _Listing(sorted(files), sorted(subdirectories), pyvenv)


def _is_directory(entry: "os.DirEntry[str]") -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _entered(entry: "os.DirEntry[str]") -> bool:
    name = entry.name
    if name.startswith(".") or name in _SKIPPED_DIRECTORIES or name.endswith(".egg-info"):
        return False
    return _is_directory(entry) and not entry.is_symlink()


def _status(path: str) -> Optional[os.stat_result]:
    try:
        return os.stat(path)
    except OSError:
        return None


def state_of(files: Iterable[Tuple[str, Optional[str]]]) -> str:
    return digest("\n".join(f"{path}\0{content}" for path, content in files if content is not None).encode(
        "utf-8", "surrogatepass"))


# The last state made of each project root, with the files and digests it was made from.
_LAST_STATES: Dict[str, Tuple[List[Tuple[str, Optional[str]]], str]] = {}


def files_state(root: str) -> str:
    """The state of the project's Python files as they are now (``state_of``)."""
    files = python_file_digests(root)
    last = _LAST_STATES.get(root)
    if last is None or last[0] != files:
        last = _LAST_STATES[root] = (files, state_of(files))
    return last[1]


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
