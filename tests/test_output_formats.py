"""Every ``--format``: GitLab Code Quality, the documented JSON fields, ``--output FILE`` for
each format, a deterministic order, and the progress line on terminals."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from keydrift import cli
from keydrift import config as kdconfig
from keydrift.cli import main
from keydrift.output import FORMATTERS, ReportContext, gitlab
from keydrift.output.progress import Progress
from keydrift.types import Finding, Location

GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n")
    monkeypatch.chdir(tmp_path)
    kdconfig.clear_cache()
    yield tmp_path
    kdconfig.clear_cache()


def fake_findings(source, path, config):
    related = (Location(path, 3, 11, "read by domain.url"),)
    identity = ("KD102", "Page", "url", ".lower()", "visit")
    return [Finding("KD102", "KD102 b", path, 9, 0, 9, related, identity),
            Finding("KD101", "KD101 a", path, 2, 4, 3, related, identity[:1] + identity[1:4] + ("audit",))]


@pytest.fixture
def two_files(project, monkeypatch):
    monkeypatch.setattr(cli, "check_cached", fake_findings)
    for name in ("z.py", "a/b.py"):
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text("")


def test_gitlab_code_quality(two_files, capsys):
    status = main(["check", "--format", "gitlab"])
    issues = json.loads(capsys.readouterr().out)
    assert status == 1
    assert [(i["location"]["path"], i["location"]["lines"]["begin"], i["check_name"]) for i in issues] == [
        ("a/b.py", 2, "KD101"), ("a/b.py", 9, "KD102"), ("z.py", 2, "KD101"), ("z.py", 9, "KD102")]
    first = issues[0]
    assert first["description"] == "KD101 a"
    assert first["severity"] in GITLAB_SEVERITIES
    assert first["location"]["lines"] == {"begin": 2, "end": 3}
    assert len({i["fingerprint"] for i in issues}) == 4  # GitLab needs them unique


def test_gitlab_paths_are_relative_to_the_project_root(project):
    finding = Finding("KD900", "KD900 x", str(project / "app" / "m.py"), 1, 0, 1)
    [issue] = json.loads(gitlab.format_findings([finding], ReportContext(root=str(project))))
    assert issue["location"]["path"] == "app/m.py"
    assert issue["severity"] == "minor"


def test_json_documented_fields(two_files, capsys):
    main(["check", "--format", "json", "z.py"])
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"version", "keydrift", "findings"}
    first = document["findings"][0]
    assert set(first) == {"code", "message", "path", "line", "column", "end_line", "related", "fingerprint"}
    assert first["related"] == [{"path": "z.py", "line": 3, "column": 12, "note": "read by domain.url"}]


@pytest.mark.parametrize("format_name", sorted(FORMATTERS))
def test_every_format_writes_to_output_file_and_is_deterministic(two_files, capsys, format_name):
    assert main(["check", "--format", format_name, "--output", "report.out", "z.py", "a"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "keydrift: 4 findings in 2 of 2 files\n"
    first = Path("report.out").read_text(encoding="utf-8")
    main(["check", "--format", format_name, "--output", "report.out", "a", "z.py", "--quiet"])
    assert capsys.readouterr() == ("", "")
    assert Path("report.out").read_text(encoding="utf-8") == first
    assert first.index("a/b.py") < first.index("z.py")


# --- progress ---------------------------------------------------------------------------------

class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_progress_only_on_a_terminal_only_for_long_runs_and_at_most_every_interval():
    terminal, clock = FakeTerminal(), Clock()
    progress = Progress(terminal, 3, clock)
    progress.show(1, "a.py")
    assert terminal.getvalue() == ""  # the first second is quiet
    clock.now += 1.5
    progress.show(2, "b.py")
    clock.now += 0.1
    progress.show(3, "c.py")  # too soon after the last draw
    assert terminal.getvalue() == "\r\x1b[K[2/3] b.py"
    clock.now += 0.2
    progress.show(3, "c.py")
    progress.clear()
    assert terminal.getvalue() == "\r\x1b[K[2/3] b.py\r\x1b[K[3/3] c.py\r\x1b[K"

    pipe = io.StringIO()
    quiet = Progress(pipe, 3, clock)
    clock.now += 5
    quiet.show(1, "a.py")
    quiet.clear()
    assert pipe.getvalue() == ""
    assert Progress(None, 3, clock).stream is None  # --quiet


def test_check_draws_progress_on_a_terminal_unless_quiet(two_files, capsys, monkeypatch):
    monkeypatch.setattr("keydrift.output.progress.DELAY", 0.0)
    monkeypatch.setattr("keydrift.output.progress.INTERVAL", 0.0)
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    main(["check", "z.py", "a"])
    assert terminal.getvalue().startswith("\r\x1b[K[1/2] z.py\r\x1b[K[2/2] a/b.py\r\x1b[K")
    terminal.seek(0)
    terminal.truncate()
    main(["check", "--quiet", "z.py", "a"])
    assert terminal.getvalue() == ""
