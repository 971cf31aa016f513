"""A per-file time budget: a pathological file (a huge generated module, code the analysis
finds too many paths through) becomes one could-not-analyze finding instead of stalling the run.

The engine opens a budget per file; the analysis checks it once per statement it walks, which
costs one clock read. Nothing else is interrupted (no signals: a flake8 worker or an editor
server may have its own).
"""

from __future__ import annotations

from contextlib import contextmanager
from time import perf_counter
from typing import Iterator, List, Optional

SECONDS_PER_FILE = 30.0


class BudgetExceeded(Exception):
    """The file's analysis ran out of time."""


_deadlines: List[float] = []


@contextmanager
def budget(seconds: Optional[float] = None) -> Iterator[None]:
    """Nested budgets (the index summarizing an import while a file is checked) share the
    outermost deadline."""
    deadline = perf_counter() + (SECONDS_PER_FILE if seconds is None else seconds)
    _deadlines.append(min(deadline, _deadlines[-1]) if _deadlines else deadline)
    try:
        yield
    finally:
        _deadlines.pop()


def check_budget() -> None:
    if _deadlines and perf_counter() > _deadlines[-1]:
        raise BudgetExceeded()
