"""The on-disk cache under the project root: JSON entries by key, written atomically.

Every failure (a read-only tree, a corrupt or truncated entry, an entry of another keydrift
version or format) is a miss: the cache can make a run faster, never wrong.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Tuple, TypeVar

from keydrift import __version__
from keydrift.digests import hasher, hex_digest

CACHE_DIRECTORY = ".keydrift_cache"
CACHE_FORMAT = 6  # 6: a methods dependency's value names the methods asked


def digest(data: bytes) -> str:
    return hex_digest(data)


# A dependency on what a module exports ("export:<module>:<file>" -> its fingerprint), next
# to the one on its file's digest: when the file changed but the export did not, a result
# that read only the export still holds (see ``results.stale_modules``).
EXPORT_DEPENDENCY = "export:"


def export_dependency(module_name: str, path: str) -> str:
    return f"{EXPORT_DEPENDENCY}{module_name}:{path}"


def exported_module(dependency: str) -> Tuple[str, str]:
    """(module name, file) of an export dependency."""
    module_name, _, path = dependency[len(EXPORT_DEPENDENCY):].partition(":")
    return module_name, path


# A dependency on the project's method index ("methods:<root>\n<module file>" -> the project's
# files as the index read them, a digest of what it answers for the methods the module's text
# calls, and those names; no file: the user model): a call ``x.add_threepid()`` whose receiver
# nothing types resolves to the project's only class defining the method, an answer any other
# file can change (``receivers.answers_hold``). The entry carries the names, so a run after an
# edit asks the index about them without reading every module that asked again.
METHODS_DEPENDENCY = "methods:"


def methods_dependency(root: str, path: str) -> str:
    return f"{METHODS_DEPENDENCY}{root}\n{path}"


def methods_asked(dependency: str) -> Tuple[str, str]:
    """(project root, module file or "" for the user model) of a methods dependency."""
    root, _, path = dependency[len(METHODS_DEPENDENCY):].partition("\n")
    return root, path


class MethodsAnswer(NamedTuple):
    """The value of a methods dependency (``receivers.recorded_answers``); a damaged value reads
    with empty parts, and one without ``names`` never holds."""

    state: str  # the project's files as the index read them
    facts: str  # what the index was made from
    answers: str  # a digest of its answers for the names asked
    names: str  # the names asked, space-separated

    def value(self) -> str:
        return "/".join(self)

    @classmethod
    def read(cls, value: str) -> "MethodsAnswer":
        return cls(*(value.split("/", 3) + ["", "", ""])[:4])


# A file's digest by its stamp (``_stamp``), for as long as the process lives.
_FILE_DIGESTS: Dict[Tuple[str, int, int, int, int], str] = {}
_code_fingerprint: Optional[str] = None

# Within ``one_look``: each file's digest and each directory's listing ("ls:" + its path), as
# first looked at.
_LOOKED: Optional[Dict[str, Any]] = None


# What was found in one look: see ``one_look``.
Look = Dict[str, Any]


def new_look() -> Look:
    """A look not taken yet, for ``one_look(resumed=...)``."""
    return {}


@contextmanager
def one_look(resumed: Optional[Look] = None) -> Iterator[None]:
    """Inside the block each file and directory is looked at once, for a front end that checks
    the tree as it is when it starts, as the CLI does: most files are dependencies of many
    results and of many modules' exports, which ask for their digests hundreds of thousands of
    times in a run (a ``stat`` each). Worker processes forked inside the block inherit it.
    An enclosing look goes on. ``resumed``: a look taken up again, for a front end whose run is
    not one block of code (flake8 checks a serial run's files one call at a time)."""
    global _LOOKED
    outer = _LOOKED
    if outer is not None:
        _LOOKED = outer
    else:
        _LOOKED = new_look() if resumed is None else resumed
    try:
        yield
    finally:
        _LOOKED = outer


def current_look() -> Optional[object]:
    """The ``one_look`` in force (None outside one): what was found to hold in it holds until it ends."""
    return _LOOKED


_Seen = TypeVar("_Seen")
_Target = TypeVar("_Target")


def looked_once(key: str, look: Callable[[_Target], _Seen], target: _Target) -> _Seen:
    """``look(target)``, asked once per ``key`` inside ``one_look`` (every time outside it);
    keys of this module: a file's path, "ls:" + a directory."""
    if _LOOKED is None:
        return look(target)
    if key not in _LOOKED:
        _LOOKED[key] = look(target)
    return _LOOKED[key]


def file_digest(path: str) -> Optional[str]:
    """The digest of a file's bytes (remembered while its mtime and size stay), None if unreadable."""
    return looked_once(path, _file_digest_now, path)


def _file_digest_now(path: str) -> Optional[str]:
    try:
        return _digest_by_stamp(path, os.stat(path))
    except OSError:
        return None


def stamped_digest(path: str, status: os.stat_result) -> Optional[str]:
    """``file_digest`` of a file ``status`` (its ``os.stat``, from a directory's listing) describes
    already: inside ``one_look`` the file's look, read only when its stamp is new to the process."""
    return looked_once(path, _digest_or_none, (path, status))


def _digest_or_none(stated: Tuple[str, os.stat_result]) -> Optional[str]:
    try:
        return _digest_by_stamp(*stated)
    except OSError:
        return None


def _stamp(path: str, status: os.stat_result) -> Tuple[str, int, int, int, int]:
    """What identifies a file's content as last read: an edit changes its modification time (or,
    with the time set back, its change time), an editor's save by renaming its inode."""
    return (path, status.st_mtime_ns, status.st_ctime_ns, status.st_size, status.st_ino)


def _digest_by_stamp(path: str, status: os.stat_result, data: Optional[bytes] = None) -> str:
    """The digest of the file ``status`` describes, its bytes read (or ``data``, read already)
    only when the stamp is new to the process; kept by the stamp once the file has settled."""
    stamp = _stamp(path, status)
    found = _FILE_DIGESTS.get(stamp)
    if found is None:
        if data is None:
            with open(path, "rb") as handle:
                data = handle.read()
        found = digest(data)
        if settled(status):
            _FILE_DIGESTS[stamp] = found
    return found


# A file changed this recently may change again within the same tick of the file system's
# clock, its stamp as it was: what was read of it is not kept by the stamp (git's "racily
# clean" entries). Two seconds covers the coarsest clocks (FAT's).
_SETTLING_NS = 2_000_000_000


def settled(status: os.stat_result) -> bool:
    """Whether what ``status`` describes last changed long enough ago that a later change will
    show in its stamp (``_SETTLING_NS``)."""
    return max(status.st_mtime_ns, status.st_ctime_ns) < time.time_ns() - _SETTLING_NS


def remember_digest(path: str, status: os.stat_result, data: bytes) -> str:
    """The digest of ``data``, read from ``path`` after ``os.stat`` gave ``status``; kept for
    ``file_digest`` of the path (normalized, absolute), so that a file read once is not read
    again, and inside ``one_look`` taken as the look at the file (no ``stat`` either)."""
    absolute = os.path.normpath(os.path.abspath(path))
    found = _digest_by_stamp(absolute, status, data)  # hashed already if the method index read it
    if _LOOKED is not None:
        _LOOKED.setdefault(absolute, found)
    return found


# The cache folders whose kept digests this process has read (``read_kept_digests``), each with
# how many digests it knew of then.
_DIGESTS_READ: Dict[str, int] = {}
_KEPT_DIGESTS = "digests"


def read_kept_digests(cache: "DiskCache") -> None:
    """Take the digests of the project's files an earlier process kept (``keep_digests``) as
    known by their stamps: a warm flake8 worker's first look at the project then asks every
    file for its status only, instead of reading and hashing each one. Kept only for files
    that had settled (``settled``) when read, as in this process, so an edit shows in the
    stamp; once per process and cache folder."""
    if cache.directory is None or cache.directory in _DIGESTS_READ:
        return
    entry = cache.load(_KEPT_DIGESTS)
    items = entry.get("files") if entry is not None else None
    if isinstance(items, list):
        for item in items:
            if (isinstance(item, list) and len(item) == 6 and isinstance(item[0], str)
                    and all(type(part) is int for part in item[1:5]) and isinstance(item[5], str)):
                _FILE_DIGESTS[(item[0], item[1], item[2], item[3], item[4])] = item[5]
    _DIGESTS_READ[cache.directory] = len(_FILE_DIGESTS)


def keep_digests(cache: "DiskCache") -> None:
    """Keep the digests of the settled files under the cache's project that this process knows,
    for ``read_kept_digests`` of the next process, when it learned any since it read them."""
    if cache.directory is None or _DIGESTS_READ.get(cache.directory) == len(_FILE_DIGESTS):
        return
    root = os.path.dirname(cache.directory) + os.sep
    files = [[*stamp, found] for stamp, found in _FILE_DIGESTS.items() if stamp[0].startswith(root)]
    cache.store(_KEPT_DIGESTS, {"files": files})
    _DIGESTS_READ[cache.directory] = len(_FILE_DIGESTS)


# (directory, its mtime) -> the names an import can find in it and their digest
_LISTINGS: Dict[Tuple[str, int], Tuple[FrozenSet[str], str]] = {}
# (is a directory, its importable names or None when it cannot be listed, its state)
Listing = Tuple[bool, Optional[FrozenSet[str]], str]


def directory_state(directory: str) -> str:
    """What of a directory decides which module an import finds in it: the names of its Python
    files and of the subdirectories that could be packages; "" if it is gone. An editor's swap
    file, a new ``__pycache__`` or a data file leave it as it was (its mtime does not). Read
    again only when the directory's mtime changed."""
    return _listing(directory)[2]


def importable_names(directory: str) -> Tuple[bool, Optional[FrozenSet[str]]]:
    """Whether ``directory`` is a directory (``os.path.isdir``), and the names an import can find
    in it (``name.py`` for a module file, ``name/`` for a directory named like a package; None
    when it cannot be listed): the project index finds modules by them, with no ``stat`` per
    candidate file. Listed again only when the directory's mtime changed."""
    return _listing(directory)[:2]


def _listing(directory: str) -> Listing:
    return looked_once("ls:" + directory, _listing_now, directory)


def _listing_now(directory: str) -> Listing:
    try:
        status = os.stat(directory)
    except (OSError, ValueError):
        return False, None, ""
    if not stat.S_ISDIR(status.st_mode):
        return False, None, ""
    found = _LISTINGS.get((directory, status.st_mtime_ns))
    if found is None:
        try:
            names = frozenset(_importable_names(directory))
        except OSError:
            return True, None, ""
        found = _LISTINGS[(directory, status.st_mtime_ns)] = (
            names, digest("\0".join(sorted(names)).encode("utf-8", "surrogateescape")))
    return (True, *found)


def _importable_names(directory: str) -> List[str]:
    """``name.py`` for each module file, ``name/`` for each directory named like a package."""
    names = []
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            if name.endswith(".py") and name[:-3].isidentifier() and entry.is_file():
                names.append(name)
            elif name.isidentifier() and name != "__pycache__" and entry.is_dir():
                names.append(name + "/")
    return names


def code_fingerprint(memo: Optional["DiskCache"] = None) -> str:
    """Identifies keydrift's own code by content, and the Python running it (which decides what
    parses): reinstalling the same code keeps every cache warm, any edit starts afresh.

    Hashing the sources costs more than a warm run's other work, so the digest is remembered in
    ``memo`` (a project's cache) under the files' names, sizes and modification times: after a
    reinstall, one run hashes them again."""
    global _code_fingerprint
    if _code_fingerprint is None:
        stamps = _code_stamps()
        remembered = memo.load("code-" + stamps) if memo is not None else None
        content = remembered.get("content") if remembered else None
        if not isinstance(content, str):
            content = _code_content_digest()
            if memo is not None:
                memo.store("code-" + stamps, {"content": content})
        _code_fingerprint = content
    return _code_fingerprint


def _package_sources() -> List[str]:
    package = os.path.dirname(os.path.abspath(__file__))
    found = []
    for directory, subdirectories, files in os.walk(package):
        subdirectories.sort()
        found.extend(os.path.join(directory, name) for name in sorted(files) if name.endswith(".py"))
    return found


def _code_stamps() -> str:
    """The sources' names, sizes and modification times (cheap: no file is read)."""
    stamps = []
    for path in _package_sources():
        status = os.stat(path)
        stamps.append((path, status.st_size, status.st_mtime_ns))
    return digest(repr((stamps, sys.version_info[:2])).encode("utf-8", "surrogatepass"))


def _code_content_digest() -> str:
    package = os.path.dirname(os.path.abspath(__file__))
    code = hasher(repr(sys.version_info[:2]).encode())
    for path in _package_sources():
        with open(path, "rb") as handle:
            data = handle.read()
        code.update(os.path.relpath(path, package).replace(os.sep, "/").encode("utf-8", "surrogatepass"))
        code.update(len(data).to_bytes(8, "big"))
        code.update(data)
    return code.hexdigest()


# An entry whose mapping members hold at most this many members in all is written in one piece.
_MEMBERS_IN_ONE_PIECE = 1000

# Numbers for the temporary files of this process's writes (``DiskCache._temporary_file``).
_TEMPORARY_NUMBERS = itertools.count()


def json_pieces(data: dict) -> Iterator[str]:
    """``json.dumps(data)`` in pieces, each member of a mapping member its own (the text is the
    same): the registry's stored contributions are one entry of tens of megabytes on a large
    project, and its text made whole, then encoded, took a process 100 MiB above its peak. An
    entry with few such members (a file's result or export, thousands of them in a cold run) is
    one piece: made in pieces, with two calls of the encoder per member, the 1,035 entries of the
    small corpus took 0.18 s to encode instead of 0.12 s."""
    if sum(len(value) for value in data.values() if isinstance(value, dict)) <= _MEMBERS_IN_ONE_PIECE:
        yield json.dumps(data)
        return
    yield "{"
    for number, (key, value) in enumerate(data.items()):
        yield f"{', ' if number else ''}{json.dumps(key)}: "
        if isinstance(value, dict):
            yield "{"
            for inner, (name, item) in enumerate(value.items()):
                yield f"{', ' if inner else ''}{json.dumps(name)}: {json.dumps(item)}"
            yield "}"
        else:
            yield json.dumps(value)
    yield "}"


class DiskCache:
    """JSON entries by key; every failure (read-only tree, corrupt entry) is a cache miss."""

    def __init__(self, directory: Optional[str]) -> None:
        self.directory = directory
        self.prepared = False  # the folder and its .gitignore made (``_prepare``)

    def load(self, key: str) -> Optional[dict]:
        if self.directory is None:
            return None
        try:
            with open(os.path.join(self.directory, key + ".json"), "rb") as handle:
                data = json.loads(handle.read())  # bytes: no text layer (a warm run loads an entry per file)
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("keydrift") != __version__ or data.get("format") != CACHE_FORMAT:
            return None
        return data

    def store(self, key: str, data: dict) -> None:
        """Write an entry, stamped with the keydrift version and cache format ``load`` checks."""
        if self.directory is None:
            return
        data = {"keydrift": __version__, "format": CACHE_FORMAT, **data}
        try:
            if not self.prepared:  # once per process, and again if the folder was deleted meanwhile
                self._prepare()
            try:
                self._write_atomically(os.path.join(self.directory, key + ".json"), json_pieces(data))
            except FileNotFoundError:
                self._prepare()
                self._write_atomically(os.path.join(self.directory, key + ".json"), json_pieces(data))
        except OSError:
            self.directory = None  # read-only or full: stop trying for this run

    def append(self, name: str, item: Any) -> None:
        """Add ``item`` to the log ``name`` (a file of JSON lines that processes running at the
        same time share: see ``read_log``), in one write at its end, creating no file but the
        log: an entry per item cost an inode each."""
        if self.directory is None:
            return
        line = (json.dumps(item) + "\n").encode("utf-8", "surrogatepass")
        try:
            if not self.prepared:
                self._prepare()
            handle = os.open(os.path.join(self.directory, name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(handle, line)  # O_APPEND: written whole at the end, after any other's
            finally:
                os.close(handle)
        except OSError:
            pass  # only shared for a head start: a reader asks again itself

    def read_log(self, name: str, offset: int) -> Tuple[List[Any], int]:
        """The items appended to the log ``name`` from ``offset`` on, and the offset to read on
        from: a line not ended yet (being written) is left for the next read, a damaged line
        is skipped (a miss for whoever wanted it), a missing log holds nothing."""
        if self.directory is None:
            return [], offset
        try:
            with open(os.path.join(self.directory, name), "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except OSError:
            return [], offset
        complete = data.rfind(b"\n") + 1
        items = []
        for line in data[:complete].splitlines():
            try:
                items.append(json.loads(line))
            except ValueError:
                pass
        return items, offset + complete

    def _prepare(self) -> None:
        """The folder, with a ``.gitignore`` that ignores it."""
        os.makedirs(self.directory, exist_ok=True)  # type: ignore[arg-type]
        ignore = os.path.join(self.directory, ".gitignore")  # type: ignore[arg-type]
        if not os.path.exists(ignore):
            self._write_atomically(ignore, ["*\n"])
        self.prepared = True

    def _write_atomically(self, path: str, pieces: Iterable[str]) -> None:
        handle, temporary = self._temporary_file()
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                for piece in pieces:
                    out.write(piece)
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise

    def _temporary_file(self) -> Tuple[int, str]:
        """A new file beside the entries, named by the process and a count (``tempfile.mkstemp``'s
        random names cost as much CPU as the write: a cold run writes thousands of entries); a
        name left by a process that died is passed over for a random one."""
        temporary = os.path.join(self.directory, f".tmp-{os.getpid()}-{next(_TEMPORARY_NUMBERS)}.json")  # type: ignore[arg-type]
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), temporary
        except FileExistsError:
            import tempfile  # not on the path of a run that writes nothing

            return tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
