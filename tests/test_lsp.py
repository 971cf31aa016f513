"""Editors: ``keydrift lsp`` driven over stdio by a small hand-written LSP client, the pure
helpers behind its quick fix, and the flake8 stdin route editors already use."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from keydrift.lsp import column_units, noqa_insertion

# How long a message may take before the test fails: only a failing test waits this long, and
# on a loaded 2-core machine (load 20) a server's first analysis took more than 20 s.
TIMEOUT = 120.0

BUGGY = textwrap.dedent("""\
    from app.models import AuditResult, Domain
    from app.audit import run_audit


    def audit_new_domains():
        for domain in Domain.objects.all():
            if AuditResult.objects.filter(url=domain.url).exists():
                continue
            outcome = run_audit(domain.url)
            AuditResult.objects.create(url=outcome.final_url, score=outcome.score)
""")
FIXED = BUGGY.replace("url=outcome.final_url", "url=domain.url")
AUDIT = textwrap.dedent("""\
    import requests


    def run_audit(url):
        response = requests.get(url, timeout=15)
        return response
""")


def make_project(root: Path) -> Path:
    (root / "app").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.keydrift]\n")
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "audit.py").write_text(AUDIT)
    (root / "app" / "models.py").write_text("")
    jobs = root / "app" / "jobs.py"
    jobs.write_text(BUGGY)
    return jobs


# --- a minimal LSP client: Content-Length framing over the server's stdin/stdout ------------

class LspClient:
    def __init__(self, command: List[str], cwd: Path) -> None:
        self.process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read_forever, daemon=True).start()

    def _read_forever(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if length is not None:
                self.messages.put(json.loads(stream.read(length).decode("utf-8")))

    def send(self, message: Dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: Dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Optional[Dict[str, Any]]) -> Any:
        self.next_id += 1
        request_id = self.next_id
        self.send({"id": request_id, "method": method, "params": params})
        response = self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)
        assert "error" not in response, response
        return response.get("result")

    def wait_for(self, matches: Callable[[Dict[str, Any]], bool], timeout: float = TIMEOUT) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                message = self.messages.get(timeout=max(0.01, remaining))
            except queue.Empty:
                raise AssertionError(f"no matching message from the server within {timeout} s; "
                                     f"stderr: {self._stderr_so_far()}") from None
            if message.get("method") == "workspace/configuration" and "id" in message:
                self.send({"id": message["id"], "result": [None] * len(message["params"]["items"])})
            elif message.get("method") in ("client/registerCapability", "window/workDoneProgress/create"):
                self.send({"id": message["id"], "result": None})
            if matches(message):
                return message

    def diagnostics_for(self, uri: str, predicate: Callable[[List[Dict[str, Any]]], bool]) -> List[Dict[str, Any]]:
        message = self.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                and m["params"]["uri"] == uri and predicate(m["params"]["diagnostics"]))
        return message["params"]["diagnostics"]

    def _stderr_so_far(self) -> str:
        if self.process.poll() is None:
            return "(server still running)"
        return self.process.stderr.read().decode("utf-8", "replace")[-2000:]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=TIMEOUT)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            stream.close()


@pytest.fixture
def lsp_server(tmp_path):
    pytest.importorskip("pygls", reason="the LSP server needs pygls: pip install 'keydrift[lsp]'")
    client = LspClient([sys.executable, "-m", "keydrift", "lsp"], cwd=tmp_path)
    yield client
    client.close()


def test_lsp_diagnostics_related_information_noqa_fix_and_clearing(tmp_path, lsp_server):
    jobs = make_project(tmp_path)
    uri = jobs.as_uri()
    client = lsp_server
    result = client.request("initialize", {
        "processId": os.getpid(), "rootUri": tmp_path.as_uri(),
        "workspaceFolders": [{"uri": tmp_path.as_uri(), "name": "project"}],
        "capabilities": {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
    })
    assert result["capabilities"]["codeActionProvider"]
    client.notify("initialized", {})

    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": BUGGY}})
    [diagnostic] = client.diagnostics_for(uri, lambda d: len(d) > 0)
    assert diagnostic["code"] == "KD101" and diagnostic["source"] == "keydrift"
    assert diagnostic["range"]["start"] == {"line": 9, "character": 8}
    assert "AuditResult.url is written with outcome.final_url" in diagnostic["message"]
    # the read is in another function of this file; the summary of run_audit comes from app/audit.py
    read = diagnostic["relatedInformation"][0]
    assert read["location"]["uri"] == uri and read["location"]["range"]["start"]["line"] == 6
    assert read["message"] == "read by domain.url"

    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": diagnostic["range"],
        "context": {"diagnostics": [diagnostic]}})
    [action] = actions
    [edit] = action["edit"]["changes"][uri]
    line = BUGGY.splitlines()[9]
    assert edit == {"range": {"start": {"line": 9, "character": len(line)},
                              "end": {"line": 9, "character": len(line)}},
                    "newText": "  # noqa: KD101"}

    client.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": FIXED}]})
    assert client.diagnostics_for(uri, lambda d: True) == []

    assert client.request("shutdown", None) is None
    client.notify("exit", None)
    assert client.process.wait(timeout=TIMEOUT) == 0


def test_lsp_debounces_changes_and_follows_the_configuration(tmp_path, lsp_server):
    """Three quick edits, one analysis: the diagnostics published are those of the last text.
    Saving pyproject.toml re-reads the configuration and re-checks the open documents."""
    jobs = make_project(tmp_path)
    uri = jobs.as_uri()
    client = lsp_server
    client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": FIXED}})
    assert client.diagnostics_for(uri, lambda d: True) == []
    for version, text in ((2, BUGGY), (3, FIXED), (4, BUGGY)):
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})
    published = client.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    assert published["params"]["version"] == 4
    assert [d["code"] for d in published["params"]["diagnostics"]] == ["KD101"]

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.keydrift]\nignore = ['KD101']\n")
    client.notify("textDocument/didSave", {"textDocument": {"uri": pyproject.as_uri()}})
    assert client.diagnostics_for(uri, lambda d: True) == []
    client.request("shutdown", None)
    client.notify("exit", None)


def test_lsp_without_pygls_says_how_to_install(tmp_path):
    script = ("import sys, builtins\n"
              "real = builtins.__import__\n"
              "def no_pygls(name, *a, **k):\n"
              "    if name.startswith(('pygls', 'lsprotocol')): raise ImportError('No module named ' + name)\n"
              "    return real(name, *a, **k)\n"
              "builtins.__import__ = no_pygls\n"
              "from keydrift.cli import main\n"
              "sys.exit(main(['lsp']))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2
    assert "pip install 'keydrift[lsp]'" in done.stderr.decode()


# --- the quick fix's placement --------------------------------------------------------------

@pytest.mark.parametrize("source, first, last, expected", [
    ("x = A.objects.create(url=u)\n", 1, 1, (1, 27, "  # noqa: KD101")),
    ("A.objects.create(\n    url=u,\n)\n", 1, 3, (1, 17, "  # noqa: KD101")),
    ("A.objects.create(url=u)  # noqa: KD102\n", 1, 1, (1, 38, ",KD101")),
    ("A.objects.create(  # keep\n    url=u,\n)  # noqa:KD2\n", 1, 3, (3, 13, ",KD101")),
    ("A.objects.create(url=u)  # noqa\n", 1, 1, None),
    ("A.objects.create(url=u)  # noqa: KD1\n", 1, 1, None),
    ('A.objects.create(url="""a\nb""", x=1)\n', 1, 2, (2, 10, "  # noqa: KD101")),
    ("A.objects.create(url=a + \\\n    b)\n", 1, 2, (2, 6, "  # noqa: KD101")),
    ('s = "# noqa"; A.objects.create(url=u)\n', 1, 1, (1, 37, "  # noqa: KD101")),
])
def test_noqa_insertion(source, first, last, expected):
    assert noqa_insertion(source, first, last, "KD101") == expected


def test_columns_in_utf16_code_units():
    line = "x = '\U0001F600é'; A"
    assert column_units(line, len(line) - 1) == len(line) + 1 - 1  # the emoji is two units
    assert column_units(line, len(line) - 1, "utf-8") == len(line.encode()) - 1
    assert column_units(line, 3, "utf-32") == 3


# --- the flake8 route: stdin with a display name finds the project --------------------------

def test_flake8_stdin_with_display_name_uses_the_project_index(tmp_path):
    pytest.importorskip("flake8")
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "store.py").write_text(
        "def save_page(url, title):\n    Page.objects.create(url=url.lower(), title=title)\n")
    caller = ("from app.store import save_page\n\n\ndef add(url, title):\n"
              "    if Page.objects.filter(url=url).exists():\n        return\n    save_page(url, title)\n")
    done = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "KD", "--stdin-display-name", "app/views.py", "-"],
        input=caller.encode(), capture_output=True, timeout=60, cwd=tmp_path)
    out = done.stdout.decode()
    assert done.returncode == 1, done.stderr.decode()
    assert out.startswith("app/views.py:7:5: KD102 ") and "save_page() (app/store.py:2)" in out


NORMALIZER = textwrap.dedent("""\
    from urllib.parse import urlsplit


    def canonical_path(path):
        return path.rstrip("/")  # the stored form


    def normalize_host(url):
        parts = urlsplit(url if "://" in url else "https://" + url)
        host = parts.hostname or ""
        return host
""")


def apply_text_edit(text: str, edit: Dict[str, Any]) -> str:
    """Apply one LSP TextEdit (ASCII text: UTF-16 units are code points) to ``text``."""
    lines = text.splitlines(True)

    def offset(position: Dict[str, int]) -> int:
        return sum(len(line) for line in lines[:position["line"]]) + position["character"]

    start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
    return text[:start] + edit["newText"] + text[end:]


def test_lsp_quick_fixes_apply_the_fix_beside_the_noqa_action(tmp_path, lsp_server):
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n")
    (tmp_path / "app").mkdir()
    module = tmp_path / "app" / "urls.py"
    module.write_text(NORMALIZER)
    uri = module.as_uri()
    client = lsp_server
    client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": NORMALIZER}})
    diagnostics = client.diagnostics_for(uri, lambda d: len(d) == 2)
    by_code = {d["code"]: d for d in diagnostics}

    def actions_for(diagnostic: Dict[str, Any]) -> List[Dict[str, Any]]:
        return client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": diagnostic["range"],
            "context": {"diagnostics": [diagnostic]}})

    fix, noqa, fix_all = actions_for(by_code["KD403"])
    assert fix_all["kind"] == "source.fixAll.keydrift"
    assert fix["title"] == 'Put the root back: add `or "/"`' and fix["isPreferred"] is True
    assert noqa["title"].startswith("Suppress KD403")
    [edit] = fix["edit"]["changes"][uri]
    assert apply_text_edit(NORMALIZER, edit) == NORMALIZER.replace('rstrip("/")', 'rstrip("/") or "/"')

    fix, _, _ = actions_for(by_code["KD402"])
    assert fix["title"].endswith("(unsafe fix)") and not fix.get("isPreferred")
    [edit] = fix["edit"]["changes"][uri]
    assert apply_text_edit(NORMALIZER, edit) == NORMALIZER.replace(
        '    host = parts.hostname or ""\n',
        '    host = parts.hostname\n'
        '    if not host:\n'
        '        raise ValueError(f"URL without a host: {url!r}")\n')

    # what editors run on save: every safe fix, and only those
    [fix_all] = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0},
                                                 "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": [], "only": ["source.fixAll"]}})
    assert fix_all["kind"] == "source.fixAll.keydrift"
    [edit] = fix_all["edit"]["changes"][uri]
    assert apply_text_edit(NORMALIZER, edit) == NORMALIZER.replace('rstrip("/")', 'rstrip("/") or "/"')
    assert client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0},
                                                 "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": [], "only": ["refactor"]}}) == []

    assert client.request("shutdown", None) is None
    client.notify("exit", None)
    assert client.process.wait(timeout=TIMEOUT) == 0
