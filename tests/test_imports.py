"""Module names and imports have one home (keydrift.analysis.imports): paths to module names,
relative imports, and what a module's imports bind."""

from __future__ import annotations

import ast
import os

import pytest

from keydrift.analysis.imports import (
    absolute_module, bindings, forget_packages, import_name_for, inner_bindings, module_name_for, module_name_of,
)
from keydrift.analysis.module import import_map
from keydrift.types import Config


@pytest.mark.parametrize("relative, expected", [
    ("app/repo.py", ("app.repo", False)),
    ("app/__init__.py", ("app", True)),
    ("src/app/models.py", ("app.models", False)),  # src layout
    ("app/stubs.pyi", ("app.stubs", False)),
    ("README.md", ("", False)),
])
def test_module_name_for(tmp_path, relative, expected):
    assert module_name_for(str(tmp_path / relative), str(tmp_path)) == expected


@pytest.mark.parametrize("relative, expected", [
    ("svc/app/repo.py", ("app.repo", False)),  # a package below a plain folder: named from its top
    ("svc/app/__init__.py", ("app", True)),
    ("svc/app/api/views.py", ("app.api.views", False)),
    ("svc/run.py", ("svc.run", False)),  # in no package: named from the root, as before
    ("src/app/repo.py", ("app.repo", False)),
    ("top.py", ("top", False)),
    ("README.md", ("", False)),
])
def test_import_name_for_names_a_module_from_its_top_package(tmp_path, relative, expected):
    for package in ("svc/app", "svc/app/api", "src/app"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    forget_packages()
    assert import_name_for(str(tmp_path / relative), str(tmp_path)) == expected


def test_import_name_for_a_root_that_is_a_package_names_from_the_root(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    forget_packages()
    assert import_name_for(str(tmp_path / "app" / "repo.py"), str(tmp_path)) == ("app.repo", False)
    assert import_name_for(str(tmp_path / "elsewhere.py"), str(tmp_path / "app")) == ("", False)


def test_module_name_of_outside_the_root_keeps_the_directories(tmp_path):
    config = Config(root=str(tmp_path / "project"))
    assert module_name_of(str(tmp_path / "project" / "app" / "tests" / "test_a.py"), config) == "app.tests.test_a"
    assert module_name_of(os.path.join("elsewhere", "migrations", "0001.py"), config) == "elsewhere.migrations.0001"
    assert module_name_of("", config) == ""


@pytest.mark.parametrize("target, level, module, package, expected", [
    ("x", 0, "app.views", False, "x"),
    ("models", 1, "app.views", False, "app.models"),
    ("", 1, "app.views", False, "app"),
    ("models", 1, "app", True, "app.models"),
    ("core", 2, "app.api.views", False, "app.core"),
    ("x", 3, "app.views", False, None),  # above the top package
])
def test_absolute_module(target, level, module, package, expected):
    assert absolute_module(target, level, module, package) == expected


def test_bindings_of_every_import_form():
    source = ("import os\nimport urllib.parse as up\nimport a.b\nfrom .models import Page as P, Site\n"
              "from ... import far\nfrom x import *\n")
    bound = list(bindings(ast.parse(source), "app.views", False))
    assert bound == [("os", "os", ""), ("up", "urllib.parse", ""), ("a.b", "a.b", ""),
                     ("P", "app.models", "Page"), ("Site", "app.models", "Site"), ("far", "...", "far")]


INNER = """
import importlib
from app.models import Page

try:
    from app.fast import render
except ImportError:
    from app.slow import render

if TYPE_CHECKING:
    from app.models import Site

def view(request):
    from .store import save_page as save, find_page
    import app.audit
    auth = importlib.import_module("app.auth")
    return save(request)

class Handler:
    from app.mixins import Mixin  # a class attribute, not a name of the module

    def handle(self):
        from app.store import find_page
        backend = importlib.import_module(self.backend_name)
        return find_page(self)

    async def notify(self):
        if self.ok:
            from app.mail import send
        return send(self)
"""


def test_inner_bindings_are_the_imports_inside_functions_methods_and_blocks():
    bound = sorted(inner_bindings(ast.parse(INNER), "app.views", False))
    assert bound == sorted([
        ("render", "app.fast", "render"), ("render", "app.slow", "render"), ("Site", "app.models", "Site"),
        ("save", "app.store", "save_page"), ("find_page", "app.store", "find_page"), ("app.audit", "app.audit", ""),
        ("auth", "app.auth", ""), ("find_page", "app.store", "find_page"), ("send", "app.mail", "send"),
    ])


def test_the_import_map_takes_inner_imports_the_module_binds_no_other_way():
    names = import_map(ast.parse(INNER + "def send(x):\n    return x\n"), "app.views", False)
    assert names["Page"] == ("app.models", "Page")  # top level
    assert names["save"] == ("app.store", "save_page") and names["find_page"] == ("app.store", "find_page")
    assert names["auth"] == ("app.auth", "") and names["Site"] == ("app.models", "Site")
    assert "render" not in names  # two sources: which one a call means is not known
    assert "send" not in names  # a function of the module has that name
    assert "Mixin" not in names and "backend" not in names


def test_a_module_imported_by_name_at_the_top_level_is_bound_unless_rebound():
    assert import_map(ast.parse("import importlib\nauth = importlib.import_module('app.auth')\n"), "m", False)[
        "auth"] == ("app.auth", "")
    rebound = "import importlib\nauth = importlib.import_module('app.auth')\nauth = None\n"
    assert "auth" not in import_map(ast.parse(rebound), "m", False)


def test_module_level_instances_are_variables_bound_once_to_a_class_of_the_module_or_imported():
    from keydrift.analysis.module import module_instances

    source = """
from app.repo import AccountRepo, make_repo
import app.cache as cache

class Local:
    pass

accounts = AccountRepo()
local = Local()
built = make_repo()  # a function's result, not known to be an instance of one class
cached = cache.Store()  # a class named through a module: not read
twice = Local()
twice = AccountRepo()
looped = Local()
for looped in range(3):
    pass
"""
    module = ast.parse(source)
    imported = import_map(module, "app.views", False)
    classes = {"Local"}
    assert module_instances(module, classes, imported) == {"accounts": "AccountRepo", "local": "Local"}
