"""A module without database vocabulary is analyzed only when it imports one whose functions
read or write a key. Whether an imported module can is first told from texts alone
(``ProjectIndex.quiet_closure``): when neither it nor anything it imports, however deep, says a
word that may touch a key, no summary of theirs is made. The import statements are read from
the text (``imports.imported_modules``); a text whose imports cannot all be read is asked of
its summaries, as before."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import List

import pytest

from keydrift import results
from keydrift.analysis.imports import imported_modules
from keydrift.config import load_config
from keydrift.engine import check_source
from tests.test_results_cache import _analyzed_paths, write

MODELS = """
    from django.db import models

    class Page(models.Model):
        url = models.URLField(unique=True)
"""
REPO = """
    from app.models import Page

    def fetch(url):
        return Page.objects.get(url=url)

    def save(url):
        Page.objects.create(url=url)
"""
# a chain of helpers without a word of the database: views -> text -> spelling
SPELLING = """
    def tidy(value):
        return value.strip()
"""
TEXT = """
    from app.spelling import tidy

    def shout(value):
        return tidy(value).upper()
"""
VIEWS = """
    from app.text import shout

    def show(url):
        page = shout(url)
        return page
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n")
    write(tmp_path, {"app/__init__.py": "", "app/models.py": MODELS, "app/repo.py": REPO,
                     "app/spelling.py": SPELLING, "app/text.py": TEXT, "app/views.py": VIEWS})
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("text, module, is_package, expected", [
    ("import os\nimport a.b.c as d, e\n", "m", False, ("os", "a", "a.b", "a.b.c", "e")),
    ("from . import views\nfrom .models import (\n    Tag,\n    Page,\n)\n", "app.core.x", False,
     ("app.core", "app.core.views", "app.core.models", "app.core.models.Tag", "app.core.models.Page")),
    ("from ..util import a as b, c  # noqa\n", "app.core.x", False, ("app.util", "app.util.a", "app.util.c")),
    ("def f():\n    from y.z import w\n    return w\n", "m", False, ("y.z", "y.z.w")),
    ("from x import a, \\\n    b\n", "m", False, ("x", "x.a", "x.b")),
    ("from x import *\n", "m", False, ("x",)),
    ("from . import a\n", "pkg", True, ("pkg", "pkg.a")),
    ("# import nothing here\nx = 1\n", "m", False, ()),
    # a module imported by its name, written as a literal
    ("import importlib\ndef f():\n    auth = importlib.import_module('app.auth')\n", "m", False,
     ("importlib", "app", "app.auth")),
    ("mod = __import__(\"a.b\")\n", "m", False, ("a", "a.b")),
    # a module named by a variable or relatively: no call into it can be followed
    ("import importlib\nmod = importlib.import_module(name)\n", "m", False, ("importlib",)),
    ("from importlib import import_module\nmod = import_module('.auth', package='app')\n", "m", False,
     ("importlib", "importlib.import_module")),
])
def test_the_imports_of_a_text_are_read_without_parsing_it(text, module, is_package, expected):
    assert imported_modules(text, module, is_package) == expected


@pytest.mark.parametrize("text", [
    "import a; import b\n",  # two statements on a line
    "if True: import b\n",  # a statement after a colon
    '"""To use it, import the module."""\n',  # the word in a string
    "from x import (a,  # a comment\n    b)\n",  # a comment inside the parentheses
    "from x import a \\\\ \n",  # a backslash that continues nothing
])
def test_a_text_whose_imports_cannot_all_be_read_is_not_known(text):
    assert imported_modules(text, "m", False) is None


def _findings(project: Path, path: str) -> List[str]:
    config = load_config(str(project))
    return [f.code for f in check_source((project / path).read_text(), path, config)]


def test_a_module_that_takes_only_quiet_helpers_is_not_analyzed_and_one_deep_helper_that_writes_makes_it(project):
    assert _findings(project, "app/views.py") == []
    # the deepest helper now reads and writes by the value it is given
    write(project, {"app/spelling.py": """
        from app.repo import fetch, save

        def tidy(value):
            if fetch(value) is None:
                save(value.strip().lower())
            return value.strip()
    """})
    assert "KD102" in _findings(project, "app/spelling.py")
    from keydrift import engine
    from keydrift.analysis.project import forget_indexes
    forget_indexes()
    config = load_config(str(project))
    assert engine.relevance((project / "app/views.py").read_text(), "app/views.py", config).reason == "imports"


def test_a_helper_whose_imports_cannot_be_read_is_asked_of_its_summaries(project):
    """``import a; import b`` is not read from the text: the helper's summaries decide, as they
    did before the text was read at all."""
    from keydrift import engine

    write(project, {"app/text.py": "import os; import sys\n" + textwrap.dedent(TEXT)})
    config = load_config(str(project))
    assert engine.relevance((project / "app/views.py").read_text(), "app/views.py", config).reason == ""
    write(project, {"app/text.py": "import os; import sys\nfrom app.repo import save\n\n"
                    "def shout(value):\n    save(value)\n    return value\n"})
    from keydrift.analysis.project import forget_indexes
    forget_indexes()
    assert engine.relevance((project / "app/views.py").read_text(), "app/views.py", config).reason == "imports"


def test_a_cached_result_that_rests_on_quiet_helpers_stands_until_one_of_them_may_touch_a_key(project, monkeypatch):
    """The result of a module skipped because its helpers, and theirs, say nothing of the
    database stands while they still do not and import the same modules (a comment, a new
    function without vocabulary); a word of the database in the deepest one, or a new import,
    has it checked again."""
    from keydrift.analysis.project import forget_indexes
    from keydrift.projectwide import forget

    config = load_config(str(project))
    analyzed = _analyzed_paths(monkeypatch)

    def run() -> List[str]:
        forget()
        forget_indexes()
        analyzed.clear()
        return [f.code for f in results.check_cached((project / "app/views.py").read_bytes(), "app/views.py", config)]

    assert run() == [] and analyzed == ["app/views.py"]
    assert run() == [] and analyzed == []
    spelling = textwrap.dedent(SPELLING).lstrip("\n")
    write(project, {"app/spelling.py": "# tidy text\n" + spelling + "\ndef squash(value):\n    return value.lower()\n"})
    assert run() == [] and analyzed == []  # still quiet, the same imports: no helper summarized
    write(project, {"app/spelling.py": "import os.path\n\n" + spelling})
    assert run() == [] and analyzed == ["app/views.py"]  # a new import: asked again (still none)
    write(project, {"app/spelling.py": "from app.repo import save\n\n"
                    + spelling.replace("return value.strip()", "save(value)\n    return value.strip()")})
    assert run() == [] and analyzed == ["app/views.py"]  # the deepest helper writes: checked again


@pytest.mark.parametrize("text", [
    "def by_email(e):\n    return Account.get(Account.email == e)\n",  # peewee, no vocabulary
    "class PageManager(Base):\n    def by_url(self, url):\n        return self.get(url=url)\n",  # a manager's own call
    "def all_pages():\n    return Page.all_objects.all()\n",  # a manager by name
    "from redis import Redis\nclient = Redis()\n",  # a store made by a call named so
    "def load(pk):\n    return db.get(Page, pk)\n",  # session.get(Model, pk)
    "def keep(db, page):\n    db.add(page)\n",  # session.add(instance)
    "def keep(t, row):\n    insert_row(t, row)\n",  # a helper named by a verb
    "def keep(coll, doc):\n    coll.insert(doc)\n",  # a collection's method
])
def test_what_a_layer_recognizes_without_vocabulary_is_not_quiet(text):
    from keydrift.analysis.text_relevance import may_touch_keys_by_text, relevant_by_text
    from keydrift.types import Config

    assert not relevant_by_text(text, Config())  # the vocabulary alone would miss it
    assert may_touch_keys_by_text(text, Config())


@pytest.mark.parametrize("text", [
    "def tidy(value):\n    return value.strip().lower()\n",
    "def pick(options, name):\n    return options.get(name)\n",  # dict.get on a lowercase name
    "import os\n\ndef here():\n    return os.path.dirname(__file__)\n",
])
def test_text_helpers_are_quiet(text):
    from keydrift.analysis.text_relevance import may_touch_keys_by_text
    from keydrift.types import Config

    assert not may_touch_keys_by_text(text, Config())


def test_a_module_that_takes_a_peewee_style_helper_is_analyzed(project):
    """Neither the helper nor the module declaring the model says a word of the vocabulary, yet
    the helper reads by the value it is given: its importer is analyzed, as before texts were read."""
    from keydrift import engine

    write(project, {"app/entities.py": """
        from app.base import Base

        class Account(Base):
            pass
    """, "app/base.py": "class Base:\n    pass\n", "app/text.py": """
        from app.entities import Account

        def shout(value):
            return Account.get(Account.email == value)
    """})
    config = load_config(str(project))
    assert engine.relevance((project / "app/views.py").read_text(), "app/views.py", config).reason == "imports"
