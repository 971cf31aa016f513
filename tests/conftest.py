"""Suite-wide setup: the whole suite runs in parallel, and nothing it runs writes into the
repository.

``python -m pytest -q`` without paths runs on every core (pytest-xdist ``-n auto``); a run of
chosen files or tests stays in one process (faster to start, ``-s`` and ``--pdb`` work), and
``-n N`` decides explicitly.

Tests work in temporary directories (``tmp_path``) or with the cache off, hypothesis keeps its
example database in the system's temporary directory, and a check at the end of the run fails
it if a file appeared in the checkout (Python's ``__pycache__`` and pytest's own cache aside).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Optional, Set

import pytest

# Every record frozen (``keydrift.records``): a test fails where code assigns to one. Set before
# keydrift is imported, and inherited by the processes the tests start.
os.environ["KEYDRIFT_FROZEN_RECORDS"] = "1"

ROOT = Path(__file__).resolve().parent.parent
_ALLOWED_PARTS = ("__pycache__", ".pytest_cache")

try:
    from hypothesis import configuration, settings
    from hypothesis.database import DirectoryBasedExampleDatabase
except ImportError:  # pragma: no cover - hypothesis is a test extra
    pass
else:
    # its example database and its unicode tables, kept between runs but outside the checkout;
    # one per checkout, so that a failing example found in one is not replayed in every other
    _CHECKOUT = hashlib.sha256(str(ROOT).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    _HYPOTHESIS_HOME = os.path.join(tempfile.gettempdir(), "keydrift-hypothesis", _CHECKOUT)
    configuration.set_hypothesis_home_dir(_HYPOTHESIS_HOME)
    settings.register_profile("keydrift", database=DirectoryBasedExampleDatabase(
        os.path.join(_HYPOTHESIS_HOME, "examples")))
    settings.load_profile("keydrift")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n auto`` for a run of the whole suite (before pytest-xdist reads the option)."""
    worker = hasattr(config, "workerinput") or "PYTEST_XDIST_WORKER" in os.environ
    whole_suite = str(getattr(config, "args_source", "")).endswith("TESTPATHS")
    if (whole_suite and not worker and config.pluginmanager.has_plugin("xdist")
            and getattr(config.option, "numprocesses", 0) is None
            and not config.getoption("collectonly") and not config.getoption("usepdb")):
        config.option.numprocesses = "auto"


def _untracked() -> Optional[Set[str]]:
    """Files in the checkout git does not track (ignored ones included); None outside git."""
    try:
        done = subprocess.run(["git", "ls-files", "--others", "-z"], cwd=ROOT, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    names = done.stdout.decode("utf-8", "replace").split("\0")
    return {n for n in names if n and not any(part in _ALLOWED_PARTS for part in n.split("/"))}


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller, not an xdist worker
        session.config._keydrift_untracked = _untracked()  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = getattr(session.config, "_keydrift_untracked", None)
    after = _untracked() if before is not None else None
    if before is None or after is None:
        return
    written = sorted(after - before)
    if written:
        shown = "\n  ".join(written[:20]) + ("\n  ..." if len(written) > 20 else "")
        print(f"\nthe test run wrote {len(written)} file(s) into the repository:\n  {shown}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
