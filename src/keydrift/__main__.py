"""``python -m keydrift``: the command-line interface."""

import sys

from keydrift.cli import main

sys.exit(main())
