"""Reading the project's files on the second core while a one-file check starts.

A check of a few files without the results cache (``keydrift check --no-cache FILE``: a hook, a
script, the one-file benchmark) builds the project's method index from every file's text, and
asks every file's text for database vocabulary, in each of its two processes (the helper that
shares the registry is forked before the check). Those are facts of each text alone. Before
this process imports the command line and the analysis (about 0.1 s of one core), it forks a
reader that makes them for the project's files: each file's ``FileMethods`` record with the
digest it was made from and its vocabulary answer (known for the files that define methods), as
the method index's own helper makes them (``receivers._HelpedRecords``), sent a few at a time
through a pipe wide enough to hold them all. The check collects them as late as it can, right
before it forks the registry's helper, so both processes inherit them; a record is used only for
a file whose digest is the one it was made from. A reader that is not done when asked for
(``_WAIT_SECONDS``) is stopped, what it sent by then used and the rest made here as before; one
nobody asked is stopped (``discard``).

This module is imported before anything else of keydrift's: it imports nothing of it at the top.
"""

from __future__ import annotations

import marshal
import os
import select
import time
from collections.abc import Callable, Sequence  # (not typing: this module is imported first of all, typing later)

# How long the check waits for a reader that is not done: it reads while the command line is
# imported, so it is normally done first. What a late one sent is used, the rest made here.
_WAIT_SECONDS = 0.01
# A reader stops reading after this long.
_READING_SECONDS = 0.5
# More files to check than this: the run starts worker processes, which build the index before forking.
_MOST_FILES = 15
# What the pipe to the reader may hold (``_widen``).
_PIPE_BYTES = 1 << 20
# Records sent in one piece: a reader stopped early has sent most of what it made.
_RECORDS_IN_A_PIECE = 32

_started: list[tuple[int, int]] = []  # (process id, read end of its pipe) of the reader not yet collected


def start(argv: Sequence[str]) -> None:
    """Fork the reader for ``keydrift check --no-cache FILE...`` (a few existing ``.py`` files,
    more than one job allowed); nothing for any other command line."""
    files = _files_checked(argv)
    if not files or not hasattr(os, "fork"):
        return
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return
    _widen(write_end)
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return
    if pid == 0:
        status = 1
        try:
            os.close(read_end)
            _let_go_of_standard_streams()
            _read(files[0], lambda piece: _send(write_end, piece))
            status = 0
        finally:
            os._exit(status)  # nothing of the parent's (buffers, atexit) is the reader's to finish
    os.close(write_end)
    _started.append((pid, read_end))


def _let_go_of_standard_streams() -> None:
    """The reader holds none of the run's standard streams: a caller reading the run's output
    to its end does not wait for it."""
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(null, stream)
    os.close(null)


def _files_checked(argv: Sequence[str]) -> list[str]:
    """The files of a ``check --no-cache`` command line that a reader helps, else none."""
    if len(argv) < 2 or argv[0] != "check" or "--no-cache" not in argv:
        return []
    files = []
    for argument in argv[1:]:
        if argument in ("-j1", "--jobs=1") or argument.startswith(("--config", "--stdin", "--fix", "--diff")):
            return []  # one job asked for, another configuration, or not a check of files on disk
        if argument.endswith(".py") and not argument.startswith("-"):
            files.append(argument)
    jobs = [argv[i + 1] for i, argument in enumerate(argv[:-1]) if argument in ("-j", "--jobs")]
    if "1" in jobs or not 0 < len(files) <= _MOST_FILES or not all(os.path.isfile(f) for f in files):
        return []
    return files


def _read(file: str, send: Callable[[dict[str, object]], None]) -> None:
    """Send the records of the project's files (the project of ``file``) with their vocabulary
    answers, a few at a time."""
    from keydrift.analysis.method_texts import file_record
    from keydrift.filestate import python_file_digests
    from keydrift.roots import find_pyproject, import_root

    # the root ``config.load_config`` gives the file (unless its pyproject.toml names another):
    # a record of a file outside the check's root is not asked for, one it lacks is made there
    directory = os.path.dirname(os.path.abspath(file))
    pyproject = find_pyproject(directory)
    root = os.path.dirname(pyproject) if pyproject else import_root(directory)
    deadline = time.perf_counter() + _READING_SECONDS
    records: dict[str, object] = {}
    for path, content in python_file_digests(root):
        if content is not None:
            records[path] = file_record(path, content)
        if len(records) >= _RECORDS_IN_A_PIECE:
            send({"records": records})
            records = {}
        if time.perf_counter() > deadline:
            break
    send({"records": records})


def _widen(pipe: int) -> None:
    """Let the pipe hold what a reader sends for most projects (Linux's 64 KiB hold a project
    of about 150 files): a reader whose writes block is not done when the check asks."""
    try:
        import fcntl

        fcntl.fcntl(pipe, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except (ImportError, OSError):
        pass  # another system, or a limit below it: the reader is then collected in part


def _send(descriptor: int, piece: dict[str, object]) -> None:
    data = marshal.dumps(piece)
    data = len(data).to_bytes(4, "big") + data
    while data:
        data = data[os.write(descriptor, data):]


def collect() -> dict[str, object] | None:
    """What the reader sent (``{"records": {path: record}}``), once; None when no reader was
    started or it sent nothing. A reader not done within ``_WAIT_SECONDS`` is stopped: what it
    sent by then is used."""
    if not _started:
        return None
    pid, read_end = _started.pop()
    data, done = _received(read_end)
    if not done:
        _stop(pid)
    os.close(read_end)
    _reaped(pid)
    records: dict[str, object] = {}
    for piece in _pieces(data):
        records.update(piece.get("records") or {})  # type: ignore[call-overload]
    return {"records": records} if records else None


def _received(read_end: int) -> tuple[bytes, bool]:
    """What is in the pipe, waiting at most ``_WAIT_SECONDS`` for its end; whether it ended."""
    chunks = []
    until = time.perf_counter() + _WAIT_SECONDS
    try:
        os.set_blocking(read_end, False)
        while True:
            try:
                chunk = os.read(read_end, 1 << 16)
            except BlockingIOError:
                left = until - time.perf_counter()
                if left <= 0 or not select.select([read_end], [], [], left)[0]:
                    return b"".join(chunks), False
                continue
            if not chunk:
                return b"".join(chunks), True
            chunks.append(chunk)
    except (OSError, ValueError):
        return b"".join(chunks), False


def _pieces(data: bytes) -> list[dict[str, object]]:
    """The whole pieces ``_send`` wrote (the last may be cut short by a stopped reader)."""
    pieces = []
    start = 0
    while start + 4 <= len(data):
        end = start + 4 + int.from_bytes(data[start:start + 4], "big")
        if end > len(data):
            break
        try:
            piece = marshal.loads(data[start + 4:end])
        except (EOFError, ValueError, TypeError):
            break
        if isinstance(piece, dict):
            pieces.append(piece)
        start = end
    return pieces


def discard() -> None:
    """Stop a reader nobody asked for (the run ended without needing it)."""
    while _started:
        pid, read_end = _started.pop()
        _stop(pid)
        try:
            os.close(read_end)
        except OSError:
            pass
        _reaped(pid)


def _stop(pid: int) -> None:
    try:
        os.kill(pid, 9)
    except OSError:
        pass


def _reaped(pid: int) -> int:
    try:
        return os.waitpid(pid, 0)[1]
    except OSError:
        return 1
