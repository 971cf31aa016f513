"""The project index without a disk cache: an imported module's summaries are made as importers
ask for them (the functions called and their callees), and tell what the whole module's export
tells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest

from keydrift.analysis import project
from keydrift.analysis.project import DemandedExport, ModuleExport, ProjectIndex, forget_indexes, project_index
from keydrift.config import clear_cache, load_config
from keydrift.deepstack import call_with_deep_stack
from keydrift.engine import check_source
from tests.test_project_index import write_project

MODELS = """
    from django.db import models

    class AuditResult(models.Model):
        url = models.URLField()
"""

PROJECT = {
    "app/__init__.py": "",
    "app/models.py": MODELS,
    "app/store.py": """
        from app.models import AuditResult

        def put(url):
            AuditResult.objects.create(url=url)
    """,
    "app/repo.py": """
        from app.store import put
        from app.far import everything

        def save_result(url):
            put(url)

        def rebuild():
            everything()
    """,
    "app/far.py": """
        from app.models import AuditResult

        def everything():
            for row in AuditResult.objects.all():
                row.save()
    """,
    "app/tasks.py": """
        from app.models import AuditResult
        from app.repo import save_result

        def tick(domain):
            if AuditResult.objects.filter(url=domain.url).exists():
                return
            save_result(domain.url.lower())
    """,
}

# Local recursion, an import cycle and module-level calls: where a summary depends on the
# order functions are walked in, the module is walked whole.
CYCLES = {
    "app/__init__.py": "",
    "app/models.py": MODELS,
    "app/helpers.py": """
        from app.models import AuditResult
        from app import loop

        def first(url, depth):
            if depth:
                return second(url.strip(), depth - 1)
            AuditResult.objects.create(url=url)

        def second(url, depth):
            return first(url.lower(), depth)

        def via_loop(url):
            return loop.back(url)

        def plain(url):
            return url.rstrip("/")

        DEFAULT = plain("https://example.com/")
    """,
    "app/loop.py": """
        from app import helpers
        from app.models import AuditResult

        def back(url):
            AuditResult.objects.filter(url=helpers.plain(url)).first()
            return helpers.via_loop(url)
    """,
}


@pytest.fixture(autouse=True)
def _fresh_state() -> None:
    forget_indexes()
    clear_cache()
    yield
    forget_indexes()


def _built(monkeypatch) -> List[str]:
    built: List[str] = []
    real = ProjectIndex._build_export
    monkeypatch.setattr(ProjectIndex, "_build_export",
                        lambda self, name, path: built.append(name) or real(self, name, path))
    return built


def _check(root: Path, name: str, cache: bool) -> List[str]:
    path = root / name
    config = load_config(str(path))
    if not cache:
        config = config.__class__(**{**config.__dict__, "cache": False})
    return [f"{f.code}:{f.line}:{f.message}" for f in check_source(path.read_bytes(), str(path), config)]


def test_only_the_functions_called_are_analyzed(tmp_path: Path, monkeypatch) -> None:
    """tasks.py calls save_result(), which calls put(): app/far.py, which only rebuild() calls,
    is never read, and the finding is the one the whole modules give."""
    write_project(tmp_path, PROJECT)
    built = _built(monkeypatch)
    findings = _check(tmp_path, "app/tasks.py", cache=False)
    assert [f.split(":")[0] for f in findings] == ["KD102"]
    assert "app.far" not in built
    assert built.count("app.repo") == 1
    index = project_index(load_config(str(tmp_path / "app" / "tasks.py")), use_cache=False)
    repo = index.module_export("app.repo", str(tmp_path / "app" / "tasks.py"))
    assert isinstance(repo, DemandedExport)
    assert set(repo.made) == {"save_result"}
    forget_indexes()
    assert _check(tmp_path, "app/tasks.py", cache=True) == findings


@pytest.mark.parametrize("kept_open", ["open", "closed", "afresh"])
@pytest.mark.parametrize("first", ["first", "second", "via_loop", "plain", ""])
def test_summaries_made_on_demand_are_the_whole_modules(tmp_path: Path, monkeypatch, first: str,
                                                        kept_open: str) -> None:
    """Whichever function an importer asks for first, the export made on demand equals the one
    made whole with the cache (every summary, in the module's order) and stored on disk from the
    same files; also when each module's export is closed after every summary (its analysis taken
    up again from those kept for the modules' own checks), and when that analysis is let go too
    and made afresh for the next."""
    if kept_open != "open":
        monkeypatch.setattr(project, "_OPEN_LINES_KEPT", 0)
    if kept_open == "afresh":
        monkeypatch.setattr(project, "_ANALYSIS_LINES_KEPT_WITHOUT_CACHE", 0)
    write_project(tmp_path, CYCLES)
    near = str(tmp_path / "app" / "tasks.py")
    config = load_config(str(tmp_path / "app" / "helpers.py"))
    index = project_index(config, use_cache=True)
    made_with_cache = index.module_export("app.helpers", near)
    assert isinstance(made_with_cache, DemandedExport)  # with the cache too, made on demand
    call_with_deep_stack(lambda: index.fingerprint(made_with_cache))  # made whole, then stored
    forget_indexes()
    whole = project_index(config, use_cache=True).module_export("app.helpers", near)
    assert isinstance(whole, ModuleExport)  # read back from the disk
    forget_indexes()
    index = project_index(config, use_cache=False)
    demanded = index.module_export("app.helpers", near)
    assert isinstance(demanded, DemandedExport)
    if first:  # the analysis recurses as deep as a check's, on a thread deep enough for it
        assert call_with_deep_stack(lambda: demanded.summaries.get(first)) == whole.summaries[first]
    made = call_with_deep_stack(demanded.to_json)
    assert json.dumps(made, sort_keys=True) == json.dumps(whole.to_json(), sort_keys=True)


@pytest.mark.parametrize("analyses_kept", [True, False])
def test_a_closed_export_takes_up_its_kept_analysis_again(tmp_path: Path, monkeypatch, analyses_kept: bool) -> None:
    """An export closed after one summary (the open ones are few) is asked for another: while
    the module's analysis is kept for its own check, that analysis serves it again and what it
    walked is not walked again; once let go, the module is analyzed afresh. The same summaries."""
    monkeypatch.setattr(project, "_OPEN_LINES_KEPT", 0)
    if not analyses_kept:
        monkeypatch.setattr(project, "_ANALYSIS_LINES_KEPT_WITHOUT_CACHE", 0)
    write_project(tmp_path, PROJECT)
    from keydrift.analysis import module

    made: List[str] = []
    real = module.ModuleAnalysis.__init__
    monkeypatch.setattr(module.ModuleAnalysis, "__init__", lambda self, tree, path, *rest, **named: (
        made.append(path), real(self, tree, path, *rest, **named))[1])
    near = str(tmp_path / "app" / "tasks.py")
    index = project_index(load_config(near), use_cache=False)
    repo = call_with_deep_stack(lambda: index.module_export("app.repo", near))
    assert call_with_deep_stack(lambda: [a.entity for a in repo.summary("save_result").accesses]) == ["AuditResult"]
    far = call_with_deep_stack(lambda: index.module_export("app.far", near))
    assert call_with_deep_stack(lambda: far.summary("everything")) is not None
    assert repo.analysis is None  # closed: another export was the last one asked
    assert call_with_deep_stack(lambda: repo.summary("rebuild")) is not None
    assert made.count("app/repo.py") == (1 if analyses_kept else 2)


def test_a_summary_made_on_demand_follows_an_edit_of_what_it_was_made_from(tmp_path: Path) -> None:
    """In one process without a disk cache (an editor's), save_result()'s summary was made from
    app/store.py: an edit there shows in the next check, though app/repo.py did not change."""
    write_project(tmp_path, PROJECT)
    assert [f.split(":")[0] for f in _check(tmp_path, "app/tasks.py", cache=False)] == ["KD102"]
    store = tmp_path / "app" / "store.py"
    store.write_text(store.read_text().replace("url=url", "url=url.lower()"))
    clear_cache()
    after = _check(tmp_path, "app/tasks.py", cache=False)
    assert len(after) == 1 and "(.lower() then .lower())" in after[0]
    store.write_text(store.read_text().replace("AuditResult.objects.create(url=url.lower())", "pass"))
    clear_cache()
    assert _check(tmp_path, "app/tasks.py", cache=False) == []


# app/room.py and app/member.py import each other; app/handler.py, in no cycle, reads both.
# Built whole for handler.py, room.py's forget() asks for app/member.py, which is then built
# inside room.py's frame: its transfer() sees room.py export nothing.
BUILT_INSIDE_A_CYCLE = {
    "app/__init__.py": "",
    "app/models.py": MODELS,
    "app/room.py": """
        from app import member
        from app.models import AuditResult as Room

        class RoomStore:
            def get_room(self, room_id):
                return Room.objects.filter(url=room_id).first()

            def upsert_room(self, room_id):
                Room.objects.create(url=room_id)

            def forget(self, room_id):
                member.leave(room_id)
    """,
    "app/member.py": """
        from app.room import RoomStore

        def transfer(room_id):
            RoomStore().get_room(room_id)

        def leave(room_id):
            return room_id
    """,
    "app/handler.py": """
        from app.room import RoomStore
        from app.member import transfer

        def upgrade(room_id):
            RoomStore().upsert_room(room_id)
            transfer(room_id.lower())
    """,
}


def test_an_importer_outside_a_cycle_finds_with_the_cache_what_it_finds_without(tmp_path: Path) -> None:
    """handler.py's read goes through member.transfer() into room.get_room(): without a disk
    cache transfer()'s summary is made when handler.py asks, where no cycle is open; with one,
    app/member.py's export was built whole inside room.py's (the cycle cut short there), and
    handler.py's own walk, outside that cycle, reads it built again."""
    write_project(tmp_path, BUILT_INSIDE_A_CYCLE)
    without = _check(tmp_path, "app/handler.py", cache=False)
    assert [f.split(":")[0] for f in without] == ["KD103"]
    forget_indexes()
    assert _check(tmp_path, "app/handler.py", cache=True) == without


@pytest.mark.parametrize("cache", [False, True])
def test_a_module_read_back_through_an_import_cycle_by_its_own_check(tmp_path: Path, cache: bool) -> None:
    """helpers.py's check reads ``loop.back``, which reads helpers back: helpers' export is made
    on demand while its check walks it, and a recursion met through the cycle walks it whole once
    (not again at every turn, which never ended: KD901, nested too deeply)."""
    write_project(tmp_path, CYCLES)
    found = call_with_deep_stack(lambda: _check(tmp_path, "app/helpers.py", cache))
    assert [f.split(":")[:2] for f in found] == [["KD203", "6"], ["KD203", "10"]]


def test_the_prefilters_question_walks_no_function_without_parameters(tmp_path: Path, monkeypatch) -> None:
    """Whether an imported module's functions read or write keys is asked of the functions a
    caller passes something to: one without parameters summarizes no access (``nightly()``
    writes, by no key of a caller's), so it is not walked, nor the module it calls."""
    from keydrift.engine import relevance

    write_project(tmp_path, {**PROJECT, "app/jobs.py": """
        from app.far import everything

        def nightly():
            everything()

        def label(name):
            return name.title()
    """, "app/cron.py": """
        from app.jobs import label

        def run(name):
            return label(name)
    """})
    built = _built(monkeypatch)
    path = tmp_path / "app" / "cron.py"
    config = load_config(str(path))
    config = config.__class__(**{**config.__dict__, "cache": False})
    assert relevance(path.read_text(), str(path), config).reason == ""
    jobs = project_index(config, use_cache=False).module_export("app.jobs", str(path))
    assert isinstance(jobs, DemandedExport) and set(jobs.made) == {"label"}
    assert "app.far" not in built
    assert not jobs.reads_or_writes_keys() and not jobs.summary("nightly").accesses and "app.far" in built


def test_an_edit_of_an_apps_module_is_seen_by_the_next_check_in_the_process(tmp_path: Path) -> None:
    """Which modules ``AppConfig.ready()`` imports (where ``pre_save`` receivers are connected) is
    read once per content of ``apps.py``: the next check in the same process sees an edit."""
    import shutil

    case = Path(__file__).parent.parent / "fixtures" / "cases" / "kd1-django-pre-save-receiver-unimported-module"
    shutil.copytree(case, tmp_path / "case")
    root = tmp_path / "case"
    (root / "pyproject.toml").write_text("[tool.keydrift]\n")
    apps = (root / "shop" / "apps.py").read_text()
    found = _check(root, "shop/views.py", cache=False)
    assert found
    (root / "shop" / "apps.py").write_text(apps.replace("        from shop import signals  # noqa: F401\n", "        pass\n"))
    forget_indexes()
    assert _check(root, "shop/views.py", cache=False) == []
    (root / "shop" / "apps.py").write_text(apps)
    forget_indexes()
    assert _check(root, "shop/views.py", cache=False) == found
