"""Adopting keydrift on a legacy codebase: ``--write-baseline``/``--baseline`` and
``--changed-since``, with the real analysis and a real git repository."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from keydrift import cli
from keydrift import config as kdconfig
from keydrift.analysis.project import forget_indexes
from keydrift.cli import main
from keydrift.types import Finding

JOBS = textwrap.dedent("""\
    from app.audit import run_audit


    def audit_new_domains():
        for domain in Domain.objects.all():
            if AuditResult.objects.filter(url=domain.url).exists():
                continue
            outcome = run_audit(domain.url)
            AuditResult.objects.create(url=outcome.final_url, score=outcome.score)
""")
NEW_BUG = textwrap.dedent("""\


    def record_visit(url):
        if not Page.objects.filter(url=url).exists():
            Page.objects.create(url=url.rstrip("/"))
""")
STORE = "def save_page(url, title):\n    Page.objects.create(url=url.lower(), title=title)\n"
VIEWS = textwrap.dedent("""\
    from app.store import save_page


    def add(url, title):
        if Page.objects.filter(url=url).exists():
            return
        save_page(url, title)
""")


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(name)  # a test run from a git hook must not act on the outer repository
    write("pyproject.toml", "[tool.keydrift]\n")
    write("app/__init__.py", "")
    kdconfig.clear_cache()
    forget_indexes()
    yield tmp_path
    kdconfig.clear_cache()
    forget_indexes()


def write(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def check(capsys, *args):
    status = main(["check", "--no-cache", *args])
    out, err = capsys.readouterr()
    forget_indexes()  # files change between runs of one test
    return status, out, err


def codes_and_paths(out):
    return [(line.split(": ")[1].split()[0], line.split(":")[0]) for line in out.splitlines()]


# --- baseline -------------------------------------------------------------------------------

def test_baseline_keeps_known_findings_quiet_when_lines_move_and_reports_new_ones(project, capsys):
    write("app/jobs.py", JOBS)
    status, out, err = check(capsys, "--write-baseline", "keydrift-baseline.json")
    assert (status, out) == (0, "")
    assert err == "keydrift: recorded 1 finding in keydrift-baseline.json\n"
    document = json.loads(Path("keydrift-baseline.json").read_text())
    [entry] = document["findings"]
    assert (entry["path"], entry["code"], entry["count"]) == ("app/jobs.py", "KD101", 1)
    assert "line" not in entry

    write("app/jobs.py", '"""Jobs."""\nimport logging\n\nlog = logging.getLogger(__name__)\n' + JOBS)
    status, out, err = check(capsys, "--baseline", "keydrift-baseline.json")
    assert (status, out) == (0, "")
    assert err == "keydrift: no new findings in 2 files (1 in the baseline, not shown)\n"

    write("app/jobs.py", JOBS + NEW_BUG)
    status, out, err = check(capsys, "--baseline", "keydrift-baseline.json")
    assert status == 1
    assert codes_and_paths(out) == [("KD102", "app/jobs.py")]
    assert "1 new finding in 1 of 2 files (1 in the baseline, not shown)" in err

    # the baseline's paths are relative to its own directory, not to where keydrift runs
    os.chdir("app")
    status, out, _ = check(capsys, "--baseline", "../keydrift-baseline.json", "jobs.py")
    assert status == 1 and codes_and_paths(out) == [("KD102", "jobs.py")]


def test_duplicate_findings_are_counted(project, capsys, monkeypatch):
    copies = {"n": 2}

    def findings_for(source, path, config):
        finding = Finding("KD101", "KD101 same", path, 3, 4, 3, (), ("KD101", "Page", "url", "lower", "f"))
        return [finding] * copies["n"]
    monkeypatch.setattr(cli, "check_cached", findings_for)
    write("app/loop.py", "")
    assert check(capsys, "--write-baseline", "base.json", "app/loop.py")[0] == 0
    assert json.loads(Path("base.json").read_text())["findings"][0]["count"] == 2
    assert check(capsys, "--baseline", "base.json", "--quiet", "app/loop.py")[:2] == (0, "")
    copies["n"] = 3
    status, out, _ = check(capsys, "--baseline", "base.json", "--quiet", "app/loop.py")
    assert (status, out) == (1, "app/loop.py:3:5: KD101 same\n")


def test_baseline_errors_are_one_line(project, capsys):
    write("app/jobs.py", JOBS)
    status, _, err = check(capsys, "--baseline", "missing.json")
    assert status == 2 and err.startswith("keydrift: error: cannot read missing.json") and err.count("\n") == 1
    write("bad.json", "{")
    status, _, err = check(capsys, "--baseline", "bad.json")
    assert status == 2 and err.startswith("keydrift: error: bad.json: not a keydrift baseline")
    write("other.json", '{"findings": []}')
    assert "not a keydrift baseline" in check(capsys, "--baseline", "other.json")[2]
    status, _, err = check(capsys, "--baseline", "a.json", "--write-baseline", "b.json")
    assert status == 2 and "not allowed with argument" in err


# --- --changed-since ------------------------------------------------------------------------

def git(*arguments):
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                           "-c", "commit.gpgsign=false", *arguments], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()


def test_changed_since_reports_changed_files_with_the_whole_project_known(project, capsys):
    write("app/jobs.py", JOBS)
    write("app/store.py", STORE)
    write(".gitignore", "ignored/\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "legacy")

    # an untracked caller whose finding needs the unchanged helper module's summary
    write("app/views.py", VIEWS)
    write("ignored/gen.py", JOBS)
    status, out, _ = check(capsys, "--changed-since", "HEAD")
    assert status == 1
    assert codes_and_paths(out) == [("KD102", "app/views.py")]
    assert "save_page() (app/store.py:2)" in out

    git("add", "app/views.py")
    git("commit", "-q", "-m", "views")
    assert check(capsys, "--changed-since", "HEAD", "--quiet")[:2] == (0, "")
    write("app/jobs.py", "# edited\n" + JOBS)  # an unstaged change
    status, out, _ = check(capsys, "--changed-since", "HEAD~1")
    assert codes_and_paths(out) == [("KD101", "app/jobs.py"), ("KD102", "app/views.py")]
    # from a subdirectory, with explicit paths: only those among the changed files
    os.chdir("app")
    status, out, _ = check(capsys, "--changed-since", "HEAD~1", "views.py", "store.py")
    assert codes_and_paths(out) == [("KD102", "views.py")]


def test_changed_since_errors(project, capsys):
    write("app/jobs.py", JOBS)
    status, _, err = check(capsys, "--changed-since", "HEAD")
    assert status == 2 and err.startswith("keydrift: error: --changed-since") and err.count("\n") == 1
    git("init", "-q")
    status, _, err = check(capsys, "--changed-since", "no-such-revision")
    assert status == 2 and err.startswith("keydrift: error: --changed-since no-such-revision: ")
    status, _, err = check(capsys, "--changed-since=--output=x")
    assert status == 2 and "is not a revision" in err
