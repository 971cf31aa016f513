"""In-house read/write wrappers declared in [tool.keydrift] readers/writers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FILES = {
    "app/__init__.py": "",
    "app/db.py": "def fetch_by_url(conn, url):\n    return conn.get(url)\n\n"
                 "def store_page(conn, url, body):\n    conn.put(url, body)\n",
    "app/jobs.py": "from app.db import fetch_by_url, store_page\nfrom app import db\n\n"
                   "def crawl(conn, url):\n    if fetch_by_url(conn, url=url) is None:\n"
                   "        store_page(conn, url.rstrip('/'), 'x')\n\n"
                   "def same_key(conn, url):\n    if db.fetch_by_url(conn, url) is None:\n"
                   "        db.store_page(conn, url, 'x')\n",
}


def project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n" + table)
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "keydrift", "check", "--no-cache", "."], cwd=root,
                          capture_output=True, text=True, timeout=120)


def test_declared_wrappers_are_reads_and_writes(tmp_path: Path) -> None:
    root = project(tmp_path, 'readers = ["app.db.fetch_by_url:url"]\nwriters = ["app.db.store_page:url"]\n')
    proc = check(root)
    assert proc.stdout.splitlines() == [
        "app/jobs.py:6:9: KD102 app.db.url is written with url.rstrip('/') (.rstrip('/')) but read by url "
        "(line 5); the next read will miss this row"]


def test_wrappers_pair_on_a_declared_entity_field(tmp_path: Path) -> None:
    root = project(tmp_path, 'readers = ["app.db.fetch_by_url:url=Page.url"]\n'
                             'writers = ["app.db.store_page:url=Page.url"]\n')
    assert "KD102 Page.url is written with url.rstrip('/')" in check(root).stdout


def test_without_declaration_nothing_is_known(tmp_path: Path) -> None:
    assert check(project(tmp_path, "")).stdout == ""


def test_malformed_entry_is_one_clear_error(tmp_path: Path) -> None:
    proc = check(project(tmp_path, 'readers = ["fetch_by_url"]\n'))
    assert proc.returncode == 2
    assert "'readers' entry 'fetch_by_url' is not like 'app.db.fetch_by_url:url'" in proc.stderr
    assert "Traceback" not in proc.stderr
