#!/usr/bin/env python3
"""Speed, memory and robustness of keydrift on the real-world corpus (issue 10's targets).

For each tree (the 1,102-file small subset and the full 9,432-file corpus, fetched with
``../shared/corpus/fetch-corpus`` into ``~/.cache/keydrift-corpus[-small]`` when missing), in
one run, with every timed command run from the tree's root on ``.``:

- the anchor: ``flake8 --select F -j <cores>`` from a virtualenv that holds flake8 and its
  own plugins only (flake8 runs every installed plugin whatever ``--select`` says, so the
  interpreter that has keydrift installed cannot give the baseline). The venv is created once,
  with the same flake8/pyflakes/pycodestyle/mccabe versions, in
  ``~/.cache/keydrift-bench/venv-flake8``;
- ``keydrift check -j <cores>`` cold (every ``.keydrift_cache`` under the tree deleted, the
  cache on, so it fills it), warm (cache present, nothing changed) and with one file touched
  (a comment appended to a models.py with database vocabulary, restored byte for byte after),
  as ratios to the anchor; whether the warm and touched reports equal the cold one;
- the registry's share (issue 11): the cold run over a cold run with the registry rules
  ignored (``--ignore KD108,KD109,KD110``: no registry is built), at most 1.15;
- ``flake8 --select F,KD`` (this interpreter, keydrift installed, its cache emptied first) over
  the anchor: the plugin's added cost; then once more with the results it cached (an unchanged
  tree, as in pre-commit or CI with a kept cache);
- one-file start-up: ``keydrift check FILE --no-cache`` over ``flake8 --select F FILE`` on the
  touched file, from its project's folder (the check includes the project's key registry), the
  medians of five interleaved pairs per repetition;
- peak memory: the largest resident set of any single process of the cold ``keydrift check``
  (``/usr/bin/time -v``; without it, ``getrusage(RUSAGE_CHILDREN)`` in a wrapper process);
- cost growth: cold ``keydrift check`` on about 1/4, 1/2 and all of the files (whole projects
  taken in name order until the share is reached, so imports still resolve), in seconds per
  1,000 files; "flat" when full/(1/4) is at most 1.3;
- the engine in-process on one core without cache (``keydrift.timing``): the share of files
  and lines the prefilter sends to analysis and the exclusive seconds per pipeline stage;
- crashes: KD901 findings, tracebacks on stderr, unexpected exit statuses, exceptions out of
  ``check_source``; KD900 (cannot parse) findings are counted; on the full corpus also one
  ``flake8 --select KD`` run;
- the cold report's findings per code.

Usage (from the repository root; the full corpus takes well over an hour on 2 cores):

    python benchmarks/run.py --only small                  # the quick path, a few minutes
    python benchmarks/run.py                               # small subset, then full corpus
    python benchmarks/run.py --repeat 3 --json out.json --markdown
    python benchmarks/run.py --only small --snapshot       # while others edit src/ (see below)

keydrift keys its results cache by its own files' sizes and mtimes, so an edit under src/ during
the run makes the "warm" run cold; the table says whether that happened, and ``--snapshot`` runs
a copy of keydrift's sources taken at the start instead (through PYTHONPATH, also for the flake8
plugin and the in-process run). Each timed command runs once (``--repeat N``: the median of N).
The machine is shared: treat single runs as approximate and compare ratios measured in the
same run.
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import importlib.util
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
# ``../shared`` of the repository; a git worktree one folder deeper finds it one level up
FETCH_CORPUS = next((p / "shared" / "corpus" / "fetch-corpus" for p in (ROOT.parent, ROOT.parent.parent)
                     if (p / "shared" / "corpus" / "fetch-corpus").exists()),
                    ROOT.parent / "shared" / "corpus" / "fetch-corpus")
CACHE_HOME = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
BENCH_HOME = CACHE_HOME / "keydrift-bench"
TREES = {  # name: (folder under CACHE_HOME, fetch-corpus options) -- as fetch-corpus names them
    "small": ("keydrift-corpus-small", ["--small"]),
    "full": ("keydrift-corpus", []),
}
KEYDRIFT_CACHE = ".keydrift_cache"  # keydrift.analysis.project.CACHE_DIRECTORY
FLAKE8_PACKAGES = ("flake8", "pyflakes", "pycodestyle", "mccabe")
TIME_BIN = "/usr/bin/time"
# What keydrift's file walk skips (keydrift.cli): hidden folders, virtualenvs, build output.
SKIPPED_DIRECTORIES = {"__pycache__", "node_modules", "venv", "build", "dist"}
DATABASE_HINT = re.compile(rb"\.objects\b|\.filter\(|\.execute\(|\bsession\.")
TRACEBACK = "Traceback (most recent call last)"
FLAKE8_FINDING = re.compile(r":\d+:\d+: (KD\d+) ")
RSS_LINE = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
# Used when /usr/bin/time is missing: runs the command, writes the children's max RSS.
RSS_WRAPPER = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[2:])\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    f.write('Maximum resident set size (kbytes): %d\\n'"
    " % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(rc)\n"
)
RSS_LIMIT = 300 * 2 ** 20
REGISTRY_CODES = "KD108,KD109,KD110"  # the rules of the project-wide registry (issue 11)
REGISTRY_SHARE_LIMIT = 1.15  # the registry may make a cold run at most 15% slower


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- running and timing commands ------------------------------------------------------------

@dataclass
class Run:
    seconds: float
    returncode: int
    stderr: str
    max_rss_bytes: Optional[int] = None

    @property
    def tracebacks(self) -> int:
        return self.stderr.count(TRACEBACK)


@lru_cache(maxsize=None)
def use_time_bin() -> bool:
    """Whether GNU time is there to report the peak RSS."""
    if not os.access(TIME_BIN, os.X_OK):
        return False
    try:
        return subprocess.run([TIME_BIN, "-v", "true"], capture_output=True).returncode == 0
    except OSError:
        return False



def run_timed(cmd: Sequence[str], cwd: Path, stdout_path: Optional[str] = None,
              measure_rss: bool = False) -> Run:
    """Wall time (perf_counter around subprocess.run), exit status, stderr, peak RSS."""
    rss_file = None
    if measure_rss:
        handle, rss_file = tempfile.mkstemp(prefix="keydrift-bench-rss-")
        os.close(handle)
        prefix = ([TIME_BIN, "-v", "-o", rss_file] if use_time_bin()
                  else [sys.executable, "-c", RSS_WRAPPER, rss_file])
        cmd = prefix + list(cmd)
    out = open(stdout_path, "w") if stdout_path else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=str(cwd), stdout=out, stderr=subprocess.PIPE,
                              text=True, errors="replace", env=child_env())
        seconds = time.perf_counter() - start
    finally:
        if stdout_path:
            out.close()
    return Run(seconds, proc.returncode, proc.stderr, _read_rss(rss_file))


def _read_rss(rss_file: Optional[str]) -> Optional[int]:
    if not rss_file:
        return None
    try:
        match = RSS_LINE.search(Path(rss_file).read_text())
        return int(match.group(1)) * 1024 if match else None
    finally:
        os.unlink(rss_file)


def median_run(runs: List[Run]) -> Run:
    """The run with the median time; the peak RSS is the largest of all runs, and the exit
    status the first that is not 0 (a run that failed counts as a bad exit, median or not)."""
    ordered = sorted(runs, key=lambda r: r.seconds)
    chosen = ordered[(len(ordered) - 1) // 2]
    rss = [r.max_rss_bytes for r in runs if r.max_rss_bytes is not None]
    seconds = statistics.median(r.seconds for r in runs)
    failed = next((r.returncode for r in runs if r.returncode != 0), chosen.returncode)
    return Run(seconds, failed, "".join(r.stderr for r in runs), max(rss) if rss else None)


# --- the corpus -------------------------------------------------------------------------------

def fetch_tree(name: str) -> Path:
    """The tree's folder, fetched (idempotently, under a second when present) if needed."""
    folder, options = TREES[name]
    tree = CACHE_HOME / folder
    if ROOT in tree.resolve().parents:
        sys.exit(f"run.py: the corpus must not live inside the repository ({tree})")
    proc = subprocess.run([sys.executable, str(FETCH_CORPUS), *options], capture_output=True, text=True)
    if proc.returncode != 0:
        log(proc.stderr[-3000:])
        sys.exit(f"run.py: fetch-corpus {' '.join(options)} failed (exit status {proc.returncode})")
    return tree


def python_files(top: Path) -> Iterator[str]:
    """The .py/.pyi files keydrift's walk would check, relative to ``top``, sorted."""
    for directory, subdirectories, names in os.walk(top):
        subdirectories[:] = sorted(d for d in subdirectories if not _skipped(Path(directory, d)))
        for name in sorted(names):
            if name.endswith((".py", ".pyi")):
                yield os.path.relpath(os.path.join(directory, name), top)


def _skipped(directory: Path) -> bool:
    name = directory.name
    return (name.startswith(".") or name in SKIPPED_DIRECTORIES or name.endswith(".egg-info")
            or (directory / "pyvenv.cfg").is_file())


def physical_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@dataclass
class TreeStats:
    files: List[str]
    lines: int
    project_files: Dict[str, int]  # top-level folder -> number of files


def tree_stats(tree: Path) -> TreeStats:
    files = list(python_files(tree))
    lines = sum(physical_lines((tree / f).read_bytes()) for f in files)
    projects = Counter(Path(f).parts[0] for f in files if len(Path(f).parts) > 1)
    return TreeStats(files, lines, dict(sorted(projects.items())))


def project_prefix(stats: TreeStats, share: float) -> List[str]:
    """Whole projects in name order until they hold ``share`` of the files."""
    chosen, total = [], 0
    for project, count in stats.project_files.items():
        if total >= share * len(stats.files):
            break
        chosen.append(project)
        total += count
    return chosen


def clear_keydrift_caches(tree: Path) -> None:
    for directory, subdirectories, _ in os.walk(tree):
        if KEYDRIFT_CACHE in subdirectories:
            shutil.rmtree(os.path.join(directory, KEYDRIFT_CACHE), ignore_errors=True)
            subdirectories.remove(KEYDRIFT_CACHE)


def keydrift_caches(tree: Path) -> List[str]:
    return sorted(os.path.relpath(os.path.join(d, KEYDRIFT_CACHE), tree)
                  for d, subdirectories, _ in os.walk(tree) if KEYDRIFT_CACHE in subdirectories)


def pick_file_to_touch(tree: Path, files: List[str]) -> str:
    """A models.py with database vocabulary (else any such file), the same one every run."""
    models = [f for f in files if Path(f).name == "models.py"]
    for candidate in models + files:
        if DATABASE_HINT.search((tree / candidate).read_bytes()):
            return candidate
    return files[0]


class Touched:
    """Appends a comment line to a file; restores its bytes and times on exit."""

    def __init__(self, path: Path, number: int) -> None:
        self.path, self.number = path, number

    def __enter__(self) -> "Touched":
        self.original = self.path.read_bytes()
        self.stat = self.path.stat()
        newline = b"" if self.original.endswith(b"\n") or not self.original else b"\n"
        self.path.write_bytes(self.original + newline + b"# keydrift-bench touch %d\n" % self.number)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.path.write_bytes(self.original)
        os.utime(self.path, ns=(self.stat.st_atime_ns, self.stat.st_mtime_ns))
        if self.path.read_bytes() != self.original:
            raise RuntimeError(f"could not restore {self.path}")


SNAPSHOT: Dict[str, str] = {}  # with --snapshot: {"path": folder holding a copy of keydrift/}


def keydrift_package() -> Optional[Path]:
    if SNAPSHOT:
        return Path(SNAPSHOT["path"]) / "keydrift"
    spec = importlib.util.find_spec("keydrift")
    return Path(spec.origin).parent if spec and spec.origin else None


def take_snapshot(folder: str) -> None:
    """Copy keydrift's sources so every child process runs code nobody edits meanwhile, and
    compile them as an installation does: with PYTHONDONTWRITEBYTECODE set, a copy without
    bytecode would make every keydrift process compile the analysis (about 0.1 s of CPU a
    process), which the anchor, installed by pip, never pays."""
    package = keydrift_package()
    if package is None:
        sys.exit("run.py: keydrift is not installed")
    shutil.copytree(package, Path(folder) / "keydrift", ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(str(Path(folder) / "keydrift"), quiet=1)
    SNAPSHOT["path"] = folder


def child_env() -> Dict[str, str]:
    env = dict(os.environ)
    if SNAPSHOT:  # a bare package folder: importable, but no entry point, so flake8's venv ignores it
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [SNAPSHOT["path"], env.get("PYTHONPATH")]))
    return env


def keydrift_code_digest() -> str:
    """Names, sizes and mtimes of keydrift's sources, as keydrift keys its results cache: an
    edit during the measurement (someone working on src/) turns the warm run into a cold one."""
    package = keydrift_package()
    if package is None:
        return ""
    stamps = [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(package.rglob("*.py"))]
    return hashlib.sha256(repr(stamps).encode()).hexdigest()


# --- commands ---------------------------------------------------------------------------------

def keydrift_check(jobs: int, output: str, paths: Sequence[str] = (".",), ignore: str = "") -> List[str]:
    return [sys.executable, "-m", "keydrift", "check", "-j", str(jobs), "--quiet", "--format", "json",
            "--output", output, "--exit-zero", *(["--ignore", ignore] if ignore else []), *paths]


def flake8(python: str, select: str, jobs: int) -> List[str]:
    # --isolated: no configuration file is read, whatever lies above the tree
    return [python, "-m", "flake8", "--isolated", "--select", select, "-j", str(jobs), "--exit-zero", "."]


def package_version(name: str) -> Optional[str]:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def flake8_version_line(python: str) -> str:
    try:
        proc = subprocess.run([python, "-m", "flake8", "--version"], capture_output=True, text=True)
    except OSError:
        return ""
    return " ".join(proc.stdout.split()) if proc.returncode == 0 else ""


def baseline_flake8() -> Tuple[str, str]:
    """A python whose flake8 has no keydrift plugin (created once), and a note on it."""
    venv = BENCH_HOME / "venv-flake8"
    python = str(venv / "bin" / "python")
    pins = [f"{n}=={package_version(n)}" for n in FLAKE8_PACKAGES if package_version(n)]
    wanted = package_version("flake8") or ""
    line = flake8_version_line(python) if os.path.exists(python) else ""
    if not line.startswith(wanted) or "keydrift" in line:
        log(f"creating {venv} with {' '.join(pins)}")
        shutil.rmtree(venv, ignore_errors=True)
        steps = [[sys.executable, "-m", "venv", str(venv)],
                 [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *pins]]
        for step in steps:
            proc = subprocess.run(step, capture_output=True, text=True)
            if proc.returncode != 0:
                log(proc.stdout[-2000:] + proc.stderr[-2000:])
                break
        line = flake8_version_line(python)
    if line.startswith(wanted) and "keydrift" not in line:
        return python, f"{venv}: flake8 {line}"
    log("WARNING: no keydrift-free flake8; the baseline includes the keydrift plugin")
    return sys.executable, f"CONTAMINATED baseline (keydrift plugin loaded): {flake8_version_line(sys.executable)}"


# --- the in-process run (a child process: `run.py --profile-tree TREE`) ---------------------

def profile_tree(tree: Path) -> None:
    """Runs in a child process with cwd=tree; prints JSON: stages, counters, findings, errors."""
    from dataclasses import replace

    from keydrift import timing
    from keydrift.config import load_config
    from keydrift.engine import check_source

    config = replace(load_config(str(tree)), cache=False)
    codes: Counter = Counter()
    raised: List[str] = []
    timing.reset()
    start = time.perf_counter()
    for path in python_files(tree):
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            codes.update(f.code for f in check_source(data, path, config))
        except Exception as exc:  # noqa: BLE001 - check_source must never raise: count it
            raised.append(f"{path}: {type(exc).__name__}: {exc}")
    wall = time.perf_counter() - start
    json.dump({"wall": wall, "stages": timing.stage_times(), "counters": timing.counters(),
               "codes": dict(codes), "raised": raised}, sys.stdout)


def run_profile(tree: Path) -> Tuple[Optional[dict], Run]:
    with tempfile.NamedTemporaryFile("r", suffix=".json", prefix="keydrift-bench-") as out:
        run = run_timed([sys.executable, str(Path(__file__).resolve()), "--profile-tree", str(tree)],
                        tree, stdout_path=out.name, measure_rss=True)
        try:
            return json.loads(Path(out.name).read_text()), run
        except ValueError:
            return None, run


# --- measuring one tree -----------------------------------------------------------------------

@dataclass
class Measurements:
    runs: Dict[str, Run] = field(default_factory=dict)
    reports: Dict[str, list] = field(default_factory=dict)  # kind -> findings of the JSON report
    growth: List[dict] = field(default_factory=list)
    profile: Optional[dict] = None
    plugin_codes: Dict[str, int] = field(default_factory=dict)
    touched_file: str = ""
    code_changed: bool = False
    caches: List[str] = field(default_factory=list)


def read_findings(path: str) -> Optional[list]:
    try:
        return json.loads(Path(path).read_text())["findings"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def flake8_codes(path: str) -> Dict[str, int]:
    with open(path, errors="replace") as handle:
        return dict(Counter(m.group(1) for m in map(FLAKE8_FINDING.search, handle) if m))


def measure_tree(name: str, tree: Path, stats: TreeStats, jobs: int, repeat: int,
                 baseline_python: str, work: str) -> Measurements:
    m = Measurements(touched_file=pick_file_to_touch(tree, stats.files))
    report = os.path.join(work, "report.json")
    flake8_out = os.path.join(work, "flake8.txt")
    series: Dict[str, List[Run]] = {}
    code_before = keydrift_code_digest()

    def timed(kind: str, cmd: List[str], measure_rss: bool = False, stdout: Optional[str] = None) -> Run:
        run = run_timed(cmd, tree, stdout_path=stdout, measure_rss=measure_rss)
        series.setdefault(kind, []).append(run)
        log(f"[{name}] {kind}: {run.seconds:.1f} s (exit {run.returncode})")
        if kind.startswith("keydrift"):
            m.reports.setdefault(kind, read_findings(report) or [])
        return run

    for number in range(1, repeat + 1):
        timed("flake8 F", flake8(baseline_python, "F", jobs), stdout=flake8_out)
        clear_keydrift_caches(tree)
        timed("keydrift cold", keydrift_check(jobs, report), measure_rss=True)
        m.caches = keydrift_caches(tree)
        timed("keydrift warm", keydrift_check(jobs, report), measure_rss=True)
        with Touched(tree / m.touched_file, number):
            timed("keydrift touched", keydrift_check(jobs, report))
        clear_keydrift_caches(tree)
        # the project-wide registry's share of a cold run: the same run without its rules
        # (no registry is built then); its report is not compared with the others
        timed("cold without registry", keydrift_check(jobs, report, ignore=REGISTRY_CODES))
        clear_keydrift_caches(tree)
        timed("flake8 F,KD", flake8(sys.executable, "F,KD", jobs), stdout=flake8_out)
        m.plugin_codes = flake8_codes(flake8_out)
        # again, with the results the plugin just cached: the cost on an unchanged tree
        timed("flake8 F,KD warm", flake8(sys.executable, "F,KD", jobs), stdout=flake8_out)
        measure_start_up(name, tree, m.touched_file, baseline_python, series)
    m.runs = {kind: median_run(runs) for kind, runs in series.items()}
    m.growth = measure_growth(name, tree, stats, jobs, report, m.runs["keydrift cold"])
    if name == "full":
        m.runs["flake8 KD"] = timed("flake8 KD", flake8(sys.executable, "KD", jobs), stdout=flake8_out)
        m.plugin_codes = flake8_codes(flake8_out)
    log(f"[{name}] in-process engine run, one core, no cache ...")
    m.profile, m.runs["in-process"] = run_profile(tree)
    log(f"[{name}] in-process: {m.runs['in-process'].seconds:.1f} s")
    m.code_changed = keydrift_code_digest() != code_before
    return m


# Interleaved pairs of the one-file start-up per repetition (``measure_start_up``).
START_UP_PAIRS = 5


def measure_start_up(name: str, tree: Path, touched: str, baseline_python: str,
                     series: Dict[str, List[Run]]) -> None:
    """One file checked on its own, no cache, from its project's folder (an editor's or a
    hook's single run): ``keydrift check FILE`` against ``flake8 --select F FILE``. The file is
    the touched one, a models module: its check needs the project's key registry. Timed in
    ``START_UP_PAIRS`` interleaved pairs per repetition (the figure is the median of all): one
    run of a command this short moves by tens of percent on a shared machine."""
    project, _, relative = touched.partition("/")
    commands = (
        ("one file: flake8 F", [baseline_python, "-m", "flake8", "--isolated", "--select", "F", "--exit-zero",
                                relative]),
        ("one file: keydrift", [sys.executable, "-m", "keydrift", "check", "--no-cache", "-q", "--exit-zero",
                                relative]))
    timed: Dict[str, List[Run]] = {kind: [] for kind, _ in commands}
    for _ in range(START_UP_PAIRS):
        for kind, cmd in commands:
            timed[kind].append(run_timed(cmd, tree / project))
    for kind, runs in timed.items():
        series.setdefault(kind, []).extend(runs)
        seconds = ", ".join(f"{run.seconds:.2f}" for run in runs)
        log(f"[{name}] {kind}: {seconds} s (exits {', '.join(str(run.returncode) for run in runs)})")


def measure_growth(name: str, tree: Path, stats: TreeStats, jobs: int, report: str, full: Run) -> List[dict]:
    rows = []
    for share in (0.25, 0.5):
        projects = project_prefix(stats, share)
        files = [f for f in stats.files if Path(f).parts[0] in projects]
        clear_keydrift_caches(tree)
        run = run_timed(keydrift_check(jobs, report, projects), tree)
        log(f"[{name}] keydrift cold on {len(files)} files ({', '.join(projects)}): {run.seconds:.1f} s")
        rows.append({"share": share, "files": len(files), "projects": projects, "seconds": run.seconds,
                     "returncode": run.returncode, "tracebacks": run.tracebacks})
    rows.append({"share": 1.0, "files": len(stats.files), "projects": list(stats.project_files),
                 "seconds": full.seconds, "returncode": full.returncode, "tracebacks": 0})
    for row in rows:
        row["seconds_per_1000_files"] = 1000 * row["seconds"] / max(1, row["files"])
    return rows


# --- the figures ------------------------------------------------------------------------------

@dataclass
class Row:
    figure: str
    value: str
    target: str = ""
    ok: Optional[bool] = None  # None: no target, information only
    number: Optional[float] = None

    @property
    def verdict(self) -> str:
        return "" if self.ok is None else ("pass" if self.ok else "FAIL")


def ratio_row(figure: str, run: Optional[Run], anchor: Run, limit: float) -> Row:
    if run is None or anchor.seconds <= 0:
        return Row(figure, "n/a", f"<= {limit}x", False)
    ratio = run.seconds / anchor.seconds
    return Row(figure, f"{ratio:.2f}x ({run.seconds:.1f} s)", f"<= {limit}x", ratio <= limit, ratio)


def rows_for(m: Measurements, stats: TreeStats, baseline_note: str) -> List[Row]:
    runs = m.runs
    anchor = runs["flake8 F"]
    rows = [
        Row("tree", f"{len(stats.files):,} files, {stats.lines:,} lines, {len(stats.project_files)} projects"),
        Row("flake8 --select F (anchor)", f"{anchor.seconds:.1f} s", "", None, anchor.seconds),
        ratio_row("keydrift check cold / anchor", runs.get("keydrift cold"), anchor, 0.5),
        ratio_row("keydrift check warm / anchor", runs.get("keydrift warm"), anchor, 0.02),
        ratio_row("one file touched / anchor", runs.get("keydrift touched"), anchor, 0.05),
        ratio_row("flake8 --select F,KD / anchor", runs.get("flake8 F,KD"), anchor, 1.3),
        ratio_row("flake8 --select F,KD, cache warm / anchor", runs.get("flake8 F,KD warm"), anchor, 1.05),
        start_up_row(runs),
        registry_share_row(runs),
        rss_row(runs.get("keydrift cold")),
        *growth_rows(m.growth),
        *same_report_rows(m),
        Row("keydrift code unchanged during the measurement", "NO (timings unreliable)" if m.code_changed
            else "yes", "yes", not m.code_changed),
        *profile_rows(m.profile, runs.get("in-process")),
        *crash_rows(m),
        Row("findings, cold keydrift check",
            codes_text(Counter(f["code"] for f in m.reports.get("keydrift cold", [])))),
        Row("findings, flake8 plugin", codes_text(Counter(m.plugin_codes))),
        Row("file touched", m.touched_file),
        Row("cache folders after the cold run", ", ".join(m.caches) or "none"),
        Row("anchor flake8", baseline_note),
    ]
    return rows


def registry_share_row(runs: Dict[str, Run]) -> Row:
    figure = f"registry's share: cold check / cold with --ignore {REGISTRY_CODES}"
    row = ratio_row(figure, runs.get("keydrift cold"), runs.get("cold without registry") or Run(0.0, 0, ""),
                    REGISTRY_SHARE_LIMIT)
    return row if row.value == "n/a" else replace(row, value=row.value.split(" (")[0])


def start_up_row(runs: Dict[str, Run]) -> Row:
    anchor = runs.get("one file: flake8 F")
    figure = "one-file start-up: keydrift check FILE --no-cache / flake8 --select F FILE"
    if anchor is None:
        return Row(figure, "n/a", "<= 2x", False)
    row = ratio_row(figure, runs.get("one file: keydrift"), anchor, 2.0)
    return replace(row, value=f"{row.value[:-1]} vs {anchor.seconds:.2f} s)")


def rss_row(run: Optional[Run]) -> Row:
    how = "largest single process, " + ("/usr/bin/time -v" if use_time_bin() else "getrusage")
    if run is None or run.max_rss_bytes is None:
        return Row(f"peak RSS, cold check ({how})", "n/a", "<= 300 MiB", False)
    rss = run.max_rss_bytes
    return Row(f"peak RSS, cold check ({how})", f"{rss / 2 ** 20:.0f} MiB", "<= 300 MiB", rss <= RSS_LIMIT, rss)


def growth_rows(growth: List[dict]) -> List[Row]:
    rows = [Row(f"cold, {g['files']:,} files (share {g['share']:.0%})",
                f"{g['seconds_per_1000_files']:.1f} s / 1,000 files ({g['seconds']:.1f} s)")
            for g in growth]
    quarter, full = growth[0]["seconds_per_1000_files"], growth[-1]["seconds_per_1000_files"]
    ratio = full / quarter if quarter else float("inf")
    rows.append(Row("time per file, full / 1/4", f"{ratio:.2f}", "<= 1.3 (flat)", ratio <= 1.3, ratio))
    return rows


def same_report_rows(m: Measurements) -> List[Row]:
    cold = m.reports.get("keydrift cold")
    rows = []
    for kind in ("keydrift warm", "keydrift touched"):
        other = m.reports.get(kind) or []
        same = other == cold
        differ = len(_finding_keys(other) ^ _finding_keys(cold or []))
        value = "yes" if same else f"NO ({differ} findings in one report only)"
        rows.append(Row(f"{kind.split()[1]} report == cold report", value, "yes", same))
    return rows


def _finding_keys(findings: list) -> set:
    return {(f.get("path"), f.get("line"), f.get("code"), f.get("message")) for f in findings}


def profile_rows(profile: Optional[dict], run: Optional[Run]) -> List[Row]:
    if not profile:
        detail = run.stderr.strip().splitlines()[-1] if run and run.stderr.strip() else "no output"
        return [Row("in-process run (1 core, no cache)", f"failed: {detail}")]
    counters, stages, wall = profile["counters"], profile["stages"], profile["wall"]
    rows = [Row("in-process run (1 core, no cache)", f"{wall:.1f} s wall"
                + (f", peak RSS {run.max_rss_bytes / 2 ** 20:.0f} MiB" if run and run.max_rss_bytes else ""))]
    for unit in ("files", "lines"):
        seen, kept = counters.get(unit, 0), counters.get(f"{unit} analyzed", 0)
        share = kept / seen if seen else 0.0
        rows.append(Row(f"{unit} sent to analysis by the prefilter",
                        f"{kept:,} of {seen:,} ({share:.1%})", "", None, share))
    outside = wall - sum(stages.values())
    for stage, seconds in sorted(stages.items(), key=lambda item: -item[1]) + [("outside stages", outside)]:
        rows.append(Row(f"time: {stage}", f"{seconds:.1f} s ({seconds / wall:.0%})" if wall else "n/a",
                        "", None, seconds))
    return rows


def crash_rows(m: Measurements) -> List[Row]:
    reports = [f for findings in m.reports.values() for f in findings]
    cold = m.reports.get("keydrift cold", [])
    kd900 = sorted({f["path"] for f in cold if f["code"] == "KD900"})
    kd901 = sorted({f["path"] for f in reports if f["code"] == "KD901"})
    profile = m.profile or {}
    kd901_in_process = profile.get("codes", {}).get("KD901", 0)
    tracebacks = sum(r.tracebacks for r in m.runs.values()) + sum(g["tracebacks"] for g in m.growth)
    internal = sum(r.stderr.count("keydrift: internal error") for r in m.runs.values())
    bad_exits = [k for k, r in m.runs.items() if r.returncode != 0] + [
        f"growth {g['share']:.0%}" for g in m.growth if g["returncode"] != 0]
    raised = profile.get("raised", [])
    crashes = len(kd901) + kd901_in_process + tracebacks + internal + len(bad_exits) + len(raised)
    detail = (f"KD901 files {len(kd901)} (in-process {kd901_in_process}), tracebacks {tracebacks}, "
              f"plugin internal errors {internal}, bad exits {len(bad_exits)} {bad_exits or ''}, "
              f"check_source raised {len(raised)}")
    rows = [Row("crashes", f"{crashes} ({detail})", "0", crashes == 0, crashes),
            Row("KD900 cannot parse (cold report)", f"{len(kd900)}" + (f": {', '.join(kd900[:3])}" if kd900 else ""))]
    rows += [Row("  KD901 file", path) for path in kd901[:5]] + [Row("  raised", text[:200]) for text in raised[:5]]
    return rows


def codes_text(codes: Counter) -> str:
    if not codes:
        return "none"
    ordered = sorted(codes.items(), key=lambda item: (-item[1], item[0]))
    return f"{sum(codes.values())}: " + ", ".join(f"{code} {count}" for code, count in ordered)


# --- the machine and the output ---------------------------------------------------------------

def machine() -> Dict[str, object]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": os.cpu_count(), "cores used": usable_cores(), "cpu model": model or platform.processor(),
        "load average at the start": " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "",
        "python": platform.python_version(), "platform": platform.platform(),
        **{name: package_version(name) for name in ("keydrift", "libcst", "flake8", "pyflakes", "pycodestyle")},
        "keydrift commit": git_revision(),
    }


def git_revision() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""
    return head + (" + uncommitted changes in src/" if dirty else "")


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def text_table(title: str, rows: List[Row]) -> str:
    width = max(len(r.figure) for r in rows)
    value_width = min(60, max(len(r.value) for r in rows))
    lines = [title, "-" * len(title)]
    for r in rows:
        lines.append(f"{r.figure:<{width}}  {r.value:<{value_width}}  {r.target:<15} {r.verdict}".rstrip())
    return "\n".join(lines)


def markdown_table(title: str, rows: List[Row]) -> str:
    lines = [f"### {title}", "", "| figure | value | target | |", "|---|---|---|---|"]
    lines += [f"| {r.figure} | {r.value} | {r.target} | {r.verdict} |" for r in rows]
    return "\n".join(lines)


def machine_text(info: Dict[str, object]) -> str:
    return "; ".join(f"{key} {value}" for key, value in info.items() if value not in (None, ""))


# --- main -------------------------------------------------------------------------------------

def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(TREES), help="one tree only (small: the quick path)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N", help="median of N runs (default 1)")
    parser.add_argument("--jobs", "-j", type=int, default=usable_cores(), help="processes (default: all cores)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON to FILE")
    parser.add_argument("--markdown", action="store_true", help="also print markdown tables")
    parser.add_argument("--snapshot", action="store_true",
                        help="run a copy of keydrift's sources taken at the start (others are editing src/)")
    parser.add_argument("--profile-tree", metavar="TREE", help=argparse.SUPPRESS)  # internal
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.profile_tree:
        profile_tree(Path(args.profile_tree))
        return 0
    snapshot = tempfile.TemporaryDirectory(prefix="keydrift-bench-code-")
    if args.snapshot:
        take_snapshot(snapshot.name)
    info = machine()
    info["keydrift code"] = "a snapshot taken at the start" if args.snapshot else "as installed"
    log(f"machine: {machine_text(info)}")
    baseline_python, baseline_note = baseline_flake8()
    results: Dict[str, object] = {"machine": info, "trees": {}}
    outputs = []
    for name in [args.only] if args.only else ["small", "full"]:
        tree = fetch_tree(name)
        stats = tree_stats(tree)
        log(f"[{name}] {tree}: {len(stats.files):,} files, {stats.lines:,} lines")
        with tempfile.TemporaryDirectory(prefix="keydrift-bench-") as work:
            m = measure_tree(name, tree, stats, args.jobs, max(1, args.repeat), baseline_python, work)
        rows = rows_for(m, stats, baseline_note)
        title = f"{name} ({tree}, -j {args.jobs}, repeat {args.repeat})"
        outputs.append((title, rows))
        print(text_table(title, rows) + "\n", flush=True)
        results["trees"][name] = {
            "rows": [{**asdict(r), "verdict": r.verdict} for r in rows],
            "runs": {k: {"seconds": r.seconds, "returncode": r.returncode, "max_rss_bytes": r.max_rss_bytes}
                     for k, r in m.runs.items()},
            "growth": m.growth, "profile": m.profile, "touched_file": m.touched_file,
            "keydrift_code_changed": m.code_changed,
        }
    info["load average at the end"] = machine()["load average at the start"]
    print(f"machine: {machine_text(info)}")
    if args.markdown:
        print("\n" + f"Machine: {machine_text(info)}\n")
        print("\n\n".join(markdown_table(title, rows) for title, rows in outputs))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    failed = [r.figure for _, rows in outputs for r in rows if r.ok is False]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
