"""The configured boundary: a module name that points nowhere gets one clear warning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from keydrift.analysis.boundary import missing_boundaries, module_matches
from keydrift.types import Config


def test_module_matching_by_name_prefix_and_glob() -> None:
    assert module_matches("app.models", ["app.models"])
    assert module_matches("app.models.user", ["app.models"])
    assert module_matches("app.repositories.pages", ["app.repositories.*"])
    assert not module_matches("app.modelsx", ["app.models"])
    assert not module_matches("app.views", ["app.models", "app.repositories.*"])


def test_missing_boundary_modules_are_named(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "models.py").write_text("")
    (tmp_path / "src" / "lib" / "repo").mkdir(parents=True)
    config = Config(root=str(tmp_path), boundary=("app.models", "lib.repo", "app.modles", "app.repos.*"))
    assert missing_boundaries(config) == ["app.modles"]


def test_cli_warns_once_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.keydrift]\nboundary = ["app.modles"]\n')
    (tmp_path / "app").mkdir()
    for name in ("a.py", "b.py"):
        (tmp_path / "app" / name).write_text("def f(u):\n    return Page.objects.get(url=u)\n")
    proc = subprocess.run([sys.executable, "-m", "keydrift", "check", "--jobs", "1", "."], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("boundary 'app.modles' names no module of the project") == 1
