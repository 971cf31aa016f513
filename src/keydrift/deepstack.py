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

import os
import queue
import sys
import threading
from typing import Any, Callable, Optional, Tuple, TypeVar

T = TypeVar("T")

# Python frames the analysis may use; the engine turns a RecursionError past it into KD901.
RECURSION_LIMIT = 6000
# C stack for that many frames, with a wide margin (a frame recursing through C takes a few KiB).
_STACK_BYTES = 512 * 1024 * 1024

_state = threading.local()

# What a call on the deep thread ended with: ("value", its result) or ("error", what it raised).
_Outcome = Tuple[str, Any]


class _DeepThread:
    """A deep-stack thread that lives on, running the calls of one calling thread one after the
    other. A thread per call cost about 0.6 ms of CPU to start in a flake8 worker (its stack
    mapped afresh, the pages the recursion touches faulted in again), and a worker makes one for
    nearly every check: 560-610 per worker on the small corpus, 0.36-0.41 s of CPU apiece."""

    def __init__(self, thread: threading.Thread, calls: "queue.SimpleQueue[Any]",
                 outcomes: "queue.SimpleQueue[_Outcome]") -> None:
        self.pid = os.getpid()  # a forked child has none of its parent's threads
        self.thread = thread
        self.calls = calls
        self.outcomes = outcomes

    def usable(self) -> bool:
        return self.pid == os.getpid() and self.thread.is_alive()

    def call(self, function: Callable[[], T]) -> T:
        self.calls.put(function)
        try:
            kind, value = self.outcomes.get()
        except BaseException:
            # interrupted while waiting (KeyboardInterrupt): the call's outcome will never be
            # taken, so the thread ends after it and the next call starts another
            self.calls.put(None)
            _state.helper = None
            raise
        if kind == "error":
            if isinstance(value, RecursionError):
                # the thread ends after this call (``_serve``) but may still be alive a moment:
                # the next call must not be handed to it, where nothing would ever take it
                _state.helper = None
            raise value
        return value  # type: ignore[no-any-return]


def call_with_deep_stack(function: Callable[[], T]) -> T:
    """``function()`` on a deep-stack thread with the raised recursion limit; its result, or
    the exception it raised. Nested calls run in place (they are on such a thread already)."""
    if getattr(_state, "deep", False):
        return function()
    helper: Optional[_DeepThread] = getattr(_state, "helper", None)
    if helper is None or not helper.usable():
        helper = _state.helper = _start()
    if helper is None:  # the platform refuses big thread stacks: run here, limit unchanged
        return function()
    return helper.call(function)


def _start() -> Optional[_DeepThread]:
    """A started deep-stack thread waiting for calls, or None."""
    old_size = threading.stack_size()
    try:
        threading.stack_size(_STACK_BYTES)
    except (ValueError, RuntimeError):
        return None
    calls: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
    outcomes: "queue.SimpleQueue[_Outcome]" = queue.SimpleQueue()
    try:
        thread = threading.Thread(target=_serve, args=(calls, outcomes), name="keydrift-analysis", daemon=True)
        thread.start()
    except RuntimeError:
        return None
    finally:
        threading.stack_size(old_size)
    return _DeepThread(thread, calls, outcomes)


def _serve(calls: "queue.SimpleQueue[Any]", outcomes: "queue.SimpleQueue[_Outcome]") -> None:
    """The deep thread: each call with the raised limit, until told to stop (None). A call that
    ran out of recursion ends the thread too: the stack pages its recursion touched go with it."""
    _state.deep = True
    while True:
        function = calls.get()
        if function is None:
            return
        outcome = _with_limit(function)
        del function  # what the call holds is not kept alive until the next one
        outcomes.put(outcome)
        if outcome[0] == "error" and isinstance(outcome[1], RecursionError):
            return
        del outcome


def _with_limit(function: Callable[[], Any]) -> _Outcome:
    # the limit is interpreter-wide; raise it, never lower another caller's higher one
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
    try:
        return ("value", function())
    except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
        return ("error", exc)
    finally:
        sys.setrecursionlimit(old_limit)
