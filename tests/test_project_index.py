"""The project index: cross-module findings through both front ends, and a cache that is never
stale, never crashes and tolerates concurrent writers."""

from __future__ import annotations

import os
from dataclasses import replace
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest

from keydrift.analysis.project import CACHE_DIRECTORY, forget_indexes
from keydrift.config import clear_cache, load_config
from keydrift.engine import check_source
from keydrift import timing
from keydrift.results import one_look

REPO = {
    "app/__init__.py": "",
    "app/models.py": """
        from django.db import models

        class AuditResult(models.Model):
            url = models.URLField()
            score = models.IntegerField()
    """,
    "app/repo.py": """
        from app.models import AuditResult

        def save_result(url, score):
            AuditResult.objects.create(url=url, score=score)
    """,
    "app/tasks.py": """
        from app.models import AuditResult
        from app.repo import save_result

        def tick(domain):
            if AuditResult.objects.filter(url=domain.url).exists():
                return
            save_result(domain.url.lower(), 1)
    """,
}

# the fix: read by the key that is written
FIXED_TASKS = """
    from app.models import AuditResult
    from app.repo import save_result

    def tick(domain):
        key = domain.url.lower()
        if AuditResult.objects.filter(url=key).exists():
            return
        save_result(key, 1)
"""


def write_project(root: Path, files: Dict[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.keydrift]\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def run(args: List[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_project(tmp_path, REPO)
    return tmp_path


def check_tasks(root: Path) -> List[str]:
    """In-process, as the LSP does: the same process sees the files change."""
    clear_cache()
    path = root / "app" / "tasks.py"
    config = load_config(str(path))
    return [f"{f.code}:{f.line}" for f in check_source(path.read_bytes(), str(path), config)]


def test_cross_module_finding_through_the_cli(project: Path) -> None:
    """The caller's read and the helper's write in another module pair up, at the call."""
    proc = run(["keydrift", "check", "app/tasks.py"], project)
    assert proc.returncode == 1, proc.stderr
    assert "app/tasks.py:7:5: KD102 AuditResult.url" in proc.stdout
    assert "save_result() (app/repo.py:4)" in proc.stdout
    assert (project / CACHE_DIRECTORY).is_dir()


def test_cross_module_finding_through_flake8_in_parallel(project: Path) -> None:
    """flake8 -j 2 workers build and share the index and report the cross-module finding."""
    proc = run(["flake8", "--select", "KD", "-j", "2", "."], project)
    assert "./app/tasks.py:7:5: KD102" in proc.stdout, proc.stdout + proc.stderr
    assert proc.stdout.count("KD102") == 1


def test_stale_cache_never_yields_a_stale_finding(project: Path) -> None:
    """After the helper is edited, the next run (new process or same one) sees the edit."""
    assert run(["keydrift", "check", "."], project).returncode == 1
    assert check_tasks(project) == ["KD102:7"]
    repo = project / "app" / "repo.py"
    repo.write_text(repo.read_text().replace("url=url", "url=url.lower()"))
    # the edited helper lowercases too: the finding must show the new summary, not the cached one
    proc = run(["keydrift", "check", "."], project)
    assert "(.lower() then .lower())" in proc.stdout
    (project / "app" / "tasks.py").write_text(textwrap.dedent(FIXED_TASKS).lstrip("\n"))
    repo.write_text(repo.read_text().replace("url=url.lower()", "url=url"))
    assert run(["keydrift", "check", "."], project).returncode == 0
    assert check_tasks(project) == []


def test_corrupted_and_foreign_cache_entries_are_rebuilt(project: Path) -> None:
    """Truncated JSON, junk, or an entry of another keydrift version: same findings."""
    first = run(["keydrift", "check", "."], project).stdout
    entries = sorted((project / CACHE_DIRECTORY).glob("*.json"))
    assert entries
    entries[0].write_text(entries[0].read_text()[:20])
    for entry in entries[1:]:
        entry.write_text('{"keydrift": "0.0.0-other", "format": 1, "summaries": {}}')
    proc = run(["keydrift", "check", "."], project)
    assert proc.stdout == first
    assert "Traceback" not in proc.stderr


def test_unwritable_cache_location_does_not_matter(project: Path) -> None:
    """A cache directory that cannot be created (a file is in the way) only costs speed."""
    (project / CACHE_DIRECTORY).write_text("not a directory")
    proc = run(["keydrift", "check", "."], project)
    assert proc.returncode == 1 and "KD102" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_no_cache_writes_nothing(project: Path) -> None:
    proc = run(["keydrift", "check", "--no-cache", "."], project)
    assert "KD102" in proc.stdout
    assert not (project / CACHE_DIRECTORY).exists()


def test_concurrent_writers_agree(project: Path) -> None:
    """Several processes building the same cache entries at once all succeed alike."""
    command = [sys.executable, "-m", "keydrift", "check", "--jobs", "1", "."]
    procs = [subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert len({out for out, _ in outputs}) == 1
    assert all("Traceback" not in err for _, err in outputs)
    assert not [p for p in (project / CACHE_DIRECTORY).iterdir() if p.name.startswith(".tmp-")]


def test_index_is_per_root(tmp_path: Path) -> None:
    """Two projects in one process (an editor with two workspaces) do not mix summaries."""
    forget_indexes()
    for name in ("one", "two"):
        write_project(tmp_path / name, REPO)
    (tmp_path / "two" / "app" / "repo.py").write_text(
        "from app.models import AuditResult\n\ndef save_result(url, score):\n    pass\n")
    assert check_tasks(tmp_path / "one") == ["KD102:7"]
    assert check_tasks(tmp_path / "two") == []


@pytest.fixture(autouse=True)
def _fresh_state() -> None:
    os.environ.pop("KEYDRIFT_NO_CACHE", None)
    forget_indexes()
    clear_cache()


def test_a_stored_export_stands_when_every_export_its_module_read_is_the_same(project: Path, monkeypatch) -> None:
    """Early cutoff inside the index: after a comment in app/models.py only app/models.py is
    analyzed again for app/repo.py's export, which reads the same export of it; an edit that
    changes that export analyzes app/repo.py again. Each export is the one a fresh build gives."""
    from keydrift.analysis.project import ProjectIndex, project_index

    built: List[str] = []
    real = ProjectIndex._build_export
    monkeypatch.setattr(ProjectIndex, "_build_export",
                        lambda self, name, path: built.append(name) or real(self, name, path))
    near = str(project / "app" / "tasks.py")

    def repo_export(cache: bool = True) -> str:
        forget_indexes()  # as a new process would
        clear_cache()
        built.clear()
        config = load_config(near)
        index = project_index(config, use_cache=cache)
        return index.fingerprint(index.module_export("app.repo", near))

    first = repo_export()
    assert sorted(built) == ["app.models", "app.repo"]
    assert repo_export() == first and built == []
    models = project / "app" / "models.py"
    models.write_text(models.read_text() + "# a comment\n")
    assert repo_export() == first and built == ["app.models"]
    assert repo_export() == first and built == []  # the entry names the new digest now
    models.write_text(models.read_text().replace("score = models.IntegerField()", "score = models.IntegerField()\n"
                                                 "    def save(self, *args, **kwargs):\n"
                                                 "        self.url = self.url.lower()\n"
                                                 "        super().save(*args, **kwargs)"))
    edited = repo_export()
    assert sorted(built) == ["app.models", "app.repo"]
    assert edited == repo_export(cache=False) != first


def test_a_package_below_a_plain_folder_is_analyzed_once(tmp_path: Path) -> None:
    """A folder of services checked from its top: each module is named as its importers name it
    (from its top package), so the analysis made for an importer serves the module's own check,
    and the cross-module finding is the one the service's own root gives."""
    forget_indexes()
    service = {f"services/audit/{name}": text for name, text in REPO.items()}
    write_project(tmp_path, service)
    clear_cache()
    timing.reset()
    findings = []
    for name in ("app/tasks.py", "app/repo.py", "app/models.py"):  # importers first
        path = tmp_path / "services" / "audit" / name
        config = load_config(str(path))
        findings += [f"{f.code}:{os.path.basename(f.path)}:{f.line}" for f in check_source(path.read_bytes(), str(path), config)]
    assert findings == ["KD102:tasks.py:7"]
    assert timing.counters()["files analyzed"] == 2  # models.py has no database call of its own
    assert timing.counters().get("analyses reused") == 1  # repo.py: built for tasks.py
    forget_indexes()


def _index(root: Path):
    from keydrift.analysis.project import ProjectIndex

    return ProjectIndex(str(root), load_config(str(root)), use_cache=False)


def test_modules_are_found_as_python_imports_them(tmp_path: Path) -> None:
    """A module file, a package's ``__init__``, a src layout; not a folder without
    ``__init__.py``, a data file named like a module, or a package whose ``__init__.py`` is a
    folder."""
    write_project(tmp_path, {"app/__init__.py": "", "app/models.py": "", "app/sub/__init__.py": "",
                             "src/lib/__init__.py": "", "src/lib/core.py": "", "plain/helpers.py": "",
                             "app/notes.txt": "", "odd/__init__.py/x.py": ""})
    importer = str(tmp_path / "app" / "models.py")
    index = _index(tmp_path)
    assert index.path_for("app.models", importer) == str(tmp_path / "app" / "models.py")
    assert index.path_for("app.sub", importer) == str(tmp_path / "app" / "sub" / "__init__.py")
    assert index.path_for("lib.core", importer) == str(tmp_path / "src" / "lib" / "core.py")
    assert index.path_for("plain.helpers", importer) == str(tmp_path / "plain" / "helpers.py")
    for missing in ("plain", "app.notes", "odd", "app.missing", "missing.models"):
        assert index.path_for(missing, importer) is None, missing


def test_a_module_created_after_a_lookup_is_found_by_a_fresh_index(tmp_path: Path) -> None:
    """Directory listings are kept by their mtime: outside one look (an editor's long-lived
    process), a new file in a folder listed before is seen."""
    write_project(tmp_path, {"app/__init__.py": "", "app/models.py": ""})
    importer = str(tmp_path / "app" / "models.py")
    assert _index(tmp_path).path_for("app.repo", importer) is None
    (tmp_path / "app" / "repo.py").write_text("")
    (tmp_path / "app" / "jobs").mkdir()
    (tmp_path / "app" / "jobs" / "__init__.py").write_text("")
    fresh = _index(tmp_path)
    assert fresh.path_for("app.repo", importer) == str(tmp_path / "app" / "repo.py")
    assert fresh.path_for("app.jobs", importer) == str(tmp_path / "app" / "jobs" / "__init__.py")


def test_the_same_index_sees_modules_created_and_removed_between_looks(tmp_path: Path) -> None:
    """An editor server keeps its index; each check is one look. A lookup that missed finds the
    module once it exists (a file, a package whose ``__init__.py`` came after its folder, a
    ``src`` folder that came later), and a found module that was removed is missed again; within
    one look what was found holds."""
    write_project(tmp_path, {"app/__init__.py": "", "app/models.py": ""})
    importer = str(tmp_path / "app" / "models.py")
    index = _index(tmp_path)
    names = ("app.repo", "app.jobs", "lib.core")
    with one_look():
        assert [index.path_for(name, importer) for name in names] == [None, None, None]
    (tmp_path / "app" / "jobs").mkdir()
    with one_look():
        assert index.path_for("app.jobs", importer) is None  # a folder without __init__.py
        (tmp_path / "app" / "repo.py").write_text("")
        assert index.path_for("app.repo", importer) is None  # (this look's listing holds)
    (tmp_path / "app" / "jobs" / "__init__.py").write_text("")
    write_project(tmp_path, {"src/lib/__init__.py": "", "src/lib/core.py": ""})
    with one_look():
        assert [index.path_for(name, importer) for name in names] == [
            str(tmp_path / "app" / "repo.py"), str(tmp_path / "app" / "jobs" / "__init__.py"),
            str(tmp_path / "src" / "lib" / "core.py")]
    (tmp_path / "app" / "repo.py").unlink()
    assert index.path_for("app.repo", importer) is None  # outside a look: its own folders checked
    assert index.path_for("app.jobs", importer) == str(tmp_path / "app" / "jobs" / "__init__.py")


def test_a_module_name_no_import_statement_can_spell_is_still_looked_up(tmp_path: Path) -> None:
    """``importlib.import_module("my-tasks")`` finds ``my-tasks.py``: a name that is not an
    identifier is looked up file by file."""
    write_project(tmp_path, {"my-tasks.py": "", "app/__init__.py": ""})
    index = _index(tmp_path)
    assert index.path_for("my-tasks", str(tmp_path / "app" / "__init__.py")) == str(tmp_path / "my-tasks.py")


def test_an_analysis_kept_for_an_importer_is_taken_over_after_its_tree_left_the_tree_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The module's own check is given the tree the kept analysis was made from (found through
    the analysis), however few trees the index keeps otherwise."""
    import keydrift.analysis.project as project_module

    monkeypatch.setattr(project_module, "_TREE_LINES_KEPT", 1)  # the last tree parsed only
    forget_indexes()
    write_project(tmp_path, {**REPO, "app/other.py": """
        from app.models import AuditResult

        def total():
            return AuditResult.objects.count()
    """})
    clear_cache()
    timing.reset()
    findings = []
    for name in ("app/tasks.py", "app/other.py", "app/repo.py"):  # repo.py is built for tasks.py
        path = tmp_path / name
        config = load_config(str(path))
        findings += [f"{f.code}:{name}:{f.line}" for f in check_source(path.read_bytes(), str(path), config)]
    assert findings == ["KD102:app/tasks.py:7"]
    assert timing.counters().get("analyses reused") == 1
    forget_indexes()


def test_a_check_in_another_project_lets_go_of_the_first_projects_index(tmp_path: Path) -> None:
    """A run over several projects goes project by project: the first project's index (trees,
    analyses, exports, method index) is let go when another project's turn comes, and made
    again, with the same findings, if the first is asked about once more."""
    import keydrift.analysis.project as project_module
    from keydrift.analysis import receivers

    forget_indexes()
    first, second = tmp_path / "first", tmp_path / "second"
    write_project(first, REPO)
    write_project(second, REPO)
    clear_cache()

    def check(root: Path, name: str) -> List[str]:
        path = root / name
        return [f"{f.code}:{f.line}" for f in check_source(path.read_bytes(), str(path), load_config(str(path)))]

    assert check(first, "app/tasks.py") == ["KD102:7"]
    index = project_module.project_index(load_config(str(first / "app" / "tasks.py")))
    assert index.analyses  # repo.py's analysis, kept for its own check
    assert check(second, "app/tasks.py") == ["KD102:7"]
    assert all(kept is not index for kept in project_module._INDEXES.values())
    assert list(receivers._METHOD_INDEXES) == [str(second)]
    timing.reset()
    assert check(first, "app/repo.py") == [] and check(first, "app/tasks.py") == ["KD102:7"]
    assert not timing.counters().get("analyses reused")  # analyzed afresh
    forget_indexes()


def test_an_editor_server_keeps_the_indexes_of_the_projects_it_moves_between(tmp_path: Path) -> None:
    """With ``keep_projects(2)`` (what the editor server asks for), going back to the first
    project finds its index as it was (repo.py's analysis kept for its own check is taken over);
    a third project lets the least recent go."""
    import keydrift.analysis.project as project_module

    forget_indexes()
    roots = [tmp_path / name for name in ("first", "second", "third")]
    for root in roots:
        write_project(root, REPO)
    clear_cache()

    def check(root: Path, name: str) -> List[str]:
        path = root / name
        return [f"{f.code}:{f.line}" for f in check_source(path.read_bytes(), str(path), load_config(str(path)))]

    def kept_roots() -> List[str]:
        return sorted(os.path.basename(index.root) for index in project_module._INDEXES.values())

    project_module.keep_projects(2)
    try:
        assert check(roots[0], "app/tasks.py") == ["KD102:7"]
        assert check(roots[1], "app/tasks.py") == ["KD102:7"]
        assert kept_roots() == ["first", "second"]
        timing.reset()
        assert check(roots[0], "app/repo.py") == []
        assert timing.counters().get("analyses reused") == 1  # the first project's index as it was
        assert check(roots[2], "app/tasks.py") == ["KD102:7"]
        assert kept_roots() == ["first", "third"]
    finally:
        project_module.keep_projects(1)
        forget_indexes()


def test_an_editor_check_sees_a_helper_module_written_after_the_first_check(tmp_path: Path) -> None:
    """The editor server's document check, twice in one process: the write through a helper
    module that did not exist at the first check is found at the second."""
    from keydrift.lsp import document_findings

    forget_indexes()
    write_project(tmp_path, {name: text for name, text in REPO.items() if name != "app/repo.py"})
    tasks = tmp_path / "app" / "tasks.py"
    config = load_config(str(tasks))
    assert document_findings(tasks.read_text(), str(tasks), config) == []
    write_project(tmp_path, {"app/repo.py": REPO["app/repo.py"]})
    found = document_findings(tasks.read_text(), str(tasks), config)
    assert [(f.code, f.line) for f in found] == [("KD102", 7)]
    forget_indexes()


def test_a_cache_folder_deleted_while_a_process_runs_is_made_again(tmp_path: Path) -> None:
    """A long-lived process (the editor server) whose cache folder was deleted writes the next
    entry into a new one, with its .gitignore; a temporary file left by a process that died
    under the same name is passed over, never written into."""
    from keydrift import diskcache

    cache = diskcache.DiskCache(str(tmp_path / CACHE_DIRECTORY))
    cache.store("one", {"n": 1})
    shutil.rmtree(tmp_path / CACHE_DIRECTORY)
    (tmp_path / CACHE_DIRECTORY).mkdir()
    number = next(diskcache._TEMPORARY_NUMBERS) + 1
    leftover = tmp_path / CACHE_DIRECTORY / f".tmp-{os.getpid()}-{number}.json"
    leftover.write_text("half an entry")
    cache.store("two", {"n": 2})
    assert cache.load("two")["n"] == 2 and leftover.read_text() == "half an entry"
    shutil.rmtree(tmp_path / CACHE_DIRECTORY)
    cache.store("three", {"n": 3})
    assert cache.load("three")["n"] == 3 and cache.load("one") is None
    assert (tmp_path / CACHE_DIRECTORY / ".gitignore").read_text() == "*\n"
    assert cache.directory is not None
    names = sorted(p.name for p in (tmp_path / CACHE_DIRECTORY).iterdir())
    assert names == [".gitignore", "three.json"]


def _two_checkouts(root: Path) -> None:
    """Two applications side by side under one project root, as a folder of checkouts without
    packaging markers: ``one/app`` and ``two/app``, each the bug of ``REPO``."""
    write_project(root, {f"{checkout}/{name}": text for checkout in ("one", "two") for name, text in REPO.items()})


def _check_at(root: Path, name: str, cache: bool = True) -> List[str]:
    path = root / name
    config = replace(load_config(str(path)), cache=cache)
    return [f"{f.code}:{f.line}" for f in check_source(path.read_bytes(), str(path), config)]


def _held_modules(root: Path, cache: bool = True) -> List[str]:
    import keydrift.analysis.project as project_module

    index = project_module.project_index(load_config(str(root / "pyproject.toml")), use_cache=cache)
    return sorted(os.path.relpath(path, root) for path in index.modules)


@pytest.mark.parametrize("cache", [True, False])
def test_a_large_index_lets_go_of_the_modules_of_the_directory_it_leaves(tmp_path: Path, monkeypatch, cache) -> None:
    """A run over several projects under one root goes one top-level directory after the other:
    on the way into the next, an index holding more exports than the limit forgets those it
    made (the findings are the same, the modules are made again if asked for)."""
    import keydrift.analysis.project as project_module

    forget_indexes()
    clear_cache()
    _two_checkouts(tmp_path)
    monkeypatch.setattr(project_module, "_MODULES_KEPT_ACROSS_DIRECTORIES", 2)
    timing.reset()
    assert _check_at(tmp_path, "one/app/tasks.py", cache) == ["KD102:7"]
    assert _held_modules(tmp_path, cache) == ["one/app/models.py", "one/app/repo.py", "one/app/tasks.py"]
    assert _check_at(tmp_path, "two/app/tasks.py", cache) == ["KD102:7"]
    assert _held_modules(tmp_path, cache) == ["two/app/models.py", "two/app/repo.py", "two/app/tasks.py"]
    assert timing.counters().get("indexes let go") == 1
    assert _check_at(tmp_path, "one/app/tasks.py", cache) == ["KD102:7"]  # made again, the same
    forget_indexes()


def test_an_index_keeps_its_modules_within_a_directory_and_below_the_limit(tmp_path: Path, monkeypatch) -> None:
    """Near misses: another file of the same top-level directory, an index holding no more
    exports than the limit, and a move while a module is being analyzed let go of nothing."""
    import keydrift.analysis.project as project_module

    forget_indexes()
    clear_cache()
    _two_checkouts(tmp_path)
    timing.reset()
    assert _check_at(tmp_path, "one/app/tasks.py") == ["KD102:7"]
    assert _check_at(tmp_path, "two/app/tasks.py") == ["KD102:7"]  # 3 exports held: the default limit is far
    assert len(_held_modules(tmp_path)) == 6
    monkeypatch.setattr(project_module, "_MODULES_KEPT_ACROSS_DIRECTORIES", 2)
    assert _check_at(tmp_path, "two/app/repo.py") == []  # the same directory as the last file
    index = project_module.project_index(load_config(str(tmp_path / "pyproject.toml")))
    index.building.append(("one.app.tasks", {}))
    index.moving_to(str(tmp_path / "one" / "app" / "tasks.py"))  # a module is being analyzed
    index.building.pop()
    assert len(_held_modules(tmp_path)) == 6
    assert not timing.counters().get("indexes let go")
    forget_indexes()


def test_a_cache_entry_is_written_in_pieces_of_one_member_each(tmp_path: Path, monkeypatch) -> None:
    """The registry's stored contributions are one entry per project, tens of megabytes of JSON
    on a large one: it is written a member of a member at a time, never as one text, and reads
    back as it was (the text is the one ``json.dumps`` makes)."""
    import json
    from keydrift import diskcache

    modules = {f"/project/app/module{number}.py": {"digest": str(number), "deps": {"a.py": "x" * 50}}
               for number in range(diskcache._MEMBERS_IN_ONE_PIECE + 1)}
    entry = {"modules": modules, "state": ["kept", 1], "empty": {}}
    pieces = list(diskcache.json_pieces(entry))
    assert "".join(pieces) == json.dumps(entry)
    assert max(map(len, pieces)) < len(json.dumps(next(iter(modules.items())))) + 10
    written: List[int] = []
    real_write = diskcache.DiskCache._write_atomically

    def write(self, path, pieces):  # the pieces as they reach the file
        chunks = [pieces] if isinstance(pieces, str) else list(pieces)
        written.append(max(map(len, chunks)))
        return real_write(self, path, chunks)

    monkeypatch.setattr(diskcache.DiskCache, "_write_atomically", write)
    cache = diskcache.DiskCache(str(tmp_path / CACHE_DIRECTORY))
    cache.store("m-entry", entry)
    assert written[-1] < 200
    assert cache.load("m-entry")["modules"] == modules


def test_an_entry_with_few_members_is_written_in_one_piece() -> None:
    """A file's result or export (thousands in a cold run) is one ``json.dumps``, the same text."""
    import json
    from keydrift import diskcache

    entry = {"digest": "d", "deps": {f"/project/app/module{n}.py": str(n) for n in range(diskcache._MEMBERS_IN_ONE_PIECE)},
             "findings": [["KD101", 3]]}
    assert list(diskcache.json_pieces(entry)) == [json.dumps(entry)]
    entry["more"] = {"one": 1}
    assert len(list(diskcache.json_pieces(entry))) > 1
    assert "".join(diskcache.json_pieces(entry)) == json.dumps(entry)


def test_an_analysis_let_go_is_freed_without_the_cycle_collector() -> None:
    """An analysis holds its walkers and its facts, which name it back only weakly (the facts
    handed out hold it): one let go (a check done, a kept analysis dropped) is freed by reference
    counting at once. As cycles they waited for a full collection, which in a large run comes
    seldom, and took a process about 25 MiB above its peak on the full corpus."""
    import ast
    import gc
    import weakref

    from keydrift.source import physical_lines
    from keydrift.analysis.module import analyze
    from keydrift.analysis.tree import source_lines
    from keydrift.types import Config

    text = textwrap.dedent(REPO["app/tasks.py"]).lstrip("\n")
    gc.disable()
    try:
        with source_lines(physical_lines(text)):
            analysis = analyze(ast.parse(text), "app/tasks.py", Config())
            facts = analysis.facts()
        assert facts.analysis is analysis and facts.accesses
        assert analysis.walkers and all(walker.analysis is analysis for walker in analysis.walkers.values())
        gone = weakref.ref(analysis)
        del analysis
        assert gone() is not None  # the facts handed out hold it
        del facts
        assert gone() is None
    finally:
        gc.enable()
