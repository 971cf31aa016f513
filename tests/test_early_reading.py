"""The early reader (``early_reading``): the project's files read on the other core while a
one-file check without the cache starts; what it made is used only for files still as it read
them, and a reader that is late or not asked for is stopped."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from keydrift import early_reading
from keydrift.analysis import receivers
from keydrift.analysis.method_texts import file_record
from keydrift.diskcache import file_digest, one_look
from tests.test_project_index import run, write_project

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the reader is a forked process")

STORE = """
    from django.db import models

    class Account(models.Model):
        email = models.EmailField()

    class AccountStore:
        def find_account(self, email):
            return Account.objects.filter(email=email).first()

        def add_account(self, email):
            Account.objects.create(email=email)
"""

VIEWS = """
    def signup(store, request):
        email = request.POST["email"]
        if store.find_account(email) is None:
            store.add_account(email.strip().lower())
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_project(tmp_path, {"app/__init__.py": "", "app/store.py": STORE, "app/views.py": VIEWS})
    return tmp_path


@pytest.fixture(autouse=True)
def no_reader_left():
    yield
    early_reading.discard()
    receivers._EARLY_RECORDS.clear()


def started_in(root: Path, argv: list) -> dict:
    """What a reader started for ``argv`` in ``root`` made, given the time to finish."""
    early_reading._WAIT_SECONDS, wait = 60, early_reading._WAIT_SECONDS
    here = os.getcwd()
    os.chdir(root)
    try:
        early_reading.start(argv)
        made = early_reading.collect()
    finally:
        os.chdir(here)
        early_reading._WAIT_SECONDS = wait
    assert made is not None
    return made


@pytest.mark.parametrize("argv", [
    ["check", "--no-cache", "app/views.py"],
    ["check", "--no-cache", "-q", "--exit-zero", "app/views.py", "app/store.py"],
    ["check", "app/views.py", "--no-cache", "-j", "2"],
])
def test_a_check_of_a_few_files_without_the_cache_is_read_early(project: Path, argv: list) -> None:
    here = os.getcwd()
    os.chdir(project)
    try:
        assert early_reading._files_checked(argv)
    finally:
        os.chdir(here)


@pytest.mark.parametrize("argv", [
    ["check", "app/views.py"],  # the cache holds the index's records
    ["check", "--no-cache", "."],  # a directory: the run's workers build the index before forking
    ["check", "--no-cache", "-j", "1", "app/views.py"],  # one job asked for
    ["check", "--no-cache", "-j1", "app/views.py"],
    ["check", "--no-cache", "--jobs=1", "app/views.py"],
    ["check", "--no-cache", "--config", "other.toml", "app/views.py"],
    ["check", "--no-cache", "app/missing.py"],
    ["check", "--no-cache", *[f"app/m{n}.py" for n in range(20)]],
    ["fix", "--no-cache", "app/views.py"],
    ["check", "--no-cache", "--stdin-filename", "app/views.py", "-"],
])
def test_other_command_lines_start_no_reader(project: Path, argv: list) -> None:
    here = os.getcwd()
    os.chdir(project)
    try:
        for number in range(20):
            (project / "app" / f"m{number}.py").write_text("")
        assert early_reading._files_checked(argv) == []
        early_reading.start(argv)
        assert early_reading.collect() is None
    finally:
        os.chdir(here)


def test_the_reader_makes_each_files_record_as_the_index_would(project: Path) -> None:
    made = started_in(project, ["check", "--no-cache", "app/views.py"])
    records = made["records"]
    files = sorted(str(path) for path in project.rglob("*.py"))
    assert sorted(records) == files
    for path in files:
        assert records[path] == file_record(path, file_digest(path))
    assert records[str(project / "app" / "store.py")][1] == ["AccountStore.find_account", "AccountStore.add_account"]


def test_the_index_built_from_the_readers_records_is_the_one_built_from_the_files(project: Path) -> None:
    made = started_in(project, ["check", "--no-cache", "app/views.py"])
    with one_look():
        receivers.forget()
        alone = receivers.method_index(str(project), lambda path: path)
        receivers.forget()
        receivers.take_early_records(made["records"])
        read = []
        real = receivers.FileMethods.of
        try:
            receivers.FileMethods.of = staticmethod(lambda text: read.append(text) or real(text))
            helped = receivers.method_index(str(project), lambda path: path)
        finally:
            receivers.FileMethods.of = staticmethod(real)
    assert read == []  # no file was read for the index
    assert (helped.defined, helped.in_database_files, helped.facts) == (alone.defined, alone.in_database_files,
                                                                        alone.facts)
    assert helped.is_database("find_account")


def test_a_record_of_a_file_changed_since_it_was_read_is_not_used(project: Path) -> None:
    made = started_in(project, ["check", "--no-cache", "app/views.py"])
    store = project / "app" / "store.py"
    store.write_text(store.read_text().replace("find_account", "look_up_account"))
    with one_look():
        receivers.forget()
        receivers.take_early_records(made["records"])
        index = receivers.method_index(str(project), lambda path: path)
    assert "look_up_account" in index.defined and "find_account" not in index.defined


def test_a_late_reader_is_stopped_and_not_waited_for(project: Path, monkeypatch) -> None:
    monkeypatch.setattr(early_reading, "_read", lambda file, send: time.sleep(30))
    monkeypatch.setattr(early_reading, "_WAIT_SECONDS", 0.01)
    here = os.getcwd()
    os.chdir(project)
    try:
        early_reading.start(["check", "--no-cache", "app/views.py"])
        pid = early_reading._started[0][0]
        started = time.perf_counter()
        assert early_reading.collect() is None
        assert time.perf_counter() - started < 5
    finally:
        os.chdir(here)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no process is left behind


def test_what_a_late_reader_sent_is_used(project: Path, monkeypatch) -> None:
    record = ["digest", ["A.add_user"], [], "", b"key", None]

    def read_slowly(file: str, send) -> None:
        send({"records": {"/first.py": record}})
        send({"records": {"/second.py": record}})
        time.sleep(30)

    monkeypatch.setattr(early_reading, "_read", read_slowly)
    monkeypatch.setattr(early_reading, "_WAIT_SECONDS", 0.2)
    here = os.getcwd()
    os.chdir(project)
    try:
        early_reading.start(["check", "--no-cache", "app/views.py"])
        made = early_reading.collect()
    finally:
        os.chdir(here)
    assert made == {"records": {"/first.py": record, "/second.py": record}}


def test_a_piece_cut_short_is_left_out() -> None:
    read_end, write_end = os.pipe()
    try:
        early_reading._send(write_end, {"records": {"/a.py": [1]}})
        early_reading._send(write_end, {"records": {"/b.py": [2]}})
        os.close(write_end)
        data = os.read(read_end, 1 << 16)
    finally:
        os.close(read_end)
    sent = early_reading._pieces(data[:-3])
    assert sent == [{"records": {"/a.py": [1]}}]
    assert early_reading._pieces(data) == [{"records": {"/a.py": [1]}}, {"records": {"/b.py": [2]}}]


def test_a_reader_not_asked_for_is_stopped(project: Path, monkeypatch) -> None:
    monkeypatch.setattr(early_reading, "_read", lambda file, send: time.sleep(30))
    here = os.getcwd()
    os.chdir(project)
    try:
        early_reading.start(["check", "--no-cache", "app/views.py"])
        pid = early_reading._started[0][0]
        early_reading.discard()
    finally:
        os.chdir(here)
    assert early_reading._started == []
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_a_one_file_check_finds_the_same_with_and_without_the_reader(project: Path) -> None:
    with_reader = run(["keydrift", "check", "--no-cache", "app/views.py"], project)
    alone = run(["keydrift", "check", "--no-cache", "-j", "1", "app/views.py"], project)
    assert "KD102 Account.email" in with_reader.stdout, with_reader.stdout + with_reader.stderr
    assert (with_reader.returncode, with_reader.stdout) == (alone.returncode, alone.stdout)
    assert "Traceback" not in with_reader.stderr
