"""The keydrift command. Most checks call ``main()`` in-process; a few run the real process for
exit codes, stdin and the one-line error contract.

A file with a syntax error and database vocabulary gives a real KD900 finding; tests that need
a KD1 finding from the analysis are marked in their names with ``kd101``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import textwrap

import pytest

from keydrift import __version__, cli
from keydrift import config as kdconfig
from keydrift.cli import collect_files, main
from keydrift.output import github
from keydrift.rules import ALL_RULES
from keydrift.types import Config, Finding, Location

BROKEN = "x = Model.objects.get(\n"  # a syntax error the engine's prefilter lets through
CLEAN = "def f(url):\n    return Page.objects.filter(url=url).first()\n"
KD101_SNIPPET = textwrap.dedent("""\
    def audit(urls):
        for domain in Domain.objects.all():
            if AuditResult.objects.filter(url=domain.url).exists():
                continue
            outcome = run_audit(domain.url)
            AuditResult.objects.create(url=outcome.final_url, score=outcome.score)
""")
KD900_LINE = "bad.py:1:1: KD900 cannot parse the file"


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    """An empty project (a repository root without pyproject.toml) as the working directory."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    kdconfig.clear_cache()
    yield tmp_path
    kdconfig.clear_cache()


def write(path, content):
    path = os.fspath(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode) as handle:
        handle.write(content)
    return path


def run(*args, stdin=None):
    """The real command in a subprocess, as ``python -m keydrift`` runs it (its exit skips the
    interpreter's teardown): (exit status, stdout, stderr)."""
    command = [sys.executable, "-m", "keydrift"]
    done = subprocess.run(command + list(args), input=stdin, capture_output=True, timeout=60)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def check(capsys, *args):
    """main() in-process: (exit status, stdout, stderr)."""
    status = main(["check", *args])
    out, err = capsys.readouterr()
    return status, out, err


def fake_engine(monkeypatch, findings_for):
    """Replace the analysis: ``findings_for(source_text, path)`` -> findings."""
    def check_source(source, path, config):
        text = source.decode() if isinstance(source, bytes) else source
        return findings_for(text, path)
    monkeypatch.setattr(cli, "check_cached", check_source)


# --- subprocess: the contract seen from outside ------------------------------------------

def test_exit_codes_formats_and_stdin(project):
    write("bad.py", BROKEN)
    write("ok.py", CLEAN)
    status, out, err = run("check")
    assert status == 1
    assert out.startswith(KD900_LINE)
    assert len(out.splitlines()) == 1
    assert "1 finding in 1 of 2 files" in err

    status, out, _ = run("check", "--format", "json", "--exit-zero", "--quiet", "-", "ok.py",
                         "--stdin-filename", "app/models.py", stdin=BROKEN.encode())
    assert status == 0
    assert [(f["code"], f["path"]) for f in json.loads(out)["findings"]] == [("KD900", "app/models.py")]

    assert run("check", "ok.py")[:2] == (0, "")


def test_a_check_does_not_import_the_audit(project):
    """A one-file check pays for every module it imports; the audit (``audit-db``) is only its
    arguments on such a run."""
    write("ok.py", CLEAN)
    code = ("import sys; from keydrift.cli import main; main(['check', '-q', 'ok.py']); "
            "print(sorted(m for m in sys.modules if m.startswith('keydrift.audit')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.stdout.decode().split() == ["['keydrift.audit',", "'keydrift.audit.arguments']"]


def test_importing_the_cli_loads_neither_the_analysis_nor_the_heavy_front_ends():
    """A warm run answers from the cache without the analysis; nothing a check never needs (SQL
    parsing, the fixes' libcst, the editor server, the examples' dedenting) is imported with it."""
    code = ("import sys, keydrift.cli; print(sorted(m for m in ('keydrift.engine', 'keydrift.analysis', 'sqlglot', "
            "'libcst', 'keydrift.fixes', 'keydrift.lsp', 'keydrift.analysis.sql', 'textwrap') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.stdout.decode().split() == ["[]"]


def test_importing_the_analysis_compiles_no_regular_expression_but_the_framework_tables():
    """Module-level patterns are compiled on first use (``keydrift.patterns.lazy``): a one-file
    check uses well under half of them. The framework tables import nothing of keydrift, so the
    few they hold are compiled as they are imported."""
    code = ("import re, sys\n"
            "compiled = set()\n"
            "original = re.compile\n"
            "def spy(pattern, flags=0):\n"
            "    frame = sys._getframe(1)\n"
            "    if frame.f_code.co_name == '<module>':\n"
            "        compiled.add(frame.f_globals.get('__name__', ''))\n"
            "    return original(pattern, flags)\n"
            "re.compile = spy\n"
            "import keydrift.cli, keydrift.engine, keydrift.projectwide, keydrift.rules, keydrift.noqa\n"
            "print(sorted(m for m in compiled if m.startswith('keydrift') and not m.startswith('keydrift.frameworks.')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.stdout.decode().split() == ["[]"]


def test_a_text_report_imports_no_other_format_and_no_toml_parser_without_a_pyproject(project):
    """What a one-file check imports is paid on every save: the other output formats (the JSON
    one holds the baseline's fingerprints), the TOML parser (no pyproject.toml here) and the
    configuration's spelling suggestions are not loaded."""
    write("ok.py", CLEAN)
    code = ("import sys; from keydrift.cli import main; main(['check', '-q', 'ok.py']); "
            "print(sorted(m for m in ('keydrift.output.sarif', 'keydrift.output.gitlab', "
            "'keydrift.output.github', 'keydrift.output.text', 'tomllib', 'difflib', 'pathlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.stdout.decode().split() == ["['keydrift.output.text']"]
    write("pyproject.toml", "[tool.keydrift]\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.stdout.decode().split() == ["['keydrift.output.text',", "'tomllib']"]


def test_a_one_file_check_imports_neither_openssl_nor_shutil_nor_signal(project):
    """Paid on every save: ``hashlib`` loads OpenSSL's library (keydrift's digests are
    BLAKE2b from CPython's own module), argparse's terminal width imports ``shutil`` with
    ``bz2`` and ``lzma``, and ``signal`` is needed only to stop a helper not collected."""
    write("app/models.py", "def save(url):\n    Page.objects.create(url=url.lower())\n")
    for number in range(20):  # enough modules for the registry's helper process
        write(f"app/m{number}.py", f"def f{number}(url):\n    return Page.objects.get(url=url)\n")
    code = ("import sys; from keydrift.cli import main; main(['check', '-q', '--no-cache', 'app/models.py']); "
            "print(sorted(m for m in ('hashlib', '_hashlib', 'shutil', 'signal') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.stdout.decode().split()[-1] == "[]"


@pytest.mark.parametrize("columns", ["", "40", "132", "x"])
def test_help_is_wrapped_at_the_width_argparse_would_use(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    ours = cli._HelpFormatter("keydrift")
    assert ours._width == argparse.HelpFormatter("keydrift")._width
    parser = cli.build_parser()
    assert parser.formatter_class is cli._HelpFormatter
    check_parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["check"]
    assert check_parser.formatter_class is cli._HelpFormatter


def test_config_error_is_one_line_without_traceback(project):
    write("app.py", BROKEN)
    write("pyproject.toml", "[tool.keydrift]\nboundry = ['app']\n")
    status, out, err = run("check")
    assert (status, out) == (2, "")
    assert err == ("keydrift: error: pyproject.toml: [tool.keydrift] unknown key 'boundry' "
                   "(did you mean 'boundary'?)\n")


def test_real_kd101_finding_kd101(project):
    """Needs the analysis: the create() call writes a key re-derived from the audit result."""
    write("audit.py", KD101_SNIPPET)
    status, out, _ = run("check", "--quiet")
    assert status == 1
    assert out.startswith("audit.py:6:")
    assert ": KD101 " in out


# --- walking ------------------------------------------------------------------------------

def test_walk_skips_tooling_and_virtualenvs_in_sorted_order(project):
    for path in ["b.py", "a.pyi", "notes.txt", "app/models.py", "app/__pycache__/m.py",
                 ".git/hook.py", ".tox/x.py", ".venv/x.py", "venv/x.py", "node_modules/x.py",
                 "build/x.py", "dist/x.py", ".keydrift_cache/x.py", "pkg.egg-info/x.py",
                 "myenv/lib/x.py", "pkg.py/inner.py"]:
        write(path, "")
    write("myenv/pyvenv.cfg", "home = /usr\n")
    files, missing = collect_files(["."], Config(root=str(project)))
    assert files == ["a.pyi", "b.py", "app/models.py", "pkg.py/inner.py"]
    assert missing == []


def test_paths_are_reported_as_given_each_once(project):
    write("app/models.py", "")
    write("app/views.py", "")
    config = Config(root=str(project))
    assert collect_files(["./app/", "app/models.py", "nope.py", "-"], config) == (
        ["app/models.py", "app/views.py", "-"], ["nope.py"])
    assert collect_files([str(project / "app" / "views.py")], config)[0] == [
        str(project / "app" / "views.py")]
    # An explicitly named hidden or build directory is walked.
    write("build/gen.py", "")
    assert collect_files(["build"], config)[0] == ["build/gen.py"]


def test_exclude_applies_to_walked_and_named_files(project, capsys):
    write("pyproject.toml", "[tool.keydrift]\nexclude = ['migrations', 'gen/*.py']\n")
    for path in ["app/migrations/0001.py", "gen/x.py", "gen/sub/y.py", "app/bad.py"]:
        write(path, BROKEN)
    status, out, _ = check(capsys)
    assert status == 1
    assert [line.split(":")[0] for line in out.splitlines()] == ["app/bad.py"]
    assert check(capsys, "app/migrations/0001.py")[:2] == (0, "")


def test_missing_path_is_a_usage_error_but_the_rest_is_checked(project, capsys):
    write("bad.py", BROKEN)
    status, out, err = check(capsys, "nope.py", "bad.py")
    assert status == 2
    assert out.startswith(KD900_LINE)
    assert "keydrift: error: nope.py: no such file or directory" in err


# --- filtering: select / ignore / per-file-ignores / noqa -------------------------------

def test_select_and_ignore_override_the_config(project, capsys):
    write("bad.py", BROKEN)
    write("pyproject.toml", "[tool.keydrift]\nignore = ['KD9']\n")
    assert check(capsys)[:2] == (0, "")
    assert check(capsys, "--ignore", "KD1")[0] == 1
    assert check(capsys, "--select", "KD1", "--ignore", "")[:2] == (0, "")
    status, _, err = check(capsys, "--select", "KD 9")
    assert status == 2 and "--select: 'KD 9'" in err


def test_per_file_ignores(project, capsys):
    write("pyproject.toml", '[tool.keydrift]\nper-file-ignores = "legacy/*: KD900"\n')
    write("legacy/old.py", BROKEN)
    write("bad.py", BROKEN)
    status, out, _ = check(capsys, "--quiet")
    assert out.startswith(KD900_LINE) and len(out.splitlines()) == 1


def test_noqa_on_a_broken_file(project, capsys):
    write("bad.py", "x = Model.objects.get(  # noqa: KD900\n")
    write("other.py", "x = Model.objects.get(  # noqa: KD1\n")
    status, out, _ = check(capsys, "--quiet")
    assert status == 1 and out.startswith("other.py:1:1: KD900")


def test_noqa_anywhere_in_a_multiline_statement(project, capsys, monkeypatch):
    def findings_for(text, path):
        return [Finding("KD101", "KD101 fake", path, 2, 4, 4)]
    fake_engine(monkeypatch, findings_for)
    write("noqa.py", "def f():\n    A.objects.create(\n        url=u,\n    )  # noqa: KD101\n")
    write("other.py", "def f():\n    A.objects.create(\n        url=u,\n    )  # noqa: KD102\n")
    status, out, _ = check(capsys, "--quiet")
    assert (status, out) == (1, "other.py:2:5: KD101 fake\n")


# --- unreadable and odd files: a KD900 each, the run goes on --------------------------------

def test_broken_symlink_fifo_and_vanishing_file(project, capsys, monkeypatch):
    write("ok.py", CLEAN)
    write("vanishing.py", CLEAN)
    os.symlink("nowhere.py", "link.py")
    os.mkfifo("pipe.py")
    read = cli.read_source

    def read_then_lose(path):
        if path == "vanishing.py":
            os.remove(path)
        return read(path)
    monkeypatch.setattr(cli, "read_source", read_then_lose)
    status, out, _ = check(capsys, "--quiet")
    assert status == 1
    assert out.splitlines() == [
        "link.py:1:1: KD900 cannot read the file: broken symbolic link",
        "pipe.py:1:1: KD900 cannot read the file: not a regular file",
        "vanishing.py:1:1: KD900 cannot read the file: No such file or directory",
    ]


def test_permission_denied_is_reported_and_the_run_goes_on(project, capsys, monkeypatch):
    # Tests may run as root, who reads anything: simulate the denial at the read.
    write("secret.py", BROKEN)
    write("bad.py", BROKEN)

    def deny(path):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr(cli, "read_source", lambda p: deny(p) if p == "secret.py" else open(p, "rb").read())
    status, out, _ = check(capsys, "--quiet")
    assert out.splitlines()[1] == "secret.py:1:1: KD900 cannot read the file: Permission denied"
    assert out.startswith(KD900_LINE)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads mode 000 files")
def test_mode_000_file(project, capsys):
    write("secret.py", CLEAN)
    os.chmod("secret.py", 0)
    status, out, _ = check(capsys, "--quiet")
    assert (status, out) == (1, "secret.py:1:1: KD900 cannot read the file: Permission denied\n")


def test_encodings_bom_crlf_and_binary(project, capsys):
    query = "Page.objects.filter(url=u)"
    write("latin_cookie.py", f"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n{query}\n".encode("latin-1"))
    write("latin_no_cookie.py", f"name = 'caf\xe9'\n{query}\n".encode("latin-1"))
    write("bom.py", b"\xef\xbb\xbf" + f"name = 'caf\xe9'\n{query}\n".encode())
    write("crlf.py", f"def f(u):\r\n    return {query}\r\n".encode())
    write("crlf_broken.py", b"x = Model.objects.get(  # noqa\r\n")
    write("junk.py", bytes(range(256)) * 4)
    status, out, _ = check(capsys, "--quiet")
    assert status == 1
    assert [line.split(": ", 1)[0] for line in out.splitlines()] == [
        "junk.py:1:1", "latin_no_cookie.py:1:1"]
    assert "KD900 cannot decode the file" in out


# --- output -------------------------------------------------------------------------------

def fake_findings(text, path):
    related = (Location(path, 3, 11, "read by domain.url"),)
    return [Finding("KD101", "KD101 Page.url is written, 100% wrong", path, 6, 8, 7, related,
                    ("KD101", "Page", "url", "rederived", "audit"))]


def test_text_json_and_output_file(project, capsys, monkeypatch):
    fake_engine(monkeypatch, fake_findings)
    write("app/audit.py", "")
    status, out, _ = check(capsys, "--quiet")
    assert (status, out) == (1, "app/audit.py:6:9: KD101 Page.url is written, 100% wrong\n")

    assert check(capsys, "--format", "json", "--output", "report.json")[:2] == (1, "")
    with open("report.json", encoding="utf-8") as handle:
        document = json.load(handle)
    assert document["version"] == 1 and document["keydrift"] == __version__
    [entry] = document["findings"]
    assert entry == {
        "code": "KD101", "message": "KD101 Page.url is written, 100% wrong",
        "path": "app/audit.py", "line": 6, "column": 9, "end_line": 7,
        "related": [{"path": "app/audit.py", "line": 3, "column": 12, "note": "read by domain.url"}],
        "fingerprint": entry["fingerprint"],
    }
    assert len(entry["fingerprint"]) == 16
    status, _, err = check(capsys, "--output", "no/such/dir/report.txt")
    assert status == 2 and err.startswith("keydrift: error: cannot write no/such/dir/report.txt")


def test_github_format_and_escaping(project, capsys, monkeypatch):
    fake_engine(monkeypatch, fake_findings)
    write("app/audit.py", "")
    status, out, _ = check(capsys, "--format", "github")
    assert out == ("::warning file=app/audit.py,line=6,col=9,title=KD101::"
                   "KD101 Page.url is written, 100%25 wrong\n")
    odd = Finding("KD900", "KD900 a\r\nb: c, d%", "we,ird:na%me.py", 1, 0, 1)
    assert github.format_finding(odd) == (
        "::warning file=we%2Cird%3Ana%25me.py,line=1,col=1,title=KD900::KD900 a%0D%0Ab: c, d%25")


def test_engine_messages_get_their_code(project, capsys, monkeypatch):
    fake_engine(monkeypatch, lambda text, path: [Finding("KD901", "could not analyze", path, 1, 0, 1)])
    write("deep.py", "")
    assert check(capsys, "--quiet")[1] == "deep.py:1:1: KD901 could not analyze\n"


def test_findings_are_sorted_across_files(project, capsys, monkeypatch):
    def findings_for(text, path):
        return [Finding("KD102", "KD102 b", path, 9, 0, 9), Finding("KD101", "KD101 a", path, 2, 4, 2)]
    fake_engine(monkeypatch, findings_for)
    write("z.py", "")
    write("a/b.py", "")
    out = check(capsys, "z.py", "a")[1]
    assert out.splitlines() == ["a/b.py:2:5: KD101 a", "a/b.py:9:1: KD102 b",
                                "z.py:2:5: KD101 a", "z.py:9:1: KD102 b"]


def test_nothing_to_check(project, capsys):
    status, out, err = check(capsys)
    assert (status, out) == (0, "")
    assert "no Python files found" in err
    assert check(capsys, "--quiet")[2] == ""


# --- rules, explain -----------------------------------------------------------------------

def test_rules_and_explain(capsys):
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [rule.CODE for rule in ALL_RULES]
    assert all(rule.NAME in line and rule.SUMMARY in line for rule, line in zip(ALL_RULES, lines))

    assert main(["explain", "kd101"]) == 0
    out = capsys.readouterr().out
    rule = ALL_RULES[0]
    assert out.startswith(f"{rule.CODE} ({rule.NAME})\n\n")
    for section in rule.sections():
        assert f"\n## {section}\n" in out
    assert rule.INVALID[0].files[0][1].rstrip() in out  # the example's code
    # and what keydrift reports on it, run now
    assert "keydrift reports:\n```text\nexample.py:6:" in out and ": KD101 AuditResult.url" in out
    assert main([]) == 2


def test_version_and_usage_errors(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"keydrift {__version__}\n"
    assert main(["check", "--format", "xml"]) == 2
    assert "invalid choice" in capsys.readouterr().err
    assert main(["explain", "KD999"]) == 2
    assert capsys.readouterr() == ("", "keydrift: error: unknown rule 'KD999'; `keydrift rules` lists them\n")


def test_broken_toml_and_explicit_config(project, capsys):
    write("app.py", BROKEN)
    write("pyproject.toml", "[tool.keydrift\n")
    status, out, err = check(capsys)
    assert (status, out) == (2, "")
    assert err.startswith("keydrift: error: pyproject.toml: invalid TOML") and err.count("\n") == 1
    write("ci/pyproject.toml", "[tool.keydrift]\nignore = ['KD9']\n")
    assert check(capsys, "--config", "ci/pyproject.toml")[:2] == (0, "")
    status, _, err = check(capsys, "--config", "missing.toml")
    assert status == 2 and err.startswith("keydrift: error: missing.toml: cannot read")


def stdin_with(monkeypatch, data):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_stdin_name_drives_output_and_config(project, capsys, monkeypatch):
    stdin_with(monkeypatch, BROKEN.encode())
    status, out, _ = check(capsys, "-")
    assert (status, out.split(": ")[0]) == (1, "-:1:1")
    write("sub/pyproject.toml", "[tool.keydrift.per-file-ignores]\n'tests/*' = ['KD9']\n")
    stdin_with(monkeypatch, BROKEN.encode())
    assert check(capsys, "-", "--stdin-filename", "sub/tests/t.py")[:2] == (0, "")
    stdin_with(monkeypatch, BROKEN.encode())
    assert check(capsys, "-", "--stdin-filename", "sub/app.py")[1].startswith("sub/app.py:1:1: KD900")


@pytest.mark.parametrize("count, jobs", [(1100, 2), (9432, 2), (17, 2), (300, 4), (16, 3)])
def test_parallel_chunks_keep_neighbours_together_and_shrink_toward_the_end(count, jobs):
    """Every file once, in order; the first chunks as large as a quarter of a worker's share,
    the later ones never larger than the one before, the last ones small, so no worker is left
    checking a large chunk alone at the end."""
    files = [f"f{number}.py" for number in range(count)]
    chunks = cli._chunks(files, jobs)
    assert [path for chunk in chunks for path in chunk] == files
    sizes = [len(chunk) for chunk in chunks]
    assert sizes[0] == max(cli._SMALLEST_CHUNK, count // (jobs * 4))
    assert all(later <= earlier for earlier, later in zip(sizes, sizes[1:]))
    assert all(size <= cli._SMALLEST_CHUNK for size in sizes[-jobs:])


def _run_the_command(probe: str) -> str:
    """``keydrift --version`` through ``keydrift.__main__.main`` after ``probe``; its output."""
    code = textwrap.dedent(probe) + "\nimport sys\nsys.argv = ['keydrift', '--version']\n" \
        "from keydrift.__main__ import main\nmain()\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert __version__ in done.stdout
    return done.stdout


def test_the_command_imports_its_interface_with_the_collector_off():
    """``keydrift.__main__.main`` (``python -m keydrift`` and the ``keydrift`` script): the
    collections importing the interface set off were 4 ms of a one-file check's start."""
    shown = _run_the_command("""
        import gc, sys
        class Watch:
            def find_spec(self, name, path=None, target=None):
                if name == "keydrift.cli":
                    print("importing, collector on:", gc.isenabled(), flush=True)
        sys.meta_path.insert(0, Watch())
        """)
    assert "importing, collector on: False" in shown


def test_the_command_runs_with_the_collector_on_again():
    shown = _run_the_command("""
        import gc
        import keydrift.cli
        original = keydrift.cli.run
        def run():
            print("running, collector on:", gc.isenabled(), flush=True)
            original()
        keydrift.cli.run = run
        """)
    assert "running, collector on: True" in shown
