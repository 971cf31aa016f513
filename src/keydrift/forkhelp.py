"""One forked helper process for a serial step of the parent: a parallel CLI run builds what its
workers inherit (the method index) before forking them, with one core idle meanwhile; a CLI run
assembling a project's key registry on its own (one file checked) shares the modules' analyses.

The helper makes its share of the values and sends them back through a pipe (marshal: the
values are plain strings, lists and dicts), then exits without the interpreter's teardown. A
helper that fails or cannot be started sends nothing: the caller makes what is missing itself.
"""

from __future__ import annotations

import marshal
import mmap
import os
import warnings
from typing import Callable, Dict, Hashable, Optional, Sequence, Tuple, TypeVar

Item = TypeVar("Item", bound=Hashable)

# What the parent collects: the helper's values by item (empty when it failed).
Collect = Callable[[], Dict[Item, object]]


def made_by_a_helper(items: Sequence[Item], make: Callable[[Item], object]) -> Optional[Collect]:
    """Start a forked process making ``make(item)`` for each of ``items``; the function returned
    waits for it and gives its values. None where processes cannot be forked."""
    forked = _forked(lambda: {item: make(item) for item in items})
    return None if forked is None else forked[0]


class SharedWork:
    """A list worked through by this process from its front and by a forked helper from its back
    (``shared_with_a_helper``), until they meet."""

    def __init__(self, marks: mmap.mmap, collect: Collect, pid: int) -> None:
        self._marks = marks
        self._collect: Optional[Collect] = collect
        self._pid = pid

    def take(self, number: int) -> bool:
        """Whether this process may still make the item of that number (and now has it)."""
        if self._marks[number]:
            return False
        self._marks[number] = 1
        return True

    def collect(self) -> Dict[Item, object]:
        """The helper's values, once it has made every item it took (empty if it failed)."""
        collect, self._collect = self._collect, None
        return collect() if collect is not None else {}

    def cancel(self) -> None:
        """Stop the helper (its values are not needed): killed, and waited for."""
        if self._collect is None:
            return
        import signal  # here: most runs collect their helper, and the module takes 0.5 ms to import

        try:
            os.kill(self._pid, signal.SIGKILL)
        except OSError:
            pass
        self.collect()


def shared_with_a_helper(items: Sequence[Item], make: Callable[[Item], object]) -> Optional[SharedWork]:
    """Work through ``items`` with a forked helper that makes ``make(item)`` from the back of the
    list while this process goes from the front, until they meet: neither knows beforehand
    which items cost most. This process asks ``take(number)`` before each item and stops at
    the first it is refused (the helper has it and every one after it); ``collect()`` then
    gives the helper's values. None where processes cannot be forked.

    Each item has a mark in memory both processes share (an anonymous shared mapping), set by
    the one that takes it. There is no lock: two that take the same item at the same moment
    both make it, and the caller keeps its own. A helper that fails leaves its items to the
    caller (missing from what ``collect`` gives)."""
    if not items or not hasattr(os, "fork"):
        return None
    try:
        marks = mmap.mmap(-1, len(items))  # MAP_SHARED | MAP_ANONYMOUS: the fork shares it
    except (OSError, ValueError):
        return None

    def from_the_back() -> Dict[Item, object]:
        made: Dict[Item, object] = {}
        for number in range(len(items) - 1, -1, -1):
            if marks[number]:
                break
            marks[number] = 1
            made[items[number]] = make(items[number])
        return made

    forked = _forked(from_the_back)
    return None if forked is None else SharedWork(marks, forked[0], forked[1])


def _forked(produce: Callable[[], Dict[Item, object]]) -> Optional[Tuple[Collect, int]]:
    """Fork a process that sends back what ``produce()`` gives: a function that waits for it and
    gives that, and its process id. None where processes cannot be forked."""
    if not hasattr(os, "fork"):
        return None
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns when a process with threads forks (the deep-stack thread, a
            # host's): the helper runs only keydrift's code and leaves without the teardown
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except Exception:  # noqa: BLE001 - OSError, or a warning turned into an error: no helper
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:
        _helper(read_end, write_end, produce)  # never returns
    os.close(write_end)
    return (lambda: _collected(read_end, pid)), pid


def _helper(read_end: int, write_end: int, produce: Callable[[], Dict[Item, object]]) -> None:
    status = 1
    try:
        os.close(read_end)
        data = marshal.dumps(produce())
        with os.fdopen(write_end, "wb") as out:
            out.write(data)
        status = 0
    finally:
        os._exit(status)  # nothing of the parent's (buffers, pools, atexit) is the helper's to finish


def _collected(read_end: int, pid: int) -> Dict[Item, object]:
    try:
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
    except OSError:
        data = b""
    try:
        _, status = os.waitpid(pid, 0)
    except OSError:
        status = 1
    if status != 0:
        return {}
    try:
        values = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return {}
    return values if isinstance(values, dict) else {}
