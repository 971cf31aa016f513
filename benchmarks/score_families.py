#!/usr/bin/env python3
"""Per-family figures of the shared scorer on the annotated cases, for both front ends.

The test suite checks every case in-process, more strictly than the scorer (exact line and
code: tests/test_cases.py). This script runs the scorer itself, in one subprocess per case and
front end, and prints, for issue notes, what it says family by family: for each front end and
each family KDn it runs

    python ../shared/eval/score.py fixtures/cases --family KDn --family KD9 [--cmd ...]

over all cases (a KD3 expectation in a KD1 case counts for KD3; KD9, a file keydrift could not
parse or analyze, counts as a false positive of every family), then the unfiltered run. It
prints the scorer's output (the cases that are not perfect, then the summary line) and ends
with a table of the summary lines. The runs are independent and go in parallel (--jobs).

    python benchmarks/score_families.py                    # KD1..KD4, both front ends
    python benchmarks/score_families.py --family KD3 --front-end keydrift-check -q
    python benchmarks/score_families.py --unfiltered-only --gate -q   # the release gate

With ``--gate`` the exit status is 1 unless every unfiltered run reaches precision >= 0.95 and
recall >= 0.9 without an erroring case. Not run by the test suite: it runs the scorer
(2 * (families + 1)) times, each in one subprocess per case (628 for the unfiltered pair).
"""

import argparse
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = ROOT / "fixtures" / "cases"
SCORER = ROOT.parent / "shared" / "eval" / "score.py"
FRONT_ENDS = {
    "flake8": None,  # the scorer's default command: flake8 --select KD .
    "keydrift-check": "keydrift check .",
}
FAMILIES = ["KD1", "KD2", "KD3", "KD4"]
SUMMARY = re.compile(r"^cases=\d+ .*$", re.MULTILINE)
FIGURES = re.compile(r"errors=(?P<errors>\d+).*precision=(?P<precision>[\d.]+) recall=(?P<recall>[\d.]+)")
MIN_PRECISION = 0.95
MIN_RECALL = 0.9


def score(front_end, family, cases, scorer, timeout):
    """The scorer's output for one front end and one family (``None``: unfiltered)."""
    args = [sys.executable, str(scorer), str(cases)]
    if family is not None:
        args += ["--family", family, "--family", "KD9"]
    command = FRONT_ENDS[front_end]
    if command is not None:
        args += ["--cmd", command]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    output = proc.stdout + (proc.stderr if proc.returncode else "")
    return proc.returncode, output


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, default=CASES_DIR, help="directory of cases")
    parser.add_argument("--scorer", type=Path, default=SCORER, help="path of score.py")
    parser.add_argument("--family", action="append", choices=FAMILIES,
                        help="families to score (default: all); repeatable")
    parser.add_argument("--front-end", action="append", choices=sorted(FRONT_ENDS),
                        help="front ends to run (default: both); repeatable")
    parser.add_argument("--no-unfiltered", action="store_true", help="skip the unfiltered run")
    parser.add_argument("--unfiltered-only", action="store_true", help="only the unfiltered run")
    parser.add_argument("--gate", action="store_true",
                        help=f"exit 1 unless each unfiltered run has precision >= {MIN_PRECISION}, "
                             f"recall >= {MIN_RECALL} and no erroring case")
    parser.add_argument("-j", "--jobs", type=int, default=max(1, min(8, os.cpu_count() or 1)),
                        help="scorer runs in parallel (default: CPUs, at most 8)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print only the summary table, not the scorer's per-case lines")
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args()
    if not args.scorer.is_file():
        print(f"no shared scorer at {args.scorer}", file=sys.stderr)
        return 2

    families = [] if args.unfiltered_only else (args.family or FAMILIES)
    runs = [(front_end, family)
            for front_end in (args.front_end or list(FRONT_ENDS))
            for family in families + ([] if args.no_unfiltered else [None])]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(score, fe, fam, args.cases, args.scorer, args.timeout)
                   for fe, fam in runs]
        results = [f.result() for f in futures]

    table = []
    status = 0
    for (front_end, family), (code, output) in zip(runs, results):
        name = family or "all (unfiltered)"
        summary = SUMMARY.search(output)
        line = summary.group(0) if summary and code == 0 else f"scorer failed (exit {code})"
        status = status or int(code != 0)
        if args.gate and family is None and not _passes(line):
            line += f"  FAIL (need precision >= {MIN_PRECISION}, recall >= {MIN_RECALL}, errors=0)"
            status = 1
        table.append(f"{front_end:15} {name:17} {line}")
        if not args.quiet or code != 0:
            print(f"## {front_end}, {name}")
            print(output.rstrip() or "(no output)")
            print()
    print("\n".join(table))
    return status


def _passes(summary: str) -> bool:
    figures = FIGURES.search(summary)
    return bool(figures) and int(figures["errors"]) == 0 and (
        float(figures["precision"]) >= MIN_PRECISION and float(figures["recall"]) >= MIN_RECALL)


if __name__ == "__main__":
    sys.exit(main())
