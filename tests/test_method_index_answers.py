"""A call whose receiver nothing types resolves to the project's only class defining the method
(``analysis/receivers.py``). That answer depends on every file of the project, so a cached
result or export that used it holds only while the index answers the same: after a second
class defines the method (or the second one is gone), a warm run reports what a cold run does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from keydrift.analysis.project import forget_indexes
from keydrift.analysis.receivers import MethodIndex, USER_MODEL_ANSWER, called_method_names, method_answers
from keydrift.diskcache import methods_asked, methods_dependency

FILES = {
    "app/__init__.py": "",
    "app/models.py": """
        from django.db import models

        class Threepid(models.Model):
            address = models.CharField(max_length=200)
    """,
    "app/store.py": """
        from app.models import Threepid

        class DataStore:
            def add_threepid(self, address):
                Threepid.objects.create(address=address.lower())
    """,
    # the receiver is whatever hs.get_datastore() returns: only the index says which class
    "app/handlers.py": """
        from app.models import Threepid

        class Handler:
            def __init__(self, hs):
                self.store = hs.get_datastore()

            def bind(self, address):
                if Threepid.objects.filter(address=address).exists():
                    return
                self.store.add_threepid(address)
    """,
    # the same through another module's summary: views.py reads service.py's export
    "app/service.py": """
        def bind(store, address):
            store.add_threepid(address)
    """,
    "app/views.py": """
        from app.models import Threepid
        from app.service import bind

        def view(request, store):
            address = request.POST["address"]
            if Threepid.objects.filter(address=address).exists():
                return
            bind(store, address)
    """,
}
SECOND_DEFINITION = """
    class Mirror:
        def add_threepid(self, address):
            return address
"""
HANDLER_FINDING = "app/handlers.py:10:9: KD102"
VIEW_FINDING = "app/views.py:8:5: KD102"


def write(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def check(root: Path, *extra: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "keydrift", "check", "-q", "--exit-zero", *extra, "."], cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n")
    write(tmp_path, FILES)
    return tmp_path


def test_the_only_definition_resolves_the_receiver(project: Path) -> None:
    cold = check(project, "--no-cache")
    assert HANDLER_FINDING in cold and VIEW_FINDING in cold
    assert check(project) == cold and check(project) == cold  # cold, then warm


def test_a_second_definition_elsewhere_invalidates_what_the_answer_decided(project: Path) -> None:
    check(project)
    write(project, {"app/mirror.py": SECOND_DEFINITION})
    cold = check(project, "--no-cache")
    assert HANDLER_FINDING not in cold and VIEW_FINDING not in cold  # two classes: no receiver is guessed
    assert check(project) == cold
    (project / "app" / "mirror.py").unlink()
    cold = check(project, "--no-cache")
    assert HANDLER_FINDING in cold and VIEW_FINDING in cold
    assert check(project) == cold


def test_a_second_definition_in_an_existing_file_invalidates_it_too(project: Path) -> None:
    """No directory changes: only the answer tells the cached results apart."""
    write(project, {"app/other.py": "def unrelated():\n    return 1\n"})
    check(project)
    write(project, {"app/other.py": SECOND_DEFINITION})
    cold = check(project, "--no-cache")
    assert HANDLER_FINDING not in cold
    assert check(project) == cold


def test_a_stored_export_that_used_the_answer_is_built_again(project: Path) -> None:
    """views.py is checked again (it was edited) and reads service.py's export from the index's
    cache: that entry resolved ``store.add_threepid`` by the index, which now answers otherwise."""
    write(project, {"app/other.py": "def unrelated():\n    return 1\n"})
    check(project)
    write(project, {"app/other.py": SECOND_DEFINITION})
    views = project / "app" / "views.py"
    views.write_text(views.read_text() + "# edited\n")
    cold = check(project, "--no-cache")
    assert VIEW_FINDING not in cold
    assert check(project) == cold


CHECKED_PROBE = """
import sys
from keydrift import engine
from keydrift.cli import main

checked = []
real = engine.check_source
engine.check_source = lambda source, path, *a, **k: checked.append(path) or real(source, path, *a, **k)
main(["check", "-q", "--exit-zero", "."])
print("checked", *sorted(checked))
"""


def checked_again(root: Path) -> Tuple[str, List[str]]:
    """A cached run's report, and the files whose results it did not take from the cache."""
    proc = subprocess.run([sys.executable, "-c", CHECKED_PROBE], cwd=root, capture_output=True, text=True,
                          timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    report, _, checked = proc.stdout.rpartition("checked")
    return report, checked.split()


STORE = FILES["app/store.py"]
# edits of the one file defining the method the handler and service.py call: each changes what
# the index answers for it, so every result that asked must be made again
ANSWER_CHANGES = {
    "renamed": STORE.replace("def add_threepid(", "def add_threepid_now("),
    "removed": STORE.replace("def add_threepid(self, address):", "def other(self, address):"),
    "made a function": STORE.replace("class DataStore:\n            def add_threepid(self, address):",
                                     "def add_threepid(address):\n            if True:"),
    "defined twice": STORE + SECOND_DEFINITION.replace("class Mirror", "        class Mirror").replace(
        "\n    ", "\n            "),
}


@pytest.mark.parametrize("edit", sorted(ANSWER_CHANGES))
def test_an_edit_of_the_defining_file_that_changes_the_answer_checks_the_callers_again(
        project: Path, edit: str) -> None:
    """Only store.py changes; handlers.py's result and views.py's (through service.py's export)
    asked the index about ``add_threepid``: a cached run after the edit reports what a cold run
    does, and after the edit is undone, what the first one did."""
    first = check(project)
    assert HANDLER_FINDING in first and VIEW_FINDING in first
    write(project, {"app/store.py": ANSWER_CHANGES[edit]})
    cold = check(project, "--no-cache")
    assert HANDLER_FINDING not in cold and VIEW_FINDING not in cold
    report, checked = checked_again(project)
    assert report == cold
    assert {"app/handlers.py", "app/views.py"} <= set(checked)
    write(project, {"app/store.py": STORE})
    assert checked_again(project)[0] == first


def test_an_edit_that_makes_the_answer_checks_the_callers_again(project: Path) -> None:
    """The other way round: no class defines ``add_threepid`` until store.py is edited."""
    write(project, {"app/store.py": ANSWER_CHANGES["renamed"]})
    first = check(project)
    assert HANDLER_FINDING not in first and VIEW_FINDING not in first
    write(project, {"app/store.py": STORE})
    report, checked = checked_again(project)
    assert report == check(project, "--no-cache") and HANDLER_FINDING in report and VIEW_FINDING in report
    assert {"app/handlers.py", "app/views.py"} <= set(checked)


def test_a_caller_that_stops_calling_the_method_is_checked_as_it_is_now(project: Path) -> None:
    """The names recorded are those of the text analyzed: handlers.py edited to call another
    method is checked again by its own digest, and service.py, edited the same way, makes
    views.py read another export."""
    check(project)
    for name in ("app/handlers.py", "app/service.py"):
        write(project, {name: FILES[name].replace("add_threepid(address)", "add_threepids(address)")})
    cold = check(project, "--no-cache")
    assert HANDLER_FINDING not in cold and VIEW_FINDING not in cold
    report, checked = checked_again(project)
    assert report == cold
    assert {"app/handlers.py", "app/views.py", "app/service.py"} <= set(checked)


# edits of another file with database vocabulary, which no caller imports, after which the
# index answers the same for every name asked (its files and what it is made from may change):
# the callers' results stand, and that file alone is checked again
OTHER = """
    from app.models import Threepid

    class Audit:
        def count_threepids(self):
            return Threepid.objects.count()
"""
SAME_ANSWERS = {
    "a comment": OTHER + "    # add_threepid\n",
    "another body": OTHER.replace(".count()", ".all().count()"),
    "a method of another name": OTHER + """
        def add_threepids(self, address):
            return address
    """,
    "a one-token method of that name": OTHER + """
        def get(self, address):
            return address
    """,
    "a function of that name": OTHER + """
    def add_threepid(address):
        return address
    """,
    "a method of that name in a nested class's function": OTHER + """
        def audit(self):
            def add_threepid(address):
                return address
            return add_threepid
    """,
}


@pytest.mark.parametrize("edit", sorted(SAME_ANSWERS))
def test_an_edit_that_leaves_every_answer_the_same_checks_only_the_edited_file(project: Path, edit: str) -> None:
    write(project, {"app/other.py": OTHER})
    first = check(project)
    assert HANDLER_FINDING in first and VIEW_FINDING in first
    write(project, {"app/other.py": SAME_ANSWERS[edit]})
    report, checked = checked_again(project)
    assert report == check(project, "--no-cache") == first
    assert checked == ["app/other.py"]
    assert checked_again(project) == (first, [])


def test_a_damaged_methods_dependency_never_holds(project: Path) -> None:
    """A value without the names asked (an entry of an older format, or damaged) is a miss."""
    from keydrift.analysis.receivers import answers_hold, forget

    forget()
    dependency = methods_dependency(str(project), str(project / "app" / "handlers.py"))
    assert not answers_hold(dependency, "")
    assert not answers_hold(dependency, "state/facts/answers/")
    assert not answers_hold(dependency, "state/answers")


def test_the_answers_are_recorded_for_the_names_a_module_calls() -> None:
    assert called_method_names("self.store.add_threepid(a)\nx.get(1)\nstore.__init__()\n") == {"add_threepid"}
    def index(*files: str) -> MethodIndex:
        made = MethodIndex(lambda path: path[:-3].replace("/", "."))
        for path in files:
            made.defined.setdefault("add_threepid", []).append((path, "Store.add_threepid"))
        made.in_database_files["add_threepid"] = ["app/store.py"]
        made.settings.append(("app/settings.py", "Account"))
        return made

    alone = method_answers(index("app/store.py"), ["add_threepid", USER_MODEL_ANSWER])
    assert index("app/store.py").is_database("add_threepid")
    assert method_answers(index("app/store.py"), ["add_threepid", USER_MODEL_ANSWER]) == alone
    assert method_answers(index("app/store.py", "app/mirror.py"), ["add_threepid", USER_MODEL_ANSWER]) != alone
    assert method_answers(index("app/mirror.py"), ["add_threepid", USER_MODEL_ANSWER]) != alone
    assert methods_asked(methods_dependency("/p/root", "/p/root/app/x.py")) == ("/p/root", "/p/root/app/x.py")


def teardown_module() -> None:
    forget_indexes()


def test_an_editor_check_sees_a_method_defined_in_another_file_since(project: Path) -> None:
    """The editor server's document checks in one process (each check one look) report what a
    cold CLI run does as a second class defining the method is written and removed again
    between checks (the guess taken back and given again, directly and through service.py's
    summary)."""
    from keydrift.config import clear_cache, load_config
    from keydrift.lsp import document_findings

    def editor_checks() -> list:
        found = []
        for name in ("app/handlers.py", "app/views.py"):
            path = project / name
            found += [f"{name}:{f.line}:{f.col + 1}: {f.code}"
                      for f in document_findings(path.read_text(), str(path), load_config(str(path)))]
        return found

    def cold_run() -> list:
        return [line.split(" ", 2)[0] + " " + line.split(" ", 2)[1] for line in check(project, "--no-cache").splitlines()]

    forget_indexes()
    clear_cache()
    write(project, {"app/other.py": "def unrelated():\n    return 1\n"})
    assert editor_checks() == [HANDLER_FINDING, VIEW_FINDING] == cold_run()
    write(project, {"app/other.py": SECOND_DEFINITION})
    assert HANDLER_FINDING not in editor_checks()
    assert editor_checks() == cold_run()
    (project / "app" / "other.py").unlink()
    assert editor_checks() == [HANDLER_FINDING, VIEW_FINDING] == cold_run()
    forget_indexes()
