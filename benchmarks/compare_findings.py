"""Record keydrift's findings on sets of projects, and compare two recordings.

A change to the analysis that must not change what users see (a port to another parser, a
speed-up) is checked by recording before and after and diffing:

    python benchmarks/compare_findings.py record --out /tmp/before fixtures/cases/* ~/.cache/keydrift-corpus-small/*
    ... change the code ...
    python benchmarks/compare_findings.py record --out /tmp/after  fixtures/cases/* ~/.cache/keydrift-corpus-small/*
    python benchmarks/compare_findings.py diff /tmp/before /tmp/after

Each project is checked on its own (``keydrift check --no-cache --format json`` run in the
project's directory), so paths are relative and the recordings of two checkouts compare. The diff
prints, per project, the findings only one side has (code, path, line, column, message) and
exits 1 when anything differs; ``--ignore-messages`` compares positions and codes only.
``record --cached`` checks with the results cache on instead (``-j 2`` in a copy whose cache
starts empty): what depends on the order in which files are checked shows there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Sequence, Set, Tuple

Key = Tuple[str, str, int, int, str]


def _recording_name(project: str) -> str:
    parts = os.path.abspath(project).rstrip(os.sep).split(os.sep)
    return "__".join(parts[-2:]) + ".json"


def _record_one(project: str, out: str, command: Sequence[str], cached: bool = False) -> str:
    target = os.path.join(out, _recording_name(project))
    with tempfile.TemporaryDirectory() as scratch:
        # a copy, so a project without its own configuration is not taken for part of an
        # enclosing one (a fixture case inside this repository)
        copy = os.path.join(scratch, os.path.basename(os.path.abspath(project)))
        shutil.copytree(project, copy, symlinks=True, ignore=shutil.ignore_patterns(".git", ".keydrift_cache"))
        how = ["-j", "2"] if cached else ["--no-cache", "-j", "1"]
        done = subprocess.run([*command, "check", *how, "--format", "json", "--exit-zero", "-q", "."], cwd=copy,
                              capture_output=True, text=True)
    try:
        findings = json.loads(done.stdout)["findings"]
    except (ValueError, KeyError):
        findings = [{"code": "RUN-ERROR", "path": "", "line": 0, "col": 0,
                     "message": (done.stderr or done.stdout)[-400:]}]
    with open(target, "w", encoding="utf-8") as handle:
        json.dump({"project": os.path.abspath(project), "findings": findings}, handle, indent=1, sort_keys=True)
    return target


def record(projects: Sequence[str], out: str, command: Sequence[str], jobs: int, cached: bool = False) -> int:
    os.makedirs(out, exist_ok=True)
    directories = [p for p in projects if os.path.isdir(p)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for count, _ in enumerate(pool.map(lambda p: _record_one(p, out, command, cached), directories), 1):
            if count % 50 == 0:
                print(f"{count}/{len(directories)}", file=sys.stderr)
    print(f"recorded {len(directories)} projects in {out}")
    return 0


def _keys(path: str, with_messages: bool) -> Set[Key]:
    with open(path, encoding="utf-8") as handle:
        findings = json.load(handle)["findings"]
    return {(f["code"], f["path"], f["line"], f.get("col", 0), f["message"] if with_messages else "")
            for f in findings}


def diff(before: str, after: str, with_messages: bool) -> int:
    names = sorted(set(os.listdir(before)) | set(os.listdir(after)))
    changed = 0
    totals: Dict[str, int] = {"before": 0, "after": 0}
    for name in names:
        old = _keys(os.path.join(before, name), with_messages) if os.path.exists(os.path.join(before, name)) else set()
        new = _keys(os.path.join(after, name), with_messages) if os.path.exists(os.path.join(after, name)) else set()
        totals["before"] += len(old)
        totals["after"] += len(new)
        if old == new:
            continue
        changed += 1
        print(f"== {name[:-5]}")
        for sign, items in (("-", old - new), ("+", new - old)):
            for code, path, line, col, message in sorted(items, key=lambda k: (k[1], k[2], k[0])):
                print(f"  {sign} {code} {path}:{line}:{col} {message[:160]}")
    print(f"{len(names)} projects, {changed} differ; findings before {totals['before']}, after {totals['after']}")
    return 1 if changed else 0


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="check each project and record its findings")
    rec.add_argument("--out", required=True)
    rec.add_argument("--keydrift", default=f"{sys.executable} -m keydrift",
                     help="how to run keydrift (default: this Python's keydrift)")
    rec.add_argument("-j", "--jobs", type=int, default=2)
    rec.add_argument("--cached", action="store_true", help="check with the results cache on, -j 2")
    rec.add_argument("projects", nargs="+")
    dif = commands.add_parser("diff", help="compare two recordings")
    dif.add_argument("before")
    dif.add_argument("after")
    dif.add_argument("--ignore-messages", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "record":
        return record(args.projects, args.out, args.keydrift.split(), args.jobs, args.cached)
    return diff(args.before, args.after, not args.ignore_messages)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
