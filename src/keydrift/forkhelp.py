"""One forked helper process for a serial step of the parent: a parallel CLI run builds what its
workers inherit (the method index) before forking them, with one core idle meanwhile.

The helper makes its share of the values and sends them back through a pipe (marshal: the
values are plain strings, lists and dicts), then exits without the interpreter's teardown. A
helper that fails or cannot be started sends nothing: the caller makes what is missing itself.
"""

from __future__ import annotations

import marshal
import os
from typing import Callable, Dict, Hashable, Optional, Sequence, TypeVar

Item = TypeVar("Item", bound=Hashable)

# What the parent collects: the helper's values by item (empty when it failed).
Collect = Callable[[], Dict[Item, object]]


def made_by_a_helper(items: Sequence[Item], make: Callable[[Item], object]) -> Optional[Collect]:
    """Start a forked process making ``make(item)`` for each of ``items``; the function returned
    waits for it and gives its values. None where processes cannot be forked."""
    if not hasattr(os, "fork"):
        return None
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:
        _helper(read_end, write_end, items, make)  # never returns
    os.close(write_end)
    return lambda: _collected(read_end, pid)


def _helper(read_end: int, write_end: int, items: Sequence[Item], make: Callable[[Item], object]) -> None:
    status = 1
    try:
        os.close(read_end)
        data = marshal.dumps({item: make(item) for item in items})
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
