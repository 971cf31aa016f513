"""A per-file time budget: a pathological file (a huge generated module, code the analysis
finds too many paths through) becomes one could-not-analyze finding instead of stalling the run.

The engine opens a budget per file; the analysis checks it once per statement it walks, and
reads the clock at every sixteenth check. Nothing else is interrupted (no signals: a flake8
worker or an editor server may have its own).

The clock is the process's processor time, not the wall clock: on a loaded machine (a CI runner,
a parallel run on every core) a file's wall time can double while its work is the same, and
whether a file is analyzed must not depend on what else the machine is doing.
"""

from __future__ import annotations

from contextlib import contextmanager
from time import process_time
from typing import Iterator, List, Optional

SECONDS_PER_FILE = 30.0


class BudgetExceeded(Exception):
    """The file's analysis ran out of time."""


_deadlines: List[float] = []
# the clock (a system call) is read at every sixteenth check: checks left until the next read
_CHECKS_PER_READ = 16
_checks_before_read = 1


@contextmanager
def budget(seconds: Optional[float] = None) -> Iterator[None]:
    """Nested budgets (the index summarizing an import while a file is checked) share the
    outermost deadline."""
    global _checks_before_read
    _checks_before_read = 1  # the first check of a budget reads the clock
    deadline = process_time() + (SECONDS_PER_FILE if seconds is None else seconds)
    _deadlines.append(min(deadline, _deadlines[-1]) if _deadlines else deadline)
    try:
        yield
    finally:
        _deadlines.pop()


def check_budget() -> None:
    global _checks_before_read
    _checks_before_read -= 1
    if _checks_before_read:  # (a count down: asked once per statement walked)
        return
    _checks_before_read = _CHECKS_PER_READ
    if _deadlines and process_time() >= _deadlines[-1]:
        raise BudgetExceeded()
