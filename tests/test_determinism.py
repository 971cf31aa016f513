"""A file's findings depend on the project only: not on the string hash seed of the process
(Python randomizes it per process, so sets of names iterate in another order in every run),
not on which files a process checked before, not on the number of workers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, Iterator, List, Sequence

import pytest

from keydrift.analysis.facts import Value
from keydrift.analysis.project import forget_indexes
from keydrift.analysis.summaries import parameter_of
from keydrift.cli import check_file
from keydrift.config import clear_cache, load_config
from keydrift.projectwide import forget as forget_registry

# A helper that takes a record or its name, and a caller that looks the name up lowercased
# and hands it to the helper as given: the helper stores the parameter itself.
BAN = {
    "app/__init__.py": "",
    "app/models.py": """
        from django.db import models

        class Project(models.Model):
            name = models.CharField(max_length=100)

        class Banned(models.Model):
            name = models.CharField(max_length=100)
    """,
    "app/store.py": """
        from app.models import Banned, Project

        def ban(project, request):
            name = project.name if isinstance(project, Project) else project
            Banned.objects.create(name=name)
    """,
    "app/views.py": """
        from app.models import Banned
        from app.store import ban

        def add_ban(request):
            name = request.POST["name"]
            if Banned.objects.filter(name=name.lower()).exists():
                return
            ban(name, request)
    """,
}


def write_project(root: Path, files: Dict[str, str]) -> Path:
    (root / "pyproject.toml").write_text("[tool.keydrift]\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


class _Ordered(frozenset):
    """A set of origins that iterates in the order given, as some hash seed would."""

    def __new__(cls, items: Sequence[str]) -> "_Ordered":
        made = super().__new__(cls, items)
        made.order = list(items)
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self.order)


@pytest.mark.parametrize("order", [["project", "project.name"], ["project.name", "project"]])
def test_a_value_made_of_a_parameter_or_its_attribute_comes_from_the_parameter(order: List[str]) -> None:
    value = Value(_Ordered(order), (), "name")
    assert parameter_of(value, ("project", "request")) == (0, "")


@pytest.mark.parametrize("order", [["user.profile.email", "user.email"], ["user.email", "user.profile.email"]])
def test_of_two_attributes_of_a_parameter_the_shorter_path_is_taken(order: List[str]) -> None:
    value = Value(_Ordered(order), (), "email")
    assert parameter_of(value, ("user",)) == (0, ".email")


def test_findings_do_not_depend_on_the_string_hash_seed(tmp_path: Path) -> None:
    """Seeds 0 and 3 iterated {"project", "project.name"} the other way from seeds 1 and 2: the
    helper's write was summarized as ``project.name`` and the KD103 at the call was lost."""
    root = write_project(tmp_path, BAN)
    outputs = set()
    for seed in ("0", "1", "2", "3"):
        proc = subprocess.run([sys.executable, "-m", "keydrift", "check", "--no-cache", "-q", "."], cwd=root,
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        assert "Traceback" not in proc.stderr, proc.stderr
        outputs.add(proc.stdout)
    assert len(outputs) == 1, outputs
    assert "app/views.py:8:5: KD103 Banned.name is written with name" in outputs.pop()


def _findings_in_order(root: Path, order: Sequence[str]) -> Dict[str, List[str]]:
    """Each file's findings, the files checked one after the other in one process."""
    clear_cache()
    forget_indexes()
    forget_registry()
    config = load_config(str(root / "app" / "views.py"))
    found = {}
    cwd = os.getcwd()
    os.chdir(root)
    try:
        for name in order:
            found[name] = [f"{f.line}:{f.code}" for f in check_file(name, config)]
    finally:
        os.chdir(cwd)
    return found


def test_findings_do_not_depend_on_the_files_checked_before_in_the_process(tmp_path: Path) -> None:
    root = write_project(tmp_path, BAN)
    names = sorted(name for name in BAN if name.endswith(".py"))
    forward = _findings_in_order(root, names)
    backward = _findings_in_order(root, list(reversed(names)))
    assert forward == backward
    assert forward["app/views.py"] == ["8:KD103"]


# Two modules importing each other, a third importing one of them: the importer's analysis
# builds the cycle's exports with the cycle cut short somewhere. The registry finding sits in
# the module of the cycle that sees the other one only through the cut when the importer is
# checked first (``flows`` calls ``store.new_tag``).
CYCLE = {
    "app/__init__.py": "",
    "app/models.py": """
        from django.db import models

        class Tag(models.Model):
            name = models.CharField(max_length=40, db_index=True)
    """,
    "app/store.py": """
        from app import flows
        from app.models import Tag

        def new_tag(name):
            return Tag.objects.create(name=name)

        def add_tag(request):
            name = request.POST["name"].strip()
            if Tag.objects.filter(name=name).exists():
                return None
            flows.announce(name)
            return new_tag(name)
    """,
    "app/flows.py": """
        from app import store

        def announce(name):
            print(name)

        def sync_board(request):
            board = request.json["board"]
            store.new_tag(board["tag"])
    """,
    "app/views.py": """
        from app import store

        def create_tag(request):
            return store.add_tag(request)
    """,
}
_FLOWS_RAW = ("app/flows.py", 8, "KD110")


def _variant(**texts: str) -> Dict[str, str]:
    return {**CYCLE, **{f"app/{name}.py": text for name, text in texts.items()}}


_CYCLE_CASES = {
    # the finding is in the cycle
    "cycle": (CYCLE, [_FLOWS_RAW]),
    # near misses: the cycle's write stores the form the other entry point stores
    "cycle, both strip": (_variant(flows=CYCLE["app/flows.py"].replace('board["tag"]', 'board["tag"].strip()')), []),
    # ... the importer imports the module with the finding
    "cycle, the other importer": (_variant(views="""
        from app import flows

        def create_tag(request):
            return flows.sync_board(request)
    """), [_FLOWS_RAW]),
    # ... no cycle: store no longer imports flows
    "no cycle": (_variant(store=CYCLE["app/store.py"].replace("from app import flows", "").replace(
        "flows.announce(name)", "print(name)")), [_FLOWS_RAW]),
    # ... the write in the cycle is the module's own, not a call into the other module
    "cycle, own write": (_variant(flows="""
        from app import store
        from app.models import Tag

        def announce(name):
            print(name)

        def sync_board(request):
            board = request.json["board"]
            Tag.objects.create(name=board["tag"])
    """), [("app/flows.py", 9, "KD110")]),
}
_REGISTRY_CODES = ("KD108", "KD109", "KD110")


def _registry_findings(found: Sequence[dict]) -> List[tuple]:
    return sorted((f["path"], f["line"], f["code"]) for f in found if f["code"] in _REGISTRY_CODES)


def _cli_findings(root: Path, capsys, *args: str) -> List[tuple]:
    import json

    from keydrift.cli import main

    forget_indexes()
    forget_registry()
    main(["check", "-q", "--exit-zero", "--format", "json", *args])
    return _registry_findings(json.loads(capsys.readouterr().out)["findings"])


def _plugin_findings(root: Path, order: Sequence[str]) -> List[tuple]:
    """The flake8 plugin given the files in ``order`` in one process, with its cache."""
    import ast

    from keydrift.flake8_plugin import KeydriftChecker

    forget_indexes()
    forget_registry()
    clear_cache()
    found = []
    for name in order:
        text = (root / name).read_text()
        for line, _, message, _ in KeydriftChecker(ast.parse(text), f"./{name}", text.splitlines(keepends=True)).run():
            found.append({"path": name, "line": line, "code": message.split()[0]})
    return _registry_findings(found)


def _without_cache(root: Path) -> None:
    import shutil

    shutil.rmtree(root / ".keydrift_cache", ignore_errors=True)


@pytest.mark.parametrize("case", list(_CYCLE_CASES))
def test_registry_findings_do_not_depend_on_the_order_files_are_checked_in(tmp_path: Path, monkeypatch, capsys,
                                                                            case: str) -> None:
    """A module's registry contribution is made in a frame of its own: not the export built for
    an importer with the import cycle cut short, whichever file was checked first, whether the
    export was made in this process or read from the cache."""
    files, expected = _CYCLE_CASES[case]
    root = write_project(tmp_path, files)
    monkeypatch.chdir(root)
    whole = _cli_findings(root, capsys, "--no-cache", ".")
    assert whole == expected
    pair = ["app/views.py", "app/flows.py"]
    for order in (pair, pair[::-1]):
        shown = [f for f in whole if f[0] in order]
        _without_cache(root)
        assert _cli_findings(root, capsys, "-j", "1", *order) == shown, order
        assert _cli_findings(root, capsys, "-j", "1", *order) == shown, order  # read back from the cache
        _without_cache(root)
        assert _cli_findings(root, capsys, "-j", "1", order[0]) == [f for f in whole if f[0] == order[0]], order
        assert _cli_findings(root, capsys, "-j", "1", *order) == shown, order  # the first one's exports on disk
        _without_cache(root)
        assert _plugin_findings(root, order) == shown, order
        assert _cli_findings(root, capsys, "--no-cache", "-j", "1", *order) == shown, order


def _keys_of(export) -> list:
    from keydrift.analysis.registry import keys_to_json

    return keys_to_json(export.keys)["uses"]


def test_an_export_made_for_an_importer_inside_a_cycle_is_the_modules_contribution(tmp_path: Path) -> None:
    """``flows``, read for an importer (``views`` -> ``store`` -> ``flows``, which imports
    ``store`` back), is made on demand, each summary in a frame of its own: it is the export the
    module makes of itself outside any frame, and so is the one stored, read back by another
    process; read while ``store`` is being analyzed it is the same (a cycle is cut short only
    back to an export still being constructed, not to a module being analyzed)."""
    from keydrift.analysis.project import DemandedExport, ModuleExport, project_index
    from keydrift.deepstack import call_with_deep_stack
    from keydrift.types import Config

    root = write_project(tmp_path, CYCLE)
    config = Config(root=str(root))
    flows, store = str(root / "app" / "flows.py"), str(root / "app" / "store.py")
    forget_indexes()
    own = _keys_of(project_index(config, use_cache=False).export_for_file(flows))
    assert [use[10][:2] for use in own] == [["app/flows.py", 8]]  # its write through store.new_tag
    forget_indexes()
    index = project_index(config)
    views = index.export_for_file(str(root / "app" / "views.py"))
    call_with_deep_stack(lambda: index.fingerprint(views))  # every summary made: flows read for it
    made = index.export_for_file(flows)
    assert isinstance(made, DemandedExport) and _keys_of(made) == own
    call_with_deep_stack(lambda: index.fingerprint(made))  # made whole outside any frame: stored
    forget_indexes()  # another process
    index = project_index(config)
    with index.module_frame("app.store", store, "store"):
        stored = index.export_for_file(flows)
    assert isinstance(stored, ModuleExport) and _keys_of(stored) == own
    forget_indexes()
    index = project_index(config, use_cache=False)
    with index.module_frame("app.store", store, "store"):
        assert _keys_of(index.export_for_file(flows)) == own  # made in store's frame


def test_a_checked_modules_own_walk_replaces_the_export_its_importer_built(tmp_path: Path, monkeypatch, capsys) -> None:
    """``flows``, built for ``views`` with the cycle cut short, is then checked: that check's
    walk, in its own frame, becomes its export and contribution (not built a third time)."""
    from keydrift.analysis.project import ProjectIndex

    root = write_project(tmp_path, CYCLE)
    monkeypatch.chdir(root)
    built = []
    build = ProjectIndex._built

    def recorded(self, module_name, path, digest):
        built.append(module_name)
        return build(self, module_name, path, digest)
    monkeypatch.setattr(ProjectIndex, "_built", recorded)
    assert _cli_findings(root, capsys, "-j", "1", "app/views.py", "app/flows.py") == [_FLOWS_RAW]
    assert built.count("app.flows") == 1


# ``hub`` and ``handler`` import each other; ``handler.deactivate`` looks the user up through
# ``hub.set_deactivated``, and ``hub.start`` hands it a request's name: its registry use goes
# through the cycle. ``rest`` imports ``account``, which calls ``handler`` too, so ``account``
# and ``handler`` are analyzed for an importer before their own checks in one order, after in
# another. ``lookup`` compares the name case-insensitively: KD109 at ``hub.start``.
THROUGH_A_CYCLE = {
    "app/__init__.py": "",
    "app/models.py": """
        from django.db import models

        class User(models.Model):
            name = models.CharField(max_length=40)
            active = models.BooleanField(default=True)
    """,
    "app/hub.py": """
        from app import handler
        from app.models import User

        def set_deactivated(name):
            User.objects.filter(name=name).update(active=False)

        def start(request):
            return handler.deactivate(request.POST["name"])
    """,
    "app/handler.py": """
        from app import hub

        def deactivate(name):
            hub.set_deactivated(name)
    """,
    "app/account.py": """
        from app import handler

        def deactivate_view(request):
            handler.deactivate(request.user.username)
    """,
    "app/rest.py": """
        from app import account

        def route(request):
            return account.deactivate_view(request)
    """,
    "app/lookup.py": """
        from app.models import User

        def find(request):
            return User.objects.filter(name__iexact=request.GET["name"]).first()
    """,
}


_ORDERS = [
    ["app/hub.py", "app/rest.py", "app/account.py", "app/handler.py", "app/lookup.py"],
    ["app/account.py", "app/hub.py", "app/rest.py", "app/handler.py", "app/lookup.py"],
    ["app/handler.py", "app/lookup.py", "app/rest.py", "app/account.py", "app/hub.py"],
    ["app/rest.py", "app/handler.py", "app/hub.py", "app/lookup.py", "app/account.py"],
]


def test_what_a_module_reads_through_an_import_cycle_does_not_depend_on_which_file_was_checked_first(
        tmp_path: Path, monkeypatch, capsys) -> None:
    """With the cache as without it, a module reads another's summaries as made on demand,
    function by function, in a frame of that module's own: ``handler.deactivate``'s lookup
    through ``hub`` is the same whether ``hub``'s check, ``account``'s or ``rest``'s asked for
    it first, and so are the registry's findings and each module's contribution. (Before, an
    export built inside another's build was served as it was: ``hub.py`` first, KD109 was
    missed with and without the cache; ``handler.py`` first, with the cache only.)"""
    root = write_project(tmp_path, THROUGH_A_CYCLE)
    monkeypatch.chdir(root)
    expected = [("app/hub.py", 8, "KD109")]
    found, contributions = {}, []
    for order in _ORDERS:
        found[("--no-cache",) + tuple(order)] = _cli_findings(root, capsys, "--no-cache", "-j", "1", *order)
        _without_cache(root)
        found[tuple(order)] = _cli_findings(root, capsys, "-j", "1", *order)
        contributions.append(_contributions(root))
    assert all(findings == expected for findings in found.values()), found
    assert all(made == contributions[0] for made in contributions)


def _contributions(root: Path) -> Dict[str, object]:
    """Each module's registry contribution as the last run stored it."""
    import json

    found: Dict[str, object] = {}
    for entry in (root / ".keydrift_cache").glob("m*"):
        modules = json.loads(entry.read_text()).get("modules") or {}
        found.update({os.path.relpath(path, root): record["keys"] for path, record in modules.items()})
    assert found
    return found


def _check_in_a_process(root: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "keydrift", "check", "-j", "1", "-q", "."], cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_an_edit_under_an_import_cycle_is_checked_again_without_running_out_of_stack(tmp_path: Path) -> None:
    """The run after an edit revalidates the stored exports of the cycle's modules, each of
    which read the other: a revalidation that did not cut the cycle short recursed until the
    stack ran out (KD901 'nested too deeply' in the cycle's importers, and a slow run)."""
    root = write_project(tmp_path, CYCLE)

    def run() -> str:
        return _check_in_a_process(root)

    cold = run()
    with open(root / "app" / "models.py", "a") as handle:
        handle.write("# an edit that changes no summary\n")
    edited = run()
    assert "KD901" not in edited
    assert edited == cold and "app/flows.py:8:" in cold


_STRIPPED_FLOWS = CYCLE["app/flows.py"].replace('board["tag"]', 'board["tag"].strip()')


@pytest.mark.parametrize("edit", ["a comment in flows", "flows strips the tag", "store no longer strips"])
def test_an_edit_inside_an_import_cycle_finds_what_a_cold_run_finds(tmp_path: Path, edit: str) -> None:
    """An edit of a module of the cycle: its entry is made again, the other module's stored
    entry is revalidated reading it, and it reads the other back as stored meanwhile. When the
    edit changes what the cycle exports, that assumption fails and what was made on it is made
    again: the findings are a cold run's of the edited project, never the stored ones."""
    root = write_project(tmp_path, CYCLE)
    _check_in_a_process(root)
    flows, store = root / "app" / "flows.py", root / "app" / "store.py"
    if edit == "a comment in flows":
        flows.write_text(flows.read_text() + "# an edit that changes no summary\n")
    elif edit == "flows strips the tag":
        flows.write_text(textwrap.dedent(_STRIPPED_FLOWS))
    else:
        store.write_text(store.read_text().replace('request.POST["name"].strip()', 'request.POST["name"]'))
    edited = _check_in_a_process(root)
    _without_cache(root)
    assert edited == _check_in_a_process(root)
    assert "KD901" not in edited
    assert ("app/flows.py:8:" in edited) == (edit == "a comment in flows")
