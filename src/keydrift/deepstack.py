"""Run the analysis on a thread whose C stack is deep enough for its recursion limit.

The analysis recurses over syntax trees (CPython's parser, the walkers, the value walker), and
Python's recursion limit only bounds Python frames: code that recurses through C (a long chain
of calls such as ``u.strip().strip()...``) can exhaust the main thread's C stack (8 MiB on Linux)
before the limit is reached, and the process dies with a segmentation fault, taking a user's
whole flake8 run with it. A thread with a large stack turns the same file into a clean
``RecursionError`` (one KD901 finding). The stack is reserved address space: only the pages
the recursion touches are ever used.
"""

from __future__ import annotations

import sys
import threading
from typing import Callable, Dict, TypeVar

T = TypeVar("T")

# Python frames the analysis may use; the engine turns a RecursionError past it into KD901.
RECURSION_LIMIT = 6000
# C stack for that many frames, with a wide margin (a frame recursing through C takes a few KiB).
_STACK_BYTES = 512 * 1024 * 1024

_state = threading.local()


def call_with_deep_stack(function: Callable[[], T]) -> T:
    """``function()`` on a deep-stack thread with the raised recursion limit; its result, or
    the exception it raised. Nested calls run in place (they are on such a thread already)."""
    if getattr(_state, "deep", False):
        return function()
    outcome: Dict[str, object] = {}

    def target() -> None:
        _state.deep = True
        try:
            outcome["value"] = function()
        except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
            outcome["error"] = exc

    thread = _start(target)
    if thread is None:  # the platform refuses big thread stacks: run here, limit unchanged
        return function()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def _start(target: Callable[[], None]):
    """A started thread running ``target`` with the large stack and the raised limit, or None."""
    old_size = threading.stack_size()
    try:
        threading.stack_size(_STACK_BYTES)
    except (ValueError, RuntimeError):
        return None
    old_limit = sys.getrecursionlimit()
    try:
        # the limit is interpreter-wide; raise it, never lower another caller's higher one
        sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
        thread = threading.Thread(target=_with_limit(target, old_limit), name="keydrift-analysis", daemon=True)
        thread.start()
    except RuntimeError:
        sys.setrecursionlimit(old_limit)
        return None
    finally:
        threading.stack_size(old_size)
    return thread


def _with_limit(target: Callable[[], None], old_limit: int) -> Callable[[], None]:
    def run() -> None:
        try:
            target()
        finally:
            sys.setrecursionlimit(old_limit)
    return run
