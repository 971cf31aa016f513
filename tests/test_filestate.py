"""The project's file state as the method index reads it (``filestate.py``): each look sees a
file created, deleted, moved or edited since, and a directory entered or left, while looking
again lists only the directories that changed and reads only the files that did."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from keydrift import diskcache, filestate
from keydrift.diskcache import one_look


def look(root: Path) -> str:
    with one_look():
        return filestate.files_state(str(root))


def files(root: Path) -> list:
    with one_look():
        return [os.path.relpath(path, root) for path, content in filestate.python_file_digests(str(root))
                if content is not None]


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    # every change counts as settled, as an hour later: the stamps alone decide
    monkeypatch.setattr(diskcache, "_SETTLING_NS", -3600 * 10**9)
    monkeypatch.setattr(filestate, "_LISTINGS", {})
    monkeypatch.setattr(filestate, "_LAST_STATES", {})
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "store.py").write_text("class Store:\n    def add_user(self):\n        pass\n")
    (tmp_path / "app" / "views.py").write_text("x = 1\n")
    return tmp_path


def test_each_look_sees_files_created_deleted_moved_and_edited(project: Path) -> None:
    first = look(project)
    assert look(project) == first
    (project / "app" / "other.py").write_text("class Other:\n    def add_user(self):\n        pass\n")
    assert files(project) == ["app/other.py", "app/store.py", "app/views.py"]
    (project / "lib").mkdir()
    os.replace(project / "app" / "other.py", project / "lib" / "other.py")
    assert files(project) == ["app/store.py", "app/views.py", "lib/other.py"]
    (project / "lib" / "other.py").unlink()
    assert look(project) == first
    (project / "app" / "views.py").write_text("y = 2\n")  # same size
    assert look(project) != first


def test_a_directory_that_becomes_a_virtual_environment_is_left(project: Path) -> None:
    (project / "env").mkdir()
    (project / "env" / "site.py").write_text("z = 3\n")
    assert "env/site.py" in files(project)
    (project / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    assert files(project) == ["app/store.py", "app/views.py"]
    (project / "env" / "pyvenv.cfg").unlink()
    assert "env/site.py" in files(project)


def test_the_walk_is_the_one_of_os_walk(project: Path) -> None:
    """Files before subdirectories, in name order; hidden, tooling and symlinked directories left."""
    for name in ("b/__init__.py", "a/z.py", "a/b/y.py", ".hidden/h.py", "build/x.py", "node_modules/n.py",
                 "pkg.egg-info/e.py", "top.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("")
    (project / "linked").symlink_to(project / "a", target_is_directory=True)
    (project / "a" / "notes.txt").write_text("")
    assert files(project) == ["top.py", "a/z.py", "a/b/y.py", "app/store.py", "app/views.py", "b/__init__.py"]


def test_an_unchanged_directory_is_not_listed_again(project: Path, monkeypatch) -> None:
    listed = []
    real = filestate._listing_now
    monkeypatch.setattr(filestate, "_listing_now", lambda directory: listed.append(directory) or real(directory))
    look(project)
    assert sorted(listed) == [str(project), str(project / "app")]
    listed.clear()
    look(project)
    assert listed == []
    (project / "app" / "new.py").write_text("")
    look(project)
    assert listed == [str(project / "app")]


def test_what_changed_within_the_settling_time_is_not_kept(project: Path, monkeypatch) -> None:
    monkeypatch.setattr(diskcache, "_SETTLING_NS", 3600 * 10**9)
    listed = []
    real = filestate._listing_now
    monkeypatch.setattr(filestate, "_listing_now", lambda directory: listed.append(directory) or real(directory))
    look(project)
    look(project)
    assert sorted(listed) == sorted([str(project), str(project / "app")] * 2)
    assert not any(stamp[0] == str(project / "app" / "store.py") for stamp in diskcache._FILE_DIGESTS)
