"""``python -m keydrift`` and the ``keydrift`` command: the command-line interface."""

import gc


def main() -> None:
    """``cli.run``, imported with the collector off: importing the command-line interface makes
    tens of thousands of objects that live as long as the process, and the collections they set
    off (thirty-odd, each looking at all of them again) were 4 ms of a one-file check's start.
    The run itself paces the collector by memory growth (``collector.collecting_by_growth``)."""
    gc.disable()
    try:
        from keydrift.cli import run
    finally:
        gc.enable()
    run()


if __name__ == "__main__":
    main()
