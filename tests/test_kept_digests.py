"""The digests of a project's files kept in its cache (``diskcache.keep_digests``): the next
process takes a settled file's digest by its stamp instead of reading the file, and sees every
edit (a new stamp), a new or deleted file, and an entry that is damaged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from keydrift import diskcache
from keydrift.diskcache import CACHE_DIRECTORY, DiskCache, file_digest, keep_digests, read_kept_digests


def a_new_process(monkeypatch) -> None:
    monkeypatch.setattr(diskcache, "_FILE_DIGESTS", {})
    monkeypatch.setattr(diskcache, "_DIGESTS_READ", {})


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    a_new_process(monkeypatch)
    # every change counts as settled, as an hour later: the stamps alone decide
    monkeypatch.setattr(diskcache, "_SETTLING_NS", -3600 * 10**9)
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / "models.py").write_text("y = 2\n")
    return tmp_path


def cache_of(root: Path) -> DiskCache:
    return DiskCache(str(root / CACHE_DIRECTORY))


def kept_by(root: Path, monkeypatch) -> DiskCache:
    """The cache after a process read every file of ``root`` and kept their digests; then a new process."""
    cache = cache_of(root)
    read_kept_digests(cache)
    for name in ("app.py", "models.py"):
        file_digest(str(root / name))
    keep_digests(cache)
    a_new_process(monkeypatch)
    return cache_of(root)


def forged(root: Path, name: str, value: str) -> None:
    """The kept digest of ``name`` replaced: what comes back shows whether the file was read."""
    path = root / CACHE_DIRECTORY / "digests.json"
    entry = json.loads(path.read_text())
    for item in entry["files"]:
        if item[0] == str(root / name):
            item[5] = value
    path.write_text(json.dumps(entry))


def test_a_kept_digest_is_taken_by_the_files_stamp_without_reading_it(project: Path, monkeypatch) -> None:
    cache = kept_by(project, monkeypatch)
    forged(project, "app.py", "kept")
    read_kept_digests(cache)
    assert file_digest(str(project / "app.py")) == "kept"
    assert file_digest(str(project / "models.py")) == diskcache.digest(b"y = 2\n")


def test_an_edit_with_the_same_size_and_modification_time_is_read(project: Path, monkeypatch) -> None:
    cache = kept_by(project, monkeypatch)
    forged(project, "app.py", "kept")
    status = os.stat(project / "app.py")
    (project / "app.py").write_text("x = 2\n")  # same size; the time set back: the change time moves
    os.utime(project / "app.py", ns=(status.st_atime_ns, status.st_mtime_ns))
    read_kept_digests(cache)
    assert file_digest(str(project / "app.py")) == diskcache.digest(b"x = 2\n")


def test_a_file_deleted_or_created_is_seen(project: Path, monkeypatch) -> None:
    cache = kept_by(project, monkeypatch)
    (project / "models.py").unlink()
    (project / "views.py").write_text("z = 3\n")
    read_kept_digests(cache)
    assert file_digest(str(project / "models.py")) is None
    assert file_digest(str(project / "views.py")) == diskcache.digest(b"z = 3\n")


def test_a_file_that_has_not_settled_is_not_kept(project: Path, monkeypatch) -> None:
    monkeypatch.setattr(diskcache, "_SETTLING_NS", 3600 * 10**9)  # every file changed just now
    kept_by(project, monkeypatch)
    assert not (project / CACHE_DIRECTORY / "digests.json").exists()


def test_files_outside_the_project_are_not_kept(project: Path, tmp_path_factory, monkeypatch) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "other.py"
    elsewhere.write_text("w = 0\n")
    file_digest(str(elsewhere))
    kept_by(project, monkeypatch)
    entry = json.loads((project / CACHE_DIRECTORY / "digests.json").read_text())
    assert sorted(os.path.basename(item[0]) for item in entry["files"]) == ["app.py", "models.py"]


@pytest.mark.parametrize("damaged", ['{"files": 3}', '{"files": [[1, 2]]}', '{"files": [["a", "b", 1, 1, 1, "d"]]}', "{"])
def test_a_damaged_entry_is_left_aside(project: Path, monkeypatch, damaged: str) -> None:
    cache = kept_by(project, monkeypatch)
    path = project / CACHE_DIRECTORY / "digests.json"
    entry = json.loads(path.read_text())
    path.write_text(damaged.replace("{", '{"keydrift": "%s", "format": %d, ' % (entry["keydrift"], entry["format"]), 1)
                    if damaged != "{" else damaged)
    read_kept_digests(cache)
    assert file_digest(str(project / "app.py")) == diskcache.digest(b"x = 1\n")


def test_nothing_is_written_when_nothing_new_was_learned(project: Path, monkeypatch) -> None:
    cache = kept_by(project, monkeypatch)
    read_kept_digests(cache)
    file_digest(str(project / "app.py"))
    (project / CACHE_DIRECTORY / "digests.json").unlink()
    keep_digests(cache)
    assert not (project / CACHE_DIRECTORY / "digests.json").exists()
