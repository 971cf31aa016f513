"""The project-wide key registry: typed facts, their cache, and the findings it gives every front end."""

from __future__ import annotations

import ast
import json
import os
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from keydrift.analysis.project import forget_indexes, project_index
from keydrift.analysis.registry import (
    Origin, Registry, classify, keys_from_json, keys_to_json, stored_form,
)
from keydrift.flake8_plugin import KeydriftChecker
from keydrift.projectwide import findings_for, forget
from keydrift.types import Config

MODELS = '''\
from django.db import models


class Member(models.Model):
    email = models.EmailField(unique=True)

    def save(self, *args, **kwargs):
        self.email = self.email.lower()
        super().save(*args, **kwargs)
'''

RESET = '''\
from club.models import Member


def request_reset(request):
    return Member.objects.filter(email=request.POST["email"]).first()
'''

STORE = '''\
def add(conn, address):
    conn.execute("INSERT INTO addresses (address) VALUES (?)", (address,))


def owner(conn, address):
    return conn.execute("SELECT user_id FROM addresses WHERE address = ?", (address,)).fetchone()
'''

HANDLER = '''\
from club import store


def bind(conn, address):
    store.add(conn, address.lower())
'''

SERVLET = '''\
from club import store


def check(conn, body):
    return store.owner(conn, body["address"])
'''


@pytest.fixture()
def project(tmp_path, monkeypatch):
    forget()
    forget_indexes()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "club").mkdir()
    (tmp_path / "club" / "__init__.py").write_text("")
    yield tmp_path
    forget()
    forget_indexes()


def _write(root: Path, files: dict) -> None:
    for name, text in files.items():
        (root / name).write_text(text)


def _codes(path: str, config: Config) -> list:
    return [(f.code, f.line) for f in findings_for(path, config)]


def test_a_lookup_in_another_module_is_judged_against_the_models_save(project):
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})
    config = Config(root=str(project))
    found = findings_for("club/reset.py", config)
    assert [(f.code, f.line) for f in found] == [("KD108", 5)]
    assert "`Member.save()` (club/models.py:7)" in found[0].message
    # the other side is a related location (SARIF shows it and a code flow through it)
    assert [(r.path, r.line) for r in found[0].related] == [("club/reset.py", 5), ("club/models.py", 7)]
    assert findings_for("club/models.py", config) == []


def test_the_outermost_caller_is_reported_not_the_store_method(project):
    _write(project, {"club/store.py": STORE, "club/handlers.py": HANDLER, "club/servlets.py": SERVLET})
    config = Config(root=str(project))
    found = findings_for("club/servlets.py", config)
    assert [(f.code, f.line) for f in found] == [("KD108", 5)]
    assert "`bind` (club/handlers.py:5)" in found[0].message
    assert "via store.owner() (club/store.py:6)" in found[0].message
    assert findings_for("club/store.py", config) == [] and findings_for("club/handlers.py", config) == []


def test_a_change_in_any_contributing_module_invalidates_the_findings(project):
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})
    config = Config(root=str(project))
    assert _codes("club/reset.py", config) == [("KD108", 5)]
    assert any(name.startswith("g-") for name in os.listdir(project / ".keydrift_cache"))
    # another process (a flake8 worker) reads the entry without building anything
    forget()
    forget_indexes()
    assert _codes("club/reset.py", config) == [("KD108", 5)]
    (project / "club" / "models.py").write_text(MODELS.replace("self.email.lower()", "self.email"))
    assert _codes("club/reset.py", config) == []
    (project / "club" / "models.py").write_text(MODELS)
    (project / "club" / "other.py").write_text(RESET.replace('request.POST["email"]', 'request.GET["e"]'))
    assert _codes("club/other.py", config) == [("KD108", 5)]


def test_a_trusted_registry_is_not_walked_again_for_a_module_the_walk_leaves_out(project, monkeypatch):
    """flake8 hands the plugin modules the project's walk skips (``.ropeproject/config.py``):
    nothing is reported there, known without walking the project again; a module created since
    where the walk goes is still found."""
    from keydrift import projectwide

    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})
    (project / ".ropeproject").mkdir()
    (project / ".ropeproject" / "config.py").write_text(RESET)
    (project / "build").mkdir()
    (project / "build" / "reset.py").write_text(RESET)
    config = Config(root=str(project))
    assert [(f.code, f.line) for f in findings_for("club/reset.py", config, fresh=False)] == [("KD108", 5)]
    walks = []
    real = projectwide._project_files
    monkeypatch.setattr(projectwide, "_project_files", lambda *args: walks.append(args) or real(*args))
    assert findings_for(".ropeproject/config.py", config, fresh=False) == []
    assert findings_for("build/reset.py", config, fresh=False) == []
    assert walks == []
    (project / "club" / "other.py").write_text(RESET)
    assert [(f.code, f.line) for f in findings_for("club/other.py", config, fresh=False)] == [("KD108", 5)]
    assert len(walks) == 1


def _modules_asked_of_the_index(monkeypatch) -> list:
    """The modules (relative paths) whose registry facts are asked of the index from now on."""
    from keydrift import projectwide

    asked = []
    real = projectwide._module_keys

    def counted(index, path, *args, **kwargs):
        asked.append(os.path.relpath(path, index.root).replace(os.sep, "/"))
        return real(index, path, *args, **kwargs)

    monkeypatch.setattr(projectwide, "_module_keys", counted)
    return asked


def test_a_touched_module_replaces_only_its_own_stored_contribution(project, monkeypatch):
    """The stored registry keeps each module's contribution with what decided it: after an
    edit, only the edited module and the modules that consulted it are asked again, and the
    findings are those of a full assembly."""
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET, "club/store.py": STORE,
                     "club/handlers.py": HANDLER, "club/servlets.py": SERVLET})
    config = Config(root=str(project))
    assert _codes("club/reset.py", config) == [("KD108", 5)]
    asked = _modules_asked_of_the_index(monkeypatch)
    forget()
    forget_indexes()
    (project / "club" / "servlets.py").write_text(SERVLET + "# edited\n")
    assert _codes("club/servlets.py", config) == [("KD108", 5)]
    assert _codes("club/reset.py", config) == [("KD108", 5)]
    assert set(asked) == {"club/servlets.py"}
    asked.clear()
    forget()
    forget_indexes()
    (project / "club" / "models.py").write_text(MODELS.replace("self.email.lower()", "self.email"))
    assert _codes("club/reset.py", config) == []
    assert set(asked) == {"club/models.py", "club/reset.py"}  # reset.py imports the model
    assert _codes("club/servlets.py", config) == [("KD108", 5)]


def test_a_stored_contribution_decided_by_the_method_index_follows_it(project):
    """A module without database words of its own takes part when it calls a method the
    project defines next to database code: its stored contribution holds while the project's
    method index is the same, and is asked again when it changed."""
    from keydrift.diskcache import file_digest
    from keydrift.projectwide import _still_valid

    (project / "club" / "api.py").write_text("X = 1\n")
    path = str(project / "club" / "api.py")
    record = {"digest": file_digest(path), "deps": {path: file_digest(path)}, "keys": None, "methods": "before"}
    assert _still_valid(record, file_digest(path), lambda: "before", path, Config(root=str(project))) == (record, None)
    assert _still_valid(record, file_digest(path), lambda: "after", path, Config(root=str(project))) is None
    assert _still_valid(dict(record, methods=""), file_digest(path), lambda: "after", path, Config(root=str(project))) is not None
    assert _still_valid(dict(record, deps={path: "stale"}), file_digest(path), lambda: "before", path, Config(root=str(project))) is None
    assert _still_valid({"digest": file_digest(path)}, file_digest(path), lambda: "before", path, Config(root=str(project))) is None  # damaged


def test_stored_contributions_keep_each_distinct_dependency_once():
    """Modules that import the same packages consulted the same files: the stored entry holds
    each (dependency, what it was) once, and each module's contribution reads back as it was
    made, with a mapping of its own (bringing one up to date leaves the others as they were)."""
    from keydrift.projectwide import _stored_contributions, _stored_form

    shared = {"/p/a.py": "1" * 64, "dir:/p": "2" * 64, "methods:/p\n/p/b.py": "3/4/5/save"}
    contributions = {
        "/p/b.py": {"digest": "b", "deps": dict(shared), "keys": None, "methods": ""},
        "/p/c.py": {"digest": "c", "deps": dict(shared, **{"/p/d.py": "6" * 64}), "keys": None, "methods": "m"},
        "/p/e.py": {"digest": "e", "deps": {"/p/a.py": "7" * 64}, "keys": None, "methods": ""},  # another a.py
        "/p/f.py": {"digest": "f", "deps": {}, "keys": None, "methods": ""},
    }
    stored = json.loads(json.dumps(_stored_form(contributions)))
    assert len(stored["dependencies"]) == 5
    read = _stored_contributions(stored)
    assert read == contributions
    read["/p/b.py"]["deps"]["/p/a.py"] = "8" * 64
    assert read["/p/c.py"]["deps"]["/p/a.py"] == "1" * 64


@pytest.mark.parametrize("damage", [
    lambda entry: entry["modules"]["/p/b.py"].update(deps=[7]),
    lambda entry: entry["modules"]["/p/b.py"].update(deps=[-1]),
    lambda entry: entry["modules"]["/p/b.py"].update(deps=[True]),
    lambda entry: entry["modules"]["/p/b.py"].update(deps=["0"]),
    lambda entry: entry["modules"]["/p/b.py"].update(deps={"/p/a.py": "1"}),  # the form before the table
    lambda entry: entry["modules"]["/p/b.py"].pop("deps"),
    lambda entry: entry["modules"].update({"/p/b.py": None}),
])
def test_a_damaged_stored_contribution_is_left_out(damage):
    from keydrift.projectwide import _stored_contributions, _stored_form

    contributions = {path: {"digest": path, "deps": {"/p/a.py": "1" * 64}, "keys": None, "methods": ""}
                     for path in ("/p/b.py", "/p/c.py")}
    entry = json.loads(json.dumps(_stored_form(contributions)))
    damage(entry)
    assert _stored_contributions(entry) == {"/p/c.py": contributions["/p/c.py"]}


@pytest.mark.parametrize("table", [None, {}, [["/p/a.py"]], [["/p/a.py", 1]], [[1, "x"]], ["/p/a.py"]])
def test_a_damaged_table_of_stored_dependencies_leaves_nothing_stored(table):
    from keydrift.projectwide import _stored_contributions

    modules = {"/p/b.py": {"digest": "b", "deps": [0], "keys": None, "methods": ""}}
    assert _stored_contributions({"dependencies": table, "modules": modules}) == {}
    assert _stored_contributions({"modules": modules}) == {}
    assert _stored_contributions(None) == {}


def _offers_after_checking(project: Path, config: Config, paths: list) -> list:
    """What a CLI worker hands the parent: each module's contribution, made right after its check."""
    from keydrift.cli import check_file
    from keydrift.projectwide import offer_after_check

    offers = []
    for path in paths:
        check_file(path, config)
        offers.append(offer_after_check(path, config))
    return offers


@pytest.mark.parametrize("cache", [True, False])
def test_contributions_offered_by_the_checking_processes_are_used_as_they_are(project, monkeypatch, cache):
    """The CLI's workers hand each module's registry contribution to the parent, which then
    reads, parses and analyzes no module again; an offer made for an older text of a module is
    not used (the edit is seen)."""
    from keydrift import projectwide

    paths = ["club/__init__.py", "club/models.py", "club/reset.py", "club/store.py", "club/handlers.py",
             "club/servlets.py"]
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET, "club/store.py": STORE,
                     "club/handlers.py": HANDLER, "club/servlets.py": SERVLET})
    config = Config(root=str(project), cache=cache)
    offers = _offers_after_checking(project, config, paths)
    assert all(offer is not None and offer[1] == os.path.normpath(str(project / path))
               for offer, path in zip(offers, paths))
    forget()  # the parent: another process, with nothing in memory
    forget_indexes()
    for offer in offers:
        projectwide.accept(offer)
    (project / "club" / "models.py").write_text(MODELS.replace("self.email.lower()", "self.email"))
    asked = _modules_asked_of_the_index(monkeypatch)
    assert _codes("club/servlets.py", config) == [("KD108", 5)]
    assert _codes("club/reset.py", config) == []  # the edited save() no longer lowercases
    assert sorted(asked) == ["club/models.py", "club/reset.py"]  # reset.py's offer read the old models.py


@pytest.mark.parametrize("cache", [[], ["--no-cache"]])
def test_the_cli_reports_the_same_registry_findings_with_workers_as_alone(project, capsys, cache):
    from keydrift.cli import main

    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET, "club/store.py": STORE,
                     "club/handlers.py": HANDLER, "club/servlets.py": SERVLET})
    for number in range(16):  # enough files for a process pool
        (project / "club" / f"plain{number}.py").write_text(f"X = {number}\n")
    reports = []
    for jobs in ("2", "1", "2"):
        forget()
        forget_indexes()
        main(["check", "-q", "--exit-zero", "--format", "json", "-j", jobs, *cache, "."])
        reports.append(sorted((f["path"], f["line"], f["code"]) for f in json.loads(capsys.readouterr().out)["findings"]))
    assert reports[0] == reports[1] == reports[2]
    assert ("club/reset.py", 5, "KD108") in reports[0] and ("club/servlets.py", 5, "KD108") in reports[0]


def _worker_check(project: Path, run: list, path: str) -> tuple:
    """What a CLI worker hands the parent for ``path`` in a parallel run of the files ``run``."""
    from keydrift import cli

    args = cli.build_parser().parse_args(["check", "."])
    cli._RUN_FILES.clear()
    cli._RUN_FILES.update((os.path.normpath(str(project / p)), p) for p in run)
    try:
        return cli._check_and_offer(path, cli._run_config(args), args)
    finally:
        cli._RUN_FILES.clear()


def _cached(path: str) -> bool:
    """Whether the results cache answers for the file as the CLI checks it."""
    from keydrift import cli
    from keydrift.results import cached_findings

    args = cli.build_parser().parse_args(["check", "."])
    with open(path, "rb") as handle:
        config = cli._checked_config(path, cli._run_config(args), args)
        return cached_findings(handle.read(), path, config).findings is not None


def test_a_worker_checks_ahead_the_files_of_the_run_it_analyzed_for_an_importer(project):
    """A CLI worker that analyzed a file of the run for an importer checks it at once, while
    the analysis is in its memory: whichever worker the file's turn comes to finds its result
    in the cache, and the parent gets its registry contribution with the importer's."""
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})
    found, offers = _worker_check(project, ["club/models.py", "club/reset.py"], "club/reset.py")
    assert [(f.code, f.line) for f in found] == []  # the registry's KD108 is the parent's to report
    assert [offer[1] for offer in offers] == [os.path.normpath(str(project / p)) for p in ("club/reset.py", "club/models.py")]
    assert _cached("club/models.py") and _cached("club/reset.py")


def test_a_worker_checks_nothing_ahead_that_is_not_a_file_of_the_run(project):
    """An imported module the run does not check (not named, or excluded) is analyzed for its
    importer only: no result of it is made, no contribution offered."""
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})
    found, offers = _worker_check(project, ["club/reset.py"], "club/reset.py")
    assert [offer[1] for offer in offers] == [os.path.normpath(str(project / "club/reset.py"))]
    assert not _cached("club/models.py")


def test_the_method_index_is_made_before_the_workers_when_the_run_is_one_project(project):
    """The workers forked for a run over one project inherit its method index from the parent
    instead of each reading every file for it; files of two projects make none there."""
    from keydrift import cli
    from keydrift.analysis import receivers

    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})
    args = cli.build_parser().parse_args(["check", "."])
    cli._make_before_forking(["club/models.py", "club/reset.py"], cli._run_config(args), args)
    assert list(receivers._METHOD_INDEXES) == [str(project)]
    forget_indexes()
    (project / "other").mkdir()
    (project / "other" / "pyproject.toml").write_text("[tool.keydrift]\n")
    (project / "other" / "jobs.py").write_text(RESET)
    cli._make_before_forking(["club/models.py", "other/jobs.py"], cli._run_config(args), args)
    assert not receivers._METHOD_INDEXES


PLAIN_MODELS = MODELS.split("    def save")[0]


def _two_distributions(root: Path) -> None:
    """Two applications under one root, each with a ``Member`` of its own: the first lowercases
    the email on save, the second stores it as given."""
    for service, marker, models in (("svc_a", "pyproject.toml", MODELS), ("svc_b", "setup.py", PLAIN_MODELS)):
        (root / service / "club").mkdir(parents=True)
        (root / service / marker).write_text("")
        _write(root / service / "club", {"__init__.py": "", "models.py": models, "reset.py": RESET})


def test_each_distribution_has_its_own_registry_whatever_is_asked_first(project):
    """Without a disk cache only the asked file's distribution is assembled; its findings are
    the ones the whole project's registry gives (cache on), and the other application's model
    never speaks for it."""
    _two_distributions(project)
    files = ["svc_a/club/reset.py", "svc_b/club/reset.py", "svc_a/club/models.py", "svc_b/club/models.py"]
    whole = {path: _codes(path, Config(root=str(project))) for path in files}
    assert whole == {"svc_a/club/reset.py": [("KD108", 5)], "svc_b/club/reset.py": [],
                     "svc_a/club/models.py": [], "svc_b/club/models.py": []}
    for order in (files, files[::-1]):
        forget()
        forget_indexes()
        assert {path: _codes(path, Config(root=str(project), cache=False)) for path in order} == whole


def test_a_one_file_check_reports_what_the_whole_project_check_reports_there(project, capsys):
    from keydrift.cli import main

    _two_distributions(project)
    (project / "svc_a" / "club" / "signup.py").write_text(
        "from club.models import Member\n\n\ndef signup(request):\n"
        "    Member.objects.create(email=request.POST[\"email\"].strip())\n")
    (project / "svc_b" / "club" / "signup.py").write_text(
        "from club.models import Member\n\n\ndef signup(request):\n"
        "    Member.objects.create(email=request.POST[\"email\"].lower())\n")

    def report(*paths):
        forget()
        forget_indexes()
        main(["check", "-q", "--exit-zero", "--no-cache", "--format", "json", *paths])
        return sorted((f["path"], f["line"], f["code"]) for f in json.loads(capsys.readouterr().out)["findings"])
    everything = report(".")
    assert ("svc_a/club/reset.py", 5, "KD108") in everything and ("svc_b/club/reset.py", 5, "KD108") in everything
    for path in ("svc_a/club/reset.py", "svc_b/club/reset.py", "svc_a/club/signup.py", "svc_b/club/signup.py"):
        assert report(path) == [f for f in everything if f[0] == path]
    assert report("svc_b/club/reset.py", "svc_a/club/reset.py") == [f for f in everything if f[0].endswith("reset.py")]


def test_no_offer_without_a_registry_rule_or_for_what_is_not_a_module(project):
    from keydrift.projectwide import offer_after_check

    _write(project, {"club/models.py": MODELS, "club/notes.txt": "x"})
    assert offer_after_check("club/models.py", Config(root=str(project), select=("KD3",))) is None
    assert offer_after_check("club/notes.txt", Config(root=str(project))) is None
    assert offer_after_check("club/gone.py", Config(root=str(project))) is None
    assert offer_after_check("-", Config(root=str(project))) is None


def test_the_flake8_plugin_reports_registry_findings_for_its_file(project):
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})
    (project / "pyproject.toml").write_text("[tool.keydrift]\n")
    lines = RESET.splitlines(keepends=True)
    checker = KeydriftChecker(ast.parse(RESET), "./club/reset.py", lines)
    results = list(checker.run())
    assert [(line, message.split()[0]) for line, _, message, _ in results] == [(5, "KD108")]
    noqa = RESET.replace(".first()", ".first()  # noqa: KD108")
    checker = KeydriftChecker(ast.parse(noqa), "./club/reset.py", noqa.splitlines(keepends=True))
    assert list(checker.run()) == []


def test_a_module_that_contributes_no_keys_does_not_assemble_the_registry(project, monkeypatch):
    from keydrift import projectwide
    from keydrift.analysis import receivers

    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET, "club/plain.py": "X = 1\n",
                     "club/calls.py": "def f(x):\n    return x.strip()\n"})
    config = Config(root=str(project))

    def refuse(*args, **kwargs):
        raise AssertionError("the project was walked")
    with monkeypatch.context() as patched:
        patched.setattr(projectwide, "_build", refuse)
        patched.setattr(receivers, "_index", refuse)
        assert findings_for("club/plain.py", config) == [] and findings_for("club/calls.py", config) == []
    assert _codes("club/reset.py", config) == [("KD108", 5)]


PROFILE = '''\
from club.models import Member


def profile(request):
    return Member.objects.get(email=request.user.email)


def seed():
    Member.objects.create(email="admin@example.com")


def find(email):
    return Member.objects.filter(email=email).first()
'''


def test_a_module_whose_uses_no_registry_rule_reports_at_does_not_assemble_the_registry(project, monkeypatch):
    """A lookup by a record's own field, a literal stored, a parameter passed on as given (its
    callers are looked at): no registry rule reports at such a use, so checking the module
    alone builds no registry (without a disk cache, nothing is kept for another file: the
    project's files are not even walked and hashed), while the module still contributes its
    uses to the others'."""
    from keydrift import projectwide
    from keydrift.analysis.registry import may_be_reported

    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET, "club/profile.py": PROFILE})
    config = Config(root=str(project), cache=False)
    keys = project_index(config, use_cache=False).export_for_file(str(project / "club" / "profile.py")).keys
    assert len(keys.uses) == 3 and not any(may_be_reported(use) for use in keys.uses)

    def refuse(*args, **kwargs):
        raise AssertionError("the registry was built")
    with monkeypatch.context() as patched:
        patched.setattr(projectwide, "_build", refuse)
        patched.setattr(projectwide, "_project_files", refuse)
        assert findings_for("club/profile.py", config) == []
        assert findings_for("club/profile.py", config, fresh=False) == []
    with monkeypatch.context() as patched:  # with a disk cache the registry's entry is looked up
        patched.setattr(projectwide, "_build", refuse)
        assert findings_for("club/profile.py", replace(config, cache=True)) == []
    assert _codes("club/reset.py", config) == [("KD108", 5)]


def test_a_one_file_check_asks_once_whether_its_module_needs_the_registry(project, monkeypatch):
    from keydrift import projectwide

    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})
    asked = []
    real = projectwide._may_hold_findings
    monkeypatch.setattr(projectwide, "_may_hold_findings", lambda *args: asked.append(args[0]) or real(*args))
    assert [(f.code, f.line) for f in findings_for("club/reset.py", Config(root=str(project), cache=False))] \
        == [("KD108", 5)]
    assert len(asked) == 1


def _registry_projects() -> list:
    """The annotated cases about the registry and the registry rules' examples: (name, files, pyproject)."""
    from keydrift.rules import REGISTRY_RULES

    cases = Path(__file__).resolve().parent.parent / "fixtures" / "cases"
    found = []
    for case in sorted(cases.glob("*registry*")):
        files = {str(p.relative_to(case)): p.read_text() for p in case.rglob("*.py")}
        pyproject = case / "pyproject.toml"
        found.append((case.name, files, pyproject.read_text() if pyproject.exists() else ""))
    for rule in REGISTRY_RULES:
        for index, example in enumerate(rule.examples()):
            found.append((f"{rule.CODE}-{index}", dict(example.files), example.pyproject()))
    return found


def test_every_module_with_a_registry_finding_holds_a_use_that_may_be_reported(project):
    """What lets a one-file check skip the registry (``may_be_reported``) holds wherever the
    whole project's registry reports: on the annotated registry cases and the rules' examples,
    the file of every registry finding has such a use, and its one-file check reports the same."""
    from keydrift.projectwide import project_findings

    projects = _registry_projects()
    assert len(projects) > 30
    reported = 0
    for name, files, pyproject in projects:
        root = project / name
        for path, text in {**files, "pyproject.toml": pyproject}.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        config = Config(root=str(root), cache=False)
        forget()
        forget_indexes()
        whole = project_findings(config)
        for path, found in whole.items():
            reported += len(found)
            forget()
            forget_indexes()
            alone = findings_for(path, config)
            assert [(f.code, f.line) for f in alone] == [(f.code, f.line) for f in found], (name, path)
    assert reported > 10


@pytest.mark.parametrize("choice", [{"select": ("KD3",)}, {"ignore": ("KD108", "KD109", "KD110")},
                                    {"select": ("KD1",), "ignore": ("KD108", "KD109", "KD110")}])
def test_no_registry_is_built_when_no_registry_rule_is_selected(project, monkeypatch, choice):
    from keydrift import projectwide

    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})

    def refuse(*args, **kwargs):
        raise AssertionError("the registry was built")
    with monkeypatch.context() as patched:
        patched.setattr(projectwide, "_build", refuse)
        assert findings_for("club/reset.py", Config(root=str(project), **choice)) == []
    assert not (project / ".keydrift_cache").exists() or not any(
        name.startswith("g-") for name in os.listdir(project / ".keydrift_cache"))
    assert _codes("club/reset.py", Config(root=str(project), select=("KD108",))) == [("KD108", 5)]


def _cached_modules(monkeypatch, config: Config, paths: list) -> list:
    """The modules whose check the results cache answers (the engine refuses to run)."""
    from keydrift import engine
    from keydrift.results import check_cached

    def refuse(*args, **kwargs):
        raise AssertionError("not cached")
    monkeypatch.setattr(engine, "check_source_recorded", refuse)
    answered = []
    for path in paths:
        try:
            check_cached((project_root(config) / path).read_bytes(), path, config)
            answered.append(path)
        except AssertionError:
            pass
    return answered


def project_root(config: Config) -> Path:
    return Path(config.root)


def test_the_plugin_checks_each_module_while_assembling_the_registry(project, monkeypatch):
    """flake8's workers: the registry's first assembly checks every contributing module as the
    plugin will, so each one's own turn is a cached result."""
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET, "club/plain.py": "X = 1\n"})
    (project / "pyproject.toml").write_text("[tool.keydrift]\n")
    checker = KeydriftChecker(ast.parse(RESET), "./club/reset.py", RESET.splitlines(keepends=True))
    config = Config(root=str(project), config_file=str(project / "pyproject.toml"))
    from keydrift.projectwide import _SharedContributions
    from keydrift.results import _cache_for
    earlier = _SharedContributions(_cache_for(config), config, None).prefix + "1.log"  # type: ignore[arg-type]
    (project / ".keydrift_cache").mkdir()
    (project / ".keydrift_cache" / earlier).write_text('["club/x.py", {}]\n')
    assert [message.split()[0] for _, _, message, _ in checker.run()] == ["KD108"]
    names = os.listdir(project / ".keydrift_cache")
    assert not [n for n in names if n.startswith("claim-")]
    # the contributions shared with other workers: one log of this run, the earlier run's gone
    assert [n for n in names if n.startswith("c-")] == [f"{earlier[:-len('1.log')]}{os.getpid()}.log"]
    assert _cached_modules(monkeypatch, config, ["club/models.py", "club/reset.py", "club/plain.py"]) == [
        "club/models.py", "club/reset.py"]  # plain.py takes no part: its own turn checks it


def test_a_module_another_worker_claimed_is_still_in_the_registry(project, monkeypatch):
    """A claim held by another process defers the module, never drops it: the findings are
    those of an unshared assembly, and the claim stays the other's."""
    from keydrift.diskcache import digest, file_digest

    pytest.importorskip("fcntl")
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})
    (project / "pyproject.toml").write_text("[tool.keydrift]\n")
    models = os.path.normpath(str(project / "club" / "models.py"))
    config = Config(root=str(project), config_file=str(project / "pyproject.toml"))
    key = project_index(config).config_key
    identity = digest(repr((models, file_digest(models), key)).encode())
    (project / ".keydrift_cache").mkdir()
    with _held_by_another_process(project / ".keydrift_cache", identity) as still_held:
        checker = KeydriftChecker(ast.parse(RESET), "./club/reset.py", RESET.splitlines(keepends=True))
        assert [(line, message.split()[0]) for line, _, message, _ in checker.run()] == [(5, "KD108")]
        assert still_held()  # another's claim is not ours to drop
    assert _cached_modules(monkeypatch, config, ["club/models.py"]) == []  # left to its own turn


@contextmanager
def _held_by_another_process(folder: Path, identity: str):
    """The claim on a module (``projectwide._claim``) taken by another process for the block;
    yields whether that process still holds it."""
    import subprocess
    import sys

    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys\n"
         f"h = os.open({str(folder / 'claims')!r}, os.O_RDWR | os.O_CREAT)\n"
         f"fcntl.lockf(h, fcntl.LOCK_EX, 1, {int(identity[:15], 16)})\n"
         "print('held', flush=True)\nsys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        yield lambda: _lock_probe(str(folder), identity) == "taken"
    finally:
        holder.communicate("")


def test_claims_make_no_file_per_module(project):
    """A claim is a lock in one file of the cache folder: nothing is created or removed per
    module (each new file costs a scan of recently freed inodes on some file systems); one
    process's claim defers the module for another and is gone once released."""
    from keydrift import projectwide
    from keydrift.diskcache import digest, file_digest

    pytest.importorskip("fcntl")

    class Index:
        config_key = "settings"
    folder = str(project / ".keydrift_cache")
    (project / "a.py").write_text("A = 1\n")
    module = str(project / "a.py")
    with projectwide._claimed(folder, module, Index()) as held:
        assert held and os.listdir(folder) == ["claims"]
        with projectwide._claimed(folder, module, Index()) as again:
            assert not again  # held by the outer check of this process
        with projectwide._claimed(folder, str(project / "b.py"), Index()) as other:
            assert other
        identity = digest(repr((module, file_digest(module), "settings")).encode())
        assert _lock_probe(folder, identity) == "taken"
    assert _lock_probe(folder, identity) == "free"
    assert os.listdir(folder) == ["claims"]


def _lock_probe(folder: str, identity: str) -> str:
    """Whether another process can take the module's claim now."""
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-c",
         "import fcntl, os\n"
         f"h = os.open({os.path.join(folder, 'claims')!r}, os.O_RDWR)\n"
         "try:\n"
         f"    fcntl.lockf(h, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, {int(identity[:15], 16)})\n"
         "    print('free')\n"
         "except OSError:\n    print('taken')\n"],
        capture_output=True, text=True).stdout.strip()


def _without_registry_entries(project: Path) -> None:
    """Another flake8 worker assembling the same registry at the same time: nothing in memory,
    and the registry's own entries not written yet (only what each module's maker kept)."""
    forget()
    forget_indexes()
    for name in os.listdir(project / ".keydrift_cache"):
        if name.startswith(("g-", "mg-")):
            os.unlink(project / ".keydrift_cache" / name)


def test_a_worker_reads_back_the_contributions_another_worker_made(project, monkeypatch):
    """flake8's workers assemble the same registry at once: a module one has done is read back
    by the other (not read, prefiltered and its export loaded again) while the module and what
    it was decided from are unchanged; an edited module is asked of the index again."""
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET, "club/store.py": STORE,
                     "club/handlers.py": HANDLER, "club/servlets.py": SERVLET, "club/plain.py": "X = 1\n"})
    (project / "pyproject.toml").write_text("[tool.keydrift]\n")

    def kd_lines(name: str) -> list:
        text = (project / "club" / name).read_text()
        checker = KeydriftChecker(ast.parse(text), f"./club/{name}", text.splitlines(keepends=True))
        return [(line, message.split()[0]) for line, _, message, _ in checker.run()]
    assert kd_lines("reset.py") == [(5, "KD108")]
    _without_registry_entries(project)
    asked = _modules_asked_of_the_index(monkeypatch)
    assert kd_lines("servlets.py") == [(5, "KD108")] and kd_lines("reset.py") == [(5, "KD108")]
    assert asked == ["club/servlets.py"]  # only whether the file at hand takes part
    _without_registry_entries(project)
    asked.clear()
    (project / "club" / "models.py").write_text(MODELS.replace("self.email.lower()", "self.email"))
    assert kd_lines("reset.py") == []  # the edited save() no longer lowercases
    assert kd_lines("servlets.py") == [(5, "KD108")]
    assert sorted(set(asked)) == ["club/models.py", "club/reset.py"]  # reset.py's record read the old models.py


@pytest.mark.parametrize("worker", [1, 2, 3, 4, 5])
def test_each_worker_asks_about_every_module_once_from_its_own_place(worker, monkeypatch):
    """flake8's workers assemble the registry going through the modules in opposite directions
    from spread-out places; every module is asked about once, whatever the worker."""
    from keydrift import projectwide

    monkeypatch.setattr(projectwide, "_worker_number", lambda: worker)
    modules = [(f"m{i}.py", str(i)) for i in range(8)]
    order = projectwide._own_order(modules, shared=True)
    assert sorted(order) == sorted(modules)
    assert projectwide._own_order(modules, shared=False) == modules  # one process: the walk's order
    expected_first = {1: "m0.py", 2: "m7.py", 3: "m4.py", 4: "m3.py", 5: "m2.py"}[worker]
    assert order[0][0] == expected_first


@pytest.mark.parametrize("worker", [0, 1, 2, 3])
def test_the_findings_do_not_depend_on_which_worker_assembles_the_registry(project, monkeypatch, worker):
    """The order a worker goes through the modules in changes no finding."""
    from keydrift import projectwide

    monkeypatch.setattr(projectwide, "_worker_number", lambda: worker)
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET, "club/store.py": STORE,
                     "club/handlers.py": HANDLER, "club/servlets.py": SERVLET, "club/plain.py": "X = 1\n"})
    (project / "pyproject.toml").write_text("[tool.keydrift]\n")
    found = []
    for name in ("reset.py", "servlets.py", "handlers.py"):
        text = (project / "club" / name).read_text()
        checker = KeydriftChecker(ast.parse(text), f"./club/{name}", text.splitlines(keepends=True))
        found += [(name, line, message.split()[0]) for line, _, message, _ in checker.run()]
    assert found == [("reset.py", 5, "KD108"), ("servlets.py", 5, "KD108")]


def test_module_facts_round_trip_through_json(project):
    _write(project, {"club/models.py": MODELS, "club/reset.py": RESET})
    index = project_index(Config(root=str(project), cache=False), use_cache=False)
    keys = index.export_for_file(str(project / "club" / "reset.py")).keys
    assert keys.uses and keys.uses[0].origin is Origin.INPUT
    assert keys_from_json(json.loads(json.dumps(keys_to_json(keys)))) == keys
    model = index.export_for_file(str(project / "club" / "models.py")).keys
    assert keys_from_json(json.loads(json.dumps(keys_to_json(model)))) == model
    record = Registry([keys, model]).records[("Member", "email")]
    form, evidence = stored_form(record, frozenset())
    assert form == frozenset({("case", "lower")}) and evidence.by == "Member.save()"


@pytest.mark.parametrize("text, params, expected", [
    ('request.POST["email"]', ("request",), Origin.INPUT),
    ("form.cleaned_data['email']", (), Origin.INPUT),
    ("email", ("email",), Origin.PARAMETER),
    ("user.email", ("user",), Origin.PARAMETER),
    ("request.user.email", ("request",), Origin.RECORD),
    ("invitation.email", (), Origin.RECORD),
    ("settings.ADMIN_EMAIL", (), Origin.CONFIG),
    ("address", (), Origin.LOCAL),
    # an element of a collection comes from where the collection does
    ("user.all_emails[*]", ("user",), Origin.PARAMETER),
    ("owner.secondary_emails[*]", (), Origin.RECORD),
    ('request.json["emails"][*]', ("request",), Origin.INPUT),
    ("addresses[*]", (), Origin.LOCAL),
    ("tag_names[*]", ("tag_names",), Origin.LOCAL),  # a list passed in: no caller's use carries it
    ("self._locations[*]", ("self",), Origin.LOCAL),  # kept by the object, not read from a record
    ("field.data[*].email", ("self", "field"), Origin.RECORD),  # a field of the objects a list holds
])
def test_origins_are_classified(text, params, expected):
    assert classify({text}, params)[0] is expected


def test_constants_have_no_origin():
    assert classify(set(), ("email",))[0] is Origin.CONSTANT


LOOPS = '''
TABLE = (("general", {"settings": (("project_title", 1), ("Posts", 2))}),)
FLAGS = {"beta": True, "dark_mode": False}


def from_parameter(fixture):
    for group in fixture:
        for settings in group[1]["settings"]:
            use(settings[0])


def from_module_table():
    for group in TABLE:
        for settings in group[1]["settings"]:
            use(settings[0])
    for name, enabled in FLAGS.items():
        use(name)
    for name in names:
        use(name)
    name = "x"
'''


def test_loop_variables_are_followed_to_the_collection_the_outermost_loop_walks():
    from keydrift.analysis import loop_sources
    module = ast.parse(LOOPS)
    tables = loop_sources.module_tables(module)
    by_parameter, by_table = module.body[2], module.body[3]
    source = loop_sources.walked_from("settings[0]", by_parameter)
    assert (source.root, source.path) == ("fixture", (loop_sources.EACH, 1, "settings", loop_sources.EACH, 0))
    source = loop_sources.walked_from("settings[0]", by_table)
    assert loop_sources.literal_strings(tables[source.root], source.path) == ("project_title", "Posts")
    assert loop_sources.walked_from("name", by_table) is None  # bound by two loops and an assignment
    flags = ast.parse(LOOPS.replace("    for name in names:\n        use(name)\n    name = \"x\"\n", "")).body[3]
    source = loop_sources.walked_from("name", flags)
    assert loop_sources.literal_strings(tables[source.root], source.path) == ("beta", "dark_mode")
    assert loop_sources.walked_from("request.POST['key']", by_table) is None  # no loop
    assert loop_sources.walked_from("row.key", by_parameter) is None  # a field, not a table's element
    assert loop_sources.literal_strings(ast.parse("[1, 'a']").body[0].value, (loop_sources.EACH,)) is None



def test_one_look_at_a_scope_answers_each_name_as_a_walk_per_name_would():
    from keydrift.analysis import loop_sources
    scope = ast.parse(
        "for k, (v, k) in pairs.items():\n    pass\n"  # k's first place in the target
        "for a, *rest in rows:\n    pass\n"  # a starred name is not an element at a place
        "for x in first:\n    pass\n"
        "for x in second:\n    pass\n"  # two loops bind x: no one collection
        "for y in third:\n    pass\n"
        "(y := 1)\n"  # an assignment binds y too
        "for z in [w for w in table]:\n    pass\n")
    loops = loop_sources.ScopeLoops(scope)
    iterable, place = loops.only_loop_binding("k")
    assert ast.unparse(iterable) == "pairs.items()" and place == (0,)
    assert loops.only_loop_binding("rest") is None and loops.only_loop_binding("a")[1] == (loop_sources.EACH, 0)
    assert loops.only_loop_binding("x") is None and loops.only_loop_binding("y") is None
    assert (loops.walked_from("w").root, loops.walked_from("w").path) == ("table", (loop_sources.EACH,))
    assert loops.walked_from("z") is None  # a comprehension is not a plain index of a table
    for text in ("k", "a[1]", "x", "y", "w", "z", "rest[0]"):
        assert loops.walked_from(text) == loop_sources.walked_from(text, scope)

@pytest.mark.parametrize("in_a_worker", [True, False])
def test_a_flake8_worker_checks_what_it_analyzed_for_an_importer(project, monkeypatch, in_a_worker):
    """In one of flake8's workers, a module the index analyzed for an importer is checked at
    once (its analysis is in memory): the worker flake8 hands it to finds its result cached.
    In a single process its own turn takes the analysis over, so nothing is checked early."""
    from keydrift import flake8_plugin

    _write(project, {"club/store.py": STORE, "club/handler.py": HANDLER})
    (project / "pyproject.toml").write_text('[tool.keydrift]\nignore = ["KD108", "KD109", "KD110"]\n')
    monkeypatch.setattr(flake8_plugin, "_in_a_worker", lambda: in_a_worker)
    monkeypatch.setattr(flake8_plugin, "_LOOK", [None])  # a worker's one look would outlive the test
    checker = KeydriftChecker(ast.parse(HANDLER), "./club/handler.py", HANDLER.splitlines(keepends=True))
    list(checker.run())
    assert not [n for n in os.listdir(project / ".keydrift_cache") if n.startswith("claim-")]
    config = flake8_plugin._file_config("./club/store.py")[0]
    assert _cached_modules(monkeypatch, config, ["./club/store.py"]) == (["./club/store.py"] if in_a_worker else [])
