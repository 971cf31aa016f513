"""Fixes (``keydrift check --fix``, ``--unsafe-fixes``, ``--diff``, ``--fix-only``,
``--add-noqa``).

Each directory of ``fixtures/fixes`` is a case: ``before/`` is a small project, ``after/`` holds
each file the fix must change as it must be afterwards (no ``after/``: nothing may change),
``args`` the options (default ``--fix``). The case's name starts with the code it is about; the
code must be reported in ``before/`` (so a near miss really is one), except in ``-clean-``
cases, where it is not reported and nothing may change.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

import libcst as cst
import pytest

from keydrift import config as kdconfig
from keydrift.cli import main
from keydrift.fixes import FIXERS, fix_for
from keydrift.fixes._apply import compiles, fix_source
from keydrift.fixes._base import Fix
from keydrift.fixes.noqa import add_noqa
from keydrift.types import Config, Finding

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fixes"
CASES = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


@pytest.fixture(autouse=True)
def fresh_configuration():
    kdconfig.clear_cache()
    yield
    kdconfig.clear_cache()


def sources(root: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.py"))}


def run(capsys, *args: str):
    status = main(["check", "--no-cache", *args])
    out, err = capsys.readouterr()
    return status, out, err


def reported_codes(capsys) -> List[str]:
    _, out, _ = run(capsys, "--format", "json", "-q", ".")
    return [f["code"] for f in json.loads(out)["findings"]]


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_fix_case(case, tmp_path, monkeypatch, capsys):
    work = tmp_path / "project"
    shutil.copytree(case / "before", work)
    (work / ".git").mkdir()  # the case is its own project
    monkeypatch.chdir(work)
    code = case.name.split("-")[0].upper()
    clean = "-clean-" in case.name
    assert (code in reported_codes(capsys)) != clean, f"{case.name}: {code} reported: {not clean}"
    options = (case / "args").read_text().split() if (case / "args").exists() else ["--fix"]

    run(capsys, "-q", *options, ".")

    expected = sources(case / "before")
    if (case / "after").exists():
        expected.update(sources(case / "after"))
    assert sources(work) == expected
    assert all(compiles(data) for data in sources(work).values())
    run(capsys, "-q", *options, ".")
    assert sources(work) == expected, "a second run changed the fixed files"


def test_every_fix_has_cases_that_apply_it_and_near_misses():
    for code in FIXERS:
        names = [c.name for c in CASES if c.name.split("-")[0].upper() == code]
        assert any((FIXTURES / n / "after").exists() for n in names), code
        assert any(not (FIXTURES / n / "after").exists() for n in names), code


# --- the command line ---------------------------------------------------------------------

PATHS = textwrap.dedent("""\
    def canonical_path(path):
        return path.rstrip("/")
""")
HOSTS = textwrap.dedent("""\
    from urllib.parse import urlsplit


    def normalize_host(url):
        parts = urlsplit(url if "://" in url else "https://" + url)
        return parts.hostname or ""
""")


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "paths.py").write_text(PATHS)
    (tmp_path / "app" / "hosts.py").write_text(HOSTS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_diff_prints_the_fix_and_changes_nothing(project, capsys):
    status, out, err = run(capsys, "--diff", ".")
    assert status == 1
    assert out.splitlines()[:2] == ["--- app/paths.py", "+++ app/paths.py"]
    assert '+    return path.rstrip("/") or "/"' in out
    assert "hosts.py" not in out  # unsafe: not without --unsafe-fixes
    assert (project / "app" / "paths.py").read_text() == PATHS
    assert "would fix 1 finding in 1 file" in err and "1 more fix with --unsafe-fixes" in err
    status, out, _ = run(capsys, "--diff", "--unsafe-fixes", ".")
    assert "+++ app/hosts.py" in out and "raise ValueError" in out


def test_a_check_says_how_many_findings_fixes_would_repair(project, capsys):
    status, _, err = run(capsys, ".")
    assert status == 1
    assert err.splitlines()[-1] == "keydrift: 1 fixable with --fix (1 more with --unsafe-fixes)"
    (project / "app" / "paths.py").write_text(PATHS.replace('rstrip("/")', 'rstrip("/") or "/"'))
    assert run(capsys, ".")[2].splitlines()[-1] == "keydrift: 1 fixable with --fix --unsafe-fixes"
    assert run(capsys, "-q", ".")[2] == ""



def test_the_fix_hint_of_an_unchanged_file_comes_from_the_cache(project, capsys, monkeypatch):
    import keydrift.fixes.run as fixes_run

    counted: List[str] = []
    real = fixes_run.fix_counts

    def counting(source, findings, config):
        counted.append(findings[0].path)
        return real(source, findings, config)

    monkeypatch.setattr(fixes_run, "fix_counts", counting)

    def hint() -> str:
        main(["check", "."])
        return capsys.readouterr()[1].splitlines()[-1]

    first = hint()
    assert first == "keydrift: 1 fixable with --fix (1 more with --unsafe-fixes)"
    assert sorted(counted) == ["app/hosts.py", "app/paths.py"]
    assert hint() == first and len(counted) == 2  # nothing parsed again
    (project / "app" / "paths.py").write_text(PATHS.replace('rstrip("/")', 'rstrip("/") or "/"'))
    assert hint() == "keydrift: 1 fixable with --fix --unsafe-fixes"
    assert counted[2:] == []  # the edited file has no fixable finding left; hosts.py unchanged
    (project / "app" / "hosts.py").write_text(HOSTS + "\n# edited\n")
    assert hint() == "keydrift: 1 fixable with --fix --unsafe-fixes"
    assert counted[2:] == ["app/hosts.py"]  # its source changed: counted again
    kept = [name for name in os.listdir(project / ".keydrift_cache") if name.startswith("x-")]
    assert len(kept) == 2  # one entry per file: an edit replaces it


def _counting_fixes_by_process(monkeypatch, log) -> None:
    """Each count of a file's fixes from now on, as a line "process file" in ``log`` (workers too)."""
    from keydrift import cli

    real = cli._count_fixes

    def counting(source, findings, config):
        with open(log, "a") as out:
            out.write(f"{os.getpid()} {findings[0].path}\n")
        return real(source, findings, config)

    monkeypatch.setattr(cli, "_count_fixes", counting)


def _counted(log) -> List[Tuple[bool, str]]:
    """(whether this process counted, the file) for each count ``_counting_fixes_by_process`` saw."""
    lines = log.read_text().splitlines() if log.exists() else []
    return sorted((int(line.split()[0]) == os.getpid(), line.split()[1]) for line in lines)


@pytest.mark.parametrize("options, expected", [
    ([], [(False, "app/hosts.py"), (False, "app/paths.py")]),  # by the workers, not after them
    (["--no-cache"], [(True, "app/hosts.py"), (True, "app/paths.py")]),  # nothing would remember them
    (["-q"], []),  # no hint: nothing counted
])
def test_the_workers_of_a_parallel_run_count_the_fixes_of_the_files_they_check(project, capsys, monkeypatch,
                                                                               tmp_path_factory, options, expected):
    log = tmp_path_factory.mktemp("counts") / "counted"
    for number in range(16):  # enough files for a process pool
        (project / "app" / f"plain{number}.py").write_text(f"X = {number}\n")
    _counting_fixes_by_process(monkeypatch, log)
    main(["check", "-j", "2", *options, "."])
    err = capsys.readouterr()[1]
    assert _counted(log) == expected
    if "-q" not in options:
        assert err.splitlines()[-1] == "keydrift: 1 fixable with --fix (1 more with --unsafe-fixes)"


UNIQUE_RAW_EMAIL = textwrap.dedent("""\
    from django.db import models


    class Account(models.Model):
        email = models.EmailField(unique=True)
""")


def test_a_check_whose_findings_no_fix_handles_leaves_libcst_unimported(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "models.py").write_text(UNIQUE_RAW_EMAIL)
    script = ("import sys\nfrom keydrift.cli import main\nstatus = main(['check', '--no-cache', '.'])\n"
              "print(status, 'libcst' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert "KD301" in done.stdout and "fixable" not in done.stderr
    assert done.stdout.splitlines()[-1] == "1 False"


def test_fix_reports_what_remains_and_counts(project, capsys):
    status, out, err = run(capsys, "--fix", ".")
    assert status == 1
    assert "app/hosts.py:6:12: KD402" in out and "KD403" not in out
    assert "fixed 1 finding in 1 file, 1 remaining" in err
    assert 'or "/"' in (project / "app" / "paths.py").read_text()
    status, out, err = run(capsys, "--fix", "--unsafe-fixes", ".")
    assert (status, out) == (0, "")
    assert "fixed 1 finding in 1 file, 0 remaining" in err


def test_fix_only_reports_nothing_else_and_exits_zero(project, capsys):
    status, out, err = run(capsys, "--fix-only", ".")
    assert (status, out) == (0, "")
    assert "fixed 1 finding" in err


def test_a_file_changed_during_the_run_is_left_alone(project, capsys, monkeypatch):
    import keydrift.fixes.run as fixrun

    def edited_meanwhile(source, *args, **kwargs):
        (project / "app" / "paths.py").write_text(PATHS + "# edited\n")
        return fix_source(source, *args, **kwargs)

    monkeypatch.setattr(fixrun, "fix_source", edited_meanwhile)
    status, out, err = run(capsys, "--fix", "app/paths.py")
    assert "app/paths.py changed during the run; not fixed" in err
    assert (project / "app" / "paths.py").read_text() == PATHS + "# edited\n"
    assert "KD403" in out


def test_a_file_keydrift_cannot_parse_is_never_touched(project, capsys):
    broken = "def canonical_path(path):\n    return path.rstrip('/'\n"
    (project / "app" / "paths.py").write_text(broken)
    for options in (["--fix", "--unsafe-fixes"], ["--add-noqa"]):
        run(capsys, *options, "app/paths.py")
        assert (project / "app" / "paths.py").read_text() == broken


def test_stdin_gets_the_fixed_source_on_stdout(project, capsys, monkeypatch):
    stdin = io.TextIOWrapper(io.BytesIO(PATHS.encode()))
    monkeypatch.setattr("sys.stdin", stdin)
    out = io.BytesIO()

    class Stdout(io.TextIOWrapper):
        pass

    wrapper = Stdout(out, encoding="utf-8")
    monkeypatch.setattr("sys.stdout", wrapper)
    main(["check", "--no-cache", "--fix", "--stdin-filename", "app/other.py", "-"])
    wrapper.flush()
    assert out.getvalue().decode() == PATHS.replace('rstrip("/")', 'rstrip("/") or "/"')


def test_add_noqa_merges_with_existing_comments_and_is_idempotent(project, capsys):
    (project / "app" / "paths.py").write_text(
        'def canonical_path(path):\n    return path.rstrip("/")  # noqa: E501 long line\n')
    (project / "app" / "hosts.py").write_text(HOSTS.replace('or ""', 'or ""  # noqa'))
    status, _, err = run(capsys, "--add-noqa", ".")
    assert status == 0 and "added 1 noqa comment in 1 file" in err
    assert (project / "app" / "paths.py").read_text().endswith(
        'return path.rstrip("/")  # noqa: E501,KD403 long line\n')
    assert (project / "app" / "hosts.py").read_text() == HOSTS.replace('or ""', 'or ""  # noqa')
    assert run(capsys, ".")[0] == 0
    run(capsys, "--add-noqa", ".")
    assert "KD403 long line" in (project / "app" / "paths.py").read_text()


def test_add_noqa_on_a_statement_spanning_lines_and_crlf():
    source = b'x = Page.objects.create(\r\n    url=u,\r\n)\r\ny = 1\r\n'
    finding = Finding("KD102", "KD102 m", "a.py", 1, 4, end_line=3)
    fixed, added = add_noqa(source, [finding, finding])
    assert added == 1
    assert fixed == b'x = Page.objects.create(  # noqa: KD102\r\n    url=u,\r\n)\r\ny = 1\r\n'


def test_add_noqa_cannot_be_combined_with_fix(project, capsys):
    status, _, err = run(capsys, "--add-noqa", "--fix", ".")
    assert status == 2 and "cannot be combined" in err


# --- safety --------------------------------------------------------------------------------

def test_a_fix_whose_result_does_not_compile_is_dropped():
    source = b"def f(path):\n    return path\n"

    def breaks_the_code(finding, document, config):
        statement = document.module.body[0]
        return Fix("KD999", "break it", True, ((statement, cst.parse_statement("return 1\n")),))

    finding = Finding("KD999", "m", "a.py", 1, 0)
    outcome = fix_source(source, [finding], lambda data: [finding], breaks_the_code, Config(), unsafe=True)
    assert outcome.source == source and outcome.applied == 0


def test_fixes_are_not_applied_to_a_file_that_was_not_analyzed():
    source = PATHS.encode()
    findings = [Finding("KD403", "m", "a.py", 2, 11, end_line=2, end_col=27),
                Finding("KD901", "m", "a.py", 1, 0)]
    outcome = fix_source(source, findings, lambda data: [], fix_for, Config(), unsafe=True)
    assert outcome.source == source


def test_fixes_keep_the_encoding_and_line_endings():
    source = '# -*- coding: latin-1 -*-\r\ndef canonical_path(path):  # café\r\n    return path.rstrip("/")\r\n'
    data = source.encode("latin-1")
    finding = Finding("KD403", "m", "a.py", 3, 11, end_line=3, end_col=27)
    outcome = fix_source(data, [finding], lambda fixed: [], fix_for, Config(), unsafe=False)
    assert outcome.source == source.replace('rstrip("/")', 'rstrip("/") or "/"').encode("latin-1")


# --- every rule's documented examples ------------------------------------------------------

from keydrift.rules import ALL_RULES  # noqa: E402 - grouped with the tests that use it
from keydrift.testing import write_example  # noqa: E402

EXAMPLES = [(rule.CODE, index, example) for rule in ALL_RULES for index, example in enumerate(rule.examples())]


@pytest.mark.parametrize("item", EXAMPLES, ids=[f"{c}-{i}" for c, i, _ in EXAMPLES])
def test_fixes_of_rule_examples_compile_and_settle(item, tmp_path, monkeypatch, capsys):
    """``--fix --unsafe-fixes`` on each documented example: every file that compiled still
    does (one that did not is untouched), a VALID example (no finding) is untouched, and a
    second run changes nothing."""
    code, _, example = item
    root = write_example(example, tmp_path / "example")
    (root / ".git").mkdir(exist_ok=True)
    monkeypatch.chdir(root)
    before = sources(root)
    run(capsys, "-q", "--fix", "--unsafe-fixes", ".")
    fixed = sources(root)
    for name, data in before.items():
        assert compiles(fixed[name]) if compiles(data) else fixed[name] == data, name
    if example.valid:
        assert fixed == before
    run(capsys, "-q", "--fix", "--unsafe-fixes", ".")
    assert sources(root) == fixed


def test_fix_with_a_baseline_reports_only_new_remaining_findings(project, capsys):
    (project / "app" / "paths.py").write_text(PATHS + HOSTS.replace("normalize_host", "normalize_other"))
    run(capsys, "--write-baseline", "baseline.json", "app/hosts.py")
    status, out, err = run(capsys, "--fix", "--baseline", "baseline.json", ".")
    assert "app/paths.py" in out and "app/hosts.py" not in out and status == 1
    assert "fixed 1 finding in 1 file, 2 remaining" in err


def test_fix_reports_the_project_registry_findings_that_remain(tmp_path, monkeypatch, capsys):
    """KD108-KD110 come from the registry of the whole project: --fix reports them too."""
    work = tmp_path / "project"
    shutil.copytree(FIXTURES / "kd108-near-miss-normalizer-not-configured" / "before", work)
    (work / ".git").mkdir()
    monkeypatch.chdir(work)
    status, out, _ = run(capsys, "--fix", "--unsafe-fixes", ".")
    assert status == 1 and "accounts/profile.py:5:5: KD108" in out


def test_explain_says_what_the_fix_does(capsys):
    assert main(["explain", "KD403"]) == 0
    out = capsys.readouterr().out
    assert "\n## Fix\nKD403 (safe): " in out and "--unsafe-fixes" in out
    assert main(["explain", "KD101"]) == 0
    assert "## Fix" not in capsys.readouterr().out


def test_a_fix_libcst_cannot_apply_is_dropped_without_stopping_the_run():
    source = b"def f(path):\n    return path\n"

    def impossible(finding, document, config):
        name = document.module.body[0].name  # a Name replaced by a statement: libcst refuses
        return Fix("KD999", "impossible", True, ((name, cst.parse_statement("pass\n")),))

    finding = Finding("KD999", "m", "a.py", 1, 0)
    outcome = fix_source(source, [finding], lambda data: [finding], impossible, Config(), unsafe=True)
    assert outcome.source == source and outcome.applied == 0
