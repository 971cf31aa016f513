"""The flake8 plugin: registered and on by default, flake8's noqa, KD9xx dropped, never raises.

Subprocess runs of flake8 use a stand-in engine (injected before flake8 loads the plugin) so
they test the plugin, not the analysis; ``test_real_analysis_kd101`` needs the analysis.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest

from keydrift import config as kdconfig
from keydrift import flake8_plugin
from keydrift.flake8_plugin import KeydriftChecker
from keydrift.types import Finding

# The stand-in engine: a KD101 on each ``.create(`` line spanning the next 3 lines (the noqa
# fixture's statement), and a KD900 the plugin must drop.
FLAKE8_WITH_FAKE_ENGINE = textwrap.dedent("""\
    import sys
    import keydrift.flake8_plugin as plugin
    from keydrift.types import Finding

    def check_source(source, path, config, tree=None):
        assert tree is not None  # flake8's tree: the plugin parses nothing itself
        found = [Finding("KD900", "KD900 cannot parse", path, 1, 0, 1)]
        for number, line in enumerate(source.splitlines(), 1):
            if ".create(" in line:
                col = len(line) - len(line.lstrip())
                found.append(Finding("KD101", "KD101 fake finding", path, number, col, number + 3))
        return found

    plugin.check_cached = check_source
    from flake8.main.cli import main
    sys.exit(main(sys.argv[1:]))
""")

KD101_SNIPPET = textwrap.dedent("""\
    def audit(urls):
        for domain in Domain.objects.all():
            if AuditResult.objects.filter(url=domain.url).exists():
                continue
            outcome = run_audit(domain.url)
            AuditResult.objects.create(url=outcome.final_url, score=outcome.score)
""")
MULTILINE_NOQA = KD101_SNIPPET.replace(
    "AuditResult.objects.create(url=outcome.final_url, score=outcome.score)",
    "AuditResult.objects.create(\n            url=outcome.final_url,\n"
    "            score=outcome.score,\n        )  # noqa: KD101")


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    kdconfig.clear_cache()
    flake8_plugin._already_said.clear()
    yield tmp_path
    kdconfig.clear_cache()


def flake8(*args, fake_engine=True):
    prefix = ["-c", FLAKE8_WITH_FAKE_ENGINE] if fake_engine else ["-m", "flake8"]
    done = subprocess.run([sys.executable, *prefix, "--jobs=1", *args],
                          capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


def test_registered_on_by_default_noqa_and_syntax_errors(project):
    (project / "audit.py").write_text(KD101_SNIPPET)
    (project / "noqa.py").write_text(MULTILINE_NOQA)
    (project / "broken.py").write_text("x = Model.objects.get(\n")
    status, out = flake8("--select", "KD,E999")
    assert status == 1
    lines = out.splitlines()
    assert lines[0] == "./audit.py:6:9: KD101 fake finding"
    assert lines[1].startswith("./broken.py:") and " E999 " in lines[1]
    assert len(lines) == 2  # noqa on the statement's last line; no KD900 anywhere

    _, out = flake8("--disable-noqa", "--select", "KD", "noqa.py")
    assert out == "noqa.py:6:9: KD101 fake finding\n"

    _, out = flake8("audit.py")  # no --select: KD is on with flake8's defaults
    assert "audit.py:6:9: KD101 fake finding" in out
    assert "F821" in out


@pytest.mark.parametrize("selection, runs, reported", [
    (["--select", "F"], False, False),
    (["--select", "E,W", "--extend-ignore", "KD"], False, False),
    (["--extend-ignore", "KD"], False, False),  # flake8's defaults, keydrift's codes ignored
    (["--select", "F", "--extend-select", "KD3"], True, False),
    (["--select", "KD101"], True, True),
    (["--select", "KD", "--ignore", "KD1"], True, False),  # KD2.. still reported
    ([], True, True),  # flake8's defaults: keydrift's codes are on
])
def test_the_analysis_runs_only_when_a_keydrift_code_can_be_reported(project, selection, runs, reported):
    (project / "audit.py").write_text(KD101_SNIPPET)
    program = FLAKE8_WITH_FAKE_ENGINE.replace("    found = [Finding(", "    sys.stderr.write('engine ran\\n')\n    found = [Finding(")
    done = subprocess.run([sys.executable, "-c", program, "--jobs=1", *selection, "audit.py"],
                          capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    assert ("engine ran" in done.stderr) is runs
    assert ("KD101" in done.stdout) is reported  # (the stand-in engine finds only a KD101)


def test_the_analysis_runs_when_the_selection_cannot_be_read():
    assert flake8_plugin._reports_a_keydrift_code(object()) is True


def test_real_analysis_kd101(project):
    """Needs the analysis (KD101 on the create() line); noqa on the statement's last line."""
    (project / "audit.py").write_text(KD101_SNIPPET)
    (project / "noqa.py").write_text(MULTILINE_NOQA)
    status, out = flake8("--select", "KD", "audit.py", "noqa.py", fake_engine=False)
    assert status == 1
    assert out.startswith("audit.py:6:9: KD101 ")
    assert "noqa.py" not in out


# --- in-process: run() never raises ---------------------------------------------------------

def checker(source, filename="app.py"):
    return KeydriftChecker(ast.parse(source), filename, source.splitlines(keepends=True))


def test_results_are_flake8_tuples_and_kd9_is_dropped(monkeypatch):
    def check_source(source, path, config, tree=None):
        assert source == "x = 1\n" and path == "app.py"
        assert isinstance(tree, ast.Module) and isinstance(tree.body[0], ast.Assign)  # flake8's, not parsed again
        return [Finding("KD900", "cannot parse", path, 1, 0, 1),
                Finding("KD101", "KD101 found", path, 3, 4, 5)]
    monkeypatch.setattr(flake8_plugin, "check_cached", check_source)
    assert list(checker("x = 1\n").run()) == [(3, 4, "KD101 found", KeydriftChecker)]
    assert KeydriftChecker.name == "keydrift"


def test_an_engine_exception_does_not_escape(monkeypatch, capsys):
    def explode(source, path, config, tree=None):
        raise RuntimeError("boom")
    monkeypatch.setattr(flake8_plugin, "check_cached", explode)
    assert list(checker("x = 1\n").run()) == []
    assert capsys.readouterr().err == "keydrift: internal error on app.py: RuntimeError: boom\n"


def test_a_config_error_is_said_once(project, monkeypatch, capsys):
    (project / "pyproject.toml").write_text("[tool.keydrift]\nboundry = []\n")
    monkeypatch.setattr(flake8_plugin, "check_cached", pytest.fail)
    assert list(checker("x = 1\n", "a.py").run()) == []
    assert list(checker("x = 1\n", "b.py").run()) == []
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "unknown key 'boundry'" in err and "keydrift checks are skipped" in err


def test_config_follows_the_file_or_stdin_display_name(project, monkeypatch):
    (project / "pkg").mkdir()
    (project / "pkg" / "pyproject.toml").write_text(
        "[tool.keydrift]\nexclude = ['gen']\n[tool.keydrift.per-file-ignores]\n'tests/*' = ['KD1']\n")
    monkeypatch.setattr(flake8_plugin, "check_cached",
                        lambda source, path, config, tree=None: [Finding("KD101", "KD101 x", path, 1, 0, 1)])
    assert list(checker("", "pkg/tests/t.py").run()) == []
    assert list(checker("", "pkg/gen/g.py").run()) == []
    assert len(list(checker("", "pkg/app.py").run())) == 1
    assert len(list(checker("", "stdin").run())) == 1  # no display name: config from cwd


def _looks_of_checks(monkeypatch):
    """The look in force during each check the plugin makes from now on (no analysis is made)."""
    from keydrift.diskcache import current_look

    looks = []

    def check_source(source, path, config, tree=None):
        looks.append(current_look())
        return []
    monkeypatch.setattr(flake8_plugin, "check_cached", check_source)
    monkeypatch.setattr(flake8_plugin, "findings_for", lambda *args, **kwargs: [])
    return looks


def test_outside_a_worker_each_file_is_one_look_and_the_look_ends_with_it(monkeypatch):
    # a check flake8 is not seen driving (stdin through another entry point): the process may
    # outlive it, so no look outlasts the check; inside it, each directory and file is looked at once
    from keydrift.diskcache import current_look

    looks = _looks_of_checks(monkeypatch)
    monkeypatch.setattr(flake8_plugin, "_in_a_worker", lambda: False)
    assert current_look() is None
    list(checker("x = 1\n").run())
    list(checker("y = 2\n").run())
    assert len(looks) == 2 and None not in looks and looks[0] is not looks[1]
    assert current_look() is None


def _flake8_in_process(*argv):
    from flake8.main.cli import main

    try:
        return main(list(argv))
    except SystemExit as exit_:  # flake8 5 exits, later ones return the status
        return exit_.code


def test_a_serial_flake8_run_checks_its_files_in_one_look(project, monkeypatch):
    # flake8 -j 1 (a one-CPU machine, a few files): the run's checks share one look, as the
    # CLI's run does (the method index is checked against every file once per look); the next
    # run takes a look of its own, and between checks none is in force
    from keydrift.diskcache import current_look

    looks = _looks_of_checks(monkeypatch)
    monkeypatch.setattr(flake8_plugin, "collect_less_often", lambda: None)  # this process's collector
    for name in ("a.py", "b.py", "c.py"):
        (project / name).write_text("x = 1\n")
    _flake8_in_process("--select", "KD", "-j", "1", "a.py", "b.py", "c.py")
    first = looks[:]
    assert current_look() is None
    _flake8_in_process("--select", "KD", "-j", "1", "a.py", "b.py")
    second = looks[len(first):]
    assert len(first) == 3 and first[0] is not None and all(look is first[0] for look in first)
    assert len(second) == 2 and second[0] is not None and second[1] is second[0]
    assert second[0] is not first[0]
    assert current_look() is None


def test_a_file_edited_between_two_serial_runs_in_one_process_is_read_again(project, monkeypatch, capsys):
    # flake8's API in a long-lived process: the second run does not see the first run's tree
    monkeypatch.setattr(flake8_plugin, "collect_less_often", lambda: None)
    (project / "audit.py").write_text(KD101_SNIPPET)
    (project / "other.py").write_text("x = 1\n")
    assert _flake8_in_process("--select", "KD", "-j", "1", "audit.py", "other.py") == 1
    assert "audit.py:6:9: KD101 " in capsys.readouterr().out
    (project / "audit.py").write_text(KD101_SNIPPET.replace("url=outcome.final_url", "url=domain.url"))
    assert _flake8_in_process("--select", "KD", "-j", "1", "audit.py", "other.py") == 0
    assert "KD101" not in capsys.readouterr().out


PARENT_BEFORE_FORKING = textwrap.dedent("""\
    import os, sys
    import keydrift.flake8_plugin as plugin
    from keydrift.analysis import receivers

    plugin._parallel_run = lambda: tuple(sys.argv[1:])  # as when flake8's run_parallel forks a worker
    plugin._import_the_analysis_before_forking()
    if os.fork() == 0:
        os._exit(0)
    os.wait()
    print("keydrift.engine" in sys.modules, "sqlglot" in sys.modules,
          sorted(os.path.relpath(root) for root in receivers._METHOD_INDEXES))
""")


@pytest.mark.parametrize("cache_folder, files, made", [
    (False, ["a.py", "b.py"], "True True ['.']"),
    (True, ["a.py", "b.py"], "False False []"),
    # files of two projects: the index of one would be made for workers that may not need it
    (False, ["a.py", "other/c.py"], "True True []"),
])
def test_a_parallel_run_from_an_empty_cache_makes_the_analysis_before_forking(tmp_path, cache_folder, files, made):
    """flake8's workers inherit the analysis, sqlglot and the project's method index from the
    process that forks them, in a run from an empty cache, instead of each making them; a run
    whose cache folder exists makes nothing more there (its workers mostly read results)."""
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n")
    (tmp_path / "a.py").write_text("class Store:\n    def add(self, conn, x):\n        conn.execute('x')\n")
    (tmp_path / "b.py").write_text("x = 1\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "pyproject.toml").write_text("[tool.keydrift]\n")
    (tmp_path / "other" / "c.py").write_text("y = 2\n")
    if cache_folder:
        (tmp_path / ".keydrift_cache").mkdir()
    done = subprocess.run([sys.executable, "-c", PARENT_BEFORE_FORKING, *files], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.strip() == made, done.stderr
