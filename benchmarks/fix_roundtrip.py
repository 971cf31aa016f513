#!/usr/bin/env python3
"""Fixes on real trees: ``keydrift check --fix`` must leave every file parsing and be idempotent.

For each tree given (default: ``fixtures/cases``, ``examples/audit_loop`` and the small corpus in
``~/.cache/keydrift-corpus-small`` when it is there), on a copy in a temporary directory (the
tree itself is never modified):

1. ``keydrift check --format json`` counts the findings per code;
2. ``keydrift check --fix [--unsafe-fixes]`` applies the fixes (the summary says how many);
3. every ``.py`` file that CPython parsed before must parse after, and files that did not parse
   before must be byte for byte unchanged;
4. a second ``--fix`` run must change no file;
5. the tree's tests, when its root has a ``tests`` folder or ``test_*.py`` files, run with pytest
   before and after, and must not go from passing to failing.

Usage: python benchmarks/fix_roundtrip.py [--safe-only] [TREE ...]
Prints one line per tree and exits 1 when any check fails.
"""

from __future__ import annotations

import argparse
import ast
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Dict, List, Optional

REPOSITORY = Path(__file__).resolve().parent.parent
DEFAULT_TREES = [REPOSITORY / "fixtures" / "cases", REPOSITORY / "examples" / "audit_loop",
                 Path.home() / ".cache" / "keydrift-corpus-small"]


def keydrift(tree: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "keydrift", "check", "--no-cache", *args, "."]
    return subprocess.run(command, cwd=tree, capture_output=True, text=True, timeout=3600)


def digests(tree: Path) -> Dict[str, str]:
    return {str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(tree.rglob("*.py")) if p.is_file()}


def parses(path: Path) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


def has_tests(tree: Path) -> bool:
    return (tree / "tests").is_dir() or any(tree.glob("test_*.py"))


def pytest_passes(tree: Path) -> Optional[bool]:
    if not has_tests(tree):
        return None
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"], cwd=tree,
                          capture_output=True, text=True, timeout=1800)
    return done.returncode == 0


def roundtrip(source: Path, unsafe: bool) -> bool:
    with tempfile.TemporaryDirectory(prefix="keydrift-fix-") as temporary:
        tree = Path(temporary) / source.name
        shutil.copytree(source, tree, ignore=shutil.ignore_patterns(".keydrift_cache", "__pycache__"))
        before = digests(tree)
        parsed_before = {name for name in before if parses(tree / name)}
        tests_before = pytest_passes(tree)
        found = json.loads(keydrift(tree, "--format", "json", "-q").stdout)["findings"]
        options = ["--fix", "--unsafe-fixes"] if unsafe else ["--fix"]
        first = keydrift(tree, *options)
        after = digests(tree)
        broken = sorted(n for n in parsed_before if not parses(tree / n))
        touched_unparsed = sorted(n for n in before if n not in parsed_before and after.get(n) != before[n])
        keydrift(tree, *options)
        unstable = sorted(n for n, d in digests(tree).items() if after.get(n) != d)
        tests_after = pytest_passes(tree)
    summary = first.stderr.strip().splitlines()[-1] if first.stderr.strip() else "(no summary)"
    codes = collections.Counter(f["code"] for f in found)
    changed = sum(1 for n in before if after.get(n) != before[n])
    tests = "no tests" if tests_before is None else f"tests {'pass' if tests_before else 'fail'} -> " \
                                                     f"{'pass' if tests_after else 'fail'}"
    print(f"{source}: {len(before)} files, {len(parsed_before)} parse; {len(found)} findings "
          f"({', '.join(f'{c} {n}' for c, n in sorted(codes.items()))}); {summary}; {changed} files changed; "
          f"{len(broken)} no longer parse; {len(touched_unparsed)} unparsable files touched; "
          f"{len(unstable)} changed by a second run; {tests}")
    for name in broken + touched_unparsed + unstable:
        print(f"  problem: {name}")
    return not broken and not touched_unparsed and not unstable and not (tests_before and not tests_after)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("--safe-only", action="store_true", help="--fix without --unsafe-fixes")
    args = parser.parse_args(argv)
    trees = args.trees or [t for t in DEFAULT_TREES if t.is_dir()]
    results = [roundtrip(tree, unsafe=not args.safe_only) for tree in trees]
    return 0 if all(results) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
