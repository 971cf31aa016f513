"""A progress line on stderr for long runs: ``[n/N] path``, redrawn in place.

Shown only when the stream is a terminal, and only once the run has lasted ``DELAY`` seconds,
so short runs and captured output (CI logs, pre-commit, editors) never see it. Redrawn at most
every ``INTERVAL`` seconds and erased when the run ends.
"""

from __future__ import annotations

import time
from typing import Callable, Optional, TextIO

DELAY = 1.0
INTERVAL = 0.2
_ERASE_LINE = "\r\x1b[K"


class Progress:
    def __init__(self, stream: Optional[TextIO], total: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None and _is_terminal(stream) else None
        self.total = total
        self.clock = clock
        self.started = clock()
        self.last_drawn: Optional[float] = None

    def show(self, number: int, path: str) -> None:
        """Called before file ``number`` (from 1); draws when the run is long and the last
        draw is old."""
        if self.stream is None:
            return
        now = self.clock()
        if now - self.started < DELAY:
            return
        if self.last_drawn is not None and now - self.last_drawn < INTERVAL:
            return
        self.last_drawn = now
        self._write(_ERASE_LINE + self._fit(f"[{number}/{self.total}] {path}"))

    def clear(self) -> None:
        if self.stream is not None and self.last_drawn is not None:
            self._write(_ERASE_LINE)
            self.last_drawn = None

    def _fit(self, line: str) -> str:
        import shutil  # only a terminal's run draws: a one-file check does not import it

        width = shutil.get_terminal_size((80, 24)).columns - 1
        return line if len(line) <= width else line[: max(0, width - 3)] + "..."

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)  # type: ignore[union-attr]
            self.stream.flush()  # type: ignore[union-attr]
        except (OSError, ValueError):
            self.stream = None  # a closed terminal must not stop the run


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
