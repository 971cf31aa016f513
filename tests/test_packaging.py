"""Packaging as flake8 users expect: flake8 comes with keydrift, both front ends name keydrift's
version, and a plain ``pip install .`` into a fresh environment is enough for
``flake8 --select KD`` to report the demo's finding."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest

from keydrift import __version__

ROOT = Path(__file__).resolve().parent.parent


def test_flake8_is_a_dependency_not_an_extra():
    """A flake8 plugin that does not install flake8 leaves `flake8: command not found`."""
    requirements = metadata.requires("keydrift") or []
    plain = [r for r in requirements if re.match(r"flake8\b", r) and "extra ==" not in r]
    assert plain, requirements


def test_both_front_ends_name_keydrift_and_its_version():
    kd = subprocess.run([sys.executable, "-m", "keydrift", "--version"], capture_output=True, text=True, timeout=60)
    assert kd.returncode == 0 and kd.stdout == f"keydrift {__version__}\n"
    f8 = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, timeout=60)
    assert f8.returncode == 0 and f"keydrift: {__version__}" in f8.stdout, f8.stdout


def _copy_sources(target: Path) -> Path:
    """The checkout's tracked files (as they are on disk), so the build writes nothing here."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, timeout=60)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.mark.integration
def test_pip_install_then_flake8_reports_the_demo(tmp_path):
    """A fresh venv, `pip install .`, then `flake8 --select KD examples/audit_loop`."""
    sources = _copy_sources(tmp_path / "src")
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    bindir = environment / ("Scripts" if os.name == "nt" else "bin")
    install = subprocess.run([str(bindir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", "."],
                             cwd=sources, capture_output=True, text=True, timeout=900)
    if install.returncode != 0 and "No matching distribution" in install.stderr:
        pytest.skip("no package index reachable for the build dependencies")
    assert install.returncode == 0, install.stderr
    demo = sources / "examples" / "audit_loop"
    done = subprocess.run([str(bindir / "flake8"), "--select", "KD", "."], cwd=demo,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and re.search(r"app/jobs\.py:\d+:\d+: KD101 ", done.stdout), (
        done.stdout + done.stderr)
    version = subprocess.run([str(bindir / "keydrift"), "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout == f"keydrift {__version__}\n"
