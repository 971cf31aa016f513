"""Check that a file checked alone gets the findings the whole project's check gives it.

A one-file check (an editor's save, a pre-commit hook, ``keydrift check FILE``) may skip work
the whole project's check does, such as assembling the registry of keys across modules, only
when that cannot change the file's findings. For each project folder given, this runs
``keydrift check --no-cache --format json .`` from the folder, then ``keydrift check --no-cache
--format json FILE`` from the same folder for every file with a finding and for a sample of the
files with database vocabulary (the ones a check reads closely), and prints every file whose
findings differ:

    python benchmarks/one_file_findings.py --sample 25 ~/copies/archivebox ~/copies/h

Run it on copies: nothing is written with ``--no-cache``, but the projects are run from.
Exit status 1 when a file differs or a run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from typing import Dict, List, Optional, Set, Tuple

from keydrift.vocabulary import mentions_database

Key = Tuple[str, str, int, int, str, Tuple[Tuple[str, int], ...]]


def _findings(command: List[str], arguments: List[str], folder: str) -> Optional[List[dict]]:
    done = subprocess.run([*command, "check", "--no-cache", "--format", "json", "--exit-zero", *arguments],
                          cwd=folder, capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        print(f"{folder}: {' '.join(arguments)} failed: {done.stderr[-400:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout)["findings"]


def _key(finding: dict) -> Key:
    related = tuple((r.get("path", ""), r.get("line", 0)) for r in finding.get("related", []))
    return (finding["path"], finding["code"], finding["line"], finding["column"], finding["message"], related)


def _python_files(folder: str) -> List[str]:
    found = []
    for base, directories, names in os.walk(folder):
        directories[:] = sorted(d for d in directories if not d.startswith("."))
        found.extend(os.path.relpath(os.path.join(base, n), folder) for n in sorted(names) if n.endswith(".py"))
    return found


def _with_vocabulary(folder: str, path: str) -> bool:
    try:
        with open(os.path.join(folder, path), encoding="utf-8", errors="replace") as handle:
            return mentions_database(handle.read())
    except OSError:
        return False


def check_project(folder: str, command: List[str], sample: int, seed: int) -> Tuple[int, int]:
    """(files checked alone, files whose findings differ) for one project folder."""
    whole = _findings(command, ["-j", "1", "."], folder)
    if whole is None:
        return 0, 1
    by_file: Dict[str, Set[Key]] = {}
    for finding in whole:
        by_file.setdefault(finding["path"], set()).add(_key(finding))
    files = _python_files(folder)
    others = [p for p in files if p not in by_file and _with_vocabulary(folder, p)]
    random.Random(seed).shuffle(others)
    chosen = [p for p in files if p in by_file] + others[:sample]
    differing = 0
    for path in chosen:
        alone = _findings(command, [path], folder)
        expected = by_file.get(path, set())
        if alone is None or {_key(f) for f in alone} != expected:
            differing += 1
            got = set() if alone is None else {_key(f) for f in alone}
            print(f"{folder}: {path} differs: only in the whole check {sorted(expected - got)[:3]}, "
                  f"only alone {sorted(got - expected)[:3]}")
    print(f"{folder}: {len(whole)} findings in {len(by_file)} files; {len(chosen)} files checked alone, "
          f"{differing} differ", flush=True)
    return len(chosen), differing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keydrift", default=f"{sys.executable} -m keydrift", help="the command to run")
    parser.add_argument("--sample", type=int, default=25, help="files with database vocabulary per project")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("projects", nargs="+")
    args = parser.parse_args()
    checked = differing = 0
    for folder in args.projects:
        counts = check_project(os.path.abspath(folder), args.keydrift.split(), args.sample, args.seed)
        checked += counts[0]
        differing += counts[1]
    print(f"{checked} files checked alone, {differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
