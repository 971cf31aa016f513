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
