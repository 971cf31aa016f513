"""A broken pyproject.toml below the run's own (a project template, a vendored package) is
reported once, naming the file and the key, and the files under it are checked with the
configuration above it; the rest of the run goes on. A broken configuration of the run itself
stays a usage error (tests/test_cli.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from keydrift import config as kdconfig
from keydrift.cli import main
from keydrift.config import ConfigError, load_config_or_parent

KD102 = """
def record_visit(url):
    if not Page.objects.filter(url=url).exists():
        Page.objects.create(url=url.rstrip("/"))
"""
KD103 = """
def subscribe(email):
    if Subscriber.objects.filter(email=email.lower()).exists():
        return
    Subscriber.objects.create(email=email)
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A repository whose configuration ignores KD103, with a template whose own is broken."""
    (tmp_path / ".git").mkdir()
    files = {
        "pyproject.toml": "[tool.keydrift]\nignore = ['KD103']\n",
        "app/jobs.py": KD102,
        "template/pyproject.toml": "[tool.keydrift]\nboundary = 3\n",
        "template/views.py": KD102 + KD103,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"))
    monkeypatch.chdir(tmp_path)
    kdconfig.clear_cache()
    yield tmp_path
    kdconfig.clear_cache()


def _codes(out: str):
    return sorted((line.split(":")[0], line.split(" ")[1]) for line in out.splitlines())


def test_cli_reports_the_broken_subtree_once_and_checks_it_with_the_parent_configuration(project, capsys):
    status = main(["check", "--no-cache", "-q", "."])
    out, err = capsys.readouterr()
    assert status == 1
    # the template is checked, with the root's `ignore = ['KD103']`
    assert _codes(out) == [("app/jobs.py", "KD102"), ("template/views.py", "KD102")]
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("keydrift: warning: template/pyproject.toml: [tool.keydrift] 'boundary' must be")
    assert lines[0].endswith("files under template/ are checked with the configuration of pyproject.toml")


def test_parallel_run_says_it_once(project, capsys):
    for number in range(20):  # enough files for worker processes
        (project / "template" / f"m{number}.py").write_text(KD102)
    assert main(["check", "--no-cache", "-q", "-j", "2", "."]) == 1
    out, err = capsys.readouterr()
    assert err.count("template/pyproject.toml") == 1, err
    assert sum(1 for line in out.splitlines() if line.startswith("template/m")) == 20


def test_a_broken_root_configuration_stays_a_usage_error(project, capsys):
    (project / "pyproject.toml").write_text("[tool.keydrift\n")
    assert main(["check", "--no-cache", "-q", "."]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("keydrift: error: pyproject.toml: invalid TOML")


def test_nested_broken_configurations_fall_back_to_the_nearest_valid_one(project):
    (project / "template" / "inner").mkdir()
    (project / "template" / "inner" / "pyproject.toml").write_text("[tool.keydrift]\nselect = 'KD1'\n")
    config, broken = load_config_or_parent(str(project / "template" / "inner" / "x.py"))
    assert config.config_file == str(project / "pyproject.toml") and config.ignore == ("KD103",)
    assert isinstance(broken, ConfigError) and broken.path.endswith("inner/pyproject.toml")
    assert "select" in str(broken)


def test_without_a_configuration_above_the_defaults_apply(project):
    (project / "pyproject.toml").unlink()
    config, broken = load_config_or_parent(str(project / "template" / "views.py"))
    assert broken is not None and config.config_file == "" and config.ignore == ()


def test_flake8_plugin_checks_the_subtree_too(project):
    done = subprocess.run([sys.executable, "-m", "flake8", "--jobs=1", "--select", "KD", "."],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert _codes(done.stdout.replace("./", "")) == [("app/jobs.py", "KD102"), ("template/views.py", "KD102")]
    assert done.stderr.count("template/pyproject.toml") == 1, done.stderr
