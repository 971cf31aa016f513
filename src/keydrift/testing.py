"""Annotated cases: read ``# expect:`` markers and compare keydrift's findings with them.

A case is a directory holding a tiny project (``.py`` files, optionally a ``pyproject.toml``
with a ``[tool.keydrift]`` table); the directory is the project root. Expectations are
comments on the line where a finding must be reported, in the shared format that
``shared/eval/score.py`` reads:

- ``# expect: KD1`` a finding of the KD1 family on this line;
- ``# expect: KD1 id=x`` on several lines (of one or several files): alternatives, one finding
  on any of them satisfies the expectation;
- a case without ``expect`` markers is negative: every finding in it is unexpected.

This module adds what the shared scorer does not check:

- an exact code in parentheses after the family (and after ``id=``), ``# expect: KD1 (KD102)``:
  a finding there must carry exactly that code;
- ``# todo-expect: KD1 (KD102)`` records a known miss: it is not required, and a finding that
  matches it is reported apart (``todo_found``) so that the marker gets promoted to ``expect``.

The comparison is strict by default: same file, same line (``tolerance=0``; the scorer allows
2), family prefix and, when given, the exact code. A marker the scorer would not read the same
way (``# expect: KD102``, a code outside its family, stray text) raises ``MarkerError``.

Typical use in a test::

    result = check_case(case_dir)
    assert result.ok, result.report()

Rule examples (``keydrift.rules._examples``) are checked the same way by ``check_example``,
which writes the example into a fresh directory, its own project root.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from keydrift.engine import check_source
from keydrift.rules._examples import Example
from keydrift.projectwide import findings_for
from keydrift.types import Config, Finding

__all__ = [
    "CaseResult",
    "ExpectGroup",
    "Expectation",
    "MarkerError",
    "case_config",
    "case_files",
    "check_case",
    "check_example",
    "report_example",
    "collect_expectations",
    "compare",
    "find_cases",
    "format_finding",
    "parse_markers",
    "run_case",
]

PathLike = Union[str, Path]

# Any marker, as the shared scorer finds it (``#``, optional blanks, ``expect:``), plus the
# ``todo-`` form. The body runs to the next ``#`` so two markers on one line stay apart.
_MARKER = re.compile(r"#\s*(?P<todo>todo-)?expect:(?P<body>[^#]*)")
# What a body may hold: the family, then ``id=``, then the exact code. The scorer reads only
# ``KDn`` followed by a word boundary and an optional ``id=``, so that order is the only one
# it groups the same way.
_BODY = re.compile(
    r"^\s*(?P<family>KD\d)(?![\w])"
    r"(?:\s+id=(?P<id>[\w-]+))?"
    r"(?:\s+\((?P<code>KD\d{3})\))?"
    r"\s*$"
)


class MarkerError(ValueError):
    """A marker that is malformed or that the shared scorer would read differently."""


@dataclass(frozen=True)
class Expectation:
    """One marker: where it is, what it asks for, and the source line it annotates."""

    path: str  # relative to the case directory, with ``/`` separators
    line: int  # 1-based
    family: str  # "KD1"
    code: Optional[str] = None  # "KD102" when the marker names the exact code
    group: Optional[str] = None  # the ``id=`` value, for alternatives
    todo: bool = False
    source: str = ""  # the annotated line, stripped, for messages

    def describe(self) -> str:
        what = self.family + (f" ({self.code})" if self.code else "")
        return f"{self.path}:{self.line}: {what}"

    def matches(self, finding: Finding, tolerance: int = 0) -> bool:
        return (
            finding.path == self.path
            and abs(finding.line - self.line) <= tolerance
            and finding.code.startswith(self.family)
            and (self.code is None or finding.code == self.code)
        )


@dataclass(frozen=True)
class ExpectGroup:
    """Expectations satisfied by one finding on any of them (one place unless ``id=`` is used)."""

    key: Tuple[str, ...]
    places: Tuple[Expectation, ...]

    @property
    def todo(self) -> bool:
        return self.places[0].todo

    def matches(self, finding: Finding, tolerance: int = 0) -> bool:
        return any(place.matches(finding, tolerance) for place in self.places)

    def describe(self) -> str:
        return " or ".join(place.describe() for place in self.places)


@dataclass(frozen=True)
class CaseResult:
    """The comparison of one case's findings with its markers."""

    name: str
    groups: Tuple[ExpectGroup, ...]
    findings: Tuple[Finding, ...]
    missing: Tuple[ExpectGroup, ...]
    unexpected: Tuple[Finding, ...]
    todo_missing: Tuple[ExpectGroup, ...] = ()
    todo_found: Tuple[Finding, ...] = ()
    tolerance: int = 0
    ignored: Tuple[Finding, ...] = ()  # findings of families the comparison left out

    @property
    def ok(self) -> bool:
        """No required expectation missed and no finding outside every marker."""
        return not self.missing and not self.unexpected

    @property
    def positive(self) -> bool:
        return any(not g.todo for g in self.groups)

    def report(self) -> str:
        """A readable account: what was missed, what was not expected, keydrift's output."""
        expected = sum(1 for g in self.groups if not g.todo)
        lines = [f"case {self.name}: {expected} expected, {len(self.findings)} reported"
                 f" (line tolerance {self.tolerance})"]
        for group in self.missing:
            lines.append(f"  missing     {group.describe()}")
            for place in group.places:
                if place.source:
                    lines.append(f"      {place.path}:{place.line} | {place.source}")
            for near in self._near(group):
                lines.append(f"      nearby finding: {format_finding(near)}")
        for finding in self.unexpected:
            lines.append(f"  unexpected  {format_finding(finding)}")
        for finding in self.todo_found:
            lines.append(f"  todo found  {format_finding(finding)}"
                         " (promote the todo-expect marker to expect)")
        for group in self.todo_missing:
            lines.append(f"  todo (known miss) {group.describe()}")
        lines.append("keydrift output:")
        lines.extend(f"  {format_finding(f)}" for f in self.findings)
        if not self.findings:
            lines.append("  (no findings)")
        if self.ignored:
            lines.append(f"ignored ({len(self.ignored)} of families not compared):")
            lines.extend(f"  {format_finding(f)}" for f in self.ignored)
        return "\n".join(lines)

    def _near(self, group: ExpectGroup) -> List[Finding]:
        """Findings close to a missed expectation: usually a wrong line or a wrong code."""
        return [f for f in self.findings
                if any(f.path == p.path and abs(f.line - p.line) <= 3 for p in group.places)]


def parse_markers(text: str, path: str) -> List[Expectation]:
    """The ``expect`` and ``todo-expect`` markers of one file's text, in line order."""
    found: List[Expectation] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for marker in _MARKER.finditer(line):
            body = _BODY.match(marker.group("body"))
            where = f"{path}:{lineno}"
            if body is None:
                raise MarkerError(
                    f"{where}: malformed marker {marker.group(0).strip()!r}; write "
                    "'# expect: KD1', '# expect: KD1 id=name' or '# expect: KD1 (KD102)'")
            family, code = body.group("family"), body.group("code")
            if code is not None and not code.startswith(family):
                raise MarkerError(f"{where}: code {code} is not in family {family}")
            found.append(Expectation(
                path=path, line=lineno, family=family, code=code, group=body.group("id"),
                todo=bool(marker.group("todo")), source=line[:marker.start()].strip(),
            ))
    return found


def case_files(case_dir: PathLike) -> List[Path]:
    """The ``.py`` files of a case, sorted, skipping caches and hidden directories."""
    root = Path(case_dir)
    files = []
    for py in root.rglob("*.py"):
        parts = py.relative_to(root).parts[:-1]
        if any(p == "__pycache__" or p.startswith(".") for p in parts):
            continue
        files.append(py)
    return sorted(files)


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def collect_expectations(case_dir: PathLike) -> List[Expectation]:
    """Every marker of every ``.py`` file of a case."""
    root = Path(case_dir)
    found: List[Expectation] = []
    for py in case_files(root):
        found.extend(parse_markers(_read_text(py), _relative(py, root)))
    return found


def _group(expectations: Iterable[Expectation]) -> Tuple[ExpectGroup, ...]:
    """Group markers as the scorer does: by (family, id), else by (family, file, line)."""
    groups: Dict[Tuple[str, ...], List[Expectation]] = {}
    for e in expectations:
        kind = "todo" if e.todo else "expect"
        key = (kind, e.family, "id", e.group) if e.group else (kind, e.family, e.path, str(e.line))
        groups.setdefault(key, []).append(e)
    return tuple(ExpectGroup(key, tuple(places)) for key, places in groups.items())


def compare(name: str, expectations: Sequence[Expectation], findings: Sequence[Finding],
            tolerance: int = 0, families: Optional[Iterable[str]] = None) -> CaseResult:
    """Match findings against markers. A finding may satisfy several groups; a finding that
    satisfies no ``expect`` group is unexpected unless it satisfies a ``todo-expect`` one.

    ``families`` (code prefixes such as ``("KD1", "KD9")``) restricts the comparison, like the
    scorer's ``--family``: markers and findings of other families are left out (the findings
    are kept in ``CaseResult.ignored``)."""
    ignored: Tuple[Finding, ...] = ()
    if families is not None:
        prefixes = tuple(families)
        expectations = [e for e in expectations if e.family.startswith(prefixes)]
        ignored = tuple(f for f in findings if not f.code.startswith(prefixes))
        findings = [f for f in findings if f.code.startswith(prefixes)]
    groups = _group(expectations)
    satisfied: Set[Tuple[str, ...]] = set()
    unexpected: List[Finding] = []
    todo_found: List[Finding] = []
    for finding in findings:
        hits = [g for g in groups if g.matches(finding, tolerance)]
        satisfied.update(g.key for g in hits)
        if not any(not g.todo for g in hits):
            (todo_found if hits else unexpected).append(finding)
    missing = tuple(g for g in groups if not g.todo and g.key not in satisfied)
    todo_missing = tuple(g for g in groups if g.todo and g.key not in satisfied)
    return CaseResult(
        name=name, groups=groups, findings=tuple(findings), missing=missing,
        unexpected=tuple(unexpected), todo_missing=todo_missing, todo_found=tuple(todo_found),
        tolerance=tolerance, ignored=ignored,
    )


def _config_loader() -> Optional[Callable[..., object]]:
    """``keydrift.config.load_config`` once that module exists (it is written separately)."""
    if importlib.util.find_spec("keydrift.config") is None:
        return None
    module = importlib.import_module("keydrift.config")
    loader = getattr(module, "load_config", None)
    return loader if callable(loader) else None


def _loader_argument(loader: Callable[..., object], case_dir: Path) -> object:
    """The case directory, or its pyproject.toml when the loader's first parameter names a
    file; a ``Path`` when the annotation mentions one, else a ``str``."""
    try:
        params = list(inspect.signature(loader).parameters.values())
    except (TypeError, ValueError):
        params = []
    if not params:
        raise TypeError("keydrift.config.load_config takes no argument; cannot point it at a case")
    first = params[0]
    wants_file = any(w in first.name.lower() for w in ("file", "toml", "pyproject"))
    target = case_dir / "pyproject.toml" if wants_file else case_dir
    return target if "Path" in str(first.annotation) else str(target)


def case_config(case_dir: PathLike) -> Config:
    """The configuration of a case, whose directory is the project root.

    With a ``pyproject.toml`` in the case and ``keydrift.config.load_config`` available, the
    loader reads it; otherwise ``Config(root=case_dir)``. A case never inherits the settings of
    a pyproject.toml above it."""
    root = Path(case_dir).resolve()
    loader = _config_loader()
    if loader is None or not (root / "pyproject.toml").is_file():
        return Config(root=str(root))
    config = loader(_loader_argument(loader, root))
    if not isinstance(config, Config):
        raise TypeError(f"load_config returned {type(config).__name__}, not keydrift.types.Config")
    if Path(config.root).resolve() != root:
        config = dataclasses.replace(config, root=str(root))
    return config


def run_case(case_dir: PathLike, config: Optional[Config] = None) -> List[Finding]:
    """keydrift's findings for every ``.py`` file of a case, paths relative to the case.

    This is the engine alone: ``# noqa`` and ``exclude``, which the front ends apply, are not.
    Without a ``config``, the case's own runs with the cache off: nothing is written into it."""
    root = Path(case_dir)
    config = config if config is not None else dataclasses.replace(case_config(root), cache=False)
    findings: List[Finding] = []
    for py in case_files(root):
        findings.extend(check_source(py.read_bytes(), _relative(py, root), config))
    for py in case_files(root):  # the project registry's findings, once every module is known
        findings.extend(findings_for(_relative(py, root), config))
    return sorted(findings, key=Finding.sort_key)


def check_case(case_dir: PathLike, tolerance: int = 0, config: Optional[Config] = None,
               families: Optional[Iterable[str]] = None) -> CaseResult:
    """Run keydrift on a case and compare the findings with its markers (see ``compare``)."""
    root = Path(case_dir)
    if not case_files(root):
        raise FileNotFoundError(f"{root}: not a case directory (no .py file in it)")
    return compare(root.name, collect_expectations(root), run_case(root, config), tolerance, families)


def find_cases(directory: PathLike) -> List[Path]:
    """The case directories under ``directory``: its subdirectories holding a ``.py`` file."""
    base = Path(directory)
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir()
                  if p.is_dir() and not p.name.startswith((".", "_")) and case_files(p))


def format_finding(finding: Finding) -> str:
    """``path:line:col: CODE message``, as flake8 prints it."""
    message = finding.message
    if not message.startswith(finding.code):
        message = f"{finding.code} {message}"
    return f"{finding.path}:{finding.line}:{finding.col + 1}: {message}"


def write_example(example: Example, directory: PathLike) -> Path:
    """Write an example's files (and its pyproject.toml) under ``directory``; return it."""
    root = Path(directory)
    for path, source in example.files:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source, encoding="utf-8")
    if example.pyproject():
        (root / "pyproject.toml").write_text(example.pyproject(), encoding="utf-8")
    return root


def example_expectations(example: Example) -> List[Expectation]:
    """The example's ``# expect: CODE`` markers as expectations of exactly that code."""
    sources = dict(example.files)
    return [Expectation(path=path, line=line, family=code[:3], code=code,
                        source=sources[path].splitlines()[line - 1].split("#")[0].strip())
            for path, line, code in example.markers()]


def check_example(example: Example, name: str = "example",
                  directory: Optional[PathLike] = None) -> CaseResult:
    """Run keydrift on an example, in ``directory`` or a temporary one (its project root, with
    the cache off), and compare every finding with its markers."""
    if directory is None:
        with tempfile.TemporaryDirectory(prefix="keydrift-example-") as temporary:
            return check_example(example, name, temporary)
    root = write_example(example, directory).resolve()
    return compare(name, example_expectations(example), run_case(root))


def report_example(example: Example) -> List[str]:
    """What keydrift reports on an example, as flake8 prints it (a reporter for
    ``Rule.documentation``)."""
    return [format_finding(f) for f in check_example(example).findings]
