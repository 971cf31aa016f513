"""The pace of CPython's cyclic garbage collector in a process that runs keydrift.

keydrift keeps what it learned of the project for the whole run (every module's export, the
last trees and analyses it may reuse): a few hundred thousand tracked objects, and the trees it
parses pass through the young generations by the million. Each collection traverses what it
holds, so every tree node is traversed again in each generation it passes through, and each
full collection traverses everything kept. With CPython's default first threshold (700 net
allocations), ``flake8 --select F,KD -j 1`` from an empty cache on the small corpus (1,100
files) spent 10.4 s of its 42 s in the collector, flake8 alone 1.3 s of 18 s.

What the analysis allocates is freed by reference counting (``tests/test_no_cycles.py``: no
reference cycle holds an analysis, a summary, a tree or a stack of frames), so collecting less
often costs little memory. Two policies:

- a process keydrift shares with its host (the flake8 plugin, the editor server) raises the
  first threshold to ``YOUNG_THRESHOLD`` (10.4 s -> 3.9 s there; peak RSS 170 -> 190 MiB);
- a ``keydrift check`` run, whose processes are keydrift's alone, turns automatic collection off
  and collects in full between two files whenever its peak memory grew by ``GROWTH_KIB`` since
  the last collection (the cycles other code makes, sqlglot's trees among them, are freed
  then). Against the first policy, a cold run (``-j 2 --no-cache``) took 3-6% less CPU: small
  corpus 13.1-13.6 -> 12.1-12.8 s, full corpus 119.5 -> 115.6 s (peak RSS 249 -> 250 MiB).
  A flake8 worker (``-j``) ends with its run too, and takes the same pace once it analyzes
  (``collecting_by_growth_from_now``): with the raised threshold each worker of
  ``flake8 --select F,KD -j 2`` from an empty cache spent about 2 s in the collector on the
  small corpus (pyflakes links every node of a file's tree to its parent, so each tree is a
  cycle, traversed in every generation it lives through, and each full collection traverses
  the project's index too); at a check run's pace the run takes 3-4 s less CPU (about 8%), for
  a peak RSS of its workers of 200 instead of 135 MiB. A worker that only reads stored results
  keeps the raised threshold.

Each full collection of a run freezes what survived it (``gc.freeze``): mostly the index, kept
to the end of the run, which the next collections then pass over instead of traversing it again.
Only cyclic garbage is at stake (what keydrift makes is freed by reference counting): a cycle
alive at a collection and dropped later waits for the end of the run, when a process that goes on
unfreezes it. A host that froze objects of its own keeps them frozen: the run freezes nothing
there (unfreezing would give the host's back to the collector). Collector time, small corpus,
``flake8 --select F,KD -j 2`` from an empty cache: 1.01-1.04 -> 0.81-0.87 s of the workers' CPU;
full corpus, ``keydrift check -j 2``: 1.36 -> 1.08 s, same peak RSS.

A host that tuned its collector (a higher threshold, or collection off) is left alone. A
process that exits right after its run (``keydrift check`` from the command line:
``ending_after_run``) leaves collection off at the end: switched on again, its first
collection would traverse every object the run made, only for exit to discard them (50 ms of
a 0.8 s one-file check).
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
from typing import Iterator, Optional

# net allocations between young collections (CPython's default is 700); the older thresholds stay
YOUNG_THRESHOLD = 10_000
# growth of the peak resident memory (KiB) that brings a full collection in a run of keydrift's own
GROWTH_KIB = 64 * 1024

_by_growth = False
_ending_after_run = False  # the process exits when the run ends: nothing is left to collect for
_collected_at: Optional[int] = None  # the peak at the last collection of this process, KiB
# whether the run freezes the survivors of its collections: not where the host froze objects of
# its own (a server that froze its start-up before forking), which unfreezing would give back
_freezing = False


def collect_less_often() -> None:
    """Raise the collector's first threshold to ``YOUNG_THRESHOLD`` for this process, unless it
    is higher already or collection is off."""
    young, middle, old = gc.get_threshold()
    if gc.isenabled() and 0 < young < YOUNG_THRESHOLD:
        gc.set_threshold(YOUNG_THRESHOLD, middle, old)


def ending_after_run() -> None:
    """This process exits as soon as its run ends (``cli.run``): ``collecting_by_growth``
    then leaves automatic collection off at the end."""
    global _ending_after_run
    _ending_after_run = True


@contextmanager
def collecting_by_growth() -> Iterator[None]:
    """For the duration of a run whose processes are keydrift's alone: automatic collection
    off, a full one from ``between_files`` when memory grew; as it was after (a caller that runs
    keydrift's command in its own process, a test, keeps its collector). Where the peak
    cannot be read, or collection is off already, nothing changes."""
    global _by_growth
    if not gc.isenabled() or _peak_kib() is None:
        yield
        return
    _pace_by_growth()
    try:
        yield
    finally:
        _by_growth = False
        if not _ending_after_run:
            if _freezing:
                gc.unfreeze()  # a process that goes on collects what the run froze again
            gc.enable()


def collecting_by_growth_from_now() -> None:
    """For the rest of this process, the pace of a check run (``collecting_by_growth``): for a
    process that ends when its host's run does (a flake8 worker). Left alone where collection
    is off, the host chose a higher first threshold than ``collect_less_often``'s, or the peak
    cannot be read."""
    if not gc.isenabled() or not 0 < gc.get_threshold()[0] <= YOUNG_THRESHOLD or _peak_kib() is None:
        return
    _pace_by_growth()


def _pace_by_growth() -> None:
    """Automatic collection off, growth counted from the next file, survivors frozen unless the
    host froze objects of its own."""
    global _by_growth, _collected_at, _freezing
    gc.disable()
    _by_growth, _collected_at, _freezing = True, None, gc.get_freeze_count() == 0


def between_files() -> None:
    """A full collection if the peak grew by ``GROWTH_KIB`` since the last one (or, in a worker
    just forked, since its first file)."""
    global _collected_at
    if not _by_growth:
        return
    peak = _peak_kib()
    if peak is None:
        return
    if _collected_at is None:
        _collected_at = peak
    elif peak - _collected_at >= GROWTH_KIB:
        gc.collect()
        if _freezing:  # what survived is mostly the index, kept to the end: the next collections pass it over
            gc.freeze()
        _collected_at = _peak_kib() or peak


def _peak_kib() -> Optional[int]:
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak  # bytes there, KiB on Linux
