"""The pre-commit hook, run by the real pre-commit against a throw-away project.

pre-commit installs the hook repository from a commit (it clones HEAD), so the test first
commits a copy of this checkout's current files (tracked and untracked, not ignored) in a
temporary repository: the hook tested is the code in the work tree, committed or not.
pre-commit then pip-installs that copy into its own virtual environment, which needs the
package index; only when that installation fails for lack of network is the test skipped.

``pre-commit try-repo`` builds a fresh environment on every call (about 20 s), so it runs once,
on all files; the staged-subset and fixed runs use the way a project adopts the hook, a
configuration naming the repository and revision, whose environment is built once, in
parallel with try-repo's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

pytest.importorskip("pre_commit", reason="pip install pre-commit (in the test extra)")

CHECKOUT = Path(__file__).resolve().parent.parent
# What `pip install .` of the hook repository needs.
HOOK_REPOSITORY_FILES = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "LICENSE")
HOOK_REPOSITORY_DIRECTORIES = ("src/",)
NETWORK_ERRORS = ("Could not find a version", "No matching distribution", "Failed to establish",
                  "Temporary failure in name resolution", "Network is unreachable",
                  "Max retries exceeded", "ProxyError", "ConnectionError")
TIMEOUT = 240

AUDIT = textwrap.dedent("""\
    import requests


    def run_audit(url):
        return requests.get(url, allow_redirects=True, timeout=20)
""")
JOBS_BUGGY = textwrap.dedent("""\
    from app.audit import run_audit
    from app.models import AuditResult, Domain


    def audit_new_domains():
        for domain in Domain.objects.all():
            if AuditResult.objects.filter(url=domain.url).exists():
                continue
            outcome = run_audit(domain.url)
            AuditResult.objects.create(url=outcome.url, status=outcome.status_code)
""")
JOBS_FIXED = JOBS_BUGGY.replace("url=outcome.url,", "url=domain.url, final_url=outcome.url,")
STORE_LOWERING = "def save_page(url, title):\n    Page.objects.create(url=url.lower(), title=title)\n"
STORE_FIXED = "def save_page(url, title):\n    Page.objects.create(url=url, title=title)\n"
VIEWS = textwrap.dedent("""\
    from app.store import save_page


    def add(url, title):
        if Page.objects.filter(url=url).exists():
            return
        save_page(url, title)
""")


def git_environment(home: Path) -> Dict[str, str]:
    """The caller's environment without any GIT_* state (a test run from a git hook inherits
    GIT_INDEX_FILE and friends), with an identity for commits and no user/system git config."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    environment.update({
        "GIT_AUTHOR_NAME": "keydrift tests", "GIT_AUTHOR_EMAIL": "tests@keydrift.invalid",
        "GIT_COMMITTER_NAME": "keydrift tests", "GIT_COMMITTER_EMAIL": "tests@keydrift.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
        "PRE_COMMIT_HOME": str(home / "pre-commit-home"), "PRE_COMMIT_COLOR": "never",
        # Speed only: build keydrift with the setuptools virtualenv seeds (pip reads this
        # inverted: "0" turns build isolation off) instead of fetching one per build.
        "VIRTUALENV_SETUPTOOLS": "bundle", "PIP_NO_BUILD_ISOLATION": "0",
    })
    return environment


def git(directory: Path, environment: Dict[str, str], *arguments: str) -> str:
    done = subprocess.run(["git", "-C", str(directory), *arguments], env=environment,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def committed_copy_of_checkout(destination: Path, environment: Dict[str, str]) -> Path:
    """The hook repository as the work tree has it now, committed in ``destination``."""
    if not (CHECKOUT / ".git").exists():
        pytest.skip("the checkout is not a git repository: cannot list its files")
    listed = git(CHECKOUT, environment, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in sorted(set(filter(None, listed.split("\0")))):
        source = CHECKOUT / name
        wanted = name in HOOK_REPOSITORY_FILES or name.startswith(HOOK_REPOSITORY_DIRECTORIES)
        if wanted and source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    git(destination, environment, "init", "-q")
    git(destination, environment, "add", ".")
    git(destination, environment, "commit", "-q", "-m", "keydrift as in the work tree")
    return destination


def write_files(root: Path, files: Dict[str, str]) -> None:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)


def try_repo(project: Path, hook_repository: Path, environment: Dict[str, str],
             *options: str) -> Tuple[int, str]:
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repository), "keydrift", *options]
    done = subprocess.run(command, cwd=project, env=environment, capture_output=True, timeout=TIMEOUT)
    output = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    if done.returncode not in (0, 1):
        skip_if_offline(project, environment, output)
    return done.returncode, output


def skip_if_offline(project: Path, environment: Dict[str, str], output: str) -> None:
    log = Path(environment["PRE_COMMIT_HOME"]) / "pre-commit.log"
    details = output + (log.read_text(errors="replace") if log.exists() else "")
    if "pip" in details and any(error in details for error in NETWORK_ERRORS):
        pytest.skip("pre-commit could not build the hook's environment: pip cannot reach the "
                    "package index (no network)")
    raise AssertionError(f"pre-commit failed to run the hook:\n{details[-4000:]}")


def start_installing_hooks(config: Path, project: Path, environment: Dict[str, str]) -> subprocess.Popen:
    command = [sys.executable, "-m", "pre_commit", "install-hooks", "-c", str(config)]
    return subprocess.Popen(command, cwd=project, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def finish_installing_hooks(installing: subprocess.Popen, project: Path, environment: Dict[str, str]) -> None:
    output, _ = installing.communicate(timeout=TIMEOUT)
    if installing.returncode != 0:
        skip_if_offline(project, environment, output.decode("utf-8", "replace"))


def run_hooks(project: Path, config: Path, environment: Dict[str, str], *options: str) -> Tuple[int, str]:
    command = [sys.executable, "-m", "pre_commit", "run", "-c", str(config), *options]
    done = subprocess.run(command, cwd=project, env=environment, capture_output=True, timeout=TIMEOUT)
    return done.returncode, done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")


def reported_lines(output: str) -> List[str]:
    return [line for line in output.splitlines() if ": KD" in line]


def test_pre_commit_hook_fails_on_the_bug_and_passes_once_fixed(tmp_path):
    environment = git_environment(tmp_path)
    hook_repository = committed_copy_of_checkout(tmp_path / "keydrift", environment)
    project = tmp_path / "project"
    write_files(project, {
        "pyproject.toml": "[project]\nname = 'audits'\nversion = '1'\n",
        "app/__init__.py": "", "app/models.py": "", "app/audit.py": AUDIT,
        "app/jobs.py": JOBS_BUGGY, "app/store.py": STORE_LOWERING,
    })
    git(project, environment, "init", "-q")
    git(project, environment, "add", ".")
    git(project, environment, "commit", "-q", "-m", "audits")
    config = tmp_path / "pre-commit-config.yaml"
    revision = git(hook_repository, environment, "rev-parse", "HEAD").strip()
    config.write_text(f"repos:\n- repo: {hook_repository}\n  rev: {revision}\n  hooks:\n  - id: keydrift\n")
    installing = start_installing_hooks(config, project, environment)

    status, output = try_repo(project, hook_repository, environment, "--all-files")
    assert status == 1, output
    assert [line.split(": KD")[0] for line in reported_lines(output)] == ["app/jobs.py:10:9"], output
    assert "KD101 AuditResult.url is written with outcome.url" in output
    finish_installing_hooks(installing, project, environment)

    # Only the staged caller is passed; the helper that lowercases is in a module not passed,
    # and an unstaged edit of the buggy job is stashed away by pre-commit.
    write_files(project, {"app/views.py": VIEWS, "app/jobs.py": JOBS_BUGGY + "# unstaged edit\n"})
    git(project, environment, "add", "app/views.py")
    status, output = run_hooks(project, config, environment)
    assert status == 1, output
    [line] = reported_lines(output)
    assert line.startswith("app/views.py:7:5: KD102 ") and "save_page() (app/store.py:2)" in line, output

    write_files(project, {"app/jobs.py": JOBS_FIXED, "app/store.py": STORE_FIXED})
    git(project, environment, "add", ".")
    status, output = run_hooks(project, config, environment, "--all-files")
    assert status == 0, output
    assert reported_lines(output) == []
