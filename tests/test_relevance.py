"""Whether a module without database vocabulary of its own is analyzed: when a project module it
imports has a function that reads or writes keys (``engine.relevance``), however many modules
without vocabulary lie between it and the database helper; not when that chain is broken."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest

from keydrift.analysis.project import forget_indexes
from keydrift.config import clear_cache, load_config
from keydrift.engine import relevance
from keydrift.vocabulary import mentions_database
from tests.test_project_index import run, write_project

MODELS = """
    from django.db import models

    class Account(models.Model):
        email = models.EmailField()
"""

REPO = """
    from app.models import Account

    def find_account(email):
        return Account.objects.filter(email=email).first()

    def add_account(email):
        Account.objects.create(email=email)

    def describe(email):
        return f"account {email}"
"""

# no vocabulary: reads and writes through the repository's functions, by its parameter
SERVICE = """
    from app.repo import add_account, find_account

    def lookup(email):
        return find_account(email)

    def register(email):
        add_account(email)
"""

# no vocabulary: reads and writes only through the service
VIEWS = """
    from app.service import lookup, register

    def signup(email):
        if lookup(email) is None:
            register(email.lower())
"""

KD102 = "app/views.py:5:9: KD102 Account.email"

# services that import the repository, or not, and pass nothing of their parameters to a read or write
BROKEN_SERVICES = {
    "calls a function of the repository that reads nothing": """
        from app.repo import describe

        def lookup(email):
            return describe(email)

        def register(email):
            return describe(email)
    """,
    "imports the repository's functions without calling them": """
        from app.repo import add_account, find_account  # noqa: F401

        def lookup(email):
            return email.strip()

        def register(email):
            return email
    """,
    "calls them with a constant key": """
        from app.repo import add_account, find_account

        def lookup(email):
            return find_account("admin@example.com")

        def register(email):
            add_account("admin@example.com")
    """,
    "imports nothing": """
        def lookup(email):
            return email.strip()

        def register(email):
            return email
    """,
}


def chain(tmp_path: Path, service: str = SERVICE, **more: str) -> Dict[str, str]:
    files = {"app/__init__.py": "", "app/models.py": MODELS, "app/repo.py": REPO, "app/service.py": service,
             "app/views.py": VIEWS, **{name.replace("__", "/") + ".py": text for name, text in more.items()}}
    write_project(tmp_path, files)
    return files


def reason(root: Path, name: str = "app/views.py") -> str:
    clear_cache()
    forget_indexes()
    path = root / name
    return relevance(path.read_text(), str(path), load_config(str(path))).reason


def test_the_modules_between_the_caller_and_the_database_have_no_vocabulary(tmp_path: Path) -> None:
    chain(tmp_path)
    assert [mentions_database((tmp_path / "app" / name).read_text()) for name in ("views.py", "service.py")] \
        == [False, False]


def test_a_caller_two_modules_without_vocabulary_away_from_the_database_is_analyzed(tmp_path: Path) -> None:
    chain(tmp_path)
    assert reason(tmp_path) == "imports"
    proc = run(["keydrift", "check", "."], tmp_path)
    assert KD102 in proc.stdout, proc.stdout + proc.stderr
    assert "read via lookup() (app/service.py:4) -> find_account() (app/repo.py:4)" in proc.stdout


@pytest.mark.parametrize("service", BROKEN_SERVICES.values(), ids=list(BROKEN_SERVICES))
def test_a_caller_is_not_analyzed_when_the_chain_to_the_database_is_broken(tmp_path: Path, service: str) -> None:
    chain(tmp_path, service)
    assert reason(tmp_path) == ""
    proc = run(["keydrift", "check", "."], tmp_path)
    assert proc.returncode == 0 and "KD" not in proc.stdout, proc.stdout + proc.stderr


def test_a_module_without_vocabulary_may_read_a_key_itself(tmp_path: Path) -> None:
    """A read the vocabulary does not name (a peewee model's ``get``): the module's own text
    cannot say that its importers are not analyzed, only its functions' summaries can."""
    chain(tmp_path, app__lookup="""
        from app.models import Account

        def find(email):
            return Account.get(Account.email == email)
    """, app__page="""
        from app.lookup import find

        def show(email):
            return find(email.strip())
    """)
    assert not mentions_database((tmp_path / "app" / "lookup.py").read_text())
    assert reason(tmp_path, "app/page.py") == "imports"


def test_a_cached_run_follows_an_edit_of_the_module_in_the_middle_of_the_chain(tmp_path: Path) -> None:
    chain(tmp_path)
    service = tmp_path / "app" / "service.py"
    assert KD102 in run(["keydrift", "check", "."], tmp_path).stdout
    write_project(tmp_path, {"app/service.py": BROKEN_SERVICES["calls them with a constant key"]})
    proc = run(["keydrift", "check", "."], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    write_project(tmp_path, {"app/service.py": SERVICE})
    assert KD102 in run(["keydrift", "check", "."], tmp_path).stdout
    assert service.read_text().startswith("from app.repo import add_account")


def test_a_cached_run_follows_an_edit_at_the_far_end_of_the_chain(tmp_path: Path) -> None:
    """The repository's functions stop reading and writing: the views, two imports away, are
    no longer analyzed; once they do again, the finding is back."""
    chain(tmp_path)
    assert KD102 in run(["keydrift", "check", "."], tmp_path).stdout
    repo = tmp_path / "app" / "repo.py"
    repo.write_text(repo.read_text().replace("Account.objects.filter(email=email).first()", "None")
                    .replace("Account.objects.create(email=email)", "pass"))
    assert run(["keydrift", "check", "."], tmp_path).returncode == 0
    chain(tmp_path)
    assert KD102 in run(["keydrift", "check", "."], tmp_path).stdout


def test_an_editor_check_follows_edits_of_the_modules_in_the_chain(tmp_path: Path) -> None:
    """The editor server's check of the views, in one process, while the service is edited."""
    from keydrift.lsp import document_findings

    forget_indexes()
    chain(tmp_path, BROKEN_SERVICES["imports nothing"])
    views = tmp_path / "app" / "views.py"
    config = load_config(str(views))
    assert document_findings(views.read_text(), str(views), config) == []
    write_project(tmp_path, {"app/service.py": SERVICE})
    found = document_findings(views.read_text(), str(views), config)
    assert [(f.code, f.line) for f in found] == [("KD102", 5)]
    write_project(tmp_path, {"app/service.py": BROKEN_SERVICES["calls them with a constant key"]})
    assert document_findings(views.read_text(), str(views), config) == []
    forget_indexes()


# no vocabulary: one function writes a key through the repository, the others read nothing
HELPERS = """
    from app.repo import add_account

    SETTINGS = {"greeting": "hello"}

    def keep(email):
        add_account(email)

    def shout(text):
        return text.upper()

    def other(text):
        return text

    class Keeper:
        def keep(self, email):
            add_account(email)

    KEEPER = Keeper()
    TIMEOUT = SETTINGS["timeout"] if "timeout" in SETTINGS else 30
"""


@pytest.mark.parametrize("page, analyzed", [
    # only what the module takes from the helpers can be called from it
    ("from app.helpers import shout\n\ndef show(n):\n    return shout(n)\n", ""),
    ("from app.helpers import shout, other\n\ndef show(n):\n    return other(shout(n))\n", ""),
    # a class it takes: its methods are the module's to call
    ("from app.helpers import Keeper\n\ndef show(n):\n    Keeper().keep(n)\n", "imports"),
    ("from app.helpers import keep as remember\n\ndef show(n):\n    remember(n)\n", "imports"),
    # a variable bound only to data (a literal, what is made of it): no way into their code
    ("from app.helpers import SETTINGS, shout\n\ndef show(n):\n    return shout(n)\n", ""),
    ("from app.helpers import TIMEOUT, shout\n\ndef show(n):\n    return shout(n)\n", ""),
    # a variable holding what their code made (an instance of a class of theirs), or a name they
    # import themselves: any of their functions may be behind it
    ("from app.helpers import KEEPER\n\ndef show(n):\n    KEEPER.keep(n)\n", "imports"),
    ("from app.helpers import add_account\n\ndef show(n):\n    add_account(n)\n", "imports"),
    ("from app.helpers import *\n\ndef show(n):\n    return shout(n)\n", "imports"),
    # names over several lines, in parentheses or continued, are read whole
    ("from app.helpers import (shout,\n    other)\n\ndef show(n):\n    return shout(n)\n", ""),
    ("from app.helpers import shout, \\\n    other\n\ndef show(n):\n    return shout(n)\n", ""),
    ("from app.helpers import (shout, other)  # both\n\ndef show(n):\n    return shout(n)\n", ""),
    ("from app.helpers import (\n    shout,\n    other,\n)\n\ndef show(n):\n    return shout(n)\n", ""),
    ("from app.helpers import (\n    shout,\n    keep,\n)\n\ndef show(n):\n    keep(n)\n", "imports"),
    ("def show(n):\n    from app.helpers import (\n        keep,\n    )\n    keep(n)\n", "imports"),
    # names that could not all be read (a comment between them): any of the functions
    ("from app.helpers import (shout,  # loud\n    other)\n\ndef show(n):\n    return shout(n)\n", "imports"),
    # the module itself (a plain import): any of its functions, wherever it is listed
    ("import app.helpers\n\ndef show(n):\n    return app.helpers.shout(n)\n", "imports"),
    ("import os, app.helpers\n\ndef show(n):\n    return app.helpers.shout(n)\n", "imports"),
])
def test_a_caller_is_judged_by_what_it_takes_from_a_module(tmp_path: Path, page: str, analyzed: str) -> None:
    chain(tmp_path, app__helpers=HELPERS, app__page=page)
    assert not mentions_database((tmp_path / "app" / "helpers.py").read_text())
    assert reason(tmp_path, "app/page.py") == analyzed


def test_a_caller_that_imports_its_helpers_in_parentheses_over_several_lines_is_analyzed(tmp_path: Path) -> None:
    # the way formatters write a long import: nothing of it on the first line
    views = VIEWS.replace("from app.service import lookup, register",
                          "from app.service import (\n        lookup,\n        register,\n    )")
    chain(tmp_path, app__views=views)
    assert reason(tmp_path) == "imports"
    proc = run(["keydrift", "check", "."], tmp_path)
    assert "app/views.py:8:9: KD102 Account.email" in proc.stdout, proc.stdout + proc.stderr


def test_a_caller_that_imports_its_helpers_by_name_inside_a_function_is_analyzed(tmp_path: Path) -> None:
    # ``importlib.import_module("...")`` in the function that uses it, to break an import cycle
    views = """
    import importlib

    def signup(email):
        service = importlib.import_module("app.service")
        if service.lookup(email) is None:
            service.register(email.lower())
"""
    chain(tmp_path, app__views=views)
    assert reason(tmp_path) == "imports"
    proc = run(["keydrift", "check", "."], tmp_path)
    assert "app/views.py:6:9: KD102 Account.email" in proc.stdout, proc.stdout + proc.stderr


def test_a_module_imported_by_a_computed_name_makes_no_caller_analyzed(tmp_path: Path) -> None:
    views = """
    import importlib

    def signup(email, backend):
        service = importlib.import_module(backend)
        service.register(email.lower())
"""
    chain(tmp_path, app__views=views)
    # whatever module it is, the analysis cannot follow a call into it
    assert reason(tmp_path) == ""


def test_a_caller_that_imports_a_quiet_module_by_name_is_not_analyzed(tmp_path: Path) -> None:
    views = """
    import importlib

    def signup(email):
        text = importlib.import_module("app.text")
        return text.shout(email)
"""
    chain(tmp_path, app__views=views, app__text="""
    def shout(value):
        return value.upper()
""")
    assert reason(tmp_path) == ""
