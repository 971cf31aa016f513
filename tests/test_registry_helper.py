"""A registry assembled by one process (a CLI check of a few files) shares the modules' analyses
with a forked helper: the findings are the same as one process alone makes them, whatever the
helper does (fails, is not needed, is refused by ``-j 1``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from keydrift import forkhelp, projectwide
from keydrift.analysis.project import forget_indexes
from keydrift.projectwide import forget
from tests.test_registry import MODELS, RESET  # a model lowercasing on save; a lookup as typed (KD108)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the helper is a forked process")

# modules that store and look up the email in other ways, each its own contribution
SIGNUP = '''\
from club.models import Member


def signup_{n}(request):
    Member.objects.create(email=request.POST["email"].strip())
'''

LOOKUP = '''\
from club.models import Member


def find_{n}(request):
    return Member.objects.get(email=request.GET["email"].lower())
'''


@pytest.fixture()
def project(tmp_path, monkeypatch):
    forget()
    forget_indexes()
    monkeypatch.chdir(tmp_path)
    club = tmp_path / "club"
    club.mkdir()
    (club / "__init__.py").write_text("")
    (club / "models.py").write_text(MODELS)
    (club / "reset.py").write_text(RESET)
    for number in range(12):
        (club / f"signup{number}.py").write_text(SIGNUP.format(n=number))
        (club / f"lookup{number}.py").write_text(LOOKUP.format(n=number))
    yield tmp_path
    forget()
    forget_indexes()


def _report(capsys, *args: str) -> list:
    from keydrift.cli import main

    forget()
    forget_indexes()
    main(["check", "-q", "--exit-zero", "--format", "json", *args])
    return sorted((f["path"], f["line"], f["code"], f["message"]) for f in json.loads(capsys.readouterr().out)["findings"])


def _shares(monkeypatch) -> list:
    """The helpers started from now on: [items, values the helper sent]."""
    started = []
    real = projectwide.shared_with_a_helper

    def recorded(items, make):
        work = real(items, make)
        if work is not None:
            entry = [list(items), None]
            started.append(entry)
            collect = work.collect

            def collected():
                entry[1] = collect()
                return entry[1]
            work.collect = collected
        return work

    monkeypatch.setattr(projectwide, "shared_with_a_helper", recorded)
    return started


@pytest.mark.parametrize("cache", [[], ["--no-cache"]])
def test_a_one_file_check_shares_the_registry_with_a_helper_and_reports_the_same(project, capsys, monkeypatch, cache):
    alone = _report(capsys, "-j", "1", *cache, "club/reset.py")
    assert [(path, line, code) for path, line, code, _ in alone] == [("club/reset.py", 5, "KD108")]
    if (project / ".keydrift_cache").exists():
        shutil.rmtree(project / ".keydrift_cache")
    started = _shares(monkeypatch)
    assert _report(capsys, "-j", "2", *cache, "club/reset.py") == alone
    assert len(started) == 1
    items, sent = started[0]
    # every module but the checked one, for the helper to start on while the file is checked
    assert len(items) == 26 and str(project / "club" / "reset.py") not in [path for path, _ in items]
    assert sent, "the helper made some of the modules"
    assert all(isinstance(value, str) for value in sent.values())


def test_what_the_helper_made_is_stored_and_used_by_the_next_run(project, capsys, monkeypatch):
    first = _report(capsys, "-j", "2", "club/reset.py")
    asked = []
    real = projectwide._module_keys
    monkeypatch.setattr(projectwide, "_module_keys",
                        lambda index, path, *a, **k: asked.append(os.path.basename(path)) or real(index, path, *a, **k))
    (project / "club" / "lookup3.py").write_text(LOOKUP.format(n=3) + "# edited\n")
    assert _report(capsys, "-j", "2", "club/reset.py") == first
    # the edited module, and the checked one (whether it may hold a registry finding): every
    # other contribution was stored, those the helper made included
    assert sorted(asked) == ["lookup3.py", "reset.py"]


def test_a_helper_that_fails_leaves_its_modules_to_this_process(project, capsys, monkeypatch):
    alone = _report(capsys, "-j", "1", "--no-cache", "club/reset.py")
    monkeypatch.setattr(projectwide, "_portable", lambda *args: 1 / 0)
    started = _shares(monkeypatch)
    assert _report(capsys, "-j", "2", "--no-cache", "club/reset.py") == alone
    assert started and started[0][1] and set(started[0][1].values()) == {None}  # made here again


def test_one_job_starts_no_helper(project, capsys, monkeypatch):
    started = _shares(monkeypatch)
    _report(capsys, "-j", "1", "--no-cache", "club/reset.py")
    assert started == []


def test_a_helper_whose_registry_is_not_needed_is_stopped(project, capsys, monkeypatch):
    """The models module has no use a registry rule reports at: the registry is never
    assembled, and the helper started for it is stopped at the end of the run."""
    started = _shares(monkeypatch)
    cancelled = []
    real_cancel = forkhelp.SharedWork.cancel
    monkeypatch.setattr(forkhelp.SharedWork, "cancel", lambda work: cancelled.append(work) or real_cancel(work))
    assert _report(capsys, "-j", "2", "--no-cache", "club/models.py") == []
    assert len(started) == 1 and len(cancelled) == 1 and not projectwide._STARTED


def test_too_few_modules_start_no_helper(project, capsys, monkeypatch):
    for path in (project / "club").glob("lookup*.py"):
        path.unlink()
    started = _shares(monkeypatch)
    assert [code for _, _, code, _ in _report(capsys, "-j", "2", "--no-cache", "club/reset.py")] == ["KD108"]
    assert started == []  # 13 other modules: fewer than _HELPED_FROM


# -- the shared list itself ------------------------------------------------------------------

def test_this_process_and_the_helper_make_every_item_between_them():
    items = [f"item{number}" for number in range(60)]
    work = forkhelp.shared_with_a_helper(items, lambda item: item.upper())
    here = {}
    for number, item in enumerate(items):
        if not work.take(number):
            break
        here[item] = item.upper()
    there = work.collect()
    assert set(here) | set(there) == set(items)
    assert all(value == item.upper() for item, value in there.items())
    # the helper's are the end of the list, this process's its start (one may be made by both)
    assert len(set(here) & set(there)) <= 1
    assert all(items.index(item) >= len(items) - len(there) for item in there)


def test_a_failed_helper_sends_nothing_and_its_items_can_be_made_here():
    items = ["a", "b", "c"]
    work = forkhelp.shared_with_a_helper(items, lambda item: 1 / 0)
    assert work.collect() == {}
    assert forkhelp.shared_with_a_helper([], str) is None


def test_a_cancelled_helper_is_killed_not_waited_for(tmp_path):
    started, finished = tmp_path / "started", tmp_path / "finished"

    def slow(item):
        started.write_text(item)
        import time
        time.sleep(30)
        finished.write_text(item)
        return item

    work = forkhelp.shared_with_a_helper(["only"], slow)
    while not started.exists():
        os.sched_yield()
    work.cancel()
    assert not finished.exists()  # killed in its sleep: a wait would have let it finish
    assert work.collect() == {}
    work.cancel()  # once is enough; again does nothing


def test_the_warning_about_forking_with_threads_does_not_stop_the_run(monkeypatch):
    """Python 3.12+ warns when a process with threads forks; ``python -W error`` would turn
    that into an exception out of the run. The helper runs only keydrift's code and leaves
    without the interpreter's teardown: the warning is not raised."""
    import warnings

    def warned_fork():
        warnings.warn("This process is multi-threaded, use of fork() may lead to deadlocks", DeprecationWarning)
        return 2 ** 22 + 17  # a parent's side of a fork, with no such child (never 0: that is the child)

    monkeypatch.setattr(os, "fork", warned_fork)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        work = forkhelp.shared_with_a_helper(["a", "b"], str.upper)
    # the warning is not raised at the caller: the fork went ahead; the helper that is not
    # there sends nothing, and the caller makes every item itself
    assert work is not None and work.collect() == {}


def test_a_fork_that_fails_starts_no_helper(monkeypatch):
    def refused():
        raise OSError("EAGAIN")

    monkeypatch.setattr(os, "fork", refused)
    assert forkhelp.shared_with_a_helper(["a", "b"], str.upper) is None
    assert forkhelp.made_by_a_helper(["a"], str.upper) is None


@pytest.mark.parametrize("cache, hashed", [(["--no-cache"], False), ([], True)])
def test_keydrift_s_own_code_is_hashed_only_for_a_cache(project, capsys, monkeypatch, cache, hashed):
    """The digest of keydrift's sources keys what is stored: a run that stores nothing does
    not read them (a one-file check from an editor or a hook)."""
    from keydrift import diskcache

    read = []
    real = diskcache._code_content_digest
    monkeypatch.setattr(diskcache, "_code_fingerprint", None)
    monkeypatch.setattr(diskcache, "_code_content_digest", lambda: read.append(True) or real())
    found = _report(capsys, "-j", "1", *cache, "club/reset.py")
    assert [code for _, _, code, _ in found] == ["KD108"]
    assert bool(read) is hashed


# -- what a cold run stores -------------------------------------------------------------------

SUPPORT = '''\
def add(conn, address):
    conn.execute("INSERT INTO addresses (address) VALUES (?)", (address,))
'''

HANDLER = '''\
from club.test_support import add


def bind(conn, address):
    add(conn, address.lower())
'''

SERVLET = '''\
def owner(conn, body):
    return conn.execute("SELECT user_id FROM addresses WHERE address = ?", (body["address"],)).fetchone()
'''


def test_a_test_file_s_export_is_not_stored_and_its_rare_importer_makes_it(project, capsys):
    """A cold run keeps no export of a test file on disk (no module imports one in practice);
    a module that does import one makes it itself, with the same findings cold, warm, after
    an edit of the importer, and without a cache."""
    from keydrift.analysis.boundary import is_test_file

    club = project / "club"
    (club / "test_support.py").write_text(SUPPORT)
    (club / "handlers.py").write_text(HANDLER)
    (club / "servlets.py").write_text(SERVLET)
    without = _report(capsys, "-j", "1", "--no-cache", ".")
    assert any(path == "club/servlets.py" for path, *_ in without)
    assert _report(capsys, "-j", "1", ".") == without
    stored = [json.loads(entry.read_text()).get("module") for entry in (project / ".keydrift_cache").glob("*.json")]
    assert "club.models" in stored and "club.handlers" in stored
    assert not any(is_test_file(name) for name in stored if name)
    assert _report(capsys, "-j", "1", ".") == without  # warm
    (club / "handlers.py").write_text(HANDLER + "# edited\n")
    assert _report(capsys, "-j", "1", ".") == without


def test_test_files_are_the_tests_themselves_not_their_helpers():
    from keydrift.analysis.boundary import is_test_file

    assert all(is_test_file(name) for name in ("app.tests.test_models", "tests", "app.tests", "app.views_tests"))
    assert not any(is_test_file(name) for name in ("app.tests.factories", "conftest", "app.tests.conftest",
                                                   "app.testing", "app.contest", "app.models"))


def test_modules_off_the_helper_s_list_are_made_here_when_none_of_its_are_needed(project):
    """A helper whose modules are all answered otherwise by the time the registry is assembled
    (stored, offered) is stopped; the modules not on its list (the checked files) are still
    made here."""
    from keydrift.analysis.project import project_index
    from keydrift.config import load_config

    config = load_config(str(project))
    root, only, _ = projectwide._scope(config, "")
    state = projectwide._project_state(root, config, only)
    index = project_index(config, use_cache=config.cache)
    methods = projectwide._methods_of(index)
    gone = (str(project / "club" / "removed.py"), "0" * 64)
    started = projectwide._Started([gone], forkhelp.shared_with_a_helper([gone], lambda item: None))
    keys_of = projectwide._keys_with_a_helper(index, state, config, {}, {}, {}, methods, started)
    assert set(keys_of) == set(state)
    assert any(keys is not None and keys.uses for keys in keys_of.values())


def test_the_helper_imports_no_rule(project):
    """The helper asks only which modules read or write keys and what they store: the rules
    (and what they import) are left to the process that checks the file."""
    import subprocess
    import sys

    seen = project / "seen.txt"
    code = (
        "import sys\n"
        "from keydrift import forkhelp\n"
        "from keydrift.cli import main\n"
        "forked = forkhelp._forked\n"
        "def spied(produce):\n"
        "    def made():\n"
        "        values = produce()\n"
        f"        open({str(seen)!r}, 'w').write(repr(sorted(m for m in sys.modules if m.startswith('keydrift.rules'))))\n"
        "        return values\n"
        "    return forked(made)\n"
        "forkhelp._forked = spied\n"
        "main(['check', '--no-cache', '-q', 'club/reset.py'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert b"KD108" in done.stdout
    assert seen.read_text() == "[]"
