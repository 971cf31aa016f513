"""The per-file results cache: a warm run repeats the cold run's output without parsing anything,
and never serves a result whose inputs changed (the file, an imported module, a module that
appeared where an import was looked up)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List

import pytest

from keydrift.diskcache import CACHE_DIRECTORY

MODELS = """
    from django.db import models

    class AuditResult(models.Model):
        url = models.URLField()
"""
REPO = """
    from app.models import AuditResult

    def save_result(url):
        AuditResult.objects.create(url=url)
"""
TASKS = """
    from app.models import AuditResult
    from app.repo import save_result

    def tick(domain):
        if AuditResult.objects.filter(url=domain.url).exists():
            return
        save_result(domain.url.lower())
"""


def write(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n")
    write(tmp_path, {"app/__init__.py": "", "app/models.py": MODELS, "app/repo.py": REPO, "app/tasks.py": TASKS})
    return tmp_path


def check(root: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "keydrift", "check", "-q", *extra, "."], cwd=root,
                          capture_output=True, text=True, timeout=300)


def result_entries(root: Path) -> List[Path]:
    return sorted((root / CACHE_DIRECTORY).glob("r-*.json"))


def test_warm_run_repeats_the_output_without_loading_the_parser(project: Path) -> None:
    cold = check(project)
    assert "KD102" in cold.stdout and result_entries(project)
    probe = ("import sys\nfrom keydrift.cli import main\nstatus = main(['check', '-q', '.'])\n"
             "print('parser loaded' if 'keydrift.engine' in sys.modules else 'parser not loaded')\n")
    warm = subprocess.run([sys.executable, "-c", probe], cwd=project, capture_output=True, text=True, timeout=300)
    assert warm.stdout.startswith(cold.stdout)
    assert warm.stdout.endswith("parser not loaded\n")


def test_a_module_created_where_an_import_was_looked_up_is_seen(project: Path) -> None:
    (project / "app" / "repo.py").unlink()
    assert "KD102" not in check(project).stdout  # save_result() is unknown: nothing to pair
    write(project, {"app/repo.py": REPO})
    assert "app/tasks.py:7:5: KD102" in check(project).stdout


def test_an_edited_dependency_or_file_is_analyzed_again(project: Path) -> None:
    assert "KD102" in check(project).stdout
    write(project, {"app/tasks.py": TASKS.replace("domain.url.lower()", "domain.url")})
    assert "KD102" not in check(project).stdout  # the file itself changed
    write(project, {"app/repo.py": REPO.replace("url=url", "url=url.lower()")})
    assert "KD102" in check(project).stdout  # the helper it calls changed


def test_damaged_result_entries_are_misses(project: Path) -> None:
    cold = check(project)
    entries = result_entries(project)
    assert entries
    entries[0].write_text(entries[0].read_text()[:30])
    for entry in entries[1:]:
        entry.write_text('{"keydrift": "0", "format": 0, "findings": "junk"}')
    again = check(project)
    assert again.stdout == cold.stdout and "Traceback" not in again.stderr


def test_no_cache_neither_reads_nor_writes_results(project: Path) -> None:
    assert "KD102" in check(project, "--no-cache").stdout
    assert not (project / CACHE_DIRECTORY).exists()


FLAKE8_PROBE = ("import sys\nfrom flake8.main import cli\n"
                "try:\n    cli.main(['--select', 'KD', '--jobs=1', '.'])\nexcept SystemExit:\n    pass\n"
                "print('parser loaded' if 'keydrift.engine' in sys.modules else 'parser not loaded')\n")


def test_flake8_after_the_cli_is_warm(project: Path) -> None:
    """The CLI and the flake8 plugin share one results cache: flake8's first run after
    `keydrift check` analyzes nothing (flake8 spells the path ./app/tasks.py, the CLI app/tasks.py)."""
    cold = check(project)
    assert "app/tasks.py:7:5: KD102" in cold.stdout
    warm = subprocess.run([sys.executable, "-c", FLAKE8_PROBE], cwd=project, capture_output=True, text=True,
                          timeout=300)
    assert "./app/tasks.py:7:5: KD102" in warm.stdout, warm.stdout + warm.stderr
    assert warm.stdout.endswith("parser not loaded\n")


def _keydrift_copy(tmp_path: Path) -> Path:
    """An installed-like copy of the keydrift package, to touch and edit."""
    import keydrift

    site = tmp_path / "site"
    shutil.copytree(Path(keydrift.__file__).parent, site / "keydrift",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _run_with(site: Path, project: Path) -> subprocess.CompletedProcess:
    probe = (f"import sys\nsys.path.insert(0, {str(site)!r})\nfrom keydrift.cli import main\n"
             "status = main(['check', '-q', '.'])\n"
             "print('parser loaded' if 'keydrift.engine' in sys.modules else 'parser not loaded')\n")
    return subprocess.run([sys.executable, "-B", "-c", probe], cwd=project, capture_output=True, text=True,
                          timeout=300)


def test_the_cache_is_keyed_by_keydrifts_code_not_its_file_times(project: Path, tmp_path_factory) -> None:
    """Reinstalling the same code (new modification times) keeps the cache warm; an edit of
    keydrift's code makes it cold."""
    site = _keydrift_copy(tmp_path_factory.mktemp("install"))
    cold = _run_with(site, project)
    assert "KD102" in cold.stdout and cold.stdout.endswith("parser loaded\n"), cold.stdout + cold.stderr
    later = time.time() + 100
    for source in (site / "keydrift").rglob("*.py"):
        os.utime(source, (later, later))
    reinstalled = _run_with(site, project)
    assert reinstalled.stdout == cold.stdout.replace("parser loaded", "parser not loaded")
    with open(site / "keydrift" / "types.py", "a", encoding="utf-8") as handle:
        handle.write("# an edit\n")
    edited = _run_with(site, project)
    assert edited.stdout == cold.stdout, edited.stdout + edited.stderr


def _analyzed_paths(monkeypatch) -> List[str]:
    """The paths the engine analyzes from now on (a cached result is not analyzed), in order."""
    from keydrift import engine

    analyzed: List[str] = []
    real = engine.check_source
    monkeypatch.setattr(engine, "check_source", lambda source, path, *a, **k: analyzed.append(path) or real(
        source, path, *a, **k))
    return analyzed


def _as_a_new_process(analyzed: List[str]) -> None:
    """Forget what this process keeps between checks (a new process knows only the disk cache)."""
    from keydrift.analysis.project import forget_indexes
    from keydrift.projectwide import forget

    forget()
    forget_indexes()
    analyzed.clear()


def test_an_importers_result_stands_when_its_dependency_exports_the_same(project: Path, monkeypatch) -> None:
    """Early cutoff: a helper module edited without changing what it exports (a comment) is
    analyzed again, its importer's cached result stands (and names the new digest from then
    on); an edit that changes its summary analyzes the importer again."""
    from keydrift import results
    from keydrift.config import load_config

    monkeypatch.chdir(project)
    config = load_config(str(project))
    analyzed = _analyzed_paths(monkeypatch)

    def run() -> Dict[str, list]:
        _as_a_new_process(analyzed)
        return {name: sorted(f.code for f in results.check_cached((project / name).read_bytes(), name, config))
                for name in ("app/tasks.py", "app/repo.py")}

    cold = run()
    assert cold["app/tasks.py"] == ["KD102"]
    (project / "app" / "repo.py").write_text((project / "app" / "repo.py").read_text() + "# a comment\n")
    assert run() == cold
    assert analyzed == ["app/repo.py"]
    assert run() == cold and analyzed == []
    write(project, {"app/repo.py": REPO.replace("url=url", "url=url.lower()")})
    assert run()["app/tasks.py"] == ["KD102"]
    assert sorted(analyzed) == ["app/repo.py", "app/tasks.py"]


POOL_PROBE = """
import concurrent.futures, sys
from keydrift import timing
from keydrift.cli import main

class Refused(concurrent.futures.ProcessPoolExecutor):
    def __init__(self, *args, **kwargs):
        print("pool started")
        super().__init__(*args, **kwargs)

concurrent.futures.ProcessPoolExecutor = Refused
main(["check", "-q", "-j", "2", *sys.argv[1:], "."])
print("analyzed", timing.counters().get("files", 0))
"""


def probe_pool(root: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", POOL_PROBE, *extra], cwd=root, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def larger_project(project: Path) -> Path:
    """Enough modules for a process pool (16), most of them importing the models module."""
    write(project, {f"app/job_{n}.py": f"""
        from app.models import AuditResult

        def find_{n}(url):
            return AuditResult.objects.filter(url=url).first()
    """ for n in range(17)})
    return project


def test_an_unchanged_run_starts_no_pool_and_a_run_of_many_misses_does(larger_project: Path) -> None:
    cold = probe_pool(larger_project)
    assert "pool started" in cold.stdout and "app/tasks.py:7:5: KD102" in cold.stdout, cold.stdout + cold.stderr
    warm = probe_pool(larger_project)
    assert warm.stdout == cold.stdout.replace("pool started\n", "").rsplit("analyzed", 1)[0] + "analyzed 0\n"
    assert "pool started" in probe_pool(larger_project, "--no-cache").stdout


def test_a_comment_in_a_module_checks_that_module_alone_and_no_pool(larger_project: Path) -> None:
    """Its eighteen importers' results stand (its export is the same), without a process pool;
    after an edit that changes what it exports, its importers are analyzed again."""
    cold = check(larger_project, "-j", "2")
    models = larger_project / "app" / "models.py"
    models.write_text(models.read_text() + "# a comment\n")
    touched = probe_pool(larger_project)
    assert touched.stdout == cold.stdout + "analyzed 1\n", touched.stdout + touched.stderr
    write(larger_project, {"app/models.py": MODELS.replace("url = models.URLField()", "url = models.URLField()\n"
                                                           "        def save(self, *args, **kwargs):\n"
                                                           "            self.url = self.url.lower()\n"
                                                           "            super().save(*args, **kwargs)\n")})
    edited = probe_pool(larger_project)  # the importers are analyzed again, in parallel
    assert edited.stdout.startswith("pool started\n")
    assert edited.stdout[len("pool started\n"):].rsplit("analyzed", 1)[0] == check(larger_project, "--no-cache").stdout


def test_a_first_run_reads_no_file_before_its_check(project: Path, monkeypatch) -> None:
    """Without a cache folder the results cache holds nothing: the CLI's look at it leaves every
    file to the checks unread; once a run made the folder, the results are read from it."""
    from keydrift import cli

    monkeypatch.chdir(project)
    args = cli.build_parser().parse_args(["check", "."])
    config = cli._run_config(args)
    files, _ = cli.collect_files(["."], config)
    read: List[str] = []
    reader = cli._read_regular_file
    monkeypatch.setattr(cli, "_read_regular_file", lambda path: read.append(path) or reader(path))
    assert cli._check_cached_files(files, config, args, []) == files and read == []
    assert "KD102" in check(project).stdout
    found: list = []
    assert cli._check_cached_files(files, config, args, found) == []
    assert sorted(read) == sorted(files) and [f.code for f in found] == ["KD102"]


def test_one_look_reads_each_dependency_once_and_only_inside_the_block(tmp_path: Path, monkeypatch) -> None:
    from keydrift import diskcache, results

    module = tmp_path / "m.py"
    module.write_text("x = 1\n")
    looked: List[str] = []
    real_file, real_listing = diskcache._file_digest_now, diskcache._listing_now
    monkeypatch.setattr(diskcache, "_file_digest_now", lambda path: looked.append(path) or real_file(path))
    monkeypatch.setattr(diskcache, "_listing_now", lambda path: looked.append(path) or real_listing(path))
    dependency, directory = str(module), "dir:" + str(tmp_path)
    with results.one_look():
        first, listing = results.current_dependency(dependency), results.current_dependency(directory)
        assert diskcache.file_digest(dependency) == first and diskcache.directory_state(str(tmp_path)) == listing
        (tmp_path / "n.py").write_text("")  # inside the block the tree is as it was first looked at
        assert results.current_dependency(directory) == listing and len(looked) == 2
    module.write_text("x = 2\n")
    assert results.current_dependency(dependency) != first and results.current_dependency(directory) != listing
    assert len(looked) == 4


def test_files_that_cannot_be_imported_leave_results_warm(project: Path) -> None:
    """An editor's swap file, a __pycache__ or a data file next to the modules changes the
    directory's mtime, not which module an import finds: the results stand. A new module or
    package there is a change."""
    cold = check(project)
    (project / "app" / ".tasks.py.swp").write_bytes(b"\0swap")
    (project / "app" / "__pycache__").mkdir(exist_ok=True)
    (project / "app" / "4913").write_text("")
    (project / "app" / "notes.txt").write_text("")
    (project / "app" / "models.py~").write_text("backup")
    warm = subprocess.run([sys.executable, "-c", "import sys\nfrom keydrift.cli import main\nmain(['check', '-q', '.'])\n"
                           "print('parser loaded' if 'keydrift.engine' in sys.modules else 'parser not loaded')"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    assert warm.stdout == cold.stdout + "parser not loaded\n", warm.stdout + warm.stderr
    (project / "app" / "store").mkdir()
    again = subprocess.run([sys.executable, "-c", "import sys\nfrom keydrift.cli import main\nmain(['check', '-q', '.'])\n"
                            "print('parser loaded' if 'keydrift.engine' in sys.modules else 'parser not loaded')"],
                           cwd=project, capture_output=True, text=True, timeout=300)
    assert again.stdout == cold.stdout + "parser loaded\n", again.stdout + again.stderr



def test_an_importers_result_stands_when_what_it_read_of_a_module_is_the_same(project: Path, monkeypatch) -> None:
    """A module read for an importer and not checked in the process is read in part (the
    summaries the importer asked for, its models' facts): a function added to it leaves the
    importer's result standing, nothing made of that function for it; an edit of the function
    the importer calls analyzes the importer again, and so does a new model rewrite."""
    from keydrift import results
    from keydrift.config import load_config

    monkeypatch.chdir(project)
    config = load_config(str(project))
    analyzed = _analyzed_paths(monkeypatch)

    def run() -> List[str]:
        _as_a_new_process(analyzed)
        return sorted(f.code for f in results.check_cached((project / "app/tasks.py").read_bytes(), "app/tasks.py",
                                                           config))

    cold = run()
    assert cold == ["KD102"] and analyzed == ["app/tasks.py"]
    write(project, {"app/repo.py": REPO + "\n    def unused(url):\n        return url.strip()\n"})
    assert run() == cold and analyzed == []
    write(project, {"app/repo.py": REPO.replace("url=url", "url=url.lower()")})
    assert run() == cold and analyzed == ["app/tasks.py"]
    assert run() == cold and analyzed == []
    write(project, {"app/models.py": MODELS + "\n        def save(self, *args, **kwargs):\n"
                                              "            self.url = self.url.lower()\n", "app/repo.py": REPO})
    assert run() == ["KD107"] and analyzed == ["app/tasks.py"]


def test_an_importer_the_prefilter_skipped_stands_while_the_module_it_imports_still_reads_no_key(
        project: Path, monkeypatch) -> None:
    """A module without vocabulary whose imports read and write no key is not analyzed. While
    the module it imports says nothing that may touch a key and imports nothing new, its result
    stands (``ProjectIndex.quiet_closure``: a function added there); once it imports a module
    that writes keys, the importer is checked again, and from then on what its result depends
    on is the summaries of what it takes: a function that writes a key by its parameter
    (the importer cannot call it) leaves it standing, an edit that makes the function it takes
    write a key has it checked again."""
    from keydrift import results
    from keydrift.config import load_config

    write(project, {"app/text.py": """
        def shout(text):
            return text.upper()
    """, "app/views.py": """
        from app.text import shout

        def greet(name):
            return shout(name)
    """})
    monkeypatch.chdir(project)
    config = load_config(str(project))
    analyzed = _analyzed_paths(monkeypatch)

    def run() -> List[str]:
        _as_a_new_process(analyzed)
        return [f.code for f in results.check_cached((project / "app/views.py").read_bytes(), "app/views.py", config)]

    assert run() == [] and analyzed == ["app/views.py"]
    text = (project / "app" / "text.py").read_text()
    write(project, {"app/text.py": text + "\ndef whisper(text):\n    return text.lower()\n"})
    assert run() == [] and analyzed == []
    write(project, {"app/text.py": "from app.repo import save_result\n\n" + text
                    + "\ndef keep(url):\n    save_result(url)\n"})
    assert run() == [] and analyzed == ["app/views.py"]
    write(project, {"app/text.py": "from app.repo import save_result\n\n" + text
                    + "\ndef keep(url):\n    save_result(url)\n\ndef store(url):\n    save_result(url)\n"})
    assert run() == [] and analyzed == []
    write(project, {"app/text.py": "from app.repo import save_result\n\n"
                    + text.replace("return text.upper()", "save_result(text)\n    return text.upper()")})
    assert run() == [] and analyzed == ["app/views.py"]


def test_a_shared_log_reads_back_whole_lines_only(tmp_path: Path) -> None:
    """What processes append to a log (``DiskCache.append``) is read back in order; a line
    being written (no newline yet) waits for the next read, a damaged line is skipped, a
    missing log or folder holds nothing, and nothing but the log is created."""
    from keydrift.diskcache import DiskCache

    cache = DiskCache(str(tmp_path / CACHE_DIRECTORY))
    assert cache.read_log("c.log", 0) == ([], 0)
    cache.append("c.log", ["a.py", {"keys": None}])
    cache.append("c.log", ["b.py", {"keys": [1]}])
    items, offset = cache.read_log("c.log", 0)
    assert items == [["a.py", {"keys": None}], ["b.py", {"keys": [1]}]]
    log = tmp_path / CACHE_DIRECTORY / "c.log"
    with open(log, "ab") as handle:
        handle.write(b'["c.py", {"ke\n["d.py", {}]\n["e.py", {"keys"')  # damaged, whole, unfinished
    items, offset = cache.read_log("c.log", offset)
    assert items == [["d.py", {}]]
    with open(log, "ab") as handle:
        handle.write(b': 2}]\n')
    assert cache.read_log("c.log", offset)[0] == [["e.py", {"keys": 2}]]
    assert sorted(os.listdir(tmp_path / CACHE_DIRECTORY)) == [".gitignore", "c.log"]
    assert DiskCache(None).read_log("c.log", 0) == ([], 0)
    assert DiskCache(str(tmp_path / "gone")).read_log("c.log", 5) == ([], 5)


def test_test_code_without_a_normalizer_keeps_no_entry_and_is_answered_again(project: Path) -> None:
    """The engine returns nothing for such a module before analyzing it (``analysis/test_code``):
    the cache keeps no entry for it (a project's tests were a file each in the cache folder),
    the warm run answers it without the parser, and one that defines a normalizer is kept."""
    cold = check(project)
    application = len(result_entries(project))  # app/__init__.py, models.py, repo.py, tasks.py
    write(project, {"tests/__init__.py": "", "tests/test_tick.py": TASKS})
    assert check(project).stdout == cold.stdout
    assert len(result_entries(project)) == application
    write(project, {"tests/helpers.py": "def normalize_url(url):\n    return url.lower()\n"})
    with_normalizer = check(project)
    assert len(result_entries(project)) == application + 1
    probe = ("import sys\nfrom keydrift.cli import main\nstatus = main(['check', '-q', '.'])\n"
             "print('parser loaded' if 'keydrift.engine' in sys.modules else 'parser not loaded')\n")
    warm = subprocess.run([sys.executable, "-c", probe], cwd=project, capture_output=True, text=True, timeout=300)
    assert warm.stdout == with_normalizer.stdout + "parser not loaded\n"
