"""Robustness beyond test_no_crash / test_cli / test_project_index: generated valid Python,
odd files through the CLI (.pyi, tabs/spaces, Python 2, bad coding cookies), configuration and
analyzed code that would run something if keydrift ever executed them, and flake8 runs over
files that break parsers.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings

from keydrift import config as kdconfig
from keydrift.analysis.project import forget_indexes
from keydrift.cli import main
from keydrift.engine import check_source
from keydrift.types import Config, Finding

hypothesmith = pytest.importorskip("hypothesmith")

CONFIG = Config(cache=False)
# a read by one key and a write by another: KD102 when the analysis runs
DRIFT = "Page.objects.get(url=u)\nPage.objects.create(url=u.lower())\n"
OK_MODULE = "def f(u):\n    Page.objects.get(url=u)\n    Page.objects.create(url=u.lower())\n"
OK_FINDING = "ok.py:3:5: KD102 Page.url is written with u.lower()"


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """An empty project (a repository root without pyproject.toml) as the working directory."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KEYDRIFT_NO_CACHE", raising=False)
    kdconfig.clear_cache()
    forget_indexes()
    yield tmp_path
    kdconfig.clear_cache()
    forget_indexes()


def write(root: Path, files: dict) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"))


def check(capsys: pytest.CaptureFixture, *args: str) -> Tuple[int, List[str], str]:
    """``keydrift check`` in-process: (exit status, output lines, stderr)."""
    status = main(["check", "--no-cache", *args])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


def run(args: List[str], cwd: Path) -> subprocess.CompletedProcess:
    """``python -m <args>`` in a subprocess, from ``cwd`` (so ``cwd`` is on its sys.path)."""
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def codes(findings: List[Finding]) -> List[str]:
    return [f.code for f in findings]


# --- 1. generated valid Python -----------------------------------------------------------

# what CPython counts as a line break (a lone \r too, unlike most editors)
PYTHON_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def compiles(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for `1()`, `x is "a"`: the compiler's, not ours
            compile(source, "generated.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(source=hypothesmith.from_grammar())
def test_generated_valid_python_never_raises(source: str) -> None:
    """As generated (usually skipped by the prefilter), and with a read/write pair appended
    and prepended so the analysis runs. Prepending can break the module (a ``from __future__``
    import must come first): then, and only then, KD900."""
    appended = source + "\n" + DRIFT
    for variant in (source, appended, DRIFT + source):
        found = check_source(variant, "generated.py", CONFIG)
        lines = len(PYTHON_LINE_BREAK.split(variant))
        for finding in found:
            assert finding.code.startswith("KD") and finding.message.startswith(finding.code + " ")
            assert 1 <= finding.line <= lines
        if compiles(variant):
            assert "KD900" not in codes(found), (variant, found)
            if variant is appended:  # the analysis ran: the appended pair is found
                assert {"KD102", "KD901"} & set(codes(found)), (variant, found)


# --- 2. odd files through the CLI ----------------------------------------------------------

def test_pyi_stubs_are_collected_and_analyzed_like_modules(project: Path, capsys) -> None:
    """keydrift walks *.pyi as well as *.py. A real stub (signatures, ``...`` bodies) gives
    nothing; a stub with a body is analyzed like any module."""
    write(project, {
        "app/store.pyi": """
            from django.db import models

            class Page(models.Model):
                url: str
                objects: models.Manager[Page]

            def get_page(url: str) -> Page: ...
            def save_page(url: str = ..., *, create: bool = ...) -> Page: ...
            def get_or_create(url: str, /) -> tuple[Page, bool]: ...
        """,
        "app/odd.pyi": OK_MODULE,
    })
    status, out, err = check(capsys)
    assert status == 1
    assert len(out) == 1 and out[0].startswith("app/odd.pyi:3:5: KD102 Page.url is written with u.lower()")
    assert "1 finding in 1 of 2 files" in err


def test_tabs_and_spaces_mix_is_one_kd900_and_the_run_goes_on(project: Path, capsys) -> None:
    """CPython's TabError: one clear KD900 at the offending line; the next file still counts."""
    write(project, {
        "a_tabs.py": b"def f(u):\n    if u:\n        x = 1\n\tPage.objects.get(url=u)\n",
        "ok.py": OK_MODULE,
    })
    status, out, _ = check(capsys, "--quiet")
    assert status == 1
    assert out[0] == ("a_tabs.py:4:1: KD900 cannot parse the file: "
                      "inconsistent use of tabs and spaces in indentation (line 4)")
    assert len(out) == 2 and out[1].startswith(OK_FINDING)


def test_python2_file_is_one_kd900_and_the_others_get_their_findings(project: Path, capsys) -> None:
    write(project, {
        "legacy.py": """
            def f(u):
                try:
                    Page.objects.get(url=u)
                except Page.DoesNotExist, e:
                    print "missing", e
                    Page.objects.create(url=u.lower())
        """,
        "ok.py": OK_MODULE,
    })
    status, out, _ = check(capsys, "--quiet")
    assert status == 1
    [legacy] = [line for line in out if line.startswith("legacy.py")]
    assert legacy.startswith("legacy.py:4:1: KD900 cannot parse the file: ")
    assert any(line.startswith(OK_FINDING) for line in out)
    assert len(out) == 2


@pytest.mark.parametrize("cookie, payload, reason", [
    ("ascii", b"\xe9", "'ascii' codec can't decode byte 0xe9"),
    ("utf-8", b"\xe9", "'utf-8' codec can't decode byte 0xe9"),
    ("shift_jis", b"\x81", "'shift_jis' codec can't decode byte 0x81"),
    ("cp1252", b"\x81", "'charmap' codec can't decode byte 0x81"),
])
def test_bytes_invalid_for_the_declared_coding_are_one_kd900(project: Path, capsys, cookie, payload, reason) -> None:
    source = b"# -*- coding: " + cookie.encode() + b" -*-\n" + OK_MODULE.encode() + b"NAME = '" + payload + b"'\n"
    write(project, {"cookie.py": source, "ok.py": OK_MODULE})
    status, out, _ = check(capsys, "--quiet")
    assert status == 1
    assert out[0].startswith(f"cookie.py:1:1: KD900 cannot decode the file: {reason}")
    assert len(out) == 2 and out[1].startswith(OK_FINDING)


@pytest.mark.parametrize("cookie", ["undefined", "punycode"])
def test_a_codec_that_raises_plain_unicode_error_is_one_kd900(cookie: str) -> None:
    """The 'undefined' and 'punycode' codecs raise UnicodeError, not UnicodeDecodeError."""
    source = b"# coding: " + cookie.encode() + b"\n" + OK_MODULE.encode()
    assert codes(check_source(source, "cookie.py", CONFIG)) == ["KD900"]


def test_coding_undefined_through_the_cli_does_not_abort_the_run(project: Path) -> None:
    write(project, {"cookie.py": b"# coding: undefined\n" + OK_MODULE.encode(), "ok.py": OK_MODULE})
    proc = run(["keydrift", "check", "--quiet", "--no-cache"], project)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert proc.stdout.startswith("cookie.py:1:1: KD900 cannot decode the file")
    assert OK_FINDING in proc.stdout


# --- 3. nothing is executed: configuration, analyzed code ----------------------------------

PWN = "__import__('os').system('touch PWNED')"


def test_configuration_that_looks_like_code_is_never_run(project: Path) -> None:
    """Values that pass validation but name dangerous callables, or carry shell syntax, are
    names and globs: the run completes with its normal findings and nothing is executed."""
    write(project, {
        "pyproject.toml": f"""
            [tool.keydrift]
            boundary = ["os.system", "{PWN}", "subprocess.*"]
            normalizers = ["os.system", "builtins.eval", "builtins.exec"]
            readers = ["os.system:command", "builtins.eval:source=Page.url"]
            writers = ["subprocess.call:args", "builtins.exec:source"]
            exclude = ["$(touch PWNED)", "`touch PWNED`", ";touch PWNED"]

            [tool.keydrift.per-file-ignores]
            "$(touch PWNED).py" = ["KD9"]
        """,
        "app.py": """
            import os

            def f(u):
                Page.objects.get(url=u)
                Page.objects.create(url=u.lower())
                os.system(u)
                eval(u)
        """,
    })
    proc = run(["keydrift", "check", "--no-cache"], project)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert "app.py:5:5: KD102 Page.url is written with u.lower()" in proc.stdout
    assert not list(project.rglob("PWNED"))


def test_code_in_an_invalid_config_value_is_reported_not_run(project: Path) -> None:
    write(project, {"pyproject.toml": f'[tool.keydrift]\nnormalizers = ["{PWN}"]\n', "ok.py": OK_MODULE})
    proc = run(["keydrift", "check", "--no-cache"], project)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("keydrift: error: pyproject.toml: [tool.keydrift] 'normalizers' entry ")
    assert proc.stderr.count("\n") == 1
    assert not list(project.rglob("PWNED"))


# Importing any of these modules leaves a trace and stops the interpreter.
SIDE_EFFECT = '\nopen(__name__ + ".IMPORTED", "w").close()\nraise SystemExit("imported " + __name__)\n'
IMPORTING_PROJECT = {
    "pyproject.toml": "[tool.keydrift]\n",
    "setup.py": SIDE_EFFECT,
    "conftest.py": SIDE_EFFECT,
    "app/__init__.py": SIDE_EFFECT,
    "app/__main__.py": SIDE_EFFECT,
    "app/models.py": textwrap.dedent("""
        from django.db import models

        class AuditResult(models.Model):
            url = models.URLField()
            score = models.IntegerField()
    """) + SIDE_EFFECT,
    "app/repo.py": textwrap.dedent("""
        from app.models import AuditResult

        def save_result(url, score):
            AuditResult.objects.create(url=url, score=score)
    """) + SIDE_EFFECT,
    "app/tasks.py": textwrap.dedent("""
        from app.models import AuditResult
        from app.repo import save_result

        def tick(domain):
            if AuditResult.objects.filter(url=domain.url).exists():
                return
            save_result(domain.url.lower(), 1)
    """) + SIDE_EFFECT,
}


@pytest.mark.parametrize("command", [
    ["keydrift", "check", "--no-cache"],
    ["keydrift", "check"],  # builds the project index cache from the imported modules
    ["flake8", "--select", "KD", "--jobs=1"],
])
def test_analyzed_code_is_never_imported(project: Path, command: List[str]) -> None:
    """Modules that write a file and exit when imported, importing each other (so the project
    index reads them), checked from the project directory (on the subprocess's sys.path)."""
    write(project, IMPORTING_PROJECT)
    proc = run(command, project)
    assert "Traceback" not in proc.stderr and "imported" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert "app/tasks.py:7:5: KD102 AuditResult.url" in proc.stdout
    assert "save_result() (app/repo.py:4)" in proc.stdout
    assert not list(project.rglob("*.IMPORTED"))


# --- 4. flake8 over files that break parsers -----------------------------------------------

FLAKE8_PROJECT = {
    "broken.py": "x = Page.objects.get(\n",
    "binary.py": bytes(range(256)) * 4,
    # CPython's tokenizer refuses more than 200 nested parentheses (flake8's E999)
    "deep_parens.py": "x = Page.objects.filter(url=" + "(" * 3000 + "u" + ")" * 3000 + ")\n",
    # 89 nested blocks: CPython accepts it, so flake8 hands it to the plugin
    "deep_blocks.py": "def f(u):\n" + "".join("    " * i + f"if c{i}:\n" for i in range(1, 90))
                      + "    " * 90 + "Page.objects.create(url=u.lower())\n",
    "ok.py": OK_MODULE,
}


@pytest.mark.parametrize("jobs", ["--jobs=1", "-j2"])
def test_flake8_run_survives_broken_binary_and_deep_files(project: Path, jobs: str) -> None:
    write(project, FLAKE8_PROJECT)
    proc = run(["flake8", "--select", "KD", jobs, "."], project)
    assert "Traceback" not in proc.stderr and "keydrift" not in proc.stderr, proc.stderr
    assert proc.returncode == 1  # findings; a crash is another status (a signal is negative)
    [line] = proc.stdout.splitlines()
    assert line.startswith("./" + OK_FINDING)


def test_flake8_reports_its_own_e999_for_what_it_cannot_parse(project: Path) -> None:
    """KD900 is dropped by the plugin: flake8's E999 speaks for the unparsable files."""
    write(project, FLAKE8_PROJECT)
    proc = run(["flake8", "--select", "KD,E999", "--jobs=1", "."], project)
    assert "Traceback" not in proc.stderr, proc.stderr
    reported = [(line.split(":")[0], line.split(" ")[1]) for line in proc.stdout.splitlines()]
    assert reported == [("./binary.py", "E999"), ("./broken.py", "E999"), ("./deep_parens.py", "E999"),
                        ("./ok.py", "KD102")]


# Not here: a generated 100,000-line module (``def f{i}(u): return Page.objects.get(url=u)``).
# check_source returns ([]) but took ~45 s on an idle machine (~30 s in libcst's parse, before the
# ast port) and ~75 s on a loaded one, which alone would exceed this file's time budget.


def _import_chain(root: Path, length: int) -> None:
    """``app/top.py`` (no database vocabulary) calls step0, which calls step1 ... whose last one
    writes a record: deciding whether top.py can touch a key summarizes the whole chain."""
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "models.py").write_text(
        "from django.db import models\n\n\nclass Item(models.Model):\n    key = models.CharField(max_length=10)\n")
    for step in range(length):
        if step < length - 1:
            body = f"from app.m{step + 1} import step{step + 1}\n\n\ndef step{step}(value):\n    return step{step + 1}(value)\n"
        else:
            body = f"from app.models import Item\n\n\ndef step{step}(value):\n    Item.objects.create(key=value.lower())\n"
        (root / "app" / f"m{step}.py").write_text(body)
    (root / "app" / "top.py").write_text("from app.m0 import step0\n\n\ndef run(value):\n    return step0(value)\n")


def test_a_long_chain_of_imports_in_the_prefilter_is_analyzed_on_the_deep_stack(project: Path) -> None:
    """One file checked in the CLI's own process (no worker: fewer than 16 files) whose relevance
    depends on 150 modules imported one from the next: the prefilter summarized them on the
    interpreter's default stack and the run ended with a RecursionError traceback."""
    _import_chain(project, 150)
    # as the installed ``keydrift`` script runs it (``-m`` happened not to overflow)
    script = "import sys\nfrom keydrift.cli import main\nsys.exit(main())\n"
    proc = subprocess.run([sys.executable, "-c", script, "check", "--no-cache", "app/top.py"], cwd=project,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]


# Names bound to each other's expressions: a value advanced in a loop, a slice taken in turns,
# two branches each binding one name to the other. Following the bindings never ended, and
# the file was one KD901 ("nested too deeply") instead of its findings. (A function reading the
# database, so that the gate keeps it.)
CYCLIC_BINDINGS = {
    "advanced in a loop": """
        def update_all(start, end, step):
            day = start
            while day < end:
                following = day + step
                day = following
            update_tracking(day)
            return Page.objects.filter(pk=1).first()
        """,
    "sliced in turns": """
        def update_all(batch):
            urls = batch
            while urls:
                rest = urls[:5]
                urls = rest
            for u in urls:
                update_page(u)
            return Page.objects.filter(pk=1).first()
        """,
    "bound across branches": """
        def update_all(a, b, flag):
            if flag:
                a = b + "x"
            else:
                b = a + "y"
            update_page(a)
            update_page(b)
            return Page.objects.filter(pk=1).first()
        """,
}


@pytest.mark.parametrize("source", CYCLIC_BINDINGS.values(), ids=list(CYCLIC_BINDINGS))
def test_names_bound_in_a_cycle_are_analyzed_and_the_file_keeps_its_findings(source: str) -> None:
    text = "from app.models import Page\n\n" + textwrap.dedent(source) + "\n\n" + OK_MODULE
    found = check_source(text, "ok.py", CONFIG)
    assert [f.code for f in found] == ["KD102"], found
