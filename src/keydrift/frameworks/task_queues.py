"""Task queues and deferred calls: a call that runs a project function later, elsewhere, with
the arguments given now (Celery, RQ, Dramatiq, Huey, Taskiq, FastAPI/Starlette background
tasks, executors). The function's key accesses are made with those arguments."""

from __future__ import annotations

from typing import Dict, FrozenSet, Tuple

# ``task.delay(a, b)``: the method's arguments are the function's.
DIRECT_METHODS: FrozenSet[str] = frozenset({"delay", "send", "kiq", "call_local", "s", "si"})

# ``task.apply_async(args=(a,), kwargs={...})``: (keyword of the positional tuple, of the mapping);
# the tuple may also be the first positional argument.
PACKED_METHODS: Dict[str, Tuple[str, str]] = {
    "apply_async": ("args", "kwargs"),
    "send_with_options": ("args", "kwargs"),
    "signature": ("args", "kwargs"),
}

# ``queue.enqueue(f, a, b)``: the index of the function among the positional arguments; the
# arguments after it are the function's.
ENQUEUE_METHODS: Dict[str, int] = {
    "enqueue": 0,
    "enqueue_call": 0,
    "add_task": 0,
    "submit": 0,
    "to_thread": 0,
    "enqueue_in": 1,
    "enqueue_at": 1,
    "run_in_executor": 1,
}

# Keywords of ``enqueue_call(func=f, args=(...), kwargs={...})``.
ENQUEUE_FUNCTION_KEYWORDS: FrozenSet[str] = frozenset({"func", "f"})
