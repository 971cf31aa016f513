"""``python -m keydrift``: the command-line interface."""

from keydrift.cli import run

run()
