"""``python -m keydrift`` and the ``keydrift`` command: the command-line interface."""

import gc
import sys

from keydrift import early_reading


def main() -> None:
    """``cli.run``, imported with the collector off: importing the command-line interface makes
    tens of thousands of objects that live as long as the process, and the collections they set
    off (thirty-odd, each looking at all of them again) were 4 ms of a one-file check's start.
    The run itself paces the collector by memory growth (``collector.collecting_by_growth``).
    A check of a few files without the cache has the project's files read meanwhile
    (``early_reading``)."""
    gc.disable()
    try:
        early_reading.start(sys.argv[1:])  # the project's files read on the other core meanwhile
        from keydrift.cli import run
    finally:
        gc.enable()
    run()


if __name__ == "__main__":
    main()
