"""In-house read/write wrappers declared in [tool.keydrift] readers/writers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


def project(tmp_path: Path, table: str, files: dict = FILES) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n" + table)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "keydrift", "check", "--no-cache", "."], cwd=root,
                          capture_output=True, text=True, timeout=120)


TABLE_FILES = {
    "app/__init__.py": "",
    "app/dal.py": "def find_rows(conn, where, table):\n    return conn.run(table, where)\n\n"
                  "def put(conn, table, values):\n    conn.put(table, values)\n",
    "app/jobs.py": "from app.dal import find_rows, put\n\n"
                   "def join(conn, nick):\n    if not find_rows(conn, {'nick': nick}, 'members'):\n"
                   "        put(conn, 'members', {'nick': nick.lower()})\n",
}


@pytest.mark.parametrize("table, files, expected", [
    ('readers = ["app.db.fetch_by_url:url"]\nwriters = ["app.db.store_page:url"]\n', FILES,
     "app/jobs.py:6:9: KD102 app.db.url is written with url.rstrip('/') (.rstrip('/')) but read by url "
     "(line 5); the next read will miss this row"),
    # [tool.keydrift] tables: in-house table helpers, arguments by parameter name and position
    ('tables = ["app.dal.find_rows: select table=table keys=where", "app.dal.put: insert table=1 values=2"]\n',
     TABLE_FILES,
     "app/jobs.py:5:9: KD102 members.nick is written with nick.lower() (.lower()) but read by nick "
     "(line 4); the next read will miss this row"),
])
def test_declared_wrappers_are_reads_and_writes(tmp_path: Path, table: str, files: dict, expected: str) -> None:
    assert check(project(tmp_path, table, files)).stdout.splitlines() == [expected]


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


def table_project(tmp_path: Path, entries: str) -> Path:
    return project(tmp_path, "tables = [" + entries + "]\n", TABLE_FILES)


def test_table_helper_with_a_fixed_table(tmp_path: Path) -> None:
    root = table_project(tmp_path, '"app.dal.find_rows: select table=\'members\' keys=1", '
                                   '"app.dal.put: insert table=\'members\' values=values"')
    assert "KD102 members.nick is written with nick.lower()" in check(root).stdout


def test_table_helper_arguments_elsewhere_give_no_access(tmp_path: Path) -> None:
    # the entry points at the wrong arguments: no table string there, so nothing is recorded
    root = table_project(tmp_path, '"app.dal.find_rows: select table=0 keys=where", '
                                   '"app.dal.put: insert table=0 values=values"')
    assert check(root).stdout == ""


@pytest.mark.parametrize("entry", [
    "app.dal.find_rows", "app.dal.find_rows: fetch table=0 keys=1", "app.dal.find_rows: select keys=1",
    "app.dal.find_rows: select table=0", "find_rows: select table=0 keys=1",
    "app.dal.find_rows: select table=0 keys=1 keys=2", "app.dal.find_rows: select table=\\\"x\\\" keys=1",
])
def test_malformed_table_entry_is_one_clear_error(tmp_path: Path, entry: str) -> None:
    proc = check(table_project(tmp_path, f'"{entry}"'))
    assert proc.returncode == 2, proc.stdout
    assert "'tables' entry" in proc.stderr and "is not like 'app.db.upsert: upsert" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
