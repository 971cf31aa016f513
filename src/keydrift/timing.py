"""Where the time goes: exclusive seconds per pipeline stage, for the benchmarks.

Stages nest (the project index parses other modules while a file is analyzed); each stage is
charged only its own time, so the totals add up to the wall time spent inside the engine.
The cost is two clock reads per stage, so it is always on.
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager
from time import perf_counter
from typing import DefaultDict, Dict, Iterator, List

_seconds: DefaultDict[str, float] = defaultdict(float)
_counts: DefaultDict[str, int] = defaultdict(int)
_nested: List[float] = []  # time spent in stages nested inside each open stage


@contextmanager
def stage(name: str) -> Iterator[None]:
    start = perf_counter()
    _nested.append(0.0)
    try:
        yield
    finally:
        elapsed = perf_counter() - start
        inner = _nested.pop()
        _seconds[name] += elapsed - inner
        if _nested:
            _nested[-1] += elapsed


def count(name: str, amount: int = 1) -> None:
    _counts[name] += amount


def stage_times() -> Dict[str, float]:
    """Exclusive seconds per stage since the last reset."""
    return dict(_seconds)


def counters() -> Dict[str, int]:
    """Files and lines seen, kept by the prefilter, parsed, analyzed."""
    return dict(_counts)


def reset() -> None:
    _seconds.clear()
    _counts.clear()
