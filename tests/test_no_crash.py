"""The engine never raises, whatever the input: bad files become one KD900/KD901 finding."""

from __future__ import annotations

from pathlib import Path
from typing import List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keydrift.engine import check_source
from keydrift.types import Config, Finding

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"
SOURCES: List[str] = sorted(p.read_text(encoding="utf-8") for p in CASES.rglob("*.py") if p.stat().st_size > 80)[:120]
CONFIG = Config(root=str(CASES), cache=False)


def codes(findings: List[Finding]) -> List[str]:
    return [f.code for f in findings]


def test_deeply_nested_expression_is_one_finding() -> None:
    source = "x = Model.objects.filter(url=" + "(" * 3000 + "u" + ")" * 3000 + ")\n"
    found = check_source(source, "deep.py", CONFIG)
    assert codes(found) in ([], ["KD900"], ["KD901"])


def test_deeply_nested_blocks_are_analyzed_or_reported() -> None:
    body = "".join("    " * i + f"if c{i}:\n" for i in range(1, 90))
    source = "def f(u):\n" + body + "    " * 90 + "Page.objects.create(url=u.lower())\n"
    found = check_source(source, "nested.py", CONFIG)
    assert all(f.code in ("KD900", "KD901") for f in found)


def test_huge_string_literal_and_long_module() -> None:
    """Past the size limit a file is reported as not analyzed, at once."""
    source = "BLOB = '" + "x" * 10_000_000 + "'\n" + "def f(u):\n    return Page.objects.get(url=u)\n" * 2000
    found = check_source(source, "huge.py", CONFIG)
    assert codes(found) == ["KD901"] and "characters of code to analyze" in found[0].message


@pytest.mark.parametrize("data, reason", [
    (b"def f(:\n    Page.objects.get(url=1)\n", "syntax error"),
    (b"x = '\xff\xfe'\nPage.objects.get(url=1)\n", "invalid UTF-8"),
    (b"# -*- coding: klingon -*-\nPage.objects.get(url=1)\n", "unknown coding cookie"),
    (b"Page.objects.get(url=1)\x00\n", "NUL byte"),
    (b"print 'python 2'\nPage.objects.get(url=1)\n", "Python 2"),
    (bytes(range(256)) * 4, "binary junk"),
])
def test_bad_files_give_one_parse_finding(data: bytes, reason: str) -> None:
    found = check_source(data, "bad.py", CONFIG)
    assert codes(found) == ["KD900"], reason
    assert found[0].message.startswith("KD900 ")


@pytest.mark.parametrize("data", [
    "\ufeffdef f(u):\n    Page.objects.create(url=u.lower())\n    Page.objects.get(url=u)\n".encode("utf-8"),
    "def f(u):\r\n    Page.objects.get(url=u)\r\n    Page.objects.create(url=u.lower())\r\n".encode(),
    "# -*- coding: latin-1 -*-\ndef f(u):\n    Page.objects.get(url=u)  # caf\xe9\n    Page.objects.create(url=u.lower())\n".encode("latin-1"),
])
def test_encodings_bom_and_line_endings_are_understood(data: bytes) -> None:
    assert codes(check_source(data, "ok.py", CONFIG)) == ["KD102"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(min_value=0, max_value=max(len(SOURCES) - 1, 0)),
       cuts=st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 40)), max_size=4),
       junk=st.text(alphabet="()[]{}:.,=\"'#\\\n\t abcfx_0", max_size=12))
def test_mutated_sources_never_raise(index: int, cuts: list, junk: str) -> None:
    """Fixture sources with random deletions and junk inserted: findings or KD9xx, never an exception."""
    source = SOURCES[index] if SOURCES else "Page.objects.get(url=u)\n"
    for start, length in cuts:
        start = start % (len(source) + 1)
        source = source[:start] + junk + source[start + length:]
    for finding in check_source(source, "mutated.py", CONFIG):
        assert finding.code.startswith("KD") and finding.line >= 1


def test_a_file_over_its_time_budget_is_one_could_not_analyze_finding(monkeypatch) -> None:
    """The budget is checked per statement walked; an exhausted one stops that file only."""
    from keydrift import budget

    source = "def f(u):\n    Page.objects.get(url=u)\n    Page.objects.create(url=u.lower())\n"
    monkeypatch.setattr(budget, "SECONDS_PER_FILE", 0.0)
    found = check_source(source, "slow.py", CONFIG)
    assert codes(found) == ["KD901"]
    assert "needed more than 0 s of processor time" in found[0].message
    monkeypatch.setattr(budget, "SECONDS_PER_FILE", 30.0)
    assert codes(check_source(source, "slow.py", CONFIG)) == ["KD102"]


def test_a_generated_module_past_the_size_limit_is_not_parsed(monkeypatch) -> None:
    from keydrift.analysis import parsing

    monkeypatch.setattr(parsing, "MAX_PARSED_CHARACTERS", 1000)
    source = "".join(f"def f{i}(u):\n    return Page.objects.get(url=u)\n" for i in range(100))
    found = check_source(source, "generated.py", CONFIG)
    assert codes(found) == ["KD901"]
    assert "more than 1,000 characters of code to analyze" in found[0].message


def test_valid_python_libcst_could_not_read_is_analyzed() -> None:
    """CPython accepts a backslash continuation before CRLF at the end of a file; libcst did not
    (it was KD901). Valid Python is never KD900 (found by hypothesmith), and with CPython's tree
    alone it is analyzed like the same file without that line."""
    source = "Page.objects.get(url=u)\nPage.objects.create(url=u.lower())\n\n\\\r\n"
    compile(source, "ok.py", "exec")
    found = check_source(source, "ok.py", CONFIG)
    plain = check_source(source[:-3], "ok.py", CONFIG)
    assert not [c for c in codes(found) if c.startswith("KD9")]
    assert [(f.code, f.line, f.col, f.message) for f in found] == [(f.code, f.line, f.col, f.message) for f in plain]


def test_the_time_budget_counts_processor_time_not_waiting() -> None:
    """A loaded machine stretches a file's wall time, not its work: waiting uses no budget, and
    work past it stops the file."""
    import time

    from keydrift import budget

    with budget.budget(0.05):
        time.sleep(0.2)
        budget.check_budget()
    with budget.budget(0.05), pytest.raises(budget.BudgetExceeded):
        start = time.process_time()
        while time.process_time() - start < 1.0:
            budget.check_budget()
