"""A call whose receiver nothing types resolves to the project's only class defining the method
(``analysis/receivers.py``). That answer depends on every file of the project, so a cached
result or export that used it holds only while the index answers the same: after a second
class defines the method (or the second one is gone), a warm run reports what a cold run does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict

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
