"""The annotated cases under fixtures/cases and the bundled examples.

Each case directory is one test: keydrift's findings, of every family, must match the case's
``# expect:`` markers exactly (file, line, family and, when given, code); see
``keydrift.testing``. Case directories are named for the family they were written about and
their verdict for it: ``kd1-*`` has KD1 expectations (``kd1-todo-*`` only ``todo-expect`` ones,
known misses), ``ok-kd1-*`` has none. Other families may be expected in any case: a
``unique=True`` URL column in a KD1 case's models.py is marked ``# expect: KD3 (KD301)``, so
the whole corpus is scored unfiltered, as the shared scorer sees it (the scorer itself, one
subprocess per case, runs as a benchmark: ``python benchmarks/score_families.py``).

A finding that is a false positive of a rule is marked on its line with
``# known-fp: KD3 (KD301) <why it is wrong>``: the case then passes as an expected failure
(and fails once the finding disappears, so that the marker gets removed). The shared scorer
does not read these markers: they count as false positives in its figures.
"""

import re
from pathlib import Path

import pytest

from keydrift.rules import RULES_BY_CODE
from keydrift.testing import (
    MarkerError,
    case_files,
    check_case,
    collect_expectations,
    compare,
    find_cases,
    format_finding,
    parse_markers,
    run_case,
)
from keydrift.types import Finding

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = ROOT / "fixtures" / "cases"
EXAMPLES_DIR = ROOT / "examples"

CASES = find_cases(CASES_DIR)
CASE_NAME = re.compile(r"^(?:ok-)?(?P<family>kd\d)-")
# ``# known-fp: KD3 (KD301) reason``: a finding on this line is a false positive of the rule.
KNOWN_FP = re.compile(r"#\s*known-fp:\s*(?P<family>KD\d)\s+\((?P<code>KD\d{3})\)\s*(?P<reason>[^#]*)")


def _family(case):
    """The family a case was written about, from its name."""
    match = CASE_NAME.match(case.name)
    assert match, f"{case.name}: name a case kdN-*, kdN-todo-* or ok-kdN-* (N: its family)"
    return match["family"].upper()


def _known_false_positives(case):
    """``{(path, line, code): reason}`` for the ``# known-fp:`` markers of a case."""
    known = {}
    for py in case_files(case):
        rel = py.relative_to(case).as_posix()
        for number, line in enumerate(py.read_text(encoding="utf-8").splitlines(), 1):
            for match in KNOWN_FP.finditer(line):
                assert match["code"].startswith(match["family"]), f"{rel}:{number}: {match[0]}"
                assert match["code"] in RULES_BY_CODE, f"{rel}:{number}: unknown code {match['code']}"
                assert match["reason"].strip(), f"{rel}:{number}: say why the finding is wrong"
                known[(rel, number, match["code"])] = match["reason"].strip()
    return known


def _ids(paths):
    return [p.name for p in paths]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_case(case):
    """keydrift reports exactly the case's expected findings, of every family, on the marked
    lines; a finding marked ``# known-fp:`` makes the case an expected failure."""
    result = check_case(case)
    known = _known_false_positives(case)
    found_known = {}
    unexpected = []
    for finding in result.unexpected:
        reason = known.get((finding.path, finding.line, finding.code))
        if reason is None:
            unexpected.append(finding)
        else:
            found_known[(finding.path, finding.line, finding.code)] = reason
    if result.missing or unexpected:
        pytest.fail(result.report(), pytrace=False)
    if result.todo_found:
        pytest.fail("a known miss is now found; change its '# todo-expect:' to '# expect:'\n"
                    + result.report(), pytrace=False)
    gone = sorted(set(known) - set(found_known))
    if gone:
        pytest.fail("a known false positive is no longer reported; remove its '# known-fp:' "
                    "marker: " + ", ".join(f"{p}:{n}: {c}" for p, n, c in gone), pytrace=False)
    reasons = [f"known false positive {p}:{n}: {c} ({why})"
               for (p, n, c), why in sorted(found_known.items())]
    reasons += ["known miss: " + g.describe() for g in result.todo_missing]
    if reasons:
        pytest.xfail("; ".join(reasons))


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_case_markers_match_its_name(case):
    """A case's name states its verdict for its own family (``ok-kdN-*``: no KDN marker;
    ``kdN-todo-*``: KDN todo-expect markers only; ``kdN-*``: KDN expect markers only); other
    families may be expected anywhere, never as known misses; every marker names an exact code."""
    markers = collect_expectations(case)
    family = _family(case)
    own = [m for m in markers if m.family == family]
    expects = [m for m in own if not m.todo]
    todos = [m for m in own if m.todo]
    if case.name.startswith("ok-"):
        assert not own, f"{case.name} is a negative {family} case but has {family} markers: {own}"
    elif case.name.startswith(f"{family.lower()}-todo-"):
        assert todos and not expects, f"{case.name} must hold only todo-expect {family} markers"
    else:
        assert expects and not todos, f"{case.name} must hold {family} expect markers only"
    other_todos = [m for m in markers if m.family != family and m.todo]
    assert not other_todos, (f"{case.name}: a known miss of another family belongs in a case "
                             f"of that family: {other_todos}")
    for marker in markers:
        assert marker.code in RULES_BY_CODE, f"{marker.describe()}: give an exact code, e.g. (KD102)"


def test_case_collection_is_large_enough():
    """The corpus keeps at least 40 positive and 30 negative KD1 cases."""
    positives = [c for c in CASES if c.name.startswith("kd1-") and not c.name.startswith("kd1-todo-")]
    negatives = [c for c in CASES if c.name.startswith("ok-kd1-")]
    assert len(positives) >= 40 and len(negatives) >= 30, (len(positives), len(negatives))


def _line_of(path, text):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {path}")


def test_audit_loop_example_reports_the_flagship_write():
    """The demo job that re-audits forever gets one KD101, at the write by the final URL."""
    project = EXAMPLES_DIR / "audit_loop"
    findings = run_case(project)
    line = _line_of(project / "app" / "jobs.py", "AuditResult.objects.create(")
    got = [(f.path, f.line, f.code) for f in findings]
    assert got == [("app/jobs.py", line, "KD101")], "\n".join(map(format_finding, findings))


def test_audit_loop_fixed_example_is_clean():
    """The corrected twin, which writes by the key it read by, has no finding."""
    findings = run_case(EXAMPLES_DIR / "audit_loop_fixed")
    assert findings == [], "\n".join(map(format_finding, findings))


class TestMarkers:
    """keydrift.testing reads markers the way the shared scorer does, and more strictly."""

    def test_family_id_and_code_are_read(self):
        """Family, id and exact code are taken from one marker."""
        (marker,) = parse_markers("save()  # expect: KD1 id=w (KD106)\n", "a.py")
        assert (marker.family, marker.group, marker.code, marker.line) == ("KD1", "w", "KD106", 1)

    @pytest.mark.parametrize("text", [
        "# expect: KD102",  # the scorer's KD\d\b does not match: the marker would be ignored
        "# expect: KD1 (KD203)",  # code outside its family
        "# expect: KD1 (KD102) id=a",  # the scorer would not see the id
        "# expect: KD1 after the fetch",  # stray text hides typos
    ])
    def test_markers_the_scorer_reads_differently_are_rejected(self, text):
        """A marker the scorer would ignore or group differently raises MarkerError."""
        with pytest.raises(MarkerError):
            parse_markers(f"x = 1  {text}\n", "a.py")

    def test_wrong_code_on_the_right_line_is_missing_and_unexpected(self):
        """A KD103 where KD102 is expected fails both ways, and the report names it."""
        expected = parse_markers("a = 1\nb = 2  # expect: KD1 (KD102)\n", "a.py")
        found = Finding(code="KD103", message="KD103 read transformed", path="a.py", line=2, col=4)
        result = compare("c", expected, [found])
        assert not result.ok and result.missing and result.unexpected
        assert "nearby finding: a.py:2:5: KD103" in result.report()

    def test_one_finding_satisfies_a_group_of_alternatives(self):
        """Markers sharing an id are alternatives, across files."""
        expected = (parse_markers("f(x)  # expect: KD1 id=s\n", "a.py")
                    + parse_markers("\ncreate(x)  # expect: KD1 id=s\n", "b.py"))
        found = Finding(code="KD102", message="KD102 m", path="b.py", line=2, col=0)
        assert compare("c", expected, [found]).ok

    def test_line_must_match_exactly_unless_a_tolerance_is_given(self):
        """The strict default wants the marked line; the scorer's tolerance is 2."""
        expected = parse_markers("x\ny  # expect: KD1\n", "a.py")
        found = Finding(code="KD101", message="KD101 m", path="a.py", line=3, col=0)
        assert not compare("c", expected, [found]).ok
        assert compare("c", expected, [found], tolerance=2).ok

    def test_a_found_todo_is_neither_missing_nor_unexpected(self):
        """A finding on a todo-expect line is reported apart, as a marker to promote."""
        expected = parse_markers("x  # todo-expect: KD1 (KD101)\n", "a.py")
        found = Finding(code="KD101", message="KD101 m", path="a.py", line=1, col=0)
        result = compare("c", expected, [found])
        assert result.ok and result.todo_found == (found,) and not result.todo_missing
